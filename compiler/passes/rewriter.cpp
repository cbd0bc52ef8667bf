#include "compiler/passes/rewriter.h"

namespace policy::passes {

namespace {

template <typename F>
void VisitOperands(ir::Node& node, F&& f) {
  std::visit(
      [&](auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ir::LoadField>) f(n.object);
        if constexpr (std::is_same_v<T, ir::Index>) f(n.object), f(n.key);
        if constexpr (std::is_same_v<T, ir::Not> || std::is_same_v<T, ir::Negate> ||
                      std::is_same_v<T, ir::IntToQuantity>) {
          f(n.operand);
        }
        if constexpr (std::is_same_v<T, ir::Arith> || std::is_same_v<T, ir::Compare> || std::is_same_v<T, ir::And> ||
                      std::is_same_v<T, ir::Or>) {
          f(n.lhs), f(n.rhs);
        }
        if constexpr (std::is_same_v<T, ir::Member>) f(n.element), f(n.collection);
        if constexpr (std::is_same_v<T, ir::Coalesce>) f(n.value), f(n.fallback);
        if constexpr (std::is_same_v<T, ir::Select>) f(n.condition), f(n.then_value), f(n.else_value);
        if constexpr (std::is_same_v<T, ir::Loop>) {
          f(n.collection);
          if (n.body) f(*n.body);
        }
        if constexpr (std::is_same_v<T, ir::MakeList>) {
          for (ir::NodeId& e : n.elements) f(e);
        }
        if constexpr (std::is_same_v<T, ir::CallBuiltin>) {
          for (ir::NodeId& a : n.args) f(a);
        }
      },
      node);
}

void RenameMessage(ir::Message& m, const std::vector<ir::NodeId>& map) {
  for (ir::Message::Part& p : m.parts) {
    if (p.value) p.value = map[*p.value];
  }
}

void RenameFilter(ir::Filter& f, const std::vector<ir::NodeId>& map) {
  if (f.each_collection) f.each_collection = map[*f.each_collection];
  f.condition = map[f.condition];
  RenameMessage(f.reason, map);
  RenameMessage(f.detail, map);
}

}  // namespace

ir::Node MapOperands(ir::Node node, const std::function<ir::NodeId(ir::NodeId)>& f) {
  VisitOperands(node, [&](ir::NodeId& id) { id = f(id); });
  return node;
}

std::vector<size_t> Owners(const ir::Program& program) {
  std::vector<size_t> owner(program.nodes.size(), SIZE_MAX);
  for (size_t f = 0; f < program.functions.size(); ++f) {
    std::vector<ir::NodeId> stack = Roots(program.functions[f]);
    while (!stack.empty()) {
      ir::NodeId id = stack.back();
      stack.pop_back();
      if (owner[id] == f) continue;
      owner[id] = f;
      ForEachOperand(program.nodes[id], [&](ir::NodeId operand) { stack.push_back(operand); });
    }
  }
  return owner;
}

ir::Node RenameOperands(ir::Node node, const std::vector<ir::NodeId>& map) {
  VisitOperands(node, [&](ir::NodeId& id) { id = map[id]; });
  return node;
}

void ForEachOperand(const ir::Node& node, const std::function<void(ir::NodeId)>& f) {
  ir::Node copy = node;
  VisitOperands(copy, [&](ir::NodeId& id) { f(id); });
}

ir::Program Rebuild(const ir::Program& old,
                    const std::function<ir::NodeId(ir::NodeId, ir::Node, ir::Program&)>& transform) {
  ir::Program out;
  out.source = old.source;
  std::vector<ir::NodeId> map(old.nodes.size());
  for (ir::NodeId id = 0; id < old.nodes.size(); ++id) map[id] = transform(id, RenameOperands(old.nodes[id], map), out);
  out.functions = old.functions;
  for (ir::Function& f : out.functions) {
    for (ir::Slot& s : f.slots) {
      if (s.value) s.value = map[*s.value];
    }
    if (f.when) f.when = map[*f.when];
    for (ir::Filter& p : f.prefilters) RenameFilter(p, map);
    for (ir::Filter& p : f.filters) RenameFilter(p, map);
    for (ir::Score& s : f.scores) s.value = map[s.value];
  }
  return out;
}

std::vector<ir::NodeId> Roots(const ir::Function& f) {
  std::vector<ir::NodeId> roots;
  for (const ir::Slot& s : f.slots) {
    if (s.value) roots.push_back(*s.value);
  }
  if (f.when) roots.push_back(*f.when);
  auto filter = [&](const ir::Filter& x) {
    if (x.each_collection) roots.push_back(*x.each_collection);
    roots.push_back(x.condition);
    for (const ir::Message* m : {&x.reason, &x.detail}) {
      for (const ir::Message::Part& p : m->parts) {
        if (p.value) roots.push_back(*p.value);
      }
    }
  };
  for (const ir::Filter& x : f.prefilters) filter(x);
  for (const ir::Filter& x : f.filters) filter(x);
  for (const ir::Score& s : f.scores) roots.push_back(s.value);
  return roots;
}

}  // namespace policy::passes
