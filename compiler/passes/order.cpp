// Rule ordering by estimated cost and selectivity.
//
// Algorithm: bottom-up, estimate each node's evaluation cost (1 per node, a
// builtin's cost from stdlib/builtins.def, a loop's body counted for an
// assumed 8 elements) and, for booleans, the probability that it is true
// (from the table's label statistics when the program is bound to a table:
// the share of nodes a `label_in` accepts; 1/2 when unknown; operands taken
// as independent). Then put first the operand of every `and` that is
// cheapest per chance of deciding it (cost / P(false)), and of every `or`
// the one with the least cost / P(true): the order that minimises expected
// cost under short-circuiting. Every node is pure, so the order never
// changes a result. Filters themselves keep their order: `policyc check`
// reports every failing filter, in the order the policy declares them.

#include <limits>

#include "compiler/passes/node_dictionary.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/rewriter.h"
#include "compiler/lang/builtins.h"

namespace policy::passes {
namespace {

using namespace ir;

constexpr double kAssumedElements = 8;
constexpr double kUnknown = 0.5;

class OrderPass final : public Pass {
 public:
  explicit OrderPass(const NodeDictionary* table) : table_(table) {}

  std::string_view Name() const override { return "order"; }

  bool Run(Program& program) override {
    std::vector<double> cost(program.nodes.size(), 1), p_true(program.nodes.size(), kUnknown);
    bool changed = false;
    for (NodeId id = 0; id < program.nodes.size(); ++id) {
      Node& node = program.nodes[id];
      double c = 1;
      if (const auto* loop = std::get_if<Loop>(&node)) {
        c += cost[loop->collection] + (loop->body ? kAssumedElements * cost[*loop->body] : 0);
      } else {
        ForEachOperand(node, [&](NodeId operand) { c += cost[operand]; });
      }
      if (const auto* call = std::get_if<CallBuiltin>(&node)) c += lang::Builtins()[static_cast<size_t>(call->builtin)].cost;
      if (auto* n = std::get_if<And>(&node)) {
        changed |= Arrange(n->lhs, n->rhs, cost, p_true, /*stop_when=*/false);
        c = 1 + cost[n->lhs] + p_true[n->lhs] * cost[n->rhs];
        p_true[id] = p_true[n->lhs] * p_true[n->rhs];
      } else if (auto* n = std::get_if<Or>(&node)) {
        changed |= Arrange(n->lhs, n->rhs, cost, p_true, /*stop_when=*/true);
        c = 1 + cost[n->lhs] + (1 - p_true[n->lhs]) * cost[n->rhs];
        p_true[id] = 1 - (1 - p_true[n->lhs]) * (1 - p_true[n->rhs]);
      } else if (const auto* n = std::get_if<Not>(&node)) {
        p_true[id] = 1 - p_true[n->operand];
      } else if (const auto* n = std::get_if<BoolConst>(&node)) {
        p_true[id] = n->value ? 1 : 0;
      } else if (const auto* n = std::get_if<LabelIn>(&node)) {
        c = 2;  // a column read and a search in a short sorted list
        if (table_ != nullptr) p_true[id] = table_->LabelShare(n->key, n->domains);
      } else if (std::holds_alternative<TaintScan>(node)) {
        c = 3;  // a bitset test
      }
      cost[id] = c;
    }
    return changed;
  }

 private:
  // Puts first the operand with the least cost per chance of ending the
  // evaluation (an operand equal to `stop_when` ends it); true if swapped.
  static bool Arrange(NodeId& lhs, NodeId& rhs, const std::vector<double>& cost, const std::vector<double>& p_true,
                      bool stop_when) {
    auto rank = [&](NodeId id) {
      double p_stop = stop_when ? p_true[id] : 1 - p_true[id];
      return p_stop <= 0 ? std::numeric_limits<double>::infinity() : cost[id] / p_stop;
    };
    if (rank(rhs) < rank(lhs)) {
      std::swap(lhs, rhs);
      return true;
    }
    return false;
  }

  const NodeDictionary* table_;
};

}  // namespace

/// The table (may be null) gives label statistics for selectivity estimates.
std::unique_ptr<Pass> CreateOrderPass(const PassOptions& o) { return std::make_unique<OrderPass>(o.table); }

}  // namespace policy::passes
