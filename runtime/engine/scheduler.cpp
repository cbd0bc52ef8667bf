#include "runtime/engine/scheduler.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "k8s/node_match.h"
#include "runtime/engine/pod_template.h"
#include "runtime/engine/preemption.h"
#include "runtime/engine/template_claims.h"
#include "runtime/dra/allocator.h"
#include "runtime/sched/resolve_claims.h"
#include "runtime/sched/resolve_volumes.h"

namespace policy::engine {
namespace {

// volume.CheckNodeAffinity: some term holds for `row` (k8s::TermMatches);
// no terms: any node.
bool Admits(const std::vector<k8s::NodeSelectorTerm>& terms, const rt::NodeTable& table, rt::RowId row) {
  if (terms.empty()) return true;
  auto label = [&](std::string_view key) { return table.LabelValue(key, row); };
  // The node volume.CheckNodeAffinity builds has labels and no name.
  return std::any_of(terms.begin(), terms.end(), [&](const k8s::NodeSelectorTerm& t) { return k8s::TermMatches(t, label, ""); });
}

// DynamicResources' PostFilter (kube-scheduler 1.34), which runs before
// DefaultPreemption when no node fits: its message leads the postscript.
// A pod with no claims, or one whose claims the PreFilter refused, has
// none to deallocate. Otherwise, when some node was rejected because a
// claim's allocation does not reach it, the first such claim that reserves
// no pod but this one is to be deallocated (kube picks one at random), so
// that a later attempt may allocate it elsewhere. No message when the
// profile has no DynamicResources (the plugin whose row has this PostFilter).
struct ClaimsPostFilter {
  std::string message;
  std::optional<k8s::ResourceClaim> deallocated;  ///< the claim as it is once deallocated
};

ClaimsPostFilter DynamicResourcesPostFilter(const Engine& engine, const Cluster& cluster, const k8s::Pod& pod,
                                            const rt::Placement& placement) {
  const rt::InTreePlugin* owner = rt::PostFilterOf(engine.Profile(), rt::PostFilter::kDeallocateClaims);
  if (owner == nullptr) return {};
  dra::PodClaims claims = dra::ResolvePodClaims(pod, cluster.Table().Storage());
  if (!claims.problem.empty() || claims.Empty()) return {"no new claims to deallocate", std::nullopt};
  // Filter recorded an unavailable claim on a node where DynamicResources
  // rejected first and the allocator says so (not by its message's words).
  std::optional<dra::Allocator> allocator;
  bool unavailable = std::any_of(placement.nodes.begin(), placement.nodes.end(), [&](const rt::NodeResult& n) {
    if (n.first_failing_reasons == 0 || n.reasons.front().plugin != owner->name) return false;
    if (!allocator) allocator.emplace(pod, cluster.Table());
    return allocator->FitOf(n.row) == dra::Fit::kNotAvailable;
  });
  for (const k8s::ResourceClaim* held : claims.allocated) {
    const std::vector<k8s::ClaimConsumer>& r = held->reserved_for;
    bool only_this = r.empty() || (r.size() == 1 && r[0].uid == pod.uid && r[0].name == pod.name);
    if (!unavailable || !only_this) continue;
    k8s::ResourceClaim claim = *held;
    claim.reserved_for.clear();
    claim.allocation.reset();
    return {"deallocation of ResourceClaim completed", std::move(claim)};
  }
  return {"still not schedulable", std::nullopt};
}

}  // namespace

Scheduler::Scheduler(Engine& engine, Cluster& cluster, ScheduleOptions options)
    : engine_(engine), cluster_(cluster), options_(options) {
  if (options_.random_seed) random_.emplace(*options_.random_seed);
  const rt::NodeTable& table = cluster_.Table();
  for (rt::RowId row : table.LiveRows()) {
    for (const rt::NodeTable::PodOnRow& pod : table.PodsBoundTo(row)) ++bound_priorities_[pod.priority];
  }
}

// numFeasibleNodesToFind and the nodes findNodesThatPassFilters would have
// found: the first that many feasible ones from nextStartNodeIndex on,
// wrapping around; the start moves past the nodes looked at.
std::vector<rt::RowId> Scheduler::Sample(const rt::Decision& full) {
  std::span<const rt::RowId> live = cluster_.Table().LiveRows();
  const size_t all = live.size();
  constexpr size_t kMinNodes = 100;
  if (!options_.percentage_of_nodes_to_score || all < kMinNodes) return {};
  int64_t percentage = *options_.percentage_of_nodes_to_score;
  if (percentage == 0) percentage = std::max<int64_t>(5, 50 - static_cast<int64_t>(all) / 125);
  if (percentage >= 100) return {};
  size_t want = std::max(kMinNodes, all * static_cast<size_t>(percentage) / 100);
  if (full.feasible.size() <= want) {  // every node is looked at
    return {};
  }
  std::vector<rt::RowId> rows;
  size_t looked = 0;
  for (; looked < all && rows.size() < want; ++looked) {
    rt::RowId row = live[(next_start_ + looked) % all];
    if (std::binary_search(full.feasible.begin(), full.feasible.end(), row)) rows.push_back(row);
  }
  next_start_ = (next_start_ + looked) % all;
  std::sort(rows.begin(), rows.end());
  return rows;
}

PodPlan& Scheduler::PlanFor(const k8s::Pod& pod, std::unique_ptr<PodPlan>& own) {
  claims_.clear();
  current_ = nullptr;
  first_because_ = {};
  if (!options_.incremental) {
    own = engine_.Plan(pod, cluster_);
    ++stats_.plans;
    return *own;
  }
  TemplatePod t = engine_.Template(pod, cluster_);
  claims_ = std::move(t.claims);
  if (!t.own_plan_because.empty()) {
    own_because_ = t.own_plan_because;
    own = engine_.Plan(std::move(t), cluster_);
    ++stats_.plans;
    return *own;
  }
  size_t hash = TemplateHash(t.pod);
  Template* found = nullptr;
  if (auto bucket = templates_.find(hash); bucket != templates_.end()) {
    for (Template& kept : bucket->second) {
      if (SameTemplate(kept.pod, t.pod)) found = &kept;
    }
  }
  if (found == nullptr) {
    if (template_count_ >= std::max<size_t>(options_.max_templates, 1)) DropTemplates();
    std::vector<Template>& bucket = templates_[hash];
    // A pod like others but not of their template says why in --stats.
    first_because_ = bucket.empty() ? "the template's first pod" : TemplateDifference(t.pod, bucket.front().pod);
    k8s::Pod key = t.pod;
    bucket.push_back({std::move(key), engine_.Plan(std::move(t), cluster_), 0});
    ++template_count_;
    ++stats_.templates;
    ++stats_.plans;
    found = &bucket.back();
    engine_.ForgetKept(*found->plan, "the template's second pod (its first keeps nothing: most shapes are seen once)");
  }
  found->used = ++uses_;
  current_ = found;
  if (!found->keeps && first_because_.empty()) {  // its second pod: it starts keeping
    found->keeps = true;
    ++keeping_;
  }
  BoundKept(*found);
  return *found->plan;
}

// Plans cost memory too (a program per plugin, specialized): past
// max_templates of them, the least recently used quarter goes, and a pod of
// theirs that comes again is planned again.
void Scheduler::DropTemplates() {
  std::vector<uint64_t> used;
  used.reserve(template_count_);
  for (const auto& [hash, bucket] : templates_) {
    for (const Template& t : bucket) used.push_back(t.used);
  }
  if (used.empty()) return;
  size_t drop = std::max<size_t>(1, used.size() / 4);  // uses are distinct: exactly these many
  std::nth_element(used.begin(), used.begin() + static_cast<std::ptrdiff_t>(drop - 1), used.end());
  uint64_t cutoff = used[drop - 1];
  for (auto it = templates_.begin(); it != templates_.end();) {
    std::vector<Template>& bucket = it->second;
    size_t before = bucket.size();
    std::erase_if(bucket, [&](const Template& t) {
      if (t.used > cutoff) return false;
      keeping_ -= t.keeps ? 1 : 0;
      return true;
    });
    template_count_ -= before - bucket.size();
    it = bucket.empty() ? templates_.erase(it) : std::next(it);
  }
}

// Each template's kept decision is O(nodes x plugins) bytes; a queue of many
// templates on a large cluster drops the least recently used ones' first.
void Scheduler::BoundKept(const Template& current) {
  size_t rows = cluster_.Table().RowCount();
  size_t per_template = rows * engine_.Plugins().size() * 32;  // an estimate, before any is kept
  if (per_template == 0 || keeping_ * per_template <= options_.kept_bytes_limit) return;
  size_t total = 0;
  std::vector<Template*> kept;
  for (auto& [hash, bucket] : templates_) {
    for (Template& t : bucket) {
      size_t bytes = t.plan->KeptBytes();
      if (bytes == 0 || &t == &current) continue;
      total += bytes;
      kept.push_back(&t);
    }
  }
  std::sort(kept.begin(), kept.end(), [](const Template* a, const Template* b) { return a->used < b->used; });
  for (Template* t : kept) {
    if (total + per_template <= options_.kept_bytes_limit) break;
    total -= engine_.ForgetKept(*t->plan, "its kept decision was dropped to bound memory");
  }
}

const rt::Decision& Scheduler::Decide(PodPlan& plan, const k8s::Pod& pod, bool shared,
                                      std::span<const rt::RowId> rows) {
  if (shared && first_because_.empty()) {
    plan.Adopt(pod);
    const rt::Decision& d = engine_.DecideIncremental(plan, cluster_, {.rows = rows}, &stats_.decisions);
    engine_.VerifyTemplate(pod, cluster_, d, {.rows = rows});
    return d;
  }
  if (shared) {  // the template's first pod: decided, nothing kept
    plan.Adopt(pod);
    ++stats_.decisions.full;
    ++stats_.decisions.full_because[std::string(first_because_)];
    const rt::Decision& d = engine_.Decide(plan, cluster_, {.rows = rows});
    engine_.VerifyTemplate(pod, cluster_, d, {.rows = rows});
    return d;
  }
  if (options_.incremental) {  // a pod of its own: nothing kept to start from
    ++stats_.decisions.full;
    ++stats_.decisions.full_because[std::string(own_because_)];
  }
  return engine_.Decide(plan, cluster_, {.rows = rows});
}

void Scheduler::Cycle(Outcome& o, bool may_preempt) {
  ++o.attempts;
  std::unique_ptr<PodPlan> own;
  PodPlan& plan = PlanFor(o.pod, own);
  bool shared = own == nullptr;
  const rt::Decision* decision = &Decide(plan, o.pod, shared, {});
  std::vector<rt::RowId> sampled = Sample(*decision);
  if (!sampled.empty()) decision = &Decide(plan, o.pod, shared, sampled);
  const rt::Decision& d = *decision;
  o.feasible = d.feasible.size();
  if (!d.selected) {
    o.node.reset();
    // A detail names the pod's own ResourceClaims as the allocator found
    // them: words kept from a sibling's decision would name the sibling's.
    bool own_words = !shared || (options_.details && !claims_.empty() && !plan.Pod().resource_claims.empty());
    if (own_words) {
      o.words = std::make_shared<const rt::Placement>(engine_.Explain(plan, cluster_, d, {}, options_.details));
    } else if (options_.details && !claims_.empty()) {  // the template's words, with the pod's claims' names
      rt::Placement own = *engine_.ExplainIncremental(plan, cluster_, d, true);
      NameClaims(own, claims_);
      o.words = std::make_shared<const rt::Placement>(std::move(own));
    } else {
      o.words = engine_.ExplainIncremental(plan, cluster_, d, options_.details);
    }
    if (options_.groups) {
      bool named = shared && !claims_.empty();  // each pod's own claim names in its details
      if (named || o.words != grouped_words_) {
        groups_ = std::make_shared<const std::vector<rt::ReasonGroup>>(
            engine_.Grouped(plan, cluster_, d, *o.words, shared ? claims_ : ClaimNames{}));
        grouped_words_ = named ? nullptr : o.words;
      }
      o.groups = groups_;
    }
    o.postscript.clear();
    // An Error status is no rejection: kube-scheduler runs no PostFilter
    // (no preemption, no deallocation) and the pod waits as it is.
    if (d.error) return;
    ClaimsPostFilter claims = DynamicResourcesPostFilter(engine_, cluster_, o.pod, o.placement());
    if (may_preempt && options_.preemption && o.pod.preemption_policy != "Never" && !d.rejected_by) Preempt(o);
    if (o.node) return;
    if (claims.deallocated) {
      cluster_.SetResourceClaim(std::move(*claims.deallocated));
      ++deallocated_;
    }
    // The framework joins the PostFilter plugins' messages with ", ".
    if (!claims.message.empty()) {
      o.postscript = o.postscript.empty() ? claims.message + "." : claims.message + ", " + o.postscript;
    }
    return;
  }
  size_t pick = *d.selected;
  if (random_) {  // uniformly among the best, as selectHost does
    std::vector<size_t> best;
    for (size_t k = 0; k < d.score.size(); ++k) {
      if (d.score[k] == d.score[*d.selected]) best.push_back(k);
    }
    pick = best[std::uniform_int_distribution<size_t>(0, best.size() - 1)(*random_)];
  }
  o.score = d.score[pick];
  o.node = std::string(cluster_.Table().NodeName(d.feasible[pick]));  // before Bind changes the decision
  o.words.reset();
  o.groups.reset();
  Bind(o);
}

// DefaultPreemption: evict the victims, then bind where the pod now fits.
void Scheduler::Preempt(Outcome& o) {
  // No bound pod of lower priority: no victims anywhere, and no need to
  // try any node.
  bool lower = !bound_priorities_.empty() && bound_priorities_.begin()->first < o.pod.priority.value_or(0);
  Preemption p = engine::Preempt(engine_, cluster_, o.pod, o.placement(), lower);
  if (!p.node) {
    o.postscript = p.postscript;
    return;
  }
  std::vector<std::string> victims;
  for (const engine::Victim& v : p.victims) {
    victims.push_back(v.key);
    std::string_view key = v.key;
    size_t slash = key.find('/');
    std::string_view ns = key.substr(0, slash), name = key.substr(slash + 1);
    ReleaseClaims(ns, name, v.uid);
    cluster_.UnbindPod(ns, name);
    auto count = bound_priorities_.find(v.priority);
    if (count != bound_priorities_.end() && --count->second == 0) bound_priorities_.erase(count);
    ++preempted_;
  }
  std::unique_ptr<PodPlan> plan = engine_.Plan(o.pod, cluster_);
  const rt::Decision& d = engine_.Decide(*plan, cluster_, {});
  rt::RowId row = *cluster_.Table().FindNode(*p.node);
  auto at = std::lower_bound(d.feasible.begin(), d.feasible.end(), row);
  o.score = at != d.feasible.end() && *at == row ? d.score[static_cast<size_t>(at - d.feasible.begin())] : 0;
  o.node = *p.node;
  o.preempted = std::move(victims);
  o.words.reset();
  o.groups.reset();
  Bind(o);
}

// AssumePodVolumes: each unbound WaitForFirstConsumer claim of the pod is
// bound to the smallest available volume the node may use, or else is to
// be provisioned for this node (volume.kubernetes.io/selected-node), so
// the pods after it see the claim as kube-scheduler's cache does.
void Scheduler::AssumeVolumes(const k8s::Pod& pod, const std::string& node) {
  if (pod.volumes.empty()) return;
  k8s::Pod resolved = pod;
  rt::ResolveVolumes(resolved, cluster_.Table());
  rt::RowId row = *cluster_.Table().FindNode(node);
  for (const k8s::ResolvedVolume& v : resolved.resolved_volumes) {
    if (!v.delay_binding || !v.selected_node.empty()) continue;
    const k8s::PersistentVolumeClaim* found = cluster_.Table().Storage().Claim(pod.namespace_name, v.claim);
    if (found == nullptr) continue;
    k8s::PersistentVolumeClaim claim = *found;
    auto pv = std::find_if(v.candidates.begin(), v.candidates.end(),
                           [&](const k8s::PersistentVolume& c) { return Admits(c.node_affinity, cluster_.Table(), row); });
    if (pv != v.candidates.end()) {
      k8s::PersistentVolume volume = *pv;
      volume.claim_namespace = claim.namespace_name;
      volume.claim_name = claim.name;
      volume.phase = "Bound";
      claim.volume_name = volume.name;
      claim.bind_completed = true;
      claim.phase = "Bound";
      assumed_claims_.push_back({claim.namespace_name, claim.name, volume.name, ""});
      cluster_.SetVolume(std::move(volume));
    } else {
      claim.selected_node = node;
      assumed_claims_.push_back({claim.namespace_name, claim.name, "", node});
    }
    cluster_.SetClaim(std::move(claim));
  }
}

// DynamicResources' Reserve and PreBind: each claim the allocator filled
// for this node gets status.allocation (its devices; a node selector naming
// the node when a device is the node's own, the slice's selector when it
// is network-attached) and every claim of the pod reserves it, so the pods
// after it find the devices taken, as kube-scheduler's assume cache says.
void Scheduler::AssumeClaims(const k8s::Pod& pod, const std::string& node) {
  if (pod.resource_claims.empty()) return;
  dra::Allocator allocator(pod, cluster_.Table());
  if (!allocator.Claims().problem.empty()) return;
  rt::RowId row = *cluster_.Table().FindNode(node);
  dra::NodeAnswer answer = allocator.Check(row);
  if (answer.fit != dra::Fit::kFits) return;
  k8s::ClaimConsumer consumer{"pods", pod.name, pod.uid};
  std::vector<k8s::ResourceClaim> changed;
  for (size_t c = 0; c < allocator.Claims().to_allocate.size(); ++c) {
    k8s::ResourceClaim claim = *allocator.Claims().to_allocate[c];
    k8s::AllocationResult result;
    for (const dra::Chosen& d : answer.devices) {
      if (d.claim != c) continue;
      result.devices.push_back({d.request, d.slice->driver, d.slice->pool.name, d.device->name, d.admin_access});
      if (!d.slice->node_name.empty()) {
        k8s::SelectorRequirement here;
        here.key = "metadata.name";
        here.op = k8s::SelectorOp::kIn;
        here.values = {node};
        result.node_selector = std::vector<k8s::NodeSelectorTerm>{k8s::NodeSelectorTerm{{}, {here}}};
      } else if (d.slice->node_selector && !result.node_selector) {
        result.node_selector = d.slice->node_selector;
      }
    }
    claim.allocation = std::move(result);
    changed.push_back(std::move(claim));
  }
  for (const k8s::ResourceClaim* allocated : allocator.Claims().allocated) changed.push_back(*allocated);
  for (k8s::ResourceClaim& claim : changed) {
    claim.reserved_for.push_back(consumer);
    cluster_.SetResourceClaim(std::move(claim));
  }
}

// A pod going away: its claims no longer reserve it, and a claim nothing
// reserves any more is deallocated (the resourceclaim controller's work),
// freeing its devices.
void Scheduler::ReleaseClaims(std::string_view namespace_name, std::string_view name, std::string_view uid) {
  // The claims that reserve it are the ones it holds (a pod object is not
  // needed: its namespace's allocated claims say so).
  auto reserves = [&](const k8s::ClaimConsumer& c) { return c.uid == uid && c.name == name; };
  std::vector<k8s::ResourceClaim> held;
  for (const auto& [key, claim] : cluster_.Table().Storage().resource_claims) {
    if (claim.namespace_name != namespace_name || !claim.allocation) continue;
    if (std::any_of(claim.reserved_for.begin(), claim.reserved_for.end(), reserves)) held.push_back(claim);
  }
  std::sort(held.begin(), held.end(), [](const auto& a, const auto& b) { return a.name < b.name; });  // a fixed order
  for (k8s::ResourceClaim& claim : held) {
    std::erase_if(claim.reserved_for, reserves);
    if (claim.reserved_for.empty()) claim.allocation.reset();
    cluster_.SetResourceClaim(std::move(claim));
  }
}

void Scheduler::Bind(const Outcome& o) {
  AssumeVolumes(o.pod, *o.node);
  AssumeClaims(o.pod, *o.node);
  k8s::Pod bound = o.pod;
  bound.node_name = *o.node;
  bound.phase = k8s::PodPhase::kRunning;
  cluster_.BindPod(bound);
  ++bound_priorities_[bound.priority.value_or(0)];
}

const Outcome& Scheduler::Place(k8s::Pod pod, bool may_preempt) {
  MakeTemplateClaims(pod, cluster_);
  Outcome& o = outcomes_.emplace_back();
  o.pod = std::move(pod);
  o.order = outcomes_.size() - 1;
  Cycle(o, may_preempt);
  return o;
}

std::vector<const Outcome*> Scheduler::Run(std::vector<k8s::Pod> queue) {
  std::vector<Outcome*> waiting;
  for (size_t i = 0; i < queue.size(); ++i) {
    Outcome& o = outcomes_.emplace_back();
    o.pod = std::move(queue[i]);
    MakeTemplateClaims(o.pod, cluster_);
    o.order = i;
    waiting.push_back(&o);
  }
  // PrioritySort: higher priority first, then the earlier creationTimestamp,
  // then input order.
  std::stable_sort(waiting.begin(), waiting.end(), [](const Outcome* a, const Outcome* b) {
    int32_t pa = a->pod.priority.value_or(0), pb = b->pod.priority.value_or(0);
    if (pa != pb) return pa > pb;
    const std::string& ta = a->pod.creation_timestamp;
    const std::string& tb = b->pod.creation_timestamp;
    if (ta != tb) return ta.empty() || tb.empty() ? !ta.empty() : ta < tb;
    return a->order < b->order;
  });
  std::vector<const Outcome*> finished;
  while (!waiting.empty()) {
    size_t deallocated = deallocated_;
    std::vector<Outcome*> still;
    for (Outcome* o : waiting) {
      Cycle(*o, true);
      if (o->node) {
        finished.push_back(o);
      } else {
        still.push_back(o);
      }
    }
    // A pod placed, or a claim deallocated, may let the others fit now.
    bool changed = still.size() < waiting.size() || deallocated_ > deallocated;
    waiting = std::move(still);
    if (!options_.retry || !changed) break;
  }
  for (Outcome* o : waiting) finished.push_back(o);  // their final attempts came last
  return finished;
}

}  // namespace policy::engine
