#include "compiler/lang/builtins.h"

namespace policy::lang {

const std::vector<Builtin>& Builtins() {
  static const std::vector<Builtin> kTable = {
#define BUILTIN(id, name, kind, arity, cost, reads, backends, doc) \
  {BuiltinId::id, name, BuiltinKind::kind, arity, cost, BuiltinReads::reads, static_cast<uint8_t>(backends), doc},
#include "stdlib/builtins.def"
#undef BUILTIN
  };
  return kTable;
}

const Builtin* FindBuiltin(std::string_view name, BuiltinKind kind) {
  for (const Builtin& b : Builtins()) {
    if (b.name == name && b.kind == kind) return &b;
  }
  return nullptr;
}

}  // namespace policy::lang
