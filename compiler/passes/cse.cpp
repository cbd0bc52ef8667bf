// Common subexpression elimination.
//
// Algorithm: hash-consing in one walk in id order. Two nodes of one function
// with the same kind, payload, type and (already merged) operands are the
// same value, so the second is replaced by the first. Functions are kept
// apart: slot numbers are per function. Every node is pure, so merging never
// changes what is computed, only how often.

#include <unordered_map>

#include <fmt/format.h>

#include "compiler/passes/pass.h"
#include "compiler/passes/rewriter.h"

namespace policy::passes {
namespace {

using namespace ir;

// A string that is equal for structurally equal nodes (operands already renamed).
std::string Key(const Node& node, sema::TypeRef type, size_t owner) {
  std::string key = fmt::format("{}|{}|{}|", owner, static_cast<const void*>(type), node.index());
  std::visit(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, BoolConst>) key += n.value ? "t" : "f";
        if constexpr (std::is_same_v<T, IntConst>) key += fmt::format("{}", n.value);
        if constexpr (std::is_same_v<T, StringConst>) key += fmt::format("{}:{}", n.value.size(), n.value);
        if constexpr (std::is_same_v<T, LoadField>) key += fmt::format("{}", static_cast<int>(n.field));
        if constexpr (std::is_same_v<T, Local>) key += fmt::format("{}", n.slot);
        if constexpr (std::is_same_v<T, Arith>) key += fmt::format("{}", static_cast<int>(n.op));
        if constexpr (std::is_same_v<T, Compare>) key += fmt::format("{}", static_cast<int>(n.op));
        if constexpr (std::is_same_v<T, Loop>) {
          key += fmt::format("{},{},{},{}", static_cast<int>(n.kind), n.first, n.second ? static_cast<int64_t>(*n.second) : -1,
                             n.body.has_value());
        }
        if constexpr (std::is_same_v<T, MakeList>) key += n.is_set ? "s" : "l";
        if constexpr (std::is_same_v<T, CallBuiltin>) key += fmt::format("{}", static_cast<int>(n.builtin));
        if constexpr (std::is_same_v<T, LabelIn>) key += fmt::format("{}:{}[{}]", n.key.size(), n.key, fmt::join(n.domains, ","));
        if constexpr (std::is_same_v<T, TaintScan>) key += fmt::format("{}[{}]", static_cast<int>(n.kind), fmt::join(n.taints, ","));
      },
      node);
  ForEachOperand(node, [&](NodeId id) { key += fmt::format(",{}", id); });
  return key;
}

class CsePass final : public Pass {
 public:
  std::string_view Name() const override { return "cse"; }

  bool Run(Program& program) override {
    std::vector<size_t> owner = Owners(program);
    bool changed = false;
    std::unordered_map<std::string, NodeId> seen;
    program = Rebuild(program, [&](NodeId old, Node node, Program& out) {
      std::string key = Key(node, program.types[old], owner[old]);
      auto it = seen.find(key);
      if (it != seen.end()) {
        changed = true;
        return it->second;
      }
      NodeId id = out.Add(std::move(node), program.types[old], program.spans[old], program.reads_node[old] != 0);
      seen.emplace(std::move(key), id);
      return id;
    });
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateCsePass() { return std::make_unique<CsePass>(); }

}  // namespace policy::passes
