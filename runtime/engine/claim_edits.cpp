// Suggestions that edit a pod's DRA claims (claim_edits.h).

#include "runtime/engine/claim_edits.h"

#include <algorithm>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "runtime/engine/cluster.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/template_claims.h"

namespace policy::engine {
namespace {

// Where a person changes the claim: the pod's template, else the claim.
std::string ClaimWhere(const k8s::Pod& pod, const k8s::ResourceClaim& claim) {
  for (const k8s::PodResourceClaimStatus& status : pod.resource_claim_statuses) {
    if (status.claim_name != claim.name) continue;
    for (const k8s::PodResourceClaim& entry : pod.resource_claims) {
      if (entry.name == status.name && !entry.template_name.empty()) return "template " + entry.template_name;
    }
  }
  return "claim " + claim.name;
}

}  // namespace

ClaimEditor::ClaimEditor(Engine& engine, Cluster& cluster, const std::set<rt::RowId>& feasible, size_t budget)
    : engine_(engine), cluster_(cluster), feasible_(feasible), budget_(budget) {}

std::optional<Suggestion> ClaimEditor::TryClaim(const k8s::Pod& pod, const k8s::ResourceClaim& original, k8s::ResourceClaim edited,
                                   Change change) {
  ++tried_;
  cluster_.SetResourceClaim(std::move(edited));
  std::unique_ptr<PodPlan> plan = engine_.Plan(pod, cluster_);
  std::vector<rt::RowId> feasible = engine_.Decide(*plan, cluster_, {.filters_only = true}).feasible;
  plan.reset();
  cluster_.SetResourceClaim(original);
  Suggestion s;
  for (rt::RowId row : feasible) {
    if (!feasible_.contains(row)) s.nodes.emplace_back(cluster_.Table().NodeName(row));
  }
  if (s.nodes.empty()) return std::nullopt;
  s.changes.push_back(std::move(change));
  return s;
}

bool ClaimEditor::TemplateClaims(const k8s::Pod& original_pod, std::vector<Suggestion>& out) {
  k8s::Pod pod = original_pod;
  std::vector<std::string> made = MakeTemplateClaims(pod, cluster_);
  if (made.empty()) return false;
  Change create{"create-claims",
                fmt::format("the ResourceClaim{} {} made from the pod's template{}, as the resourceclaim controller "
                            "makes {} once the pod exists",
                            made.size() == 1 ? "" : "s", fmt::join(made, ", "), made.size() == 1 ? "" : "s",
                            made.size() == 1 ? "it" : "them"),
                {{"claims", fmt::format("{}", fmt::join(made, ","))}}};
  Suggestion alone;
  alone.cluster = true;
  {
    std::unique_ptr<PodPlan> plan = engine_.Plan(pod, cluster_);
    for (rt::RowId row : engine_.Decide(*plan, cluster_, {.filters_only = true}).feasible) {
      if (!feasible_.contains(row)) alone.nodes.emplace_back(cluster_.Table().NodeName(row));
    }
  }
  if (!alone.nodes.empty()) {
    alone.changes.push_back(create);
    out.push_back(std::move(alone));
  } else {
    std::vector<Suggestion> edits;
    Edits(pod, edits);
    for (Suggestion& e : edits) {
      e.cluster = true;
      e.changes.insert(e.changes.begin(), create);
      out.push_back(std::move(e));
    }
  }
  for (const std::string& name : made) cluster_.RemoveResourceClaim(pod.namespace_name, name);
  return true;
}

void ClaimEditor::Edits(const k8s::Pod& pod, std::vector<Suggestion>& out) {
  // The pod's claims not allocated yet, looked up by name (also when the
  // PreFilter refuses them, e.g. for a class that does not exist).
  std::vector<k8s::ResourceClaim> originals;  // copies: the storage changes while edits are tried
  for (const k8s::PodResourceClaim& entry : pod.resource_claims) {
    std::string name = entry.claim_name;
    for (const k8s::PodResourceClaimStatus& status : pod.resource_claim_statuses) {
      if (status.name == entry.name) name = status.claim_name;
    }
    const k8s::ResourceClaim* claim = rt::StorageObjects::Get(cluster_.Table().Storage().resource_claims,
                                                              rt::StorageObjects::ClaimKey(pod.namespace_name, name));
    if (claim != nullptr && !claim->allocation) originals.push_back(*claim);
  }
  std::vector<std::string> classes;
  for (const auto& [name, c] : cluster_.Table().Storage().device_classes) classes.push_back(name);
  std::sort(classes.begin(), classes.end());
  auto budget = [&] { return tried_ < budget_; };
  for (const k8s::ResourceClaim& original : originals) {
    std::string where = ClaimWhere(pod, original);
    for (size_t r = 0; r < original.spec.requests.size(); ++r) {
      const k8s::DeviceRequest& request = original.spec.requests[r];
      for (size_t a = 0; a < request.alternatives.size(); ++a) {
        const k8s::DeviceSubRequest& sub = request.alternatives[a];
        std::string name = request.first_available ? request.name + "/" + sub.name : request.name;
        auto edited = [&](auto&& edit) {
          k8s::ResourceClaim c = original;
          edit(c.spec.requests[r].alternatives[a]);
          return c;
        };
        auto fields = [&](std::vector<std::pair<std::string, std::variant<std::string, int64_t>>> more) {
          std::vector<std::pair<std::string, std::variant<std::string, int64_t>>> f = {
              {where.starts_with("template ") ? "template" : "claim", where.substr(where.find(' ') + 1)},
              {"request", name}};
          f.insert(f.end(), more.begin(), more.end());
          return f;
        };
        // Fewer devices: the largest count that opens a node.
        std::optional<Suggestion> fewer;
        for (int64_t lo = 1, hi = sub.mode == k8s::AllocationMode::kExactCount ? sub.count - 1 : 0;
             lo <= hi && budget();) {
          int64_t mid = lo + (hi - lo + 1) / 2;
          Change change{"lower-device-count",
                        fmt::format("ask for {} device{} instead of {} in request `{}` of {}", mid, mid == 1 ? "" : "s",
                                    sub.count, name, where),
                        fields({{"from", sub.count}, {"to", mid}})};
          std::optional<Suggestion> s = TryClaim(
              pod, original, edited([&](k8s::DeviceSubRequest& x) { x.count = mid; }), std::move(change));
          if (s) {
            fewer = std::move(s);
            lo = mid + 1;
          } else {
            hi = mid - 1;
          }
        }
        if (fewer) out.push_back(std::move(*fewer));
        for (size_t i = 0; i < sub.selectors.size() && budget(); ++i) {
          const k8s::CelSelector& selector = sub.selectors[i];
          Change change{"drop-device-selector",
                        fmt::format("drop the selector `{}` from request `{}` of {}", selector.expression, name, where),
                        fields({{"selector", selector.expression}})};
          auto drop = [i](k8s::DeviceSubRequest& x) { x.selectors.erase(x.selectors.begin() + static_cast<ptrdiff_t>(i)); };
          if (auto s = TryClaim(pod, original, edited(drop), std::move(change))) out.push_back(std::move(*s));
        }
        for (const std::string& other : classes) {
          if (other == sub.class_name || !budget()) continue;
          Change change{"use-device-class",
                        fmt::format("use DeviceClass `{}` instead of `{}` in request `{}` of {}", other,
                                    sub.class_name, name, where),
                        fields({{"from", sub.class_name}, {"to", other}})};
          auto use = [&other](k8s::DeviceSubRequest& x) { x.class_name = other; };
          if (auto s = TryClaim(pod, original, edited(use), std::move(change))) out.push_back(std::move(*s));
        }
      }
    }
  }
}

}  // namespace policy::engine
