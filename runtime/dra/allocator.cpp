// The DynamicResources plugin's claim lookup and the structured allocator
// (allocator.h).

#include "runtime/dra/allocator.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <span>

#include <fmt/format.h>

#include "compiler/cel/compile.h"
#include "compiler/cel/eval.h"
#include "compiler/cel/explain.h"
#include "k8s/node_match.h"
#include "k8s/object_archive.h"
#include "runtime/dra/selector_evaluator.h"

namespace policy::dra {
namespace {

// ResourceClaimReservedForMaxSize: a claim reserved for this many pods takes no more.
constexpr size_t kReservedForMax = 256;

std::string ClaimKey(const k8s::ResourceClaim& c) { return c.namespace_name + "/" + c.name; }



bool SelectorMatches(const std::vector<k8s::NodeSelectorTerm>& terms, const rt::NodeTable& table, rt::RowId row) {
  auto label = [&](std::string_view key) { return table.LabelValue(key, row); };
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

// One request of a claim to allocate, with its alternatives' classes.
struct Allocator::Request {
  size_t claim = 0;
  const k8s::DeviceRequest* request = nullptr;
  struct Alternative {
    const k8s::DeviceSubRequest* sub = nullptr;
    const k8s::DeviceClass* klass = nullptr;
    std::string name;  ///< `req`, or `req/sub` for firstAvailable
    /// The claim's matchAttribute constraints that cover it.
    std::vector<const k8s::DeviceConstraint*> constraints;
    /// The class's selectors' answers, then the request's, over every device.
    std::vector<std::shared_ptr<const rt::DeviceTable::Verdicts>> class_verdicts, request_verdicts;
    /// All of them at once (DeviceTable::Combined).
    std::shared_ptr<const std::vector<int8_t>> combined;
  };
  std::vector<Alternative> alternatives;
};

Allocator::Allocator(const k8s::Pod& pod, const rt::NodeTable& table)
    : pod_(pod), table_(table), claims_(ResolvePodClaims(pod, table.Storage())) {}

Allocator::~Allocator() = default;

const FitVersion& Allocator::Version() {
  if (version_) return *version_;  // its claims and device table are fixed once read
  FitVersion& v = version_.emplace();
  k8s::ArchiveWriter w;
  w.Str(claims_.problem);
  for (const auto* list : {&claims_.allocated, &claims_.to_allocate}) {
    w.U64(list->size());
    for (const k8s::ResourceClaim* claim : *list) {
      k8s::ResourceClaim bearing = *claim;  // what Decide reads of it
      bearing.name.clear();
      bearing.uid.clear();
      bearing.controller_kind.clear();
      bearing.controller_uid.clear();
      bearing.reserved_for.clear();
      for (k8s::DeviceRequest& request : bearing.spec.requests) {
        for (k8s::DeviceSubRequest& sub : request.alternatives) {
          for (k8s::CelSelector& s : sub.selectors) {
            s.file.clear();
            s.line = s.column = 0;
          }
        }
      }
      w.Put(bearing);
    }
  }
  v.claims = std::move(w.MutableBytes());
  if (!claims_.to_allocate.empty() && claims_.problem.empty()) {
    Prepare();
    v.lineage = devices_->Lineage();
    v.position = devices_->Position();
  }
  return v;
}

bool Allocator::RowsMoved(const FitVersion& since, std::vector<rt::RowId>& rows) {
  const FitVersion& now = Version();
  if (now.claims != since.claims || now.lineage != since.lineage || since.position > now.position) return false;
  if (now.lineage == 0) return true;  // no device is read
  std::span<const rt::ClaimDeviceChange> log = table_.ClaimDeviceChanges();
  if (now.position > log.size()) return false;
  return devices_->RowsOf(log.subspan(since.position, now.position - since.position), rows);
}

void Allocator::Prepare() {
  if (prepared_) return;
  prepared_ = true;
  const rt::StorageObjects& storage = table_.Storage();
  for (size_t c = 0; c < claims_.to_allocate.size(); ++c) {
    for (const k8s::DeviceRequest& request : claims_.to_allocate[c]->spec.requests) {
      Request r;
      r.claim = c;
      r.request = &request;
      for (const k8s::DeviceSubRequest& sub : request.alternatives) {
        Request::Alternative alt;
        alt.sub = &sub;
        alt.klass = rt::StorageObjects::Get(storage.device_classes, sub.class_name);
        alt.name = request.first_available ? request.name + "/" + sub.name : request.name;
        for (const k8s::DeviceConstraint& k : claims_.to_allocate[r.claim]->spec.constraints) {
          bool covers = k.requests.empty() || std::find(k.requests.begin(), k.requests.end(), request.name) != k.requests.end() ||
                        std::find(k.requests.begin(), k.requests.end(), alt.name) != k.requests.end();
          if (!k.match_attribute.empty() && covers) alt.constraints.push_back(&k);
        }
        r.alternatives.push_back(std::move(alt));
      }
      requests_.push_back(std::move(r));
    }
  }
  devices_ = table_.Devices();
  for (Request& r : requests_) {
    for (Request::Alternative& alt : r.alternatives) {
      if (alt.klass != nullptr) {
        for (const k8s::CelSelector& s : alt.klass->selectors) alt.class_verdicts.push_back(devices_->Selector(s.expression, Evaluator()));
      }
      for (const k8s::CelSelector& s : alt.sub->selectors) alt.request_verdicts.push_back(devices_->Selector(s.expression, Evaluator()));
      std::vector<std::string> all;
      if (alt.klass != nullptr) {
        for (const k8s::CelSelector& s : alt.klass->selectors) all.push_back(s.expression);
      }
      for (const k8s::CelSelector& s : alt.sub->selectors) all.push_back(s.expression);
      alt.combined = devices_->Combined(all, Evaluator());
    }
  }
}

// Whether the device matches the alternative's class and request
// selectors (each evaluated over every device once, in the device table);
// an error message when a selector fails to compile or run on it.
std::optional<std::string> Allocator::Matches(uint32_t id, const Request& r, size_t alternative, bool* matches) {
  const Request::Alternative& alt = r.alternatives[alternative];
  // The owner is named only when there is an error to report.
  auto run = [&](const std::vector<std::shared_ptr<const rt::DeviceTable::Verdicts>>& verdicts,
                 auto owner) -> std::optional<std::string> {
    for (size_t i = 0; i < verdicts.size(); ++i) {
      const rt::DeviceTable::Verdicts& v = *verdicts[i];
      int8_t m = v.match[id];
      if (m == 1) continue;
      if (m == 0) {
        *matches = false;
        return std::nullopt;
      }
      if (!v.compile_error.empty()) return fmt::format("{}: selector #{}: CEL compile error: {}", owner(), i, v.compile_error);
      return fmt::format("{}: selector #{}: CEL runtime error: {}", owner(), i, v.errors.at(id));
    }
    *matches = true;
    return std::nullopt;
  };
  if (auto error = run(alt.class_verdicts, [&] { return "class " + alt.sub->class_name; })) return error;
  if (!*matches) return std::nullopt;
  return run(alt.request_verdicts, [&] { return "claim " + ClaimKey(*claims_.to_allocate[r.claim]); });
}

// One node's backtracking search over the requests in order.
struct Allocator::Search {
  Allocator& a;
  std::span<const uint32_t> devices;  ///< device table rows the node can use
  std::vector<uint8_t>& taken;        ///< per device: chosen by this allocation (the allocator's buffer)
  std::vector<Pick>& chosen;          ///< (the allocator's buffer)
  std::string error;
  uint64_t steps = 0;
  bool timed_out = false;

  // Whether `device` agrees with the devices already chosen under each of
  // the alternative's constraints.
  bool Agrees(size_t claim, const Request::Alternative& alt, const k8s::Device& device) {
    for (const k8s::DeviceConstraint* c : alt.constraints) {
      const k8s::DeviceAttribute* mine = AttributeOf(device, c->match_attribute);
      if (mine == nullptr) return false;
      for (const Pick& other : chosen) {
        const auto& covering = other.request->alternatives[other.alternative].constraints;
        if (other.claim != claim || std::find(covering.begin(), covering.end(), c) == covering.end()) continue;
        const k8s::DeviceAttribute* theirs = AttributeOf(*At(other.index).device, c->match_attribute);
        if (theirs == nullptr || !(*theirs == *mine)) return false;
      }
    }
    return true;
  }

  const rt::DeviceTable::Device& At(size_t i) const { return a.devices_->Devices()[devices[i]]; }

  bool Usable(size_t i, bool admin) { return !taken[i] && (admin || !a.devices_->InUse(devices[i])); }

  // Requests [r, end) allocated after what is chosen; false on no or error.
  bool Allocate(size_t r) {
    if (r == a.requests_.size()) return true;
    const Request& req = a.requests_[r];
    for (size_t alt = 0; alt < req.alternatives.size(); ++alt) {
      size_t mark = chosen.size();
      bool ok = req.alternatives[alt].sub->mode == k8s::AllocationMode::kAll
                    ? AllocateAll(r, alt)
                    : AllocateCount(r, alt, 0, req.alternatives[alt].sub->count);
      if (ok) return true;
      if (!error.empty() || timed_out) return false;
      Undo(mark);
    }
    return false;
  }

  // Drops the choices after `mark`.
  void Undo(size_t mark) {
    for (size_t i = mark; i < chosen.size(); ++i) taken[chosen[i].index] = false;
    chosen.resize(mark);
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

  void Take(const Request& req, size_t alt, size_t i) {
    taken[i] = true;
    chosen.push_back({req.claim, &req, alt, i});
  }

  // ExactCount: `left` more devices from index `from` on.
  bool AllocateCount(size_t r, size_t alt, size_t from, int64_t left) {
    if (left == 0) return Allocate(r + 1);
    const Request& req = a.requests_[r];
    const Request::Alternative& the = req.alternatives[alt];
    bool admin = the.sub->admin_access;
    for (size_t i = from; i < devices.size(); ++i) {
      if (!Step()) return false;
      if (!Usable(i, admin)) continue;
      std::optional<bool> m = DeviceMatches(i, r, alt);
      if (!m) return false;
      if (!*m || !Agrees(req.claim, the, *At(i).device)) continue;
      Take(req, alt, i);
      if (AllocateCount(r, alt, i + 1, left - 1)) return true;
      chosen.pop_back();
      taken[i] = false;
      if (!error.empty() || timed_out) return false;
    }
    return false;
  }

  // All: every matching device of the node, none in use, the pool complete.
  bool AllocateAll(size_t r, size_t alt) {
    const Request& req = a.requests_[r];
    const Request::Alternative& the = req.alternatives[alt];
    bool admin = the.sub->admin_access;
    std::vector<size_t> all;
    for (size_t i = 0; i < devices.size(); ++i) {
      if (!Step()) return false;
      std::optional<bool> m = DeviceMatches(i, r, alt);
      if (!m) return false;
      if (!*m) continue;
      if (a.devices_->Pools()[At(i).pool].incomplete) {
        error = fmt::format("claim {}, request {}: asks for all devices, but resource pool {}/{} is currently being updated",
                            ClaimKey(*a.claims_.to_allocate[req.claim]), the.name, At(i).slice->driver,
                            At(i).slice->pool.name);
        return false;
      }
      if (!Usable(i, admin)) return false;  // one of them is taken
      all.push_back(i);
    }
    if (all.empty()) return false;
    size_t mark = chosen.size();
    for (size_t i : all) {
      if (!Agrees(req.claim, the, *At(i).device)) {
        Undo(mark);
        return false;
      }
      Take(req, alt, i);
    }
    if (Allocate(r + 1)) return true;
    Undo(mark);
    return false;
  }

  std::vector<Chosen> Result() const {
    std::vector<Chosen> out;
    for (const Pick& p : chosen) {
      const Request::Alternative& alt = p.request->alternatives[p.alternative];
      out.push_back({p.claim, alt.name, At(p.index).slice, At(p.index).device, alt.sub->admin_access, devices[p.index]});
    }
    return out;
  }
};

NodeAnswer Allocator::Check(rt::RowId row) { return Decide(row, true); }

Fit Allocator::FitOf(rt::RowId row) {
  if (fits_.size() <= row) fits_.resize(table_.RowCount(), -1);
  if (fits_[row] < 0) fits_[row] = static_cast<int8_t>(Decide(row, false).fit);
  return static_cast<Fit>(fits_[row]);
}

void Allocator::KnowFits(const int64_t* fits, size_t rows) {
  if (fits_.size() < rows) fits_.resize(std::max<size_t>(rows, table_.RowCount()), -1);
  for (rt::RowId row = 0; row < rows; ++row) {
    if (fits_[row] < 0) fits_[row] = static_cast<int8_t>(fits[row]);
  }
}

void Allocator::FitColumn(int64_t* out, size_t rows) {
  for (rt::RowId row = 0; row < rows; ++row) out[row] = static_cast<int64_t>(FitOf(row));
}

namespace {
std::atomic<uint64_t> node_searches{0};
}  // namespace

uint64_t NodeSearches() { return node_searches.load(std::memory_order_relaxed); }

NodeAnswer Allocator::Decide(rt::RowId row, bool keep_devices) {
  node_searches.fetch_add(1, std::memory_order_relaxed);
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
    std::vector<uint32_t> with_shared;
    std::span<const uint32_t> devices = devices_->LocalDevices(row);
    if (devices_->HasShared()) devices = with_shared = devices_->DevicesOf(row);
    // One ExactCount request without constraints: the search takes the
    // first usable matching devices in order, so counting them answers,
    // unless a selector fails on a device reached first (then the search
    // below says how).
    if (!keep_devices && requests_.size() == 1 && requests_[0].alternatives.size() == 1) {
      const Request::Alternative& alt = requests_[0].alternatives[0];
      if (alt.sub->mode == k8s::AllocationMode::kExactCount && alt.constraints.empty()) {
        const std::vector<int8_t>& verdict = *alt.combined;
        int64_t found = 0;
        bool failed = false;
        for (uint32_t id : devices) {
          if (verdict[id] < 0) {
            failed = true;
            break;
          }
          found += verdict[id] == 1 && (alt.sub->admin_access || !devices_->InUse(id));
          if (found == alt.sub->count) break;
        }
        if (!failed) {
          if (found < alt.sub->count) answer.fit = Fit::kCannotAllocate;
          else if (unavailable) answer.fit = Fit::kNotAvailable;
          return answer;
        }
      }
    }
    taken_.assign(devices.size(), 0);
    chosen_.clear();
    Search search{*this, devices, taken_, chosen_, {}, 0, false};
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
    if (keep_devices) answer.devices = search.Result();
  }
  if (unavailable) answer.fit = Fit::kNotAvailable;
  return answer;
}

// The first selector of the alternative that device `id` fails, in words
// with where it is written.
std::string Allocator::WhyNot(uint32_t id, const Request& r, size_t alternative) {
  const Request::Alternative& alt = r.alternatives[alternative];
  const rt::DeviceTable::Device& d = devices_->Devices()[id];
  cel::DeviceInput input{d.slice->driver, d.device};
  auto first_false = [&](const std::vector<k8s::CelSelector>& written, std::string_view whose) -> std::string {
    for (size_t i = 0; i < written.size(); ++i) {
      if (devices_->Selector(written[i].expression, Evaluator())->match[id] != 0) continue;
      std::shared_ptr<const cel::Program> p = cel::Compile(written[i].expression);
      if (!p->expr) continue;
      cel::FalseBecause why = cel::ExplainFalse(*p->expr, input);
      if (why.asks.empty()) {
        return fmt::format("{}: {}'s selector #{} is false for it{}", d.device->name, whose, i, Place(written[i], why.begin));
      }
      return fmt::format("{}: {}, {}'s selector asks {}{}", d.device->name, why.have, whose, why.asks,
                         Place(written[i], why.begin));
    }
    return "";
  };
  if (alt.klass != nullptr) {
    std::string why = first_false(alt.klass->selectors, "class " + alt.klass->name);
    if (!why.empty()) return why;
  }
  return first_false(alt.sub->selectors, "the claim");
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
  Prepare();
  std::vector<uint32_t> devices = devices_->DevicesOf(row);
  for (const Request& r : requests_) {
    const k8s::ResourceClaim& claim = *claims_.to_allocate[r.claim];
    for (size_t alt = 0; alt < r.alternatives.size(); ++alt) {
      const k8s::DeviceSubRequest& sub = *r.alternatives[alt].sub;
      std::string name = r.request->first_available ? r.request->name + "/" + sub.name : r.request->name;
      size_t matching = 0, free = 0;
      std::string closest;
      for (uint32_t id : devices) {
        bool m = false;
        if (Matches(id, r, alt, &m)) continue;
        if (m) {
          ++matching;
          free += !devices_->InUse(id) || sub.admin_access;
        } else if (closest.empty()) {
          closest = WhyNot(id, r, alt);
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
