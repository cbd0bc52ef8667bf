#include "compiler/codegen/template_key.h"

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include "compiler/ir/traits.h"

namespace policy::codegen {
namespace {

using namespace ir;

// 128 bits of structural hash: two 64-bit multiply-xorshift streams.
class Hasher {
 public:
  void Add(uint64_t v) {
    a_ = Mix(a_ ^ v, 0x9E3779B97F4A7C15ULL);
    b_ = Mix(b_ + v, 0xC2B2AE3D27D4EB4FULL);
  }
  void Add(std::string_view s) {
    Add(s.size());
    for (char c : s) Add(static_cast<uint8_t>(c));
  }
  // The payload sink of ir::VisitPayload.
  void Int(uint64_t v) { Add(v); }
  void Text(std::string_view s) { Add(s); }
  void Add(sema::TypeRef t) {  // what codegen depends on: the kinds, through optionals and elements
    for (int depth = 0; t != nullptr && depth < 4; ++depth, t = t->element) Add(static_cast<uint64_t>(t->kind) + 1);
    Add(uint64_t{0});
  }
  std::string Key() const { return std::string(reinterpret_cast<const char*>(&a_), 8) + std::string(reinterpret_cast<const char*>(&b_), 8); }

 private:
  static uint64_t Mix(uint64_t x, uint64_t k) {
    x *= k;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ULL;
    return x ^ (x >> 32);
  }
  uint64_t a_ = 0x243F6A8885A308D3ULL, b_ = 0x13198A2E03707344ULL;
};

}  // namespace

// The kernel cache's key: a hash of what the kernels compute, nothing else
// (no spans, no messages, no names), so pods of one template share their
// kernels: the nodes the filters, scores and lets reach, with their fields,
// operands and types' kinds (ir/traits.h).
std::string TemplateKey(const Program& program, size_t f) {
  const Function& fn = program.functions[f];
  std::vector<uint8_t> seen(program.nodes.size(), 0);
  std::vector<NodeId> stack;
  for (const Filter& x : fn.filters) stack.push_back(x.condition);
  for (const Score& sc : fn.scores) stack.push_back(sc.value);
  for (const Slot& slot : fn.slots) {
    if (slot.value) stack.push_back(*slot.value);
  }
  Hasher h;
  while (!stack.empty()) {  // the reachable nodes
    NodeId id = stack.back();
    stack.pop_back();
    if (seen[id]) continue;
    seen[id] = 1;
    VisitOperands(program.nodes[id], [&](NodeId operand) { stack.push_back(operand); });
  }
  for (NodeId id = 0; id < program.nodes.size(); ++id) {
    if (!seen[id]) continue;
    const Node& node = program.nodes[id];
    h.Add(id);
    h.Add(program.types[id]);
    h.Add(program.reads_node[id]);
    VisitPayload(node, h);
    VisitOperands(node, [&](NodeId operand) { h.Add(operand); });
  }
  h.Add(fn.filters.size());
  for (const Filter& x : fn.filters) h.Add(x.condition);
  h.Add(fn.scores.size());
  for (const Score& sc : fn.scores) h.Add(sc.value);
  h.Add(fn.slots.size());
  for (const Slot& slot : fn.slots) {
    h.Add(static_cast<uint64_t>(slot.kind));
    h.Add(slot.value ? *slot.value + 1 : 0);
  }
  return h.Key();
}

}  // namespace policy::codegen
