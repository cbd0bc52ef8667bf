#include "compiler/driver/compilation.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "compiler/syntax/parser.h"

namespace policy::driver {
namespace {

// Whether `value` fits a param of `type`.
bool Fits(const lower::ParamValue& value, lang::TypeRef type) {
  using lang::TypeKind;
  if (std::holds_alternative<int64_t>(value)) return type->kind == TypeKind::kInt || type->kind == TypeKind::kQuantity;
  if (std::holds_alternative<bool>(value)) return type->kind == TypeKind::kBool;
  if (std::holds_alternative<std::string>(value)) return type->kind == TypeKind::kString;
  if (std::holds_alternative<std::vector<std::string>>(value)) {
    return type->kind == TypeKind::kList && type->element->kind == TypeKind::kString;
  }
  return type->kind == TypeKind::kList && type->element->kind == TypeKind::kInt;
}

bool CheckParams(const CompiledFile& file, const lower::ParamValues& params, DiagnosticSink& diags) {
  bool ok = true;
  for (const auto& [policy_name, values] : params) {
    for (size_t p = 0; p < file.module.policies.size(); ++p) {
      const syntax::PolicyDecl& policy = file.module.policies[p];
      bool every = policy_name == lower::kEveryPolicy;  // only where declared
      if (policy.name != policy_name && !every) continue;
      for (const auto& [name, value] : values) {
        bool found = false;
        for (const auto& [member, type] : file.checked.policies[p].params) {
          const auto& decl = std::get<syntax::ParamDecl>(policy.members[member]);
          if (decl.name != name) continue;
          found = true;
          if (!Fits(value, type)) {
            diags.Error(DiagCode::kBadProfile, decl.span,
                        fmt::format("the profile gives `{}` of {} a value that is not a `{}`", name, policy.name,
                                    lang::ToString(type)));
            ok = false;
          }
        }
        if (!found && !every) {
          diags.Error(DiagCode::kBadProfile, policy.name_span,
                      fmt::format("the profile sets `{}`, which {} does not declare as a param", name, policy_name));
          ok = false;
        }
      }
    }
  }
  return ok;
}

[[noreturn]] void VerifierFailed(std::string_view where, const std::string& problem) {
  std::fprintf(stderr, "policyc: IR verifier%s: %s\n", std::string(where).c_str(), problem.c_str());
  std::abort();
}

}  // namespace

Compilation::Compilation()
    : types_(std::make_unique<lang::TypeTable>()), schema_(std::make_unique<lang::Schema>(*types_)) {}

Compilation::~Compilation() = default;

const CompiledFile* Compilation::Add(std::shared_ptr<const Source> source, DiagnosticSink& diags,
                                     const lower::ParamValues* params) {
  std::lock_guard lock(types_mutex_);
  std::optional<syntax::Module> module = syntax::ParseAnyPolicyFile(*source, diags);
  if (!module) return nullptr;
  auto file = std::make_unique<CompiledFile>();
  file->source = std::move(source);
  file->module = std::move(*module);
  std::optional<sema::CheckedModule> checked = sema::Check(file->module, *types_, *schema_, diags);
  if (!checked) return nullptr;
  file->checked = std::move(*checked);
  file->checked.module = &file->module;
  if (params != nullptr && !CheckParams(*file, *params, diags)) return nullptr;
  file->program = lower::Lower(file->checked, *types_, params);
  // The verifier is cheap: it runs in every build, and a problem is a compiler bug.
  for (const std::string& problem : ir::Verify(file->program)) VerifierFailed("", problem);
  files_.push_back(std::move(file));
  return files_.back().get();
}

ir::Program Compilation::Optimize(const ir::Program& program, passes::PassOptions options, std::string* trace) {
  std::lock_guard lock(types_mutex_);
  ir::Program copy = program;
  options.types = types_.get();
  passes::Optimize(copy, options, trace);
  return copy;
}

Expected<ir::Program> Compilation::ParseIr(std::string_view text) {
  std::lock_guard lock(types_mutex_);
  std::string error;
  std::optional<ir::Program> program = ir::Parse(text, *types_, *schema_, &error);
  if (!program) return Error{error};
  std::vector<std::string> problems = ir::Verify(*program);
  // After the file name, as a parse error's position is.
  if (!problems.empty()) return Error{fmt::format(" the IR is not valid: {}", problems.front())};
  return std::move(*program);
}

}  // namespace policy::driver
