// The IR as text: one line per node, `%id = op operands : type`, then the
// functions with their slots, filters and scores.

#include <fmt/format.h>

#include "compiler/ir/ir.h"
#include "compiler/ir/traits.h"
#include "support/json_writer.h"

namespace policy::ir {
namespace {

std::string FieldName(lang::FieldId field) {
  static constexpr std::string_view kNames[] = {
#define FIELD(id, record, name, type, side, doc) #record "." name,
#include "compiler/lang/schema.def"
#undef FIELD
  };
  return std::string(kNames[static_cast<size_t>(field)]);
}

std::string Ref(NodeId id) { return fmt::format("%{}", id); }

struct Printer {
  std::string operator()(const NoneConst&) const { return std::string(kMnemonic<NoneConst>); }
  std::string operator()(const BoolConst& n) const { return n.value ? "true" : "false"; }
  std::string operator()(const IntConst& n) const { return fmt::format("{} {}", kMnemonic<IntConst>, n.value); }
  std::string operator()(const StringConst& n) const { return fmt::format("{} {}", kMnemonic<StringConst>, JsonQuote(n.value)); }
  std::string operator()(const PodRoot&) const { return std::string(kMnemonic<PodRoot>); }
  std::string operator()(const NodeRoot&) const { return std::string(kMnemonic<NodeRoot>); }
  std::string operator()(const LoadField& n) const {
    return fmt::format("{} {} {}", kMnemonic<LoadField>, FieldName(n.field), Ref(n.object));
  }
  std::string operator()(const Local& n) const { return fmt::format("{} ${}", kMnemonic<Local>, n.slot); }
  std::string operator()(const Arith& n) const { return fmt::format("{} {} {}", Name(n.op), Ref(n.lhs), Ref(n.rhs)); }
  std::string operator()(const Compare& n) const { return fmt::format("{} {} {}", Name(n.op), Ref(n.lhs), Ref(n.rhs)); }
  // The kinds whose printed form is the mnemonic and the operands.
  template <typename T>
    requires(!kMnemonic<T>.empty())
  std::string operator()(const T& n) const {
    std::string out(kMnemonic<T>);
    ForOperandsOf(n, [&](NodeId id) { out += " " + Ref(id); });
    return out;
  }
  std::string operator()(const Loop& n) const {
    std::string out = fmt::format("{} ${}", Name(n.kind), n.first);
    if (n.second) out += fmt::format(", ${}", *n.second);
    out += " in " + Ref(n.collection);
    if (n.body) out += ": " + Ref(*n.body);
    return out;
  }
  std::string operator()(const MakeList& n) const {
    std::vector<std::string> refs;
    for (NodeId e : n.elements) refs.push_back(Ref(e));
    return fmt::format("{} [{}]", n.is_set ? "set" : "list", fmt::join(refs, ", "));
  }
  std::string operator()(const LabelIn& n) const {
    return fmt::format("{} {} [{}]", kMnemonic<LabelIn>, JsonQuote(n.key), fmt::join(n.domains, ", "));
  }
  std::string operator()(const TaintScan& n) const {
    return fmt::format("{}{} [{}]", kTaintScanPrefix, Name(n.kind), fmt::join(n.taints, ", "));
  }
  std::string operator()(const CallBuiltin& n) const {
    static constexpr std::string_view kNames[] = {
#define BUILTIN(id, name, kind, arity, cost, reads, backends, doc) name,
#include "stdlib/builtins.def"
#undef BUILTIN
    };
    std::vector<std::string> refs;
    for (NodeId e : n.args) refs.push_back(Ref(e));
    return fmt::format("{} {}({})", kMnemonic<CallBuiltin>, kNames[static_cast<size_t>(n.builtin)], fmt::join(refs, ", "));
  }
};

std::string MessageText(const Message& m) {
  std::string out;
  for (const Message::Part& p : m.parts) out += p.value ? "{" + Ref(*p.value) + "}" : p.text;
  return JsonQuote(out);
}

}  // namespace

std::string PrintNode(const Program& program, NodeId id) {
  return fmt::format("{} : {}", std::visit(Printer{}, program.nodes[id]), lang::ToString(program.types[id]));
}

std::string Print(const Program& program) {
  std::string out;
  for (NodeId id = 0; id < program.nodes.size(); ++id) {
    out += fmt::format("%{} = {}{}\n", id, PrintNode(program, id), program.reads_node[id] ? "" : "  ; pod-constant");
  }
  for (const Function& f : program.functions) {
    out += fmt::format("\nfunction {} weight {}\n", f.name, f.weight);
    for (SlotId s = 0; s < f.slots.size(); ++s) {
      static constexpr const char* kKinds[] = {"let", "arg", "loop"};
      out += fmt::format("  slot ${} {} {}{} : {}\n", s, kKinds[static_cast<int>(f.slots[s].kind)], f.slots[s].name,
                         f.slots[s].value ? " = " + Ref(*f.slots[s].value) : "", lang::ToString(f.slots[s].type));
    }
    if (f.when) out += fmt::format("  when {}\n", Ref(*f.when));
    for (const Filter& prefilter : f.prefilters) {
      out += fmt::format("  prefilter {}{}{}{}\n", Ref(prefilter.condition),
                         prefilter.reason.parts.empty() ? "" : " reason " + MessageText(prefilter.reason),
                         prefilter.detail.parts.empty() ? "" : " detail " + MessageText(prefilter.detail),
                         prefilter.unresolvable ? " unresolvable" : "");
    }
    for (const Filter& filter : f.filters) {
      out += "  filter ";
      if (filter.each_collection) {
        out += fmt::format("for ${}{} in {}: ", *filter.each_first,
                           filter.each_second ? fmt::format(", ${}", *filter.each_second) : "", Ref(*filter.each_collection));
      }
      out += Ref(filter.condition);
      if (!filter.reason.parts.empty()) out += " reason " + MessageText(filter.reason);
      if (!filter.detail.parts.empty()) out += " detail " + MessageText(filter.detail);
      if (filter.unresolvable) out += " unresolvable";
      if (filter.aborts) out += " aborts";
      out += '\n';
    }
    for (const Score& score : f.scores) {
      out += fmt::format("  score {} normalize {}\n", Ref(score.value), lang::ToString(score.normalize));
    }
  }
  return out;
}

}  // namespace policy::ir
