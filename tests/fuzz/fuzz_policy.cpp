// Fuzzes the policy language front end: lexing, parsing, interpolation and
// AST printing; a refusal must always come with a diagnostic.
#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/syntax/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  policy::Source source("fuzz.policy", std::string(reinterpret_cast<const char*>(data), size));
  policy::DiagnosticSink diags;
  auto module = policy::syntax::ParsePolicyFile(source, diags);
  if (!module && !diags.HasErrors()) __builtin_trap();
  if (module) (void)policy::syntax::PrintModule(*module);
  (void)policy::RenderAll(diags);
  return 0;
}
