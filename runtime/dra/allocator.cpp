// The DynamicResources plugin's claim lookup and the structured allocator
// (allocator.h).

#include "runtime/dra/allocator.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "compiler/cel/compile.h"
#include "compiler/cel/eval.h"
#include "compiler/cel/explain.h"
#include "k8s/node_match.h"

namespace policy::dra {
namespace {

// ResourceClaimReservedForMaxSize: a claim reserved for this many pods takes no more.
constexpr size_t kReservedForMax = 256;

std::string ClaimKey(const k8s::ResourceClaim& c) { return c.namespace_name + "/" + c.name; }

std::string DeviceId(std::string_view driver, std::string_view pool, std::string_view device) {
  return fmt::format("{}/{}/{}", driver, pool, device);
}

std::optional<std::string_view> LabelOf(const rt::NodeTable& table, std::string_view key, rt::RowId row) {
  const rt::LabelColumn* column = table.Label(key);
  if (column == nullptr || column->domain[row] == 0) return std::nullopt;
  return table.pool().Get(column->value[column->domain[row]]);
}

bool SelectorMatches(const std::vector<k8s::NodeSelectorTerm>& terms, const rt::NodeTable& table, rt::RowId row) {
  auto label = [&](std::string_view key) { return LabelOf(table, key, row); };
  return std::any_of(terms.begin(), terms.end(),
                     [&](const k8s::NodeSelectorTerm& t) { return k8s::TermMatches(t, label, table.NodeName(row)); });
}

const k8s::DeviceAttribute* AttributeOf(const k8s::Device& d, std::string_view name) {
  for (const auto& [key, value] : d.attributes) {
    if (key == name) return &value;
  }
  return nullptr;
}

// `file:line:col` of byte `begin` of a selector written on one line.
std::string Place(const k8s::CelSelector& s, uint32_t begin) {
  if (s.file.empty()) return "";
  uint32_t column = s.column;
  bool one_line = s.expression.find('\n') == std::string::npos;
  if (one_line) {
    for (uint32_t i = 0; i < begin && i < s.expression.size(); ++i) {
      column += (static_cast<unsigned char>(s.expression[i]) & 0xC0) != 0x80;
    }
  }
  return fmt::format(" ({}:{}:{})", s.file, s.line, column);
}

}  // namespace

PodClaims ResolvePodClaims(const k8s::Pod& pod, const rt::StorageObjects& storage) {
  PodClaims out;
  std::string pod_name = fmt::format("{}/{}", pod.namespace_name, pod.name);
  for (const k8s::PodResourceClaim& entry : pod.resource_claims) {
    std::string name = entry.claim_name;
    bool generated = name.empty();
    if (generated) {
      auto status = std::find_if(pod.resource_claim_statuses.begin(), pod.resource_claim_statuses.end(),
                                 [&](const k8s::PodResourceClaimStatus& s) { return s.name == entry.name; });
      if (status == pod.resource_claim_statuses.end()) {
        out.problem = fmt::format("pod \"{}\": ResourceClaim not created yet", pod_name);
        return out;
      }
      if (status->claim_name.empty()) continue;  // no claim is needed
      name = status->claim_name;
    }
    const k8s::ResourceClaim* claim =
        rt::StorageObjects::Get(storage.resource_claims, rt::StorageObjects::ClaimKey(pod.namespace_name, name));
    if (claim == nullptr) {
      out.problem = fmt::format("resourceclaim.resource.k8s.io \"{}\" not found", name);
      return out;
    }
    if (claim->deleting) {
      out.problem = fmt::format("resourceclaim \"{}\" is being deleted", claim->name);
      return out;
    }
    if (generated && (claim->controller_uid.empty() || claim->controller_uid != pod.uid)) {
      out.problem = fmt::format("ResourceClaim {} was not created for pod {} (pod is not owner)", claim->name, pod_name);
      return out;
    }
    if (claim->allocation) {
      bool reserved_here = std::any_of(claim->reserved_for.begin(), claim->reserved_for.end(),
                                       [&](const k8s::ClaimConsumer& c) { return !pod.uid.empty() && c.uid == pod.uid; });
      if (claim->reserved_for.size() >= kReservedForMax && !reserved_here) {
        out.problem = "resourceclaim in use";
        return out;
      }
      out.allocated.push_back(claim);
      continue;
    }
    for (const k8s::DeviceRequest& request : claim->spec.requests) {
      for (const k8s::DeviceSubRequest& sub : request.alternatives) {
        std::string request_name = request.first_available ? request.name + "/" + sub.name : request.name;
        if (rt::StorageObjects::Get(storage.device_classes, sub.class_name) == nullptr) {
          out.problem = fmt::format("request {}: device class {} does not exist", request_name, sub.class_name);
          return out;
        }
      }
    }
    out.to_allocate.push_back(claim);
  }
  return out;
}

// One request of a claim to allocate, with its alternatives' selectors compiled.
struct Allocator::Request {
  size_t claim = 0;
  const k8s::DeviceRequest* request = nullptr;
  struct Alternative {
    const k8s::DeviceSubRequest* sub = nullptr;
    const k8s::DeviceClass* klass = nullptr;
    std::vector<std::shared_ptr<const cel::Program>> class_selectors, request_selectors;
    size_t verdict = 0;  ///< its index in verdicts_' vectors
  };
  std::vector<Alternative> alternatives;
};

// A device the node can use.
struct Allocator::Candidate {
  const k8s::ResourceSlice* slice = nullptr;
  const k8s::Device* device = nullptr;
  bool incomplete_pool = false;
  std::string id;  ///< driver/pool/device
};

Allocator::Allocator(const k8s::Pod& pod, const rt::NodeTable& table)
    : pod_(pod), table_(table), claims_(ResolvePodClaims(pod, table.Storage())) {}

Allocator::~Allocator() = default;

void Allocator::Prepare() {
  if (prepared_) return;
  prepared_ = true;
  const rt::StorageObjects& storage = table_.Storage();
  size_t verdicts = 0;
  for (size_t c = 0; c < claims_.to_allocate.size(); ++c) {
    for (const k8s::DeviceRequest& request : claims_.to_allocate[c]->spec.requests) {
      Request r;
      r.claim = c;
      r.request = &request;
      for (const k8s::DeviceSubRequest& sub : request.alternatives) {
        Request::Alternative alt;
        alt.sub = &sub;
        alt.klass = rt::StorageObjects::Get(storage.device_classes, sub.class_name);
        if (alt.klass != nullptr) {
          for (const k8s::CelSelector& s : alt.klass->selectors) alt.class_selectors.push_back(cel::Compile(s.expression));
        }
        for (const k8s::CelSelector& s : sub.selectors) alt.request_selectors.push_back(cel::Compile(s.expression));
        alt.verdict = verdicts++;
        r.alternatives.push_back(std::move(alt));
      }
      requests_.push_back(std::move(r));
    }
  }
  for (const auto& [key, claim] : storage.resource_claims) {
    if (!claim.allocation) continue;
    for (const k8s::DeviceResult& d : claim.allocation->devices) {
      if (!d.admin_access) in_use_[DeviceId(d.driver, d.pool, d.device)] = true;
    }
  }
  for (const auto& [name, slice] : storage.resource_slices) {
    if (!slice.node_name.empty()) {
      by_node_[slice.node_name].push_back(&slice);
    } else if (slice.all_nodes || slice.node_selector) {
      shared_.push_back(&slice);
    }
  }
  auto by_name = [](const k8s::ResourceSlice* a, const k8s::ResourceSlice* b) { return a->name < b->name; };
  for (auto& [node, slices] : by_node_) std::sort(slices.begin(), slices.end(), by_name);
  std::sort(shared_.begin(), shared_.end(), by_name);
}

// The devices of the pools the node sees (GatherPools): each pool's slices
// of its newest generation, in driver, pool, slice and device order.
std::vector<Allocator::Candidate> Allocator::Devices(rt::RowId row) {
  std::vector<const k8s::ResourceSlice*> visible;
  auto local = by_node_.find(std::string(table_.NodeName(row)));
  if (local != by_node_.end()) visible = local->second;
  for (const k8s::ResourceSlice* s : shared_) {
    if (s->all_nodes || SelectorMatches(*s->node_selector, table_, row)) visible.push_back(s);
  }
  std::map<std::pair<std::string_view, std::string_view>, std::vector<const k8s::ResourceSlice*>> pools;
  for (const k8s::ResourceSlice* s : visible) pools[{s->driver, s->pool.name}].push_back(s);
  std::vector<Candidate> out;
  for (auto& [key, slices] : pools) {
    int64_t newest = 0;
    for (const k8s::ResourceSlice* s : slices) newest = std::max(newest, s->pool.generation);
    std::erase_if(slices, [&](const k8s::ResourceSlice* s) { return s->pool.generation != newest; });
    bool incomplete = static_cast<int64_t>(slices.size()) != slices.front()->pool.slice_count;
    for (const k8s::ResourceSlice* s : slices) {
      for (const k8s::Device& d : s->devices) {
        out.push_back({s, &d, incomplete, DeviceId(s->driver, s->pool.name, d.name)});
      }
    }
  }
  return out;
}

// Whether the device matches the alternative's class and request
// selectors; an error message when a selector fails to compile or run.
std::optional<std::string> Allocator::Matches(const Candidate& c, const Request& r, size_t alternative, bool* matches) {
  const Request::Alternative& alt = r.alternatives[alternative];
  std::vector<int8_t>& verdicts = verdicts_[c.device];
  if (verdicts.empty()) verdicts.assign(requests_.empty() ? 0 : 64, -1);
  if (alt.verdict >= verdicts.size()) verdicts.resize(alt.verdict + 1, -1);
  if (verdicts[alt.verdict] >= 0) {
    *matches = verdicts[alt.verdict] == 1;
    return std::nullopt;
  }
  cel::DeviceInput input{c.slice->driver, c.device};
  const k8s::ResourceClaim& claim = *claims_.to_allocate[r.claim];
  auto run = [&](const std::vector<std::shared_ptr<const cel::Program>>& programs,
                 const std::string& owner) -> std::optional<std::string> {
    for (size_t i = 0; i < programs.size(); ++i) {
      const cel::Program& p = *programs[i];
      if (!p.expr) return fmt::format("{}: selector #{}: CEL compile error: {}", owner, i, p.KubeError());
      cel::Outcome o = cel::Evaluate(*p.expr, input);
      if (!o.error.empty()) return fmt::format("{}: selector #{}: CEL runtime error: {}", owner, i, o.error);
      if (!o.matches) {
        *matches = false;
        return std::nullopt;
      }
    }
    *matches = true;
    return std::nullopt;
  };
  if (auto error = run(alt.class_selectors, "class " + alt.sub->class_name)) return error;
  if (*matches) {
    if (auto error = run(alt.request_selectors, "claim " + ClaimKey(claim))) return error;
  }
  verdicts[alt.verdict] = *matches ? 1 : 0;
  return std::nullopt;
}

// One node's backtracking search over the requests in order.
struct Allocator::Search {
  Allocator& a;
  const std::vector<Candidate>& devices;
  std::vector<bool> taken;  ///< per device: chosen by this allocation
  std::vector<Chosen> chosen;
  std::string error;
  uint64_t steps = 0;
  bool timed_out = false;

  // The constraints of `claim` that cover request `name` (`req/sub` or `req`).
  std::vector<const k8s::DeviceConstraint*> ConstraintsOf(size_t claim, std::string_view request, std::string_view full) {
    std::vector<const k8s::DeviceConstraint*> out;
    for (const k8s::DeviceConstraint& c : a.claims_.to_allocate[claim]->spec.constraints) {
      if (c.match_attribute.empty()) continue;
      bool covers = c.requests.empty() || std::find(c.requests.begin(), c.requests.end(), request) != c.requests.end() ||
                    std::find(c.requests.begin(), c.requests.end(), full) != c.requests.end();
      if (covers) out.push_back(&c);
    }
    return out;
  }

  // Whether `device` agrees with the devices already chosen under each constraint.
  bool Agrees(size_t claim, const std::vector<const k8s::DeviceConstraint*>& constraints, const k8s::Device& device) {
    for (const k8s::DeviceConstraint* c : constraints) {
      const k8s::DeviceAttribute* mine = AttributeOf(device, c->match_attribute);
      if (mine == nullptr) return false;
      for (const Chosen& other : chosen) {
        if (other.claim != claim) continue;
        std::string_view base = std::string_view(other.request).substr(0, other.request.find('/'));
        bool covered = c->requests.empty() ||
                       std::find(c->requests.begin(), c->requests.end(), other.request) != c->requests.end() ||
                       std::find(c->requests.begin(), c->requests.end(), base) != c->requests.end();
        if (!covered) continue;
        const k8s::DeviceAttribute* theirs = AttributeOf(*other.device, c->match_attribute);
        if (theirs == nullptr || !(*theirs == *mine)) return false;
      }
    }
    return true;
  }

  bool Usable(size_t i, bool admin) {
    return !taken[i] && (admin || !a.in_use_.contains(devices[i].id));
  }

  // Requests [r, end) allocated after what is chosen; false on no or error.
  bool Allocate(size_t r) {
    if (r == a.requests_.size()) return true;
    const Request& req = a.requests_[r];
    for (size_t alt = 0; alt < req.alternatives.size(); ++alt) {
      const k8s::DeviceSubRequest& sub = *req.alternatives[alt].sub;
      std::string name = req.request->first_available ? req.request->name + "/" + sub.name : req.request->name;
      std::vector<const k8s::DeviceConstraint*> constraints = ConstraintsOf(req.claim, req.request->name, name);
      size_t mark = chosen.size();
      bool ok = sub.mode == k8s::AllocationMode::kAll ? AllocateAll(r, alt, name, constraints)
                                                      : AllocateCount(r, alt, name, constraints, 0, sub.count);
      if (ok) return true;
      if (!error.empty() || timed_out) return false;
      for (size_t i = mark; i < chosen.size(); ++i) taken[IndexOf(chosen[i].device)] = false;
      chosen.resize(mark);
    }
    return false;
  }

  size_t IndexOf(const k8s::Device* d) {
    for (size_t i = 0; i < devices.size(); ++i) {
      if (devices[i].device == d) return i;
    }
    return 0;
  }

  bool Step() {
    if (++steps > kMaxSteps) timed_out = true;
    return !timed_out;
  }

  std::optional<bool> DeviceMatches(size_t i, size_t r, size_t alt) {
    bool matches = false;
    if (auto e = a.Matches(devices[i], a.requests_[r], alt, &matches)) {
      error = *e;
      return std::nullopt;
    }
    return matches;
  }

  // ExactCount: `left` more devices from index `from` on.
  bool AllocateCount(size_t r, size_t alt, const std::string& name,
                     const std::vector<const k8s::DeviceConstraint*>& constraints, size_t from, int64_t left) {
    if (left == 0) return Allocate(r + 1);
    const Request& req = a.requests_[r];
    bool admin = req.alternatives[alt].sub->admin_access;
    for (size_t i = from; i < devices.size(); ++i) {
      if (!Step()) return false;
      if (!Usable(i, admin)) continue;
      std::optional<bool> m = DeviceMatches(i, r, alt);
      if (!m) return false;
      if (!*m || !Agrees(req.claim, constraints, *devices[i].device)) continue;
      taken[i] = true;
      chosen.push_back({req.claim, name, devices[i].slice, devices[i].device, admin});
      if (AllocateCount(r, alt, name, constraints, i + 1, left - 1)) return true;
      chosen.pop_back();
      taken[i] = false;
      if (!error.empty() || timed_out) return false;
    }
    return false;
  }

  // All: every matching device of the node, none in use, the pool complete.
  bool AllocateAll(size_t r, size_t alt, const std::string& name,
                   const std::vector<const k8s::DeviceConstraint*>& constraints) {
    const Request& req = a.requests_[r];
    bool admin = req.alternatives[alt].sub->admin_access;
    std::vector<size_t> all;
    for (size_t i = 0; i < devices.size(); ++i) {
      if (!Step()) return false;
      std::optional<bool> m = DeviceMatches(i, r, alt);
      if (!m) return false;
      if (!*m) continue;
      if (devices[i].incomplete_pool) {
        error = fmt::format("claim {}, request {}: asks for all devices, but resource pool {}/{} is currently being updated",
                            ClaimKey(*a.claims_.to_allocate[req.claim]), name, devices[i].slice->driver,
                            devices[i].slice->pool.name);
        return false;
      }
      if (!Usable(i, admin)) return false;  // one of them is taken
      all.push_back(i);
    }
    if (all.empty()) return false;
    size_t mark = chosen.size();
    for (size_t i : all) {
      if (!Agrees(req.claim, constraints, *devices[i].device)) {
        for (size_t j = mark; j < chosen.size(); ++j) taken[IndexOf(chosen[j].device)] = false;
        chosen.resize(mark);
        return false;
      }
      taken[i] = true;
      chosen.push_back({req.claim, name, devices[i].slice, devices[i].device, admin});
    }
    if (Allocate(r + 1)) return true;
    for (size_t j = mark; j < chosen.size(); ++j) taken[IndexOf(chosen[j].device)] = false;
    chosen.resize(mark);
    return false;
  }
};

NodeAnswer Allocator::Check(rt::RowId row) {
  auto known = answers_.find(row);
  if (known != answers_.end()) return known->second;
  NodeAnswer answer = Decide(row);
  answers_.emplace(row, answer);
  return answer;
}

NodeAnswer Allocator::Decide(rt::RowId row) {
  NodeAnswer answer;
  if (!claims_.problem.empty() || claims_.Empty()) return answer;
  bool unavailable = false;
  for (const k8s::ResourceClaim* claim : claims_.allocated) {
    if (claim->allocation->node_selector && !SelectorMatches(*claim->allocation->node_selector, table_, row)) {
      unavailable = true;
    }
  }
  if (!claims_.to_allocate.empty()) {
    Prepare();
    std::vector<Candidate> devices = Devices(row);
    Search search{*this, devices, std::vector<bool>(devices.size(), false), {}, {}, 0, false};
    bool ok = search.Allocate(0);
    if (!search.error.empty()) {
      answer.fit = Fit::kError;
      answer.error = search.error;
      return answer;
    }
    if (search.timed_out) {
      answer.fit = Fit::kError;
      answer.error = "timed out trying to allocate devices";
      return answer;
    }
    if (!ok) {
      answer.fit = Fit::kCannotAllocate;
      return answer;
    }
    answer.devices = std::move(search.chosen);
  }
  if (unavailable) answer.fit = Fit::kNotAvailable;
  return answer;
}

// The first selector of the alternative that `c` fails, in words with where it is written.
std::string Allocator::WhyNot(const Candidate& c, const Request& r, size_t alternative) {
  const Request::Alternative& alt = r.alternatives[alternative];
  cel::DeviceInput input{c.slice->driver, c.device};
  auto first_false = [&](const std::vector<std::shared_ptr<const cel::Program>>& programs,
                         const std::vector<k8s::CelSelector>& written, std::string_view whose) -> std::string {
    for (size_t i = 0; i < programs.size() && i < written.size(); ++i) {
      if (!programs[i]->expr) continue;
      cel::Outcome o = cel::Evaluate(*programs[i]->expr, input);
      if (!o.error.empty() || o.matches) continue;
      cel::FalseBecause why = cel::ExplainFalse(*programs[i]->expr, input);
      if (why.asks.empty()) return fmt::format("{}: {}'s selector #{} is false for it{}", c.device->name, whose, i, Place(written[i], why.begin));
      return fmt::format("{}: {}, {}'s selector asks {}{}", c.device->name, why.have, whose, why.asks, Place(written[i], why.begin));
    }
    return "";
  };
  if (alt.klass != nullptr) {
    std::string why = first_false(alt.class_selectors, alt.klass->selectors, "class " + alt.klass->name);
    if (!why.empty()) return why;
  }
  return first_false(alt.request_selectors, alt.sub->selectors, "the claim");
}

std::string Allocator::Explain(rt::RowId row) {
  NodeAnswer answer = Check(row);
  if (answer.fit == Fit::kFits) return "";
  if (answer.fit == Fit::kError) return answer.error;
  std::vector<std::string> parts;
  if (answer.fit == Fit::kNotAvailable) {
    for (const k8s::ResourceClaim* claim : claims_.allocated) {
      if (claim->allocation->node_selector && !SelectorMatches(*claim->allocation->node_selector, table_, row)) {
        parts.push_back(fmt::format("the claim {} is already allocated to devices that {} cannot reach",
                                    ClaimKey(*claim), table_.NodeName(row)));
      }
    }
    return fmt::format("{}", fmt::join(parts, "; "));
  }
  std::vector<Candidate> devices = Devices(row);
  for (const Request& r : requests_) {
    const k8s::ResourceClaim& claim = *claims_.to_allocate[r.claim];
    for (size_t alt = 0; alt < r.alternatives.size(); ++alt) {
      const k8s::DeviceSubRequest& sub = *r.alternatives[alt].sub;
      std::string name = r.request->first_available ? r.request->name + "/" + sub.name : r.request->name;
      size_t matching = 0, free = 0;
      std::string closest;
      for (const Candidate& c : devices) {
        bool m = false;
        if (Matches(c, r, alt, &m)) continue;
        if (m) {
          ++matching;
          free += !in_use_.contains(c.id) || sub.admin_access;
        } else if (closest.empty()) {
          closest = WhyNot(c, r, alt);
        }
      }
      std::string need = sub.mode == k8s::AllocationMode::kAll ? "all matching devices"
                                                                : fmt::format("{} device{}", sub.count, sub.count == 1 ? "" : "s");
      std::string text = fmt::format("claim {} request {} (class {}) needs {}: {} has {} matching, {} free",
                                     ClaimKey(claim), name, sub.class_name, need, table_.NodeName(row), matching, free);
      if (matching < static_cast<size_t>(sub.count) && !closest.empty()) text += "; " + closest;
      if (devices.empty()) text += " (it publishes no device a ResourceSlice lists)";
      parts.push_back(std::move(text));
    }
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace policy::dra
