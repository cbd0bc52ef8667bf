#pragma once
/// The builtin table (stdlib/builtins.def) as data.

#include <cstdint>
#include <string_view>
#include <vector>

namespace policy::sema {

enum class BuiltinId : uint8_t {
#define BUILTIN(id, name, kind, arity, cost, reads, doc) id,
#include "stdlib/builtins.def"
#undef BUILTIN
};

enum class BuiltinKind : uint8_t { kFunction, kMethod };
/// kCluster: the value depends on the node table and its bound pods (run time only).
enum class BuiltinReads : uint8_t { kPure, kCluster };

struct Builtin {
  BuiltinId id;
  std::string_view name;
  BuiltinKind kind;
  int arity;
  int cost;
  BuiltinReads reads;
  std::string_view doc;
};

/// Every builtin, in table order.
const std::vector<Builtin>& Builtins();
const Builtin* FindBuiltin(std::string_view name, BuiltinKind kind);

}  // namespace policy::sema
