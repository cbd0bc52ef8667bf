#pragma once
/// kube-scheduler's DynamicResources plugin for one pod: its claims looked
/// up as the PreFilter looks them up, and per node the structured
/// allocator's answer (k8s.io/dynamic-resource-allocation/structured, the
/// implementation Kubernetes 1.34 runs with its default feature gates):
/// ExactCount and All requests, DeviceClass and request CEL selectors,
/// `matchAttribute` constraints across requests, `firstAvailable`
/// alternatives (the first that lets every claim be allocated wins),
/// adminAccess, devices other claims hold, node-local and network-attached
/// slices, pools incomplete or in the middle of an update.
///
/// The search is kube's: requests in order, each device of the node's pools
/// in order, backtracking; its work is bounded (kMaxSteps), past which the
/// node is answered as kube's allocator answers a timeout.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "k8s/dra.h"
#include "k8s/objects.h"
#include "runtime/columnar/node_table.h"

namespace policy::cel {
struct Program;
}

namespace policy::dra {

/// The pod's claims as the PreFilter resolves them.
struct PodClaims {
  /// The PreFilter's rejection in kube's words (`pod "ns/p": ResourceClaim
  /// not created yet`, `request gpu: device class X does not exist`, ...);
  /// empty when the pod passes it.
  std::string problem;
  std::vector<const k8s::ResourceClaim*> allocated;    ///< with status.allocation
  std::vector<const k8s::ResourceClaim*> to_allocate;  ///< the allocator's work
  bool Empty() const { return allocated.empty() && to_allocate.empty(); }
};

/// Looks the pod's claims up (spec.resourceClaims; a template's claim by
/// status.resourceClaimStatuses, which must be owned by the pod).
PodClaims ResolvePodClaims(const k8s::Pod& pod, const rt::StorageObjects& storage);

/// A node's answer, in the order kube's Filter checks: an allocation error
/// (the attempt is aborted), claims that cannot be allocated, an allocated
/// claim whose node selector excludes the node.
enum class Fit : uint8_t { kFits = 0, kNotAvailable = 1, kCannotAllocate = 2, kError = 3 };

/// One device chosen for a request.
struct Chosen {
  size_t claim = 0;     ///< index into PodClaims::to_allocate
  std::string request;  ///< `req` or `req/sub`
  const k8s::ResourceSlice* slice = nullptr;
  const k8s::Device* device = nullptr;
  bool admin_access = false;
};

struct NodeAnswer {
  Fit fit = Fit::kFits;
  std::string error;            ///< kError: kube's message
  std::vector<Chosen> devices;  ///< kFits: what allocating would take
};

/// The work bound of one node's search (selector evaluations and device
/// choices); past it the node is `timed out trying to allocate devices`.
constexpr uint64_t kMaxSteps = 1'000'000;

class Allocator {
 public:
  Allocator(const k8s::Pod& pod, const rt::NodeTable& table);
  ~Allocator();

  const PodClaims& Claims() const { return claims_; }
  NodeAnswer Check(rt::RowId row);
  /// Why `row` cannot take the claims, for people: per request, the devices
  /// it needs and the node has, and for the closest device the selector or
  /// constraint it fails with the device's value.
  std::string Explain(rt::RowId row);

 private:
  struct Request;
  struct Candidate;
  struct Search;

  void Prepare();
  NodeAnswer Decide(rt::RowId row);
  std::string WhyNot(const Candidate& c, const Request& r, size_t alternative);
  std::vector<Candidate> Devices(rt::RowId row);
  std::optional<std::string> Matches(const Candidate& c, const Request& r, size_t alternative, bool* matches);

  const k8s::Pod& pod_;
  const rt::NodeTable& table_;
  PodClaims claims_;
  bool prepared_ = false;
  std::vector<Request> requests_;
  std::string prepare_error_;
  /// (driver/pool/device) of every device an allocated claim holds, other
  /// than with admin access.
  std::unordered_map<std::string, bool> in_use_;
  /// Slices by node name, and those of every node or a node selector.
  std::unordered_map<std::string, std::vector<const k8s::ResourceSlice*>> by_node_;
  std::vector<const k8s::ResourceSlice*> shared_;
  /// Per (device, request alternative), the selectors' answer, so a device
  /// seen from several nodes is evaluated once.
  std::unordered_map<const k8s::Device*, std::vector<int8_t>> verdicts_;
  /// Each row's answer, asked by several filters and messages.
  std::unordered_map<rt::RowId, NodeAnswer> answers_;
};

}  // namespace policy::dra
