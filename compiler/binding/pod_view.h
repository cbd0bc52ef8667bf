#pragma once
/// The pod as policies read it: one place that maps the schema's pod-side
/// fields (compiler/lang/schema.def) to a k8s::Pod. Partial evaluation reads
/// the pod through it at compile time; the interpreter at run time.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "k8s/objects.h"
#include "compiler/binding/pod_values.h"
#include "compiler/lang/schema.h"

namespace policy::binding {

enum class PodRecord : uint8_t {
  kPod,
  kNodeAffinity,
  kTerm,
  kRequirement,
  kPreferredTerm,
  kToleration,
  kPodAffinity,
  kPodAffinityTerm,
  kWeightedPodAffinityTerm,
  kSpreadConstraint,
  kPodPort,
  kVolume,
  kVolumeCandidate,
};

/// A pod-side value: a scalar, a record, or a collection (views into the pod).
struct PodRef {
  enum class Kind : uint8_t { kNone, kBool, kInt, kString, kRecord, kRecordList, kStringList, kStringMap, kResources };
  Kind kind = Kind::kNone;
  int64_t i = 0;
  std::string s;
  PodRecord record = PodRecord::kPod;  ///< kRecord, and the elements of kRecordList
  const void* ptr = nullptr;           ///< kRecord: the object; kStringList, kStringMap, kResources: the collection
  std::vector<const void*> records;    ///< kRecordList

  PodRef() = default;
  explicit PodRef(Kind k, int64_t value = 0) : kind(k), i(value) {}
  static PodRef Int(int64_t v) { return PodRef(Kind::kInt, v); }
  static PodRef Str(std::string v) {
    PodRef r{Kind::kString};
    r.s = std::move(v);
    return r;
  }
};

/// Whether pods `a` and `b` give pod-side field `field` of the pod itself
/// (`pod.requests`, `pod.tolerations`, ...; schema.def's fields of Pod) the
/// same value, with everything reached through it: what PodView reads
/// that field from is equal. False for any other field. A program whose
/// only reads of the pod are such fields, specialized for `a`, is the one
/// `b` would get.
bool SamePodField(lang::FieldId field, const k8s::Pod& a, const k8s::Pod& b);

/// What a specialization read of `pod.requests` and `pod.scoringRequests`:
/// the names it looked up, or, when it went through a collection (a loop
/// over it, its size), the whole of it.
struct ResourceReads {
  struct Of {
    bool whole = false;
    std::vector<std::string> names;
  };
  Of requests, scoring;
};
/// Whether `a` and `b` give every read of `reads` for `field` (kPodRequests
/// or kPodScoringRequests) the same answer.
bool SameResourceReads(lang::FieldId field, const ResourceReads& reads, const k8s::Pod& a, const k8s::Pod& b);

class PodView {
 public:
  explicit PodView(const k8s::Pod& pod, ResourceReads* reads = nullptr);
  PodView(const PodView&) = delete;
  PodView& operator=(const PodView&) = delete;

  /// The pod itself.
  PodRef Root() const;
  /// A pod-side field of a pod-side record; nullopt for node-side fields.
  std::optional<PodRef> Load(lang::FieldId field, const PodRef& record) const;
  /// `m[key]` (none when absent), `resources[name]` (0 when absent), `list[i]` (none when out of range);
  /// nullopt when `object` is not indexable by `key`.
  std::optional<PodRef> Index(const PodRef& object, const PodRef& key) const;
  /// The number of elements of a collection.
  std::optional<int64_t> Size(const PodRef& collection) const;
  /// Says that `collection` is read whole (a loop unrolled over its elements).
  void ReadWhole(const PodRef& collection) const;

 private:
  ResourceReads::Of* ReadsOf(const PodRef& resources) const;

  const k8s::Pod& pod_;
  ResourceReads* reads_;  // may be null
  ResourceAmounts requests_;
  ResourceAmounts scoring_;
  k8s::NodeAffinity no_affinity_;
  k8s::PodAffinity no_pod_affinity_;
  std::vector<k8s::HostPort> host_ports_;  // every container's, in order
  std::vector<std::string> images_;        // init containers', then containers', normalized
  std::vector<k8s::ResolvedVolume> unresolved_;
  // spec.nodeSelector as In requirements, and the required terms'
  // matchExpressions in one list (for messages; made on first use).
  mutable std::optional<std::vector<k8s::SelectorRequirement>> node_selector_;
  mutable std::optional<std::vector<k8s::SelectorRequirement>> required_expressions_;
  const std::vector<k8s::SelectorRequirement>& NodeSelectorRequirements() const;
  const std::vector<k8s::SelectorRequirement>& RequiredExpressions() const;  // pod.volumes as they are, when nothing resolved them
};

}  // namespace policy::binding
