// Fuzzes the policy language front half: lexing, parsing, interpolation,
// sema, lowering (with the IR verifier), and printing; a refusal must always
// come with a diagnostic.
#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/passes/pipeline.h"
#include "compiler/syntax/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  policy::Source source("fuzz.policy", std::string(reinterpret_cast<const char*>(data), size));
  policy::DiagnosticSink diags;
  policy::sema::TypeTable types;
  policy::sema::Schema schema(types);
  auto compiled = policy::passes::CompileFile(source, types, schema, diags);
  if (!compiled && !diags.HasErrors()) __builtin_trap();
  if (compiled) {
    (void)policy::syntax::PrintModule(compiled->module);
    (void)policy::ir::Print(compiled->program);
  }
  (void)policy::RenderAll(diags);
  return 0;
}
