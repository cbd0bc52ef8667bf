// Rule ordering by estimated cost.
//
// Algorithm: estimate each node's evaluation cost bottom-up (1 per node, a
// builtin's cost from stdlib/builtins.def, a loop's body counted for an
// assumed 8 elements), then put the cheaper operand of every `and` and `or`
// first, so that short-circuiting skips the expensive side as often as
// possible. Every node is pure, so the order never changes a result. Filters
// themselves keep their order: `policyc check` reports every failing filter,
// in the order the policy declares them.

#include "compiler/passes/pass.h"
#include "compiler/passes/rewriter.h"
#include "compiler/sema/builtins.h"

namespace policy::passes {
namespace {

using namespace ir;

constexpr int64_t kAssumedElements = 8;

class OrderPass final : public Pass {
 public:
  std::string_view Name() const override { return "order"; }

  bool Run(Program& program) override {
    std::vector<int64_t> cost(program.nodes.size(), 1);
    bool changed = false;
    for (NodeId id = 0; id < program.nodes.size(); ++id) {
      Node& node = program.nodes[id];
      int64_t c = 1;
      if (const auto* loop = std::get_if<Loop>(&node)) {
        c += cost[loop->collection] + (loop->body ? kAssumedElements * cost[*loop->body] : 0);
      } else {
        ForEachOperand(node, [&](NodeId operand) { c += cost[operand]; });
      }
      if (const auto* call = std::get_if<CallBuiltin>(&node)) c += sema::Builtins()[static_cast<size_t>(call->builtin)].cost;
      cost[id] = c;
      auto swap_if_cheaper = [&](NodeId& lhs, NodeId& rhs) {
        if (cost[rhs] < cost[lhs]) {
          std::swap(lhs, rhs);
          changed = true;
        }
      };
      if (auto* n = std::get_if<And>(&node)) swap_if_cheaper(n->lhs, n->rhs);
      if (auto* n = std::get_if<Or>(&node)) swap_if_cheaper(n->lhs, n->rhs);
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateOrderPass() { return std::make_unique<OrderPass>(); }

}  // namespace policy::passes
