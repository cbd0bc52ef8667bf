// Dead code elimination.
//
// Algorithm: mark every node reachable from a function's roots (slot values,
// `when`, prefilters, filters, scores, messages) through operands, then
// rebuild the arena with only the marked nodes, in their order.

#include "compiler/passes/pass.h"
#include "compiler/passes/rewriter.h"

namespace policy::passes {
namespace {

using namespace ir;

class DcePass final : public Pass {
 public:
  std::string_view Name() const override { return "dce"; }

  bool Run(Program& program) override {
    std::vector<uint8_t> live(program.nodes.size(), 0);
    std::vector<NodeId> stack;
    for (const Function& f : program.functions) {
      for (NodeId root : Roots(f)) stack.push_back(root);
    }
    while (!stack.empty()) {
      NodeId id = stack.back();
      stack.pop_back();
      if (live[id]) continue;
      live[id] = 1;
      ForEachOperand(program.nodes[id], [&](NodeId operand) { stack.push_back(operand); });
    }
    size_t before = program.nodes.size();
    program = Rebuild(program, [&](NodeId old, Node node, Program& out) -> NodeId {
      // INVARIANT: a dead node is never an operand of a live one.
      if (!live[old]) return 0;
      return out.Add(std::move(node), program.types[old], program.spans[old], program.reads_node[old] != 0);
    });
    return program.nodes.size() != before;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateDcePass(const PassOptions&) { return std::make_unique<DcePass>(); }

}  // namespace policy::passes
