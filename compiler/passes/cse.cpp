// Common subexpression elimination.
//
// Algorithm: hash-consing in one walk in id order. Two nodes of one function
// with the same kind, payload, type and (already merged) operands are the
// same value, so the second is replaced by the first. Functions are kept
// apart: slot numbers are per function. Every node is pure, so merging never
// changes what is computed, only how often.

#include <unordered_map>

#include <fmt/format.h>

#include "compiler/ir/traits.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/rewriter.h"

namespace policy::passes {
namespace {

using namespace ir;

// A string that is equal for structurally equal nodes (operands already
// renamed): owner, type, payload (ir/traits.h), operands.
std::string Key(const Node& node, lang::TypeRef type, size_t owner) {
  struct Sink {
    std::string& key;
    void Int(uint64_t v) { key += fmt::format("{},", v); }
    void Text(std::string_view s) { key += fmt::format("{}:{},", s.size(), s); }
  };
  std::string key = fmt::format("{}|{}|", owner, static_cast<const void*>(type));
  VisitPayload(node, Sink{key});
  key += '|';
  VisitOperands(node, [&](NodeId id) { key += fmt::format("{},", id); });
  return key;
}

class CsePass final : public Pass {
 public:
  std::string_view Name() const override { return "cse"; }

  bool Run(Program& program) override {
    std::vector<size_t> owner = Owners(program);
    bool changed = false;
    std::unordered_map<std::string, NodeId> seen;
    program = Rebuild(program, [&](NodeId old, Node node, Program& out) {
      std::string key = Key(node, program.types[old], owner[old]);
      auto it = seen.find(key);
      if (it != seen.end()) {
        changed = true;
        return it->second;
      }
      NodeId id = out.Add(std::move(node), program.types[old], program.spans[old], program.reads_node[old] != 0);
      seen.emplace(std::move(key), id);
      return id;
    });
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateCsePass(const PassOptions&) { return std::make_unique<CsePass>(); }

}  // namespace policy::passes
