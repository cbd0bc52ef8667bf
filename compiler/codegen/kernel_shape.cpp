// A function's kernel shape: the cache key and the kernels' parameters
// (kernel_shape.h).

#include "compiler/codegen/kernel_shape.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>

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
  void Add(lang::TypeRef t) {  // what codegen depends on: the kinds, through optionals and elements
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

const CallBuiltin* ClusterCall(const Node& node) {
  const auto* call = std::get_if<CallBuiltin>(&node);
  if (call == nullptr || lang::Builtins()[static_cast<size_t>(call->builtin)].reads != lang::BuiltinReads::kCluster) {
    return nullptr;
  }
  return call;
}

// Walks function `f`'s kernel IR twice: once to find what is reachable and
// which constants are structural, once in canonical post-order to hash it.
class ShapeWalk {
 public:
  ShapeWalk(const Program& program, size_t f) : program_(program), fn_(program.functions[f]) {
    size_t n = program.nodes.size();
    reached_.assign(n, 0);
    structural_.assign(n, 0);
    resource_key_.assign(n, 0);
    canonical_.assign(n, -1);
    shape_.first_param.assign(n, -1);
    shape_.cluster_slot.assign(n, -1);
    for (const Filter& x : fn_.filters) roots_.push_back(x.condition);
    for (const Score& sc : fn_.scores) roots_.push_back(sc.value);
  }

  KernelShape Run() {
    Mark();
    for (NodeId root : roots_) Number(root);
    h_.Add(fn_.filters.size());
    for (const Filter& x : fn_.filters) {
      h_.Add(static_cast<uint64_t>(canonical_[x.condition]));
      h_.Add(x.each_collection.has_value());
    }
    h_.Add(fn_.scores.size());
    for (const Score& sc : fn_.scores) h_.Add(static_cast<uint64_t>(canonical_[sc.value]));
    h_.Add(shape_.divides);
    shape_.key = h_.Key();
    return std::move(shape_);
  }

 private:
  // The nodes the kernels evaluate for `id`: its operands; a let's or a def
  // argument's value for a Local; nothing for a cluster call (the runtime
  // computes its column).
  template <typename F>
  void Children(NodeId id, F&& visit) const {
    const Node& node = program_.nodes[id];
    if (ClusterCall(node) != nullptr) return;
    if (const auto* local = std::get_if<Local>(&node)) {
      const Slot& slot = fn_.slots[local->slot];
      if (slot.value) visit(*slot.value);
      return;
    }
    VisitOperands(node, visit);
  }

  // Whether `id` is a `node.allocatable/requested/scoringRequested[NAME]`.
  bool NodeResourceIndex(const Node& node) const {
    const auto* index = std::get_if<Index>(&node);
    if (index == nullptr || !std::holds_alternative<StringConst>(program_.nodes[index->key])) return false;
    const auto* load = std::get_if<LoadField>(&program_.nodes[index->object]);
    if (load == nullptr || !std::holds_alternative<NodeRoot>(program_.nodes[load->object])) return false;
    return load->field == lang::FieldId::kNodeAllocatable || load->field == lang::FieldId::kNodeRequested ||
           load->field == lang::FieldId::kNodeScoringRequested;
  }

  void MarkStructural(NodeId id) {
    if (std::holds_alternative<IntConst>(program_.nodes[id])) structural_[id] = 1;
  }

  // Reachability; constants the code generator builds on (multipliers,
  // divisors, muldiv's operands, interpolate's points); whether it divides
  // by a value.
  void Mark() {
    std::vector<NodeId> stack(roots_.rbegin(), roots_.rend());
    while (!stack.empty()) {
      NodeId id = stack.back();
      stack.pop_back();
      if (reached_[id]) continue;
      reached_[id] = 1;
      const Node& node = program_.nodes[id];
      if (const auto* a = std::get_if<Arith>(&node)) {
        if (a->op == ArithOp::kMul) MarkStructural(a->lhs), MarkStructural(a->rhs);
        if (a->op == ArithOp::kDiv || a->op == ArithOp::kMod) {
          MarkStructural(a->rhs);
          shape_.divides |= !std::holds_alternative<IntConst>(program_.nodes[a->rhs]);
        }
      }
      if (const auto* c = std::get_if<CallBuiltin>(&node); c && c->builtin == lang::BuiltinId::kMulDiv) {
        shape_.divides = true;
        for (NodeId arg : c->args) MarkStructural(arg);
      }
      if (const auto* list = std::get_if<MakeList>(&node)) {
        for (NodeId e : list->elements) MarkStructural(e);
      }
      bool resource_index = NodeResourceIndex(node);
      Children(id, [&](NodeId child) {
        // A string read only as a resource's name is a slot's name, not code.
        if (resource_index && child == std::get<Index>(node).key) {
          resource_key_[child] |= 1;
        } else {
          resource_key_[child] |= 2;
        }
        stack.push_back(child);
      });
    }
  }

  // Canonical post-order numbering from `root`, hashing each node as it is
  // numbered: kind, type, whether it reads the node, payload (parameters
  // abstracted), operands by canonical number.
  void Number(NodeId root) {
    std::vector<std::pair<NodeId, bool>> stack{{root, false}};
    std::vector<NodeId> children;
    while (!stack.empty()) {
      auto [id, expanded] = stack.back();
      stack.pop_back();
      if (canonical_[id] >= 0) continue;
      if (!expanded) {
        stack.emplace_back(id, true);
        children.clear();
        Children(id, [&](NodeId child) { children.push_back(child); });
        for (auto it = children.rbegin(); it != children.rend(); ++it) {
          if (canonical_[*it] < 0) stack.emplace_back(*it, false);
        }
        continue;
      }
      Record(id);
      Children(id, [&](NodeId child) { h_.Add(static_cast<uint64_t>(canonical_[child])); });
      canonical_[id] = next_++;
    }
  }

  void Params(NodeId id) { shape_.first_param[id] = static_cast<int32_t>(shape_.params.size()); }

  void Record(NodeId id) {
    const Node& node = program_.nodes[id];
    h_.Add(static_cast<uint64_t>(node.index()));
    h_.Add(program_.types[id]);
    h_.Add(program_.reads_node[id]);
    if (const auto* c = std::get_if<IntConst>(&node); c && !structural_[id]) {
      Params(id);
      shape_.params.push_back(c->value);
    } else if (const auto* label = std::get_if<LabelIn>(&node)) {
      h_.Add(label->key);
      h_.Add(label->domains.size());
      Params(id);
      for (uint32_t d : label->domains) shape_.params.push_back(d);
    } else if (const auto* scan = std::get_if<TaintScan>(&node)) {
      std::vector<uint64_t> mask = TaintMask(*scan);
      h_.Add(static_cast<uint64_t>(scan->kind));
      h_.Add(mask.size());
      Params(id);
      for (uint64_t word : mask) shape_.params.push_back(static_cast<int64_t>(word));
    } else if (const CallBuiltin* call = ClusterCall(node)) {
      h_.Add(static_cast<uint64_t>(call->builtin));
      bool args_read_node = false;
      for (NodeId a : call->args) args_read_node |= program_.reads_node[a] != 0;
      h_.Add(args_read_node);
      shape_.cluster_slot[id] = static_cast<int32_t>(shape_.cluster.size());
      shape_.cluster.push_back(id);
    } else if (const auto* local = std::get_if<Local>(&node)) {
      const Slot& slot = fn_.slots[local->slot];
      h_.Add(static_cast<uint64_t>(slot.kind));
      if (slot.kind != Slot::Kind::kLet) h_.Add(local->slot);
    } else if (const auto* name = std::get_if<StringConst>(&node); name && resource_key_[id] == 1) {
      // Its order among the resources read, not its text.
      std::vector<std::string>& names = shape_.resource_names;
      auto it = std::find(names.begin(), names.end(), name->value);
      h_.Add(static_cast<uint64_t>(it - names.begin()));
      if (it == names.end()) names.push_back(name->value);
    } else {
      VisitPayload(node, h_);
    }
  }

  const Program& program_;
  const Function& fn_;
  std::vector<NodeId> roots_;
  std::vector<uint8_t> reached_, structural_;
  std::vector<uint8_t> resource_key_;  // bit 0: read as a node resource's name; bit 1: used otherwise
  std::vector<int32_t> canonical_;
  int32_t next_ = 0;
  Hasher h_;
  KernelShape shape_;
};

}  // namespace

KernelShape ShapeOf(const Program& program, size_t f) { return ShapeWalk(program, f).Run(); }

std::shared_ptr<const CompiledFunction> BindShape(std::shared_ptr<const CompiledFunction> kernels, KernelShape shape) {
  struct Bound {
    std::shared_ptr<const CompiledFunction> code;  // keeps the kernels' code loaded
    CompiledFunction kernels;
  };
  auto bound = std::make_shared<Bound>();
  bound->kernels = *kernels;
  bound->kernels.params = std::move(shape.params);
  bound->kernels.cluster = std::move(shape.cluster);
  if (kernels->resource_names != shape.resource_names) {
    const std::vector<std::string>& compiled = kernels->resource_names;
    for (ResourceSlot& slot : bound->kernels.resources) {
      auto it = std::find(compiled.begin(), compiled.end(), slot.name);
      if (it != compiled.end()) slot.name = shape.resource_names[static_cast<size_t>(it - compiled.begin())];
    }
    bound->kernels.resource_names = std::move(shape.resource_names);
  }
  bound->code = std::move(kernels);
  return std::shared_ptr<const CompiledFunction>(bound, &bound->kernels);
}

std::vector<uint64_t> TaintMask(const TaintScan& scan) {
  std::vector<uint64_t> mask(scan.taints.empty() ? 0 : scan.taints.back() / 64 + 1, 0);
  for (uint32_t t : scan.taints) mask[t / 64] |= uint64_t{1} << (t % 64);
  return mask;
}

}  // namespace policy::codegen
