#pragma once
/// The policy language's types. Types are interned by a TypeTable, so two
/// types are equal exactly when their pointers are.
///
///   bool, int (int64), quantity (exact, in milli-units), string,
///   none (the type of `none`), T? (optional), list<T>, set<T>,
///   map<string, T> (labels: indexing gives T?), resources (resource name
///   to quantity; indexing gives 0 for an absent resource), and records
///   (Pod, Node, Taint, ... : schema.h).

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace policy::lang {

enum class TypeKind : uint8_t {
  kError,  ///< an expression that failed to type-check (silences follow-on errors)
  kBool,
  kInt,
  kQuantity,
  kString,
  kNone,
  kOptional,
  kList,
  kSet,
  kMap,
  kResources,
  kRecord,
};

struct RecordSchema;

struct Type {
  TypeKind kind;
  const Type* element = nullptr;         ///< optional, list, set: the element; map: the value
  const RecordSchema* record = nullptr;  ///< records
};
using TypeRef = const Type*;

class TypeTable {
 public:
  TypeTable();
  TypeRef Error() const { return error_; }
  TypeRef Bool() const { return bool_; }
  TypeRef Int() const { return int_; }
  TypeRef Quantity() const { return quantity_; }
  TypeRef String() const { return string_; }
  TypeRef None() const { return none_; }
  TypeRef Resources() const { return resources_; }
  /// T? (an optional of an optional is the optional itself).
  TypeRef Optional(TypeRef element);
  TypeRef List(TypeRef element);
  TypeRef Set(TypeRef element);
  TypeRef Map(TypeRef value);
  TypeRef Record(const RecordSchema* schema);

 private:
  TypeRef Make(TypeKind kind, TypeRef element, const RecordSchema* record);
  std::vector<std::unique_ptr<Type>> owned_;
  std::map<std::tuple<TypeKind, TypeRef, const RecordSchema*>, TypeRef> interned_;
  TypeRef error_, bool_, int_, quantity_, string_, none_, resources_;
};

/// `int`, `string?`, `list<Taint>`, ...
std::string ToString(TypeRef type);

inline bool IsNumeric(TypeRef t) { return t->kind == TypeKind::kInt || t->kind == TypeKind::kQuantity; }
/// T for T?, else the type itself.
inline TypeRef Unwrapped(TypeRef t) { return t->kind == TypeKind::kOptional ? t->element : t; }

}  // namespace policy::lang
