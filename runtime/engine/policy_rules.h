#pragma once
/// How each rule of each policy answers for one pod over every node: the
/// rule-level view `policyc lint` (a rule that rejects every node or none,
/// a score that is the same everywhere) and `policyc test --coverage` (which
/// rules the tests made reject and pass) read. Policies are the plugins
/// that are not the profile's built-ins.

#include <cstddef>
#include <string>
#include <vector>

#include "support/source.h"

namespace policy::engine {

class Engine;
class Cluster;
class PodPlan;

struct PolicyRules {
  std::string plugin;
  std::vector<Span> filters;      ///< each filter rule, as written
  std::vector<size_t> rejected;   ///< per filter rule: live nodes it rejects
  std::vector<size_t> passed;     ///< per filter rule: live nodes it passes
  std::vector<Span> scores;       ///< each score rule
  std::vector<bool> constant;     ///< per score rule: the same value on every live node
};

/// Every policy of `plan` that applies to its pod (its `when` holds), over
/// every live node of `cluster`. Spans point into the policy files the
/// engine owns; plan the pod with the passes off for every rule as written.
std::vector<PolicyRules> EvaluatePolicyRules(const Engine& engine, const PodPlan& plan, const Cluster& cluster);

}  // namespace policy::engine
