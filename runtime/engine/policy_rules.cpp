#include "runtime/engine/policy_rules.h"

#include <set>

#include "compiler/ir/ir.h"
#include "runtime/engine/cluster.h"
#include "runtime/engine/engine.h"
#include "runtime/interp/interpreter.h"

namespace policy::engine {

std::vector<PolicyRules> EvaluatePolicyRules(const Engine& engine, const PodPlan& plan, const Cluster& cluster) {
  std::set<std::string> builtins;
  for (const rt::PluginSetting& s : engine.Profile().plugins) builtins.insert(s.name);
  const rt::NodeTable& table = cluster.Table();
  std::vector<PolicyRules> out;
  for (const rt::Plugin& plugin : plan.Plugins()) {
    if (builtins.contains(plugin.name)) continue;
    const ir::Function& fn = plugin.program->functions[plugin.function];
    rt::Interpreter interp(*plugin.program, plan.Pod(), table);
    if (!interp.Applies(plugin.function)) continue;
    PolicyRules r;
    r.plugin = plugin.name;
    for (const ir::Filter& f : fn.filters) r.filters.push_back(f.span);
    r.rejected.assign(fn.filters.size(), 0);
    r.passed.assign(fn.filters.size(), 0);
    for (rt::RowId row : table.LiveRows()) {
      uint64_t mask = interp.FailingFilters(plugin.function, row);
      for (size_t i = 0; i < fn.filters.size(); ++i) {
        bool failed = (mask >> std::min<size_t>(i, 63)) & 1;  // filters past the 64th share the last bit
        ++(failed ? r.rejected[i] : r.passed[i]);
      }
    }
    for (size_t s = 0; s < fn.scores.size(); ++s) {
      r.scores.push_back(fn.scores[s].span);
      std::set<int64_t> values;
      for (rt::RowId row : table.LiveRows()) {
        values.insert(interp.Score(plugin.function, s, row));
        if (values.size() > 1) break;
      }
      r.constant.push_back(values.size() <= 1);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace policy::engine
