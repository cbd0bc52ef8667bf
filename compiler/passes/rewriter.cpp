#include "compiler/passes/rewriter.h"

#include "compiler/ir/traits.h"

namespace policy::passes {

namespace {

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
  ir::VisitOperands(node, [&](ir::NodeId& id) { id = f(id); });
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
  ir::VisitOperands(node, [&](ir::NodeId& id) { id = map[id]; });
  return node;
}

void ForEachOperand(const ir::Node& node, const std::function<void(ir::NodeId)>& f) {
  ir::VisitOperands(node, [&](ir::NodeId id) { f(id); });
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
