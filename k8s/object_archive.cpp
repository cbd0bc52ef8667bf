// The binary form of decoded objects (object_archive.h). Each struct lists
// its fields once, in Fields(); one walker writes them and one reads them,
// so the two cannot disagree. Integers are LEB128 varints (signed ones
// zigzagged), strings and lists carry their lengths.

#include "k8s/object_archive.h"

#include <type_traits>

namespace policy::k8s {

// --- the fields of each struct, in one place ----------------------------------

template <class F> void Fields(F& f, Taint& v) { f(v.key, v.value, v.effect); }
template <class F> void Fields(F& f, Node& v) {
  f(v.name, v.labels, v.annotations, v.taints, v.unschedulable, v.allocatable, v.capacity, v.images);
}
template <class F> void Fields(F& f, SelectorRequirement& v) { f(v.key, v.op, v.values); }
template <class F> void Fields(F& f, NodeSelectorTerm& v) { f(v.match_expressions, v.match_fields); }
template <class F> void Fields(F& f, PreferredSchedulingTerm& v) { f(v.weight, v.preference); }
template <class F> void Fields(F& f, NodeAffinity& v) { f(v.required, v.preferred); }
template <class F> void Fields(F& f, LabelSelector& v) { f(v.match_labels, v.match_expressions); }
template <class F> void Fields(F& f, PodAffinityTerm& v) {
  f(v.label_selector, v.namespaces, v.namespace_selector, v.topology_key, v.match_label_keys, v.mismatch_label_keys);
}
template <class F> void Fields(F& f, WeightedPodAffinityTerm& v) { f(v.weight, v.term); }
template <class F> void Fields(F& f, PodAffinity& v) { f(v.required, v.preferred); }
template <class F> void Fields(F& f, Affinity& v) { f(v.node_affinity, v.pod_affinity, v.pod_anti_affinity); }
template <class F> void Fields(F& f, Toleration& v) { f(v.key, v.op, v.value, v.effect, v.toleration_seconds); }
template <class F> void Fields(F& f, TopologySpreadConstraint& v) {
  f(v.max_skew, v.topology_key, v.when_unsatisfiable, v.label_selector, v.min_domains, v.node_affinity_policy,
    v.node_taints_policy, v.match_label_keys);
}
template <class F> void Fields(F& f, HostPort& v) { f(v.port, v.protocol, v.host_ip); }
template <class F> void Fields(F& f, Container& v) {
  f(v.name, v.image, v.host_ports, v.requests, v.limits, v.restartable, v.status_resources, v.status_requests,
    v.allocated);
}
template <class F> void Fields(F& f, OwnerReference& v) { f(v.api_version, v.kind, v.name); }
template <class F> void Fields(F& f, SelectorOwner& v) { f(v.kind, v.name, v.namespace_name, v.match_labels, v.selector); }
template <class F> void Fields(F& f, Volume& v) { f(v.name, v.kind, v.claim, v.disks, v.read_only); }
template <class F> void Fields(F& f, PersistentVolumeClaim& v) {
  f(v.name, v.namespace_name, v.access_modes, v.storage_class, v.volume_name, v.volume_mode, v.request, v.selector,
    v.phase, v.deleting, v.bind_completed, v.selected_node);
}
template <class F> void Fields(F& f, PersistentVolume& v) {
  f(v.name, v.labels, v.access_modes, v.storage_class, v.volume_mode, v.capacity, v.claim_namespace, v.claim_name,
    v.phase, v.deleting, v.node_affinity, v.csi_driver, v.csi_handle);
}
template <class F> void Fields(F& f, StorageClass& v) { f(v.name, v.provisioner, v.wait_for_first_consumer, v.allowed_topologies); }
template <class F> void Fields(F& f, CsiNode& v) { f(v.name, v.limits); }
template <class F> void Fields(F& f, PriorityClass& v) { f(v.name, v.value, v.global_default, v.preemption_policy); }
template <class F> void Fields(F& f, PodDisruptionBudget& v) { f(v.name, v.namespace_name, v.selector, v.disruptions_allowed); }
template <class F> void Fields(F& f, ResolvedVolume& v) {
  f(v.name, v.kind, v.claim, v.claim_found, v.claim_lost, v.claim_deleting, v.bound, v.delay_binding,
    v.read_write_once_pod, v.in_use, v.volume_name, v.selected_node, v.pv_found, v.pv_affinity, v.pv_topology,
    v.class_name, v.class_found, v.wait_for_first_consumer, v.provisionable, v.allowed_topologies, v.candidates,
    v.attach_driver, v.attach_handle, v.disks, v.read_only);
}
template <class F> void Fields(F& f, Namespace& v) { f(v.name, v.labels); }
template <class F> void Fields(F& f, PodResourceClaim& v) { f(v.name, v.claim_name, v.template_name); }
template <class F> void Fields(F& f, PodResourceClaimStatus& v) { f(v.name, v.claim_name); }
template <class F> void Fields(F& f, CelSelector& v) { f(v.expression, v.file, v.line, v.column); }
template <class F> void Fields(F& f, DeviceAttribute& v) { f(v.kind, v.int_value, v.bool_value, v.text); }
template <class F> void Fields(F& f, Device& v) { f(v.name, v.attributes, v.capacity); }
template <class F> void Fields(F& f, ResourcePool& v) { f(v.name, v.generation, v.slice_count); }
template <class F> void Fields(F& f, ResourceSlice& v) {
  f(v.name, v.driver, v.pool, v.node_name, v.node_selector, v.all_nodes, v.devices);
}
template <class F> void Fields(F& f, DeviceClass& v) { f(v.name, v.selectors); }
template <class F> void Fields(F& f, DeviceSubRequest& v) {
  f(v.name, v.class_name, v.selectors, v.mode, v.count, v.admin_access);
}
template <class F> void Fields(F& f, DeviceRequest& v) { f(v.name, v.alternatives, v.first_available); }
template <class F> void Fields(F& f, DeviceConstraint& v) { f(v.requests, v.match_attribute); }
template <class F> void Fields(F& f, DeviceClaimSpec& v) { f(v.requests, v.constraints); }
template <class F> void Fields(F& f, DeviceResult& v) { f(v.request, v.driver, v.pool, v.device, v.admin_access); }
template <class F> void Fields(F& f, AllocationResult& v) { f(v.devices, v.node_selector); }
template <class F> void Fields(F& f, ClaimConsumer& v) { f(v.resource, v.name, v.uid); }
template <class F> void Fields(F& f, ResourceClaim& v) {
  f(v.name, v.namespace_name, v.uid, v.controller_kind, v.controller_uid, v.deleting, v.spec, v.allocation,
    v.reserved_for);
}
template <class F> void Fields(F& f, ResourceClaimTemplate& v) { f(v.name, v.namespace_name, v.spec); }
template <class F> void Fields(F& f, Pod& v) {
  f(v.name, v.namespace_name, v.uid, v.labels, v.annotations, v.node_name, v.node_selector, v.affinity, v.tolerations,
    v.topology_spread, v.spread_system_defaulted, v.containers, v.init_containers, v.overhead, v.pod_requests,
    v.pod_limits, v.resize_infeasible, v.priority,
    v.priority_class_name, v.preemption_policy, v.creation_timestamp, v.start_time, v.terminating, v.scheduled_message, v.template_replicas,
    v.scheduler_name, v.host_network, v.scheduling_gates, v.volumes, v.resource_claims, v.resource_claim_statuses, v.resource_claims_problem,
    v.resolved_volumes, v.phase, v.template_of,
    v.template_selector, v.controller);
}

// How many values each enum has: a number past it is damage, never an enum value.
template <class T> constexpr uint64_t kValues = 0;
template <> constexpr uint64_t kValues<TaintEffect> = 3;
template <> constexpr uint64_t kValues<SelectorOp> = 6;
template <> constexpr uint64_t kValues<TolerationOp> = 2;
template <> constexpr uint64_t kValues<WhenUnsatisfiable> = 2;
template <> constexpr uint64_t kValues<InclusionPolicy> = 2;
template <> constexpr uint64_t kValues<Volume::Kind> = 3;
template <> constexpr uint64_t kValues<PodPhase> = 5;
template <> constexpr uint64_t kValues<DeviceAttribute::Kind> = 4;
template <> constexpr uint64_t kValues<AllocationMode> = 2;

template <class T>
concept HasFields = requires(T& v, int& f) { Fields(f, v); };

// --- writing and reading ---------------------------------------------------------

struct ArchiveIo {
  struct Out {
    ArchiveWriter& w;
    template <class... A> void operator()(A&... a) { (Do(a), ...); }
    void Do(std::string& s) { w.Str(s); }
    template <class T> requires std::is_integral_v<T> || std::is_enum_v<T>
    void Do(T& v) {
      if constexpr (std::is_enum_v<T>) {
        w.U64(static_cast<uint64_t>(v));
      } else if constexpr (std::is_signed_v<T>) {
        w.I64(v);
      } else {
        w.U64(static_cast<uint64_t>(v));
      }
    }
    void Do(Quantity& q) {
      unsigned __int128 n = static_cast<unsigned __int128>(q.nanos());
      w.U64(static_cast<uint64_t>(n));
      w.U64(static_cast<uint64_t>(n >> 64));
      w.U64(static_cast<uint64_t>(q.format()));
    }
    template <class T> void Do(std::vector<T>& v) {
      w.U64(v.size());
      for (T& x : v) Do(x);
    }
    template <class A, class B> void Do(std::pair<A, B>& p) {
      Do(p.first);
      Do(p.second);
    }
    template <class T> void Do(std::optional<T>& o) {
      w.U64(o.has_value());
      if (o) Do(*o);
    }
    template <class T> requires HasFields<T> void Do(T& v) { Fields(*this, v); }
  };

  struct In {
    ArchiveReader& r;
    template <class... A> void operator()(A&... a) { (Do(a), ...); }
    void Do(std::string& s) { s = r.Str(); }
    template <class T> requires std::is_integral_v<T> || std::is_enum_v<T>
    void Do(T& v) {
      if constexpr (std::is_enum_v<T>) {
        static_assert(kValues<T> > 0, "an enum of an object without kValues");
        uint64_t u = r.U64();
        if (u >= kValues<T>) r.ok_ = false;
        v = static_cast<T>(u < kValues<T> ? u : 0);
      } else if constexpr (std::is_signed_v<T>) {
        v = static_cast<T>(r.I64());
      } else {
        v = static_cast<T>(r.U64());
      }
    }
    void Do(Quantity& q) {
      uint64_t lo = r.U64(), hi = r.U64(), format = r.U64();
      unsigned __int128 n = (static_cast<unsigned __int128>(hi) << 64) | lo;
      if (format > 2 || static_cast<Quantity::Nanos>(n) > Quantity::kMaxNanos ||
          static_cast<Quantity::Nanos>(n) < -Quantity::kMaxNanos) {
        r.ok_ = false;
        return;
      }
      q = Quantity::FromNanos(static_cast<Quantity::Nanos>(n), static_cast<QuantityFormat>(format));
    }
    template <class T> void Do(std::vector<T>& v) {
      uint64_t n = r.U64();
      // Every element takes a byte at least: a count past what is left is damage.
      if (!r.ok_ || n > r.in_.size() - r.at_) {
        r.ok_ = false;
        return;
      }
      // Grown as elements are read, so memory follows what the bytes hold.
      v.clear();
      for (uint64_t i = 0; i < n && r.ok_; ++i) {
        T x{};
        Do(x);
        if (r.ok_) v.push_back(std::move(x));
      }
    }
    template <class A, class B> void Do(std::pair<A, B>& p) {
      Do(p.first);
      Do(p.second);
    }
    template <class T> void Do(std::optional<T>& o) {
      if (r.U64() == 0) {
        o.reset();
        return;
      }
      o.emplace();
      Do(*o);
    }
    template <class T> requires HasFields<T> void Do(T& v) { Fields(*this, v); }
  };
};

void ArchiveWriter::U64(uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>(static_cast<uint8_t>(v) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void ArchiveWriter::I64(int64_t v) { U64((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }

void ArchiveWriter::Str(std::string_view s) {
  U64(s.size());
  out_.append(s);
}

uint64_t ArchiveReader::U64() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && ok_; shift += 7) {
    if (at_ >= in_.size()) break;
    uint8_t b = static_cast<uint8_t>(in_[at_++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
  ok_ = false;
  return 0;
}

int64_t ArchiveReader::I64() {
  uint64_t u = U64();
  return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
}

std::string ArchiveReader::Str() { return std::string(View()); }

std::string_view ArchiveReader::View() {
  uint64_t n = U64();
  if (!ok_ || n > in_.size() - at_) {
    ok_ = false;
    return {};
  }
  std::string_view s = in_.substr(at_, n);
  at_ += n;
  return s;
}

#define POLICYC_ARCHIVE(T)                     \
  void ArchiveWriter::Put(const T& v) {        \
    ArchiveIo::Out out{*this};                 \
    out.Do(const_cast<T&>(v));                 \
  }                                            \
  bool ArchiveReader::Get(T& v) {              \
    ArchiveIo::In in{*this};                   \
    in.Do(v);                                  \
    return ok_;                                \
  }
POLICYC_ARCHIVE(Node)
POLICYC_ARCHIVE(Pod)
POLICYC_ARCHIVE(Namespace)
POLICYC_ARCHIVE(SelectorOwner)
POLICYC_ARCHIVE(PersistentVolumeClaim)
POLICYC_ARCHIVE(PersistentVolume)
POLICYC_ARCHIVE(StorageClass)
POLICYC_ARCHIVE(CsiNode)
POLICYC_ARCHIVE(PriorityClass)
POLICYC_ARCHIVE(PodDisruptionBudget)
POLICYC_ARCHIVE(PodAffinityTerm)
POLICYC_ARCHIVE(HostPort)
POLICYC_ARCHIVE(Volume)
POLICYC_ARCHIVE(DeviceClass)
POLICYC_ARCHIVE(ResourceSlice)
POLICYC_ARCHIVE(ResourceClaim)
POLICYC_ARCHIVE(ResourceClaimTemplate)
#undef POLICYC_ARCHIVE

}  // namespace policy::k8s
