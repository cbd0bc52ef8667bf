// Rendering a placement for people (text) and programs (JSON, as
// ../shared/spec/policyc-check.md fixes it).

#include "cli/report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>


namespace policy::cli {

namespace {

std::string NodeList(const std::vector<std::string>& names) {
  constexpr size_t kShown = 8;
  if (names.size() <= kShown) return fmt::format("{}", fmt::join(names, ", "));
  std::vector<std::string> head(names.begin(), names.begin() + kShown);
  return fmt::format("{}, ... and {} more (--all-nodes lists them)", fmt::join(head, ", "), names.size() - kShown);
}

void NodeDetail(const rt::NodeResult& node, std::string& out) {
  if (node.feasible) {
    out += fmt::format("\n{}: feasible, score {}\n", node.name, node.score);
    for (const auto& [plugin, score] : node.scores) out += fmt::format("  {:<34} {:>3}\n", plugin, score);
    return;
  }
  out += fmt::format("\n{}: not feasible\n", node.name);
  for (const rt::NodeReason& r : node.reasons) {
    out += fmt::format("  {}: {}\n", r.plugin, r.reason);
    if (!r.detail.empty()) out += fmt::format("    {}\n", r.detail);
  }
}

}  // namespace

std::string PlacementText(const std::string& pod, const rt::Placement& p, const std::vector<std::string>& nodes,
                          bool all_nodes, const PodNotes& notes) {
  std::string out = fmt::format("pod {}: {}\n", pod, p.summary);
  for (const std::string& n : notes.notes) out += fmt::format("note: {}\n", n);
  // Every reason of every failing plugin, with the nodes it applies to.
  std::vector<std::pair<std::string, std::string>> order;  // (plugin, reason) in first-seen order
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> groups;
  for (const rt::NodeResult& node : p.nodes) {
    for (const rt::NodeReason& r : node.reasons) {
      auto key = std::make_pair(r.plugin, r.reason);
      auto& names = groups[key];
      if (names.empty()) order.push_back(key);
      if (names.empty() || names.back() != node.name) names.push_back(node.name);
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return groups[a].size() > groups[b].size();
  });
  if (!order.empty()) out += "\nwhy nodes were rejected (every failing plugin, not only the first):\n";
  for (const auto& key : order) {
    const auto& names = groups[key];
    out += fmt::format("  {} node{}  {}  [{}]\n    {}\n", names.size(), names.size() == 1 ? "" : "s", key.second,
                       key.first, NodeList(names));
  }
  if (p.selected && !notes.gated) {
    const rt::NodeResult& best = p.nodes[*p.selected];
    out += fmt::format("\nselected: {} (score {})\n", best.name, best.score);
    std::vector<const rt::NodeResult*> ranked;
    for (const rt::NodeResult& n : p.nodes) {
      if (n.feasible) ranked.push_back(&n);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](auto* a, auto* b) { return a->score > b->score; });
    out += "feasible nodes by score:\n";
    for (size_t i = 0; i < ranked.size() && i < 10; ++i) {
      std::vector<std::string> parts;
      for (const auto& [plugin, score] : ranked[i]->scores) parts.push_back(fmt::format("{} {}", plugin, score));
      out += fmt::format("  {:<40} {:>5}  ({})\n", ranked[i]->name, ranked[i]->score, fmt::join(parts, ", "));
    }
    if (ranked.size() > 10) out += fmt::format("  ... and {} more\n", ranked.size() - 10);
  }
  for (const rt::NodeResult& node : p.nodes) {
    if (all_nodes || std::find(nodes.begin(), nodes.end(), node.name) != nodes.end()) NodeDetail(node, out);
  }
  if (notes.node_hint && !all_nodes && nodes.empty() && p.feasible == 0 && !p.nodes.empty()) {
    out += "\n(--node NAME or --all-nodes shows what was compared on each node)\n";
  }
  return out;
}

}  // namespace policy::cli
