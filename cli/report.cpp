// Rendering a placement for people (text) and programs (JSON, as
// ../shared/spec/policyc-check.md fixes it).

#include "cli/report.h"

#include <algorithm>

#include <fmt/format.h>

#include "support/json_writer.h"
#include "runtime/engine/suggest.h"


namespace policy::cli {

namespace {

constexpr size_t kShown = 8;

// The first names of `total` nodes, and how many more.
std::string NodeList(const std::vector<std::string>& first, size_t total) {
  if (total <= first.size()) return fmt::format("{}", fmt::join(first, ", "));
  return fmt::format("{}, ... and {} more (--all-nodes lists them)", fmt::join(first, ", "), total - first.size());
}

std::string NodeList(const std::vector<std::string>& names) {
  if (names.size() <= kShown) return NodeList(names, names.size());
  return NodeList(std::vector<std::string>(names.begin(), names.begin() + kShown), names.size());
}

// A plugin's part of a node's total: `score × weight` when its weight is known.
std::string Part(const std::string& plugin, int64_t score, const std::map<std::string, int64_t>& weights) {
  auto w = weights.find(plugin);
  return w == weights.end() ? fmt::format("{}", score) : fmt::format("{}×{}", score, w->second);
}

void NodeDetail(const rt::NodeResult& node, std::string& out, const std::map<std::string, int64_t>& weights) {
  if (node.feasible) {
    out += fmt::format("\n{}: feasible, score {}{}\n", node.name, node.score,
                       weights.empty() ? "" : " (each plugin's score × its weight)");
    for (const auto& [plugin, score] : node.scores) {
      auto w = weights.find(plugin);
      out += w == weights.end() ? fmt::format("  {:<34} {:>3}\n", plugin, score)
                                : fmt::format("  {:<34} {:>3} × {} = {}\n", plugin, score, w->second, score * w->second);
    }
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
                          bool all_nodes, const PodNotes& notes, const std::string& suggestions,
                          const std::map<std::string, int64_t>& weights) {
  std::string out = fmt::format("pod {}: {}\n", pod, p.summary);
  if (p.error) {
    size_t passed = 0;
    for (const rt::NodeResult& node : p.nodes) passed += node.reasons.empty() ? 1 : 0;
    out += "note: a plugin's error ends kube-scheduler's whole attempt (status Error, condition reason SchedulerError): "
           "the pod goes nowhere until it is fixed";
    out += passed == 0 ? "\n" : fmt::format(", though {} node{} passed every filter\n", passed, passed == 1 ? "" : "s");
  }
  for (const std::string& n : notes.notes) out += fmt::format("note: {}\n", n);
  // Every reason of every failing plugin, with the nodes it applies to.
  std::vector<rt::ReasonGroup> groups = rt::GroupReasons(p, kShown);
  if (!groups.empty()) out += "\nwhy nodes were rejected (every failing plugin, not only the first):\n";
  for (const rt::ReasonGroup& g : groups) {
    out += fmt::format("  {} node{}  {}  [{}]\n    {}\n", g.nodes, g.nodes == 1 ? "" : "s", g.reason, g.plugin,
                       NodeList(g.examples, g.nodes));
  }
  if (p.selected && !notes.gated) {
    const rt::NodeResult& best = p.nodes[*p.selected];
    out += fmt::format("\nselected: {} (score {})\n", best.name, best.score);
    std::vector<const rt::NodeResult*> ranked;
    for (const rt::NodeResult& n : p.nodes) {
      if (n.feasible) ranked.push_back(&n);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](auto* a, auto* b) { return a->score > b->score; });
    out += weights.empty() ? "feasible nodes by score:\n" : "feasible nodes by score (each plugin's score×weight):\n";
    for (size_t i = 0; i < ranked.size() && i < 10; ++i) {
      std::vector<std::string> parts;
      for (const auto& [plugin, score] : ranked[i]->scores) {
        parts.push_back(fmt::format("{} {}", plugin, Part(plugin, score, weights)));
      }
      out += fmt::format("  {:<40} {:>5}  ({})\n", ranked[i]->name, ranked[i]->score, fmt::join(parts, ", "));
    }
    if (ranked.size() > 10) out += fmt::format("  ... and {} more\n", ranked.size() - 10);
  }
  out += suggestions;
  for (const rt::NodeResult& node : p.nodes) {
    if (all_nodes || std::find(nodes.begin(), nodes.end(), node.name) != nodes.end()) NodeDetail(node, out, weights);
  }
  if (notes.node_hint && !all_nodes && nodes.empty() && p.feasible == 0 && !p.nodes.empty()) {
    out += "\n(--node NAME or --all-nodes shows what was compared on each node)\n";
  }
  return out;
}

std::string SuggestionsText(const std::vector<engine::Suggestion>& suggestions, bool fits) {
  std::string out = fits ? "\nwhat would open more nodes (each change tried by deciding again with it):\n"
                         : "\nwhat would make it fit (each change tried by deciding again with it):\n";
  if (suggestions.empty()) {
    return out + "  nothing tried opens a node: no edit of the pod (alone, or combined per node), no node like one\n"
                 "  the cluster has, no removal of pods\n";
  }
  for (const engine::Suggestion& s : suggestions) {
    std::vector<std::string> words;
    for (const engine::Change& c : s.changes) words.push_back(c.words);
    std::string what = fmt::format("{}", fmt::join(words, "\n    and "));
    if (s.cluster) what = "on the cluster: " + what;
    if (!s.pods.empty()) what += fmt::format(": {}", NodeList(s.pods));
    if (s.changes.front().kind == "add-node") {
      out += fmt::format("  {}\n    -> the pod fits on it\n", what);
    } else {
      out += fmt::format("  {}\n    -> {} {}node{} feasible: {}\n", what, s.nodes.size(), fits ? "more " : "",
                         s.nodes.size() == 1 ? "" : "s", NodeList(s.nodes));
    }
    if (!s.note.empty()) out += fmt::format("    ({})\n", s.note);
  }
  return out;
}

void SuggestionsJson(const std::vector<engine::Suggestion>& suggestions, JsonWriter& w) {
  w.Key("suggestions").BeginArray();
  for (const engine::Suggestion& s : suggestions) {
    w.BeginObject();
    w.Key("target").String(s.cluster ? "cluster" : "pod");
    w.Key("changes").BeginArray();
    for (const engine::Change& c : s.changes) {
      w.BeginObject().Key("kind").String(c.kind).Key("change").String(c.words);
      for (const auto& [key, value] : c.fields) {
        w.Key(key);
        if (const int64_t* n = std::get_if<int64_t>(&value)) {
          w.Int(*n);
        } else {
          w.String(std::get<std::string>(value));
        }
      }
      w.EndObject();
    }
    w.EndArray();
    w.Key("feasible").Int(static_cast<int64_t>(s.nodes.size()));
    w.Key("nodes").BeginArray();
    for (const std::string& n : s.nodes) w.String(n);
    w.EndArray();
    if (!s.pods.empty()) {
      w.Key("pods").BeginArray();
      for (const std::string& p : s.pods) w.String(p);
      w.EndArray();
    }
    if (!s.note.empty()) w.Key("note").String(s.note);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace policy::cli
