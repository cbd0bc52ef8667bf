#include "compiler/lang/types.h"

#include <fmt/format.h>

#include "compiler/lang/schema.h"

namespace policy::lang {

TypeTable::TypeTable() {
  error_ = Make(TypeKind::kError, nullptr, nullptr);
  bool_ = Make(TypeKind::kBool, nullptr, nullptr);
  int_ = Make(TypeKind::kInt, nullptr, nullptr);
  quantity_ = Make(TypeKind::kQuantity, nullptr, nullptr);
  string_ = Make(TypeKind::kString, nullptr, nullptr);
  none_ = Make(TypeKind::kNone, nullptr, nullptr);
  resources_ = Make(TypeKind::kResources, nullptr, nullptr);
}

TypeRef TypeTable::Make(TypeKind kind, TypeRef element, const RecordSchema* record) {
  auto key = std::make_tuple(kind, element, record);
  auto it = interned_.find(key);
  if (it != interned_.end()) return it->second;
  owned_.push_back(std::make_unique<Type>(Type{kind, element, record}));
  interned_.emplace(key, owned_.back().get());
  return owned_.back().get();
}

TypeRef TypeTable::Optional(TypeRef element) {
  if (element->kind == TypeKind::kOptional || element->kind == TypeKind::kNone ||
      element->kind == TypeKind::kError) {
    return element;
  }
  return Make(TypeKind::kOptional, element, nullptr);
}
TypeRef TypeTable::List(TypeRef element) { return Make(TypeKind::kList, element, nullptr); }
TypeRef TypeTable::Set(TypeRef element) { return Make(TypeKind::kSet, element, nullptr); }
TypeRef TypeTable::Map(TypeRef value) { return Make(TypeKind::kMap, value, nullptr); }
TypeRef TypeTable::Record(const RecordSchema* schema) { return Make(TypeKind::kRecord, nullptr, schema); }

std::string ToString(TypeRef t) {
  switch (t->kind) {
    case TypeKind::kError: return "<error>";
    case TypeKind::kBool: return "bool";
    case TypeKind::kInt: return "int";
    case TypeKind::kQuantity: return "quantity";
    case TypeKind::kString: return "string";
    case TypeKind::kNone: return "none";
    case TypeKind::kOptional: return ToString(t->element) + "?";
    case TypeKind::kList: return fmt::format("list<{}>", ToString(t->element));
    case TypeKind::kSet: return fmt::format("set<{}>", ToString(t->element));
    case TypeKind::kMap: return fmt::format("map<string, {}>", ToString(t->element));
    case TypeKind::kResources: return "resources";
    case TypeKind::kRecord: return std::string(t->record->name);
  }
  return "?";
}

}  // namespace policy::lang
