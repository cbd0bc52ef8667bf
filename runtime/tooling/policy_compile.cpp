#include "runtime/tooling/policy_compile.h"

#include <algorithm>

#include <fmt/format.h>

#include "compiler/codegen/jit.h"
#include "compiler/driver/compilation.h"
#include "compiler/passes/pass.h"
#include "compiler/syntax/parser.h"
#include "runtime/engine/cluster.h"

namespace policy::tooling {

PolicyChecker::PolicyChecker() : compilation_(std::make_unique<driver::Compilation>()) {}
PolicyChecker::~PolicyChecker() = default;

std::optional<std::vector<std::string>> PolicyChecker::Check(std::shared_ptr<Source> source, DiagnosticSink& diags) {
  const driver::CompiledFile* compiled = compilation_->Add(std::move(source), diags);
  if (!compiled) return std::nullopt;
  std::vector<std::string> names;
  for (const syntax::PolicyDecl& p : compiled->module.policies) names.push_back(p.name);
  return names;
}

std::optional<EmitStage> EmitStageNamed(std::string_view name) {
  if (name == "ast") return EmitStage::kAst;
  if (name == "ir") return EmitStage::kIr;
  if (name == "ir-opt") return EmitStage::kIrOpt;
  if (name == "llvm") return EmitStage::kLlvm;
  if (name == "asm") return EmitStage::kAsm;
  return std::nullopt;
}

std::optional<std::string> UnknownPass(const std::set<std::string>& names) {
  std::vector<std::string_view> known = passes::PassNames();
  for (const std::string& name : names) {
    if (name != "all" && std::find(known.begin(), known.end(), name) == known.end()) {
      return fmt::format("unknown pass `{}`; the passes are {}", name, fmt::join(known, ", "));
    }
  }
  return std::nullopt;
}

std::optional<std::string> Emit(std::shared_ptr<Source> source, const EmitOptions& options, DiagnosticSink& diags,
                                std::string& error) {
  passes::PassOptions pass_options;
  pass_options.disabled = options.disabled_passes;
  pass_options.print_after = options.print_after;
  pass_options.time = options.time_passes;
  pass_options.pod = options.pod;
  if (options.cluster != nullptr) pass_options.table = &options.cluster->Dictionary();
  driver::Compilation compilation;
  std::string listing;
  if (std::string_view(source->Name()).ends_with(".ir")) {
    if (options.stage == EmitStage::kAst) {
      error = " is IR; there is no syntax tree to emit";
      return std::nullopt;
    }
    Expected<ir::Program> program = compilation.ParseIr(source->Text());
    if (!program) {
      error = ":" + program.error().message;
      return std::nullopt;
    }
    if (options.stage == EmitStage::kIrOpt) program = compilation.Optimize(*program, pass_options, &listing);
    return listing + ir::Print(*program);
  }
  if (options.stage == EmitStage::kAst) {
    std::optional<syntax::Module> module = syntax::ParseAnyPolicyFile(*source, diags);
    if (!module) return std::nullopt;
    return syntax::PrintModule(*module);
  }
  const driver::CompiledFile* compiled = compilation.Add(source, diags);
  if (!compiled) return std::nullopt;
  if (options.stage == EmitStage::kIr) return ir::Print(compiled->program);
  ir::Program optimized = compilation.Optimize(compiled->program, pass_options, &listing);
  if (options.stage == EmitStage::kIrOpt) return listing + ir::Print(optimized);
  codegen::Jit jit(codegen::JitOptions{options.jit_opt});
  for (size_t f = 0; f < optimized.functions.size(); ++f) {
    Expected<std::string> text = jit.EmitText(optimized, f, options.stage == EmitStage::kAsm);
    if (text) {
      listing += fmt::format("; policy {}\n{}", optimized.functions[f].name, *text);
    } else {
      listing += fmt::format("; policy {}: not compiled (the interpreter runs it): {}\n", optimized.functions[f].name,
                             text.error().message);
    }
  }
  return listing;
}

}  // namespace policy::tooling
