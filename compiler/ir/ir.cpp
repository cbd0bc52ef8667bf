#include "compiler/ir/ir.h"

#include "compiler/ir/traits.h"

#include <fmt/format.h>

namespace policy::ir {

NodeId Program::Add(Node node, lang::TypeRef type, Span span, bool node_dependent) {
  nodes.push_back(std::move(node));
  types.push_back(type);
  spans.push_back(span);
  reads_node.push_back(node_dependent);
  return static_cast<NodeId>(nodes.size() - 1);
}

namespace {

// Operands of a node, for the verifier.
std::vector<NodeId> Operands(const Node& node) {
  std::vector<NodeId> ids;
  VisitOperands(node, [&](NodeId id) { ids.push_back(id); });
  return ids;
}

}  // namespace

std::vector<std::string> Verify(const Program& p) {
  std::vector<std::string> problems;
  size_t n = p.nodes.size();
  if (p.types.size() != n || p.spans.size() != n || p.reads_node.size() != n) {
    problems.push_back("side tables and nodes differ in size");
    return problems;
  }
  for (NodeId id = 0; id < n; ++id) {
    if (p.types[id] == nullptr) problems.push_back(fmt::format("%{} has no type", id));
    for (NodeId operand : Operands(p.nodes[id])) {
      // INVARIANT: operands come before their users (the arena is in evaluation order).
      if (operand >= id) problems.push_back(fmt::format("%{} uses %{}, defined later", id, operand));
    }
  }
  for (const Function& f : p.functions) {
    auto check_slot = [&](SlotId s, std::string_view where) {
      if (s >= f.slots.size()) problems.push_back(fmt::format("{}: {} names slot ${}, out of range", f.name, where, s));
    };
    auto check_node = [&](NodeId id, std::string_view where) {
      if (id >= n) problems.push_back(fmt::format("{}: {} names %{}, out of range", f.name, where, id));
    };
    for (const Slot& s : f.slots) {
      if (s.value) check_node(*s.value, "a slot");
    }
    for (const Filter& filter : f.filters) {
      check_node(filter.condition, "a filter");
      if (filter.each_first) check_slot(*filter.each_first, "a filter");
    }
    for (const Score& score : f.scores) check_node(score.value, "a score");
  }
  for (NodeId id = 0; id < n; ++id) {
    if (const auto* local = std::get_if<Local>(&p.nodes[id])) {
      bool found = false;
      for (const Function& f : p.functions) found |= local->slot < f.slots.size();
      if (!found) problems.push_back(fmt::format("%{} reads slot ${}, which no function has", id, local->slot));
    }
  }
  return problems;
}

}  // namespace policy::ir
