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
#include "runtime/columnar/device_table.h"
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
  uint32_t id = 0;  ///< its row in the device table
};

struct NodeAnswer {
  Fit fit = Fit::kFits;
  std::string error;            ///< kError: kube's message
  std::vector<Chosen> devices;  ///< kFits: what allocating would take
};

/// What an Allocator's FitOf answers depend on beyond the devices claims
/// hold on each node: the pod's claims as they bear on them (their specs,
/// the allocations of those already allocated; not their names nor where
/// their selectors were written), and the device table's lineage and
/// position (rt::DeviceTable::Lineage). Two pods' allocators with the same
/// `claims` answer alike on every row but the ones RowsMoved names.
struct FitVersion {
  std::string claims;
  uint64_t lineage = 0;
  size_t position = 0;
  bool operator==(const FitVersion&) const = default;
};

/// The work bound of one node's search (selector evaluations and device
/// choices); past it the node is `timed out trying to allocate devices`.
constexpr uint64_t kMaxSteps = 1'000'000;

/// How many node answers (Check, or FitOf not yet known) allocators in this
/// process have worked out: tests hold the work to what was asked with it.
uint64_t NodeSearches();

class Allocator {
 public:
  Allocator(const k8s::Pod& pod, const rt::NodeTable& table);
  ~Allocator();

  const PodClaims& Claims() const { return claims_; }
  /// The node's answer with the devices allocating would take.
  NodeAnswer Check(rt::RowId row);
  /// Its verdict alone (kept per row for this pod).
  Fit FitOf(rt::RowId row);
  /// Why `row` cannot take the claims, for people: per request, the devices
  /// it needs and the node has, and for the closest device the selector or
  /// constraint it fails with the device's value.
  std::string Explain(rt::RowId row);

  /// FitOf of rows [0, rows) into `out` (the claimsFit() column).
  void FitColumn(int64_t* out, size_t rows);
  /// Takes FitOf's answers for rows [0, rows) as a caller kept them up to
  /// date (the incremental decider's claimsFit column): rows not yet
  /// decided answer from them.
  void KnowFits(const int64_t* fits, size_t rows);
  /// This pod's FitVersion now.
  const FitVersion& Version();
  /// Adds to `rows` those where FitOf may answer otherwise than an
  /// allocator of version `since` did: the nodes whose devices claims took
  /// or gave back in between. False when any row may (other claims, a
  /// rebuilt device table, a shared slice's device).
  bool RowsMoved(const FitVersion& since, std::vector<rt::RowId>& rows);

 private:
  struct Request;
  struct Search;
  // A device chosen for a request alternative during a search.
  struct Pick {
    size_t claim;
    const Request* request;
    size_t alternative;
    size_t index;  ///< into the node's devices
  };

  void Prepare();
  NodeAnswer Decide(rt::RowId row, bool keep_devices);
  /// Whether device `id` matches alternative `alternative` of `r`; an error
  /// message when a selector fails to compile or run on it.
  std::optional<std::string> Matches(uint32_t id, const Request& r, size_t alternative, bool* matches);
  std::string WhyNot(uint32_t id, const Request& r, size_t alternative);

  const k8s::Pod& pod_;
  const rt::NodeTable& table_;
  PodClaims claims_;
  bool prepared_ = false;
  std::vector<Request> requests_;
  std::shared_ptr<const rt::DeviceTable> devices_;
  std::optional<FitVersion> version_;
  /// Each row's verdict, asked by several filters and messages (-1: not yet).
  std::vector<int8_t> fits_;
  // The search's buffers, kept from node to node.
  std::vector<uint8_t> taken_;
  std::vector<Pick> chosen_;
};

}  // namespace policy::dra
