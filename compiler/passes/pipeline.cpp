#include "compiler/passes/pipeline.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "compiler/passes/lower.h"
#include "compiler/syntax/parser.h"

namespace policy::passes {

namespace {

// Whether `value` fits a param of `type`.
bool Fits(const ParamValue& value, sema::TypeRef type) {
  using sema::TypeKind;
  if (std::holds_alternative<int64_t>(value)) return type->kind == TypeKind::kInt || type->kind == TypeKind::kQuantity;
  if (std::holds_alternative<bool>(value)) return type->kind == TypeKind::kBool;
  if (std::holds_alternative<std::string>(value)) return type->kind == TypeKind::kString;
  if (std::holds_alternative<std::vector<std::string>>(value)) {
    return type->kind == TypeKind::kList && type->element->kind == TypeKind::kString;
  }
  return type->kind == TypeKind::kList && type->element->kind == TypeKind::kInt;
}

bool CheckParams(const CompiledFile& file, const ParamValues& params, DiagnosticSink& diags) {
  bool ok = true;
  for (const auto& [policy_name, values] : params) {
    for (size_t p = 0; p < file.module.policies.size(); ++p) {
      const syntax::PolicyDecl& policy = file.module.policies[p];
      if (policy.name != policy_name) continue;
      for (const auto& [name, value] : values) {
        bool found = false;
        for (const auto& [member, type] : file.checked.policies[p].params) {
          const auto& decl = std::get<syntax::ParamDecl>(policy.members[member]);
          if (decl.name != name) continue;
          found = true;
          if (!Fits(value, type)) {
            diags.Error(DiagCode::kBadProfile, decl.span,
                        fmt::format("the profile gives `{}` of {} a value that is not a `{}`", name, policy_name,
                                    sema::ToString(type)));
            ok = false;
          }
        }
        if (!found) {
          diags.Error(DiagCode::kBadProfile, policy.name_span,
                      fmt::format("the profile sets `{}`, which {} does not declare as a param", name, policy_name));
          ok = false;
        }
      }
    }
  }
  return ok;
}

}  // namespace

std::unique_ptr<CompiledFile> CompileFile(const Source& source, sema::TypeTable& types, const sema::Schema& schema,
                                          DiagnosticSink& diags, const ParamValues* params) {
  std::optional<syntax::Module> module = syntax::ParseAnyPolicyFile(source, diags);
  if (!module) return nullptr;
  auto file = std::make_unique<CompiledFile>();
  file->module = std::move(*module);
  std::optional<sema::CheckedModule> checked = sema::Check(file->module, types, schema, diags);
  if (!checked) return nullptr;
  file->checked = std::move(*checked);
  file->checked.module = &file->module;
  if (params != nullptr && !CheckParams(*file, *params, diags)) return nullptr;
  file->program = Lower(file->checked, types, params);
  // The verifier is cheap: it runs in every build, and a problem is a compiler bug.
  for (const std::string& problem : ir::Verify(file->program)) {
    std::fprintf(stderr, "policyc: IR verifier: %s\n", problem.c_str());
    std::abort();
  }
  return file;
}

}  // namespace policy::passes
