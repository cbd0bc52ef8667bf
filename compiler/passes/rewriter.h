#pragma once
/// Rebuilding a program node by node: the common skeleton of the passes.
///
/// Nodes are visited in id order (operands before users). For each, the
/// pass sees the node with operands already renamed to the new program and
/// returns the new id it stands for: a copy, a replacement, or an existing
/// node. Slots, filters, scores and messages are renamed at the end.

#include <functional>
#include <vector>

#include "compiler/ir/ir.h"

namespace policy::passes {

/// Renames every operand of `node` through `map`.
ir::Node RenameOperands(ir::Node node, const std::vector<ir::NodeId>& map);

/// `node` with every operand replaced by `f(operand)`, in operand order.
ir::Node MapOperands(ir::Node node, const std::function<ir::NodeId(ir::NodeId)>& f);

/// The function each node belongs to (lowering gives every function its own
/// nodes), by reachability from the roots; SIZE_MAX for unreachable nodes.
std::vector<size_t> Owners(const ir::Program& program);

/// Calls `f` on every operand id of `node`.
void ForEachOperand(const ir::Node& node, const std::function<void(ir::NodeId)>& f);

/// Builds a new program from `old`: `transform(old_id, renamed_node, out)`
/// returns the new id for `old_id` (adding to `out` as needed).
ir::Program Rebuild(const ir::Program& old,
                    const std::function<ir::NodeId(ir::NodeId, ir::Node, ir::Program&)>& transform);

/// Every root of a function: slot values, `when`, prefilters, filters,
/// scores and message values.
std::vector<ir::NodeId> Roots(const ir::Function& function);

}  // namespace policy::passes
