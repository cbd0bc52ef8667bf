#pragma once
/// The builtin table (stdlib/builtins.def) as data.

#include <cstdint>
#include <string_view>
#include <vector>

namespace policy::lang {

enum class BuiltinId : uint8_t {
#define BUILTIN(id, name, kind, arity, cost, reads, backends, doc) id,
#include "stdlib/builtins.def"
#undef BUILTIN
};

enum class BuiltinKind : uint8_t { kFunction, kMethod };
/// kCluster: the value depends on the node table and its bound pods (run time only).
enum class BuiltinReads : uint8_t { kPure, kCluster };

/// Which back ends evaluate a builtin (bits).
enum BuiltinBackend : uint8_t { kFold = 1, kInterp = 2, kJit = 4 };

struct Builtin {
  BuiltinId id;
  std::string_view name;
  BuiltinKind kind;
  int arity;
  int cost;
  BuiltinReads reads;
  uint8_t backends;  ///< BuiltinBackend bits
  std::string_view doc;
};

/// Every builtin, in table order.
const std::vector<Builtin>& Builtins();
const Builtin* FindBuiltin(std::string_view name, BuiltinKind kind);

}  // namespace policy::lang
