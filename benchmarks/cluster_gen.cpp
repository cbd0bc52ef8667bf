#include "benchmarks/cluster_gen.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <random>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

namespace policy::bench {
namespace {

// A small value tree, printed as kubectl prints JSON (4-space indent) or YAML.
struct Value;
using Map = std::vector<std::pair<std::string, Value>>;
using List = std::vector<Value>;
struct Value {
  std::variant<std::string, int64_t, bool, Map, List> v;
  Value(const char* s) : v(std::string(s)) {}
  Value(std::string s) : v(std::move(s)) {}
  Value(int64_t i) : v(i) {}
  Value(int i) : v(static_cast<int64_t>(i)) {}
  Value(bool b) : v(b) {}
  Value(Map m) : v(std::move(m)) {}
  Value(List l) : v(std::move(l)) {}
};

void Json(const Value& value, int indent, std::string& out) {
  std::string pad(indent + 4, ' ');
  if (auto* s = std::get_if<std::string>(&value.v)) {
    out += '"';
    for (char c : *s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  } else if (auto* i = std::get_if<int64_t>(&value.v)) {
    out += fmt::format("{}", *i);
  } else if (auto* b = std::get_if<bool>(&value.v)) {
    out += *b ? "true" : "false";
  } else if (auto* m = std::get_if<Map>(&value.v)) {
    out += "{\n";
    for (size_t k = 0; k < m->size(); ++k) {
      out += pad + '"' + (*m)[k].first + "\": ";
      Json((*m)[k].second, indent + 4, out);
      out += k + 1 < m->size() ? ",\n" : "\n";
    }
    out += std::string(indent, ' ') + "}";
  } else {
    const List& l = std::get<List>(value.v);
    out += "[\n";
    for (size_t k = 0; k < l.size(); ++k) {
      out += pad;
      Json(l[k], indent + 4, out);
      out += k + 1 < l.size() ? ",\n" : "\n";
    }
    out += std::string(indent, ' ') + "]";
  }
}

bool NeedsQuotes(const std::string& s) {
  if (s.empty()) return true;
  char c = s[0];
  if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == '{' || c == '[' || c == '"' || c == '\'' ||
      c == '*' || c == '&' || c == '!' || c == '|' || c == '>' || c == '%' || c == '@' || c == '#' || c == '?') {
    return true;
  }
  static const char* kWords[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"};
  for (const char* w : kWords) {
    if (s == w) return true;
  }
  return s.find(": ") != std::string::npos || s.find(" #") != std::string::npos || s.back() == ':';
}

void YamlScalar(const Value& value, std::string& out) {
  if (auto* s = std::get_if<std::string>(&value.v)) {
    if (NeedsQuotes(*s)) {
      out += '\'';
      for (char c : *s) {
        out += c;
        if (c == '\'') out += '\'';
      }
      out += '\'';
    } else {
      out += *s;
    }
  } else if (auto* i = std::get_if<int64_t>(&value.v)) {
    out += fmt::format("{}", *i);
  } else {
    out += std::get<bool>(value.v) ? "true" : "false";
  }
}

bool IsEmptyContainer(const Value& v) {
  if (auto* m = std::get_if<Map>(&v.v)) return m->empty();
  if (auto* l = std::get_if<List>(&v.v)) return l->empty();
  return false;
}

// Block-style YAML as kubectl prints it (lists not indented under their key).
void Yaml(const Value& value, int indent, std::string& out) {
  std::string pad(indent, ' ');
  if (auto* m = std::get_if<Map>(&value.v)) {
    for (const auto& [key, v] : *m) {
      out += pad + key + ":";
      if (IsEmptyContainer(v)) {
        out += std::holds_alternative<Map>(v.v) ? " {}\n" : " []\n";
      } else if (std::holds_alternative<Map>(v.v)) {
        out += '\n';
        Yaml(v, indent + 2, out);
      } else if (std::holds_alternative<List>(v.v)) {
        out += '\n';
        Yaml(v, indent, out);
      } else {
        out += ' ';
        YamlScalar(v, out);
        out += '\n';
      }
    }
  } else if (auto* l = std::get_if<List>(&value.v)) {
    for (const Value& v : *l) {
      out += pad + "- ";
      if (std::holds_alternative<Map>(v.v) && !IsEmptyContainer(v)) {
        std::string inner;
        Yaml(v, indent + 2, inner);
        out += inner.substr(static_cast<size_t>(indent + 2));  // first key on the dash line
      } else {
        YamlScalar(v, out);
        out += '\n';
      }
    }
  }
}

struct Zone {
  const char* region;
  const char* zone;
};
constexpr Zone kZones[] = {{"us-east-1", "us-east-1a"}, {"us-east-1", "us-east-1b"}, {"us-east-1", "us-east-1c"},
                           {"us-west-2", "us-west-2a"}, {"us-west-2", "us-west-2b"}, {"eu-west-1", "eu-west-1a"}};
struct Shape {
  const char* type;
  int cpus;
  int memory_gi;
  int gpus;
  const char* gpu_product;
  int gpu_memory_mib;
};
constexpr Shape kCpuShapes[] = {{"m6i.2xlarge", 8, 32, 0, "", 0},  {"m6i.4xlarge", 16, 64, 0, "", 0},
                                {"c6i.8xlarge", 32, 64, 0, "", 0}, {"r6i.4xlarge", 16, 128, 0, "", 0}};
constexpr Shape kGpuShapes[] = {{"g5.12xlarge", 48, 192, 4, "NVIDIA-A10G", 23028},
                                {"p4d.24xlarge", 96, 1152, 8, "NVIDIA-A100-SXM4-40GB", 40960},
                                {"p5.48xlarge", 192, 2048, 8, "NVIDIA-H100-80GB-HBM3", 81559}};

// Node Feature Discovery's labels, as every NFD-labelled node carries them
// (CPU flags, kernel, PCI, system), so that a node has ~80 label keys.
void AddNfdLabels(Map& labels) {
  const char* kCpuid[] = {"ADX", "AESNI", "AVX", "AVX2", "AVX512BW", "AVX512CD", "AVX512DQ", "AVX512VL", "AVX512VNNI",
                          "CMPXCHG8", "FMA3", "FXSR", "FXSROPT", "GFNI", "HYPERVISOR", "LAHF", "MOVBE", "OSXSAVE",
                          "SHA", "SYSCALL", "SYSEE", "VAES", "VPCLMULQDQ", "WBNOINVD", "X87", "XGETBV1", "XSAVE",
                          "XSAVEC", "XSAVEOPT", "XSAVES"};
  for (const char* flag : kCpuid) labels.emplace_back(fmt::format("feature.node.kubernetes.io/cpu-cpuid.{}", flag), "true");
  Map rest = {{"feature.node.kubernetes.io/cpu-hardware_multithreading", "true"},
              {"feature.node.kubernetes.io/cpu-model.family", "6"},
              {"feature.node.kubernetes.io/cpu-model.id", "106"},
              {"feature.node.kubernetes.io/cpu-model.vendor_id", "Intel"},
              {"feature.node.kubernetes.io/kernel-config.NO_HZ", "true"},
              {"feature.node.kubernetes.io/kernel-config.NO_HZ_IDLE", "true"},
              {"feature.node.kubernetes.io/kernel-version.full", "6.1.112-124.190.amzn2023.x86_64"},
              {"feature.node.kubernetes.io/kernel-version.major", "6"},
              {"feature.node.kubernetes.io/kernel-version.minor", "1"},
              {"feature.node.kubernetes.io/kernel-version.revision", "112"},
              {"feature.node.kubernetes.io/pci-1d0f.present", "true"},
              {"feature.node.kubernetes.io/storage-nonrotationaldisk", "true"},
              {"feature.node.kubernetes.io/system-os_release.ID", "amzn"},
              {"feature.node.kubernetes.io/system-os_release.VERSION_ID", "2023"},
              {"feature.node.kubernetes.io/system-os_release.VERSION_ID.major", "2023"},
              {"karpenter.k8s.aws/instance-category", "m"},
              {"karpenter.k8s.aws/instance-generation", "6"},
              {"karpenter.k8s.aws/instance-hypervisor", "nitro"},
              {"karpenter.sh/capacity-type", "on-demand"},
              {"node.kubernetes.io/lifecycle", "normal"},
              {"vpc.amazonaws.com/has-trunk-attached", "false"}};
  for (auto& [k, v] : rest) {
    bool have = false;
    for (const auto& [key, value] : labels) have = have || key == k;
    if (!have) labels.emplace_back(k, std::move(v));
  }
}

Value MakeNode(int i, std::mt19937& rng, bool gpu, bool realistic) {
  const Zone& zone = kZones[rng() % std::size(kZones)];
  const Shape& shape = gpu ? kGpuShapes[rng() % std::size(kGpuShapes)] : kCpuShapes[rng() % std::size(kCpuShapes)];
  std::string name = fmt::format("ip-10-{}-{}-{}.ec2.internal", i / 65536 % 256, i / 256 % 256, i % 256);
  std::string ip = fmt::format("10.{}.{}.{}", i / 65536 % 256, i / 256 % 256, i % 256);
  std::string group = gpu ? fmt::format("gpu-{}", shape.type) : fmt::format("general-{}", rng() % 4);
  Map labels = {
      {"beta.kubernetes.io/arch", "amd64"},
      {"beta.kubernetes.io/instance-type", shape.type},
      {"beta.kubernetes.io/os", "linux"},
      {"eks.amazonaws.com/capacityType", rng() % 10 == 0 ? "SPOT" : "ON_DEMAND"},
      {"eks.amazonaws.com/nodegroup", group},
      {"eks.amazonaws.com/nodegroup-image", "ami-0b1c6e4f3a9d2e7c8"},
      {"eks.amazonaws.com/sourceLaunchTemplateId", "lt-0a1b2c3d4e5f67890"},
      {"failure-domain.beta.kubernetes.io/region", zone.region},
      {"failure-domain.beta.kubernetes.io/zone", zone.zone},
      {"k8s.io/cloud-provider-aws", "a94f3e1c2b7d6e5f4a3b2c1d0e9f8a7b"},
      {"kubernetes.io/arch", "amd64"},
      {"kubernetes.io/hostname", name},
      {"kubernetes.io/os", "linux"},
      {"node.kubernetes.io/instance-type", shape.type},
      {"topology.ebs.csi.aws.com/zone", zone.zone},
      {"topology.k8s.aws/zone-id", fmt::format("use1-az{}", rng() % 6 + 1)},
      {"topology.kubernetes.io/region", zone.region},
      {"topology.kubernetes.io/zone", zone.zone},
  };
  if (gpu) {
    Map gfd = {
        {"feature.node.kubernetes.io/cpu-cpuid.AVX512F", "true"},
        {"feature.node.kubernetes.io/cpu-model.family", "6"},
        {"feature.node.kubernetes.io/kernel-version.full", "6.1.112-124.190.amzn2023.x86_64"},
        {"feature.node.kubernetes.io/pci-10de.present", "true"},
        {"feature.node.kubernetes.io/system-os_release.ID", "amzn"},
        {"nvidia.com/cuda.driver-version.full", "550.127.05"},
        {"nvidia.com/cuda.driver.major", "550"},
        {"nvidia.com/cuda.driver.minor", "127"},
        {"nvidia.com/cuda.driver.rev", "05"},
        {"nvidia.com/cuda.runtime-version.full", "12.4"},
        {"nvidia.com/cuda.runtime.major", "12"},
        {"nvidia.com/cuda.runtime.minor", "4"},
        {"nvidia.com/gfd.timestamp", fmt::format("{}", 1732090000 + i)},
        {"nvidia.com/gpu-driver-upgrade-state", "upgrade-done"},
        {"nvidia.com/gpu.compute.major", "8"},
        {"nvidia.com/gpu.compute.minor", "0"},
        {"nvidia.com/gpu.count", fmt::format("{}", shape.gpus)},
        {"nvidia.com/gpu.deploy.container-toolkit", "true"},
        {"nvidia.com/gpu.deploy.dcgm-exporter", "true"},
        {"nvidia.com/gpu.deploy.device-plugin", "true"},
        {"nvidia.com/gpu.deploy.driver", "pre-installed"},
        {"nvidia.com/gpu.deploy.gpu-feature-discovery", "true"},
        {"nvidia.com/gpu.family", "ampere"},
        {"nvidia.com/gpu.machine", shape.type},
        {"nvidia.com/gpu-memory.total", fmt::format("{}Mi", shape.gpus * shape.gpu_memory_mib)},
        {"nvidia.com/gpu.memory", fmt::format("{}", shape.gpu_memory_mib)},
        {"nvidia.com/gpu.present", "true"},
        {"nvidia.com/gpu.product", shape.gpu_product},
        {"nvidia.com/gpu.replicas", "1"},
        {"nvidia.com/gpu.sharing-strategy", "none"},
        {"nvidia.com/mig.capable", "false"},
        {"nvidia.com/mps.capable", "false"},
    };
    labels.insert(labels.end(), gfd.begin(), gfd.end());
  }
  if (realistic) AddNfdLabels(labels);
  List taints;
  if (gpu) taints.push_back(Map{{"effect", "NoSchedule"}, {"key", "nvidia.com/gpu"}, {"value", "present"}});
  if (rng() % 20 == 0) taints.push_back(Map{{"effect", "PreferNoSchedule"}, {"key", "spot"}, {"value", "true"}});
  bool cordoned = rng() % 100 == 0;
  if (cordoned) {
    taints.push_back(Map{{"effect", "NoSchedule"}, {"key", "node.kubernetes.io/unschedulable"},
                         {"timeAdded", "2026-12-01T17:02:11Z"}});
  }
  Map spec = {{"podCIDR", fmt::format("10.{}.{}.0/24", 100 + i / 65536 % 100, i / 256 % 256)},
              {"providerID", fmt::format("aws:///{}/i-0{:016x}", zone.zone, static_cast<uint64_t>(rng()) * 7919 + i)}};
  if (!taints.empty()) spec.emplace_back("taints", std::move(taints));
  if (cordoned) spec.emplace_back("unschedulable", true);

  int64_t mem_ki = int64_t{shape.memory_gi} * 1024 * 1024;
  Map capacity = {{"cpu", fmt::format("{}", shape.cpus)},
                  {"ephemeral-storage", "104845292Ki"},
                  {"hugepages-1Gi", "0"},
                  {"hugepages-2Mi", "0"},
                  {"memory", fmt::format("{}Ki", mem_ki)},
                  {"pods", gpu ? "250" : "110"}};
  Map allocatable = {{"cpu", fmt::format("{}m", shape.cpus * 1000 - 90)},
                     {"ephemeral-storage", "95551679124"},
                     {"hugepages-1Gi", "0"},
                     {"hugepages-2Mi", "0"},
                     {"memory", fmt::format("{}Ki", mem_ki - 1498392)},
                     {"pods", gpu ? "250" : "110"}};
  if (gpu) {
    capacity.emplace_back("nvidia.com/gpu", fmt::format("{}", shape.gpus));
    allocatable.emplace_back("nvidia.com/gpu", fmt::format("{}", shape.gpus));
    // GPU memory as an extended resource (policies/gpu-memory-fit.policy).
    capacity.emplace_back("nvidia.com/gpu-memory", fmt::format("{}Mi", shape.gpus * shape.gpu_memory_mib));
    allocatable.emplace_back("nvidia.com/gpu-memory", fmt::format("{}Mi", shape.gpus * shape.gpu_memory_mib));
  }
  List conditions;
  const char* kConditions[][3] = {
      {"MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
      {"DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
      {"PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
      {"Ready", "KubeletReady", "kubelet is posting ready status"}};
  for (auto& c : kConditions) {
    conditions.push_back(Map{{"lastHeartbeatTime", "2026-12-02T09:14:27Z"},
                             {"lastTransitionTime", "2026-11-20T08:14:02Z"},
                             {"message", c[2]},
                             {"reason", c[1]},
                             {"status", std::string(c[0]) == "Ready" ? "True" : "False"},
                             {"type", c[0]}});
  }
  List images;
  const char* kImages[] = {"602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni",
                           "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy",
                           "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/coredns",
                           "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/aws-ebs-csi-driver",
                           "public.ecr.aws/eks-distro/kubernetes-csi/livenessprobe",
                           "quay.io/prometheus/node-exporter",
                           "registry.k8s.io/pause"};
  for (const char* image : kImages) {
    images.push_back(Map{{"names", List{fmt::format("{}@sha256:{:016x}{:016x}", image, rng(), rng()),
                                        fmt::format("{}:v1.{}.{}", image, rng() % 30, rng() % 10)}},
                         {"sizeBytes", static_cast<int64_t>(rng() % 90000000 + 300000)}});
  }
  Map status = {
      {"addresses", List{Map{{"address", ip}, {"type", "InternalIP"}}, Map{{"address", name}, {"type", "Hostname"}},
                         Map{{"address", name}, {"type", "InternalDNS"}}}},
      {"allocatable", std::move(allocatable)},
      {"capacity", std::move(capacity)},
      {"conditions", std::move(conditions)},
      {"daemonEndpoints", Map{{"kubeletEndpoint", Map{{"Port", 10250}}}}},
      {"images", std::move(images)},
      {"nodeInfo", Map{{"architecture", "amd64"},
                       {"bootID", fmt::format("{:08x}-1f2e-4d3c-9b8a-{:012x}", rng(), i)},
                       {"containerRuntimeVersion", "containerd://1.7.22"},
                       {"kernelVersion", "6.1.112-124.190.amzn2023.x86_64"},
                       {"kubeProxyVersion", "v1.31.2-eks-94953ac"},
                       {"kubeletVersion", "v1.31.2-eks-94953ac"},
                       {"machineID", fmt::format("ec2{:029x}", i)},
                       {"operatingSystem", "linux"},
                       {"osImage", "Amazon Linux 2023.6.20241111"},
                       {"systemUUID", fmt::format("ec2{:05x}-9a3b-4c1d-8e2f-{:012x}", i % 0xfffff, rng())}}},
  };
  Map metadata = {
      {"annotations", Map{{"alpha.kubernetes.io/provided-node-ip", ip},
                          {"csi.volume.kubernetes.io/nodeid",
                           fmt::format("{{\"ebs.csi.aws.com\":\"i-0{:016x}\"}}", static_cast<uint64_t>(rng()))},
                          {"node.alpha.kubernetes.io/ttl", "0"},
                          {"volumes.kubernetes.io/controller-managed-attach-detach", "true"}}},
      {"creationTimestamp", "2026-11-20T08:13:41Z"},
      {"labels", std::move(labels)},
      {"name", name},
      {"resourceVersion", fmt::format("{}", 9182734 + i)},
      {"uid", fmt::format("{:08x}-3f1c-4e2d-a1b0-{:012x}", rng(), i)},
  };
  return Map{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", std::move(metadata)},
             {"spec", std::move(spec)}, {"status", std::move(status)}};
}

// A pod's parts as admission and the controllers make them: the projected
// service-account token volume (named per pod), its mount, the default
// not-ready/unreachable tolerations.
std::string Suffix(uint64_t n) {
  const char* kAlphabet = "bcdfghjklmnpqrstvwxz2456789";  // what generateName's suffixes use
  std::string s;
  for (int i = 0; i < 5; ++i, n /= 27) s += kAlphabet[n % 27];
  return s;
}

Value TokenVolume(const std::string& name) {
  return Map{{"name", name},
             {"projected",
              Map{{"defaultMode", 420},
                  {"sources", List{Map{{"serviceAccountToken", Map{{"expirationSeconds", 3607}, {"path", "token"}}}},
                                   Map{{"configMap", Map{{"items", List{Map{{"key", "ca.crt"}, {"path", "ca.crt"}}}},
                                                         {"name", "kube-root-ca.crt"}}}},
                                   Map{{"downwardAPI",
                                        Map{{"items", List{Map{{"fieldRef", Map{{"apiVersion", "v1"},
                                                                                {"fieldPath", "metadata.namespace"}}},
                                                               {"path", "namespace"}}}}}}}}}}}};
}

List DefaultTolerations() {
  return List{Map{{"effect", "NoExecute"}, {"key", "node.kubernetes.io/not-ready"}, {"operator", "Exists"},
                  {"tolerationSeconds", 300}},
              Map{{"effect", "NoExecute"}, {"key", "node.kubernetes.io/unreachable"}, {"operator", "Exists"},
                  {"tolerationSeconds", 300}}};
}

Value Owner(const std::string& api_version, const std::string& kind, const std::string& name) {
  return Map{{"apiVersion", api_version}, {"blockOwnerDeletion", true}, {"controller", true},
             {"kind", kind}, {"name", name}, {"uid", fmt::format("{:08x}-5e1d-4c2b-9a8f-{:012x}", name.size() * 7919, std::hash<std::string>()(name) & 0xffffffffffff)}};
}


std::string TemplateHash(const std::string& app) { return Suffix(std::hash<std::string>()(app)) + "d9f"; }

Map Resources(const std::string& cpu, const std::string& memory, bool gpu, const std::string& gpu_memory) {
  Map requests = {{"cpu", cpu}, {"memory", memory}};
  Map resources;
  if (gpu) {  // extended resources: limits equal to the requests, as the API server requires
    requests.emplace_back("nvidia.com/gpu", "1");
    requests.emplace_back("nvidia.com/gpu-memory", gpu_memory);
    resources.emplace_back("limits", Map{{"nvidia.com/gpu", "1"}, {"nvidia.com/gpu-memory", gpu_memory}});
  }
  resources.emplace(resources.begin(), "requests", std::move(requests));
  return resources;
}

// A container as the API server returns it (defaults filled in).
Value Container(const std::string& name, const std::string& image, Map resources, const std::string& token) {
  return Map{{"image", image},
             {"imagePullPolicy", "IfNotPresent"},
             {"name", name},
             {"resources", std::move(resources)},
             {"terminationMessagePath", "/dev/termination-log"},
             {"terminationMessagePolicy", "File"},
             {"volumeMounts", List{Map{{"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
                                       {"name", token},
                                       {"readOnly", true}}}}};
}

// The fields every pod's spec has once admitted.
void SpecDefaults(Map& spec, const std::string& token, List volumes) {
  spec.emplace_back("dnsPolicy", "ClusterFirst");
  spec.emplace_back("enableServiceLinks", true);
  spec.emplace_back("preemptionPolicy", "PreemptLowerPriority");
  spec.emplace_back("restartPolicy", "Always");
  spec.emplace_back("schedulerName", "default-scheduler");
  spec.emplace_back("securityContext", Map{});
  spec.emplace_back("serviceAccount", "default");
  spec.emplace_back("serviceAccountName", "default");
  spec.emplace_back("terminationGracePeriodSeconds", 30);
  spec.emplace_back("tolerations", DefaultTolerations());
  volumes.push_back(TokenVolume(token));
  spec.emplace_back("volumes", std::move(volumes));
}

// A bound pod as `kubectl get pods -o json` shows it: kube-proxy owned by
// its DaemonSet, the others by their Deployment's ReplicaSet.
Value MakeRealisticPod(const std::string& node_name, int node, int k, const std::string& app, bool gpu) {
  bool proxy = k == 0;
  std::string rs = proxy ? "kube-proxy" : app + "-" + TemplateHash(app);
  std::string name = proxy ? "kube-proxy-" + Suffix(static_cast<uint64_t>(node) * 131 + 7) : rs + "-" + Suffix(static_cast<uint64_t>(node) * 977 + k);
  std::string token = "kube-api-access-" + Suffix(static_cast<uint64_t>(node) * 31337 + k);
  Map labels = {{"app", app}};
  if (!proxy) labels.emplace_back("pod-template-hash", TemplateHash(app));
  Map spec = {{"containers", List{Container("main", "registry.example.com/app:1.0",
                                            Resources(proxy ? "100m" : "500m", proxy ? "64Mi" : "1Gi", gpu && k == 1, "16Gi"),
                                            token)}},
              {"nodeName", node_name},
              {"priority", 0}};
  SpecDefaults(spec, token, {});
  return Map{{"apiVersion", "v1"},
             {"kind", "Pod"},
             {"metadata", Map{{"creationTimestamp", "2026-11-21T10:02:11Z"},
                              {"generateName", rs + "-"},
                              {"labels", std::move(labels)},
                              {"name", name},
                              {"namespace", proxy ? "kube-system" : "apps"},
                              {"ownerReferences", List{proxy ? Owner("apps/v1", "DaemonSet", "kube-proxy")
                                                             : Owner("apps/v1", "ReplicaSet", rs)}},
                              {"resourceVersion", fmt::format("{}", 8000000 + node * 32 + k)},
                              {"uid", fmt::format("{:08x}-77aa-4b1c-8d2e-{:012x}", node, k)}}},
             {"spec", std::move(spec)},
             {"status", Map{{"phase", "Running"}, {"qosClass", "Burstable"},
                            {"startTime", "2026-11-21T10:02:14Z"}}}};
}

// The owners of the bound app pods (kube-scheduler's default spreading
// reads their selectors).
void EmitAppOwners(const std::function<void(const Value&)>& emit) {
  for (int a = 0; a < 97; ++a) {
    std::string app = fmt::format("app-{}", a);
    std::string hash = TemplateHash(app);
    emit(Map{{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata", Map{{"labels", Map{{"app", app}, {"pod-template-hash", hash}}},
                              {"name", app + "-" + hash},
                              {"namespace", "apps"}}},
             {"spec", Map{{"replicas", 1},
                          {"selector", Map{{"matchLabels", Map{{"app", app}, {"pod-template-hash", hash}}}}}}}});
  }
}

// The realistic Pending queue: 30 workloads of Zipf-like sizes, the eight
// shapes of bench_schedule's queue (plain, node-level Job, one per node,
// zone-spread StatefulSet with a claim per pod, GPU Job, zone affinity to
// the largest, node-group Job, high priority) made as their controllers
// make pods: bare Pods owned by a ReplicaSet, a StatefulSet or a Job, each
// with its token volume; every third Deployment mounts a ConfigMap and a
// Secret; one workload asks for more cpu than any node has, one requires a
// label no node has (a typo). Their ReplicaSets, StatefulSets, claims,
// StorageClass and PriorityClass come too.
void EmitPendingQueue(int pending, const std::function<void(const Value&)>& emit) {
  constexpr int kTemplates = 30;
  double harmonic = 0;
  for (int r = 0; r < kTemplates; ++r) harmonic += 1.0 / (r + 1);
  emit(Map{{"allowVolumeExpansion", true},
           {"apiVersion", "storage.k8s.io/v1"},
           {"kind", "StorageClass"},
           {"metadata", Map{{"name", "gp3"}}},
           {"provisioner", "ebs.csi.aws.com"},
           {"reclaimPolicy", "Delete"},
           {"volumeBindingMode", "WaitForFirstConsumer"}});
  emit(Map{{"apiVersion", "scheduling.k8s.io/v1"},
           {"kind", "PriorityClass"},
           {"metadata", Map{{"name", "high"}}},
           {"preemptionPolicy", "PreemptLowerPriority"},
           {"value", 1000}});
  struct Workload {
    std::string app, kind;
    int size = 0;
  };
  std::vector<Workload> workloads;
  for (int r = 0; r < kTemplates; ++r) {
    int kind = r % 8;
    Workload w;
    w.app = fmt::format("app{}", r);
    w.kind = kind == 1 || kind == 4 || kind == 6 ? "Job" : kind == 3 ? "StatefulSet" : "Deployment";
    w.size = std::max(1, static_cast<int>(pending / (r + 1) / harmonic + 0.5));
    workloads.push_back(w);
    Map selector = {{"matchLabels", Map{{"app", w.app}}}};
    if (w.kind == "Deployment") {
      std::string hash = TemplateHash(w.app);
      emit(Map{{"apiVersion", "apps/v1"},
               {"kind", "ReplicaSet"},
               {"metadata", Map{{"labels", Map{{"app", w.app}, {"pod-template-hash", hash}}},
                                {"name", w.app + "-" + hash},
                                {"namespace", "bench"}}},
               {"spec", Map{{"replicas", w.size},
                            {"selector", Map{{"matchLabels", Map{{"app", w.app}, {"pod-template-hash", hash}}}}}}}});
    } else if (w.kind == "StatefulSet") {
      emit(Map{{"apiVersion", "apps/v1"},
               {"kind", "StatefulSet"},
               {"metadata", Map{{"name", w.app}, {"namespace", "bench"}}},
               {"spec", Map{{"replicas", w.size}, {"selector", selector}, {"serviceName", w.app}}}});
    }
  }
  // Pods in arrival order: the templates interleaved, the big ones faster.
  std::vector<int> made(kTemplates, 0);
  int arrived = 0;
  for (bool more = true; more;) {
    more = false;
    for (int r = 0; r < kTemplates; ++r) {
      for (int k = 0; k < (r < 3 ? 4 : 1) && made[r] < workloads[r].size; ++k) {
        more = true;
        const Workload& w = workloads[r];
        int i = made[r]++;
        int seq = arrived++;  // creationTimestamp follows arrival: the queue's order is kube's
        int kind = r % 8;
        std::string owner = w.kind == "Deployment" ? w.app + "-" + TemplateHash(w.app) : w.app;
        std::string name = w.kind == "StatefulSet" ? fmt::format("{}-{}", w.app, i)
                                                   : owner + "-" + Suffix(static_cast<uint64_t>(r) * 100003 + i);
        std::string token = "kube-api-access-" + Suffix(static_cast<uint64_t>(r) * 7777777 + i * 13 + 1);
        Map labels = {{"app", w.app}};
        if (w.kind == "Deployment") labels.emplace_back("pod-template-hash", TemplateHash(w.app));
        if (w.kind == "StatefulSet") {
          labels.emplace_back("apps.kubernetes.io/pod-index", fmt::format("{}", i));
          labels.emplace_back("controller-revision-hash", w.app + "-5d4f8c7b9");
          labels.emplace_back("statefulset.kubernetes.io/pod-name", name);
        }
        if (w.kind == "Job") {
          std::string uid = fmt::format("5f0e{:04x}-1b2c-4d3e-8f9a-0b1c2d3e4f5a", r);
          labels = {{"app", w.app}, {"batch.kubernetes.io/controller-uid", uid}, {"batch.kubernetes.io/job-name", w.app},
                    {"controller-uid", uid}, {"job-name", w.app}};
        }
        int cpu_milli = r == kTemplates - 1 ? 300000 : 100 + 50 * (r % 7);
        int memory_mi = 128 + 64 * (r % 5);
        bool gpu = kind == 4;
        Map spec = {{"containers", List{Container("main", fmt::format("bench/{}:1", w.app),
                                                  Resources(fmt::format("{}m", cpu_milli), fmt::format("{}Mi", memory_mi),
                                                            gpu, fmt::format("{}Gi", 8 + 4 * (r % 3))),
                                                  token)}},
                    {"priority", kind == 7 ? 1000 : 0}};
        if (kind == 7) spec.emplace_back("priorityClassName", "high");
        List volumes;
        if (w.kind == "Deployment" && r % 3 == 0) {
          volumes.push_back(Map{{"configMap", Map{{"defaultMode", 420}, {"name", w.app + "-config"}}}, {"name", "config"}});
          volumes.push_back(Map{{"name", "tls"}, {"secret", Map{{"defaultMode", 420}, {"secretName", w.app + "-tls"}}}});
          volumes.push_back(Map{{"emptyDir", Map{}}, {"name", "cache"}});
        }
        if (w.kind == "StatefulSet") {
          std::string claim = fmt::format("data-{}", name);
          volumes.push_back(Map{{"name", "data"}, {"persistentVolumeClaim", Map{{"claimName", claim}}}});
          emit(Map{{"apiVersion", "v1"},
                   {"kind", "PersistentVolumeClaim"},
                   {"metadata", Map{{"labels", Map{{"app", w.app}}}, {"name", claim}, {"namespace", "bench"}}},
                   {"spec", Map{{"accessModes", List{"ReadWriteOnce"}},
                                {"resources", Map{{"requests", Map{{"storage", "20Gi"}}}}},
                                {"storageClassName", "gp3"},
                                {"volumeMode", "Filesystem"}}},
                   {"status", Map{{"phase", "Pending"}}}});
        }
        Map selector = {{"matchLabels", Map{{"app", w.app}}}};
        auto term = [](const std::string& app, const std::string& key) {
          return Map{{"labelSelector", Map{{"matchLabels", Map{{"app", app}}}}}, {"topologyKey", key}};
        };
        switch (kind) {
          case 2:
            spec.emplace_back("affinity", Map{{"podAntiAffinity", Map{{"requiredDuringSchedulingIgnoredDuringExecution",
                                                                       List{term(w.app, "kubernetes.io/hostname")}}}}});
            break;
          case 3:
            spec.emplace_back("topologySpreadConstraints",
                              List{Map{{"labelSelector", selector}, {"maxSkew", 1},
                                       {"topologyKey", "topology.kubernetes.io/zone"},
                                       {"whenUnsatisfiable", "DoNotSchedule"}}});
            break;
          case 4:
            spec.emplace_back("nodeSelector", Map{{"nvidia.com/gpu.present", "true"}});
            break;
          case 5:
            spec.emplace_back("affinity", Map{{"podAffinity", Map{{"preferredDuringSchedulingIgnoredDuringExecution",
                                                                   List{Map{{"podAffinityTerm", term("app0", "topology.kubernetes.io/zone")},
                                                                            {"weight", 50}}}}}}});
            break;
          case 6: {
            // r == 22: a typo of a key every node has: fits nowhere, and the
            // words say which label was meant.
            std::string key = r == 22 ? "eks.amazonaws.com/nodegroupp" : "eks.amazonaws.com/nodegroup";
            spec.emplace_back("affinity",
                              Map{{"nodeAffinity",
                                   Map{{"requiredDuringSchedulingIgnoredDuringExecution",
                                        Map{{"nodeSelectorTerms",
                                             List{Map{{"matchExpressions",
                                                       List{Map{{"key", key}, {"operator", "In"},
                                                                {"values", List{"general-0", "general-1"}}}}}}}}}}}}});
            break;
          }
          default: break;
        }
        SpecDefaults(spec, token, std::move(volumes));
        if (gpu) {  // the GPU nodes' taint
          List& tolerations = std::get<List>(std::find_if(spec.begin(), spec.end(), [](const auto& f) {
                                               return f.first == "tolerations";
                                             })->second.v);
          tolerations.push_back(Map{{"effect", "NoSchedule"}, {"key", "nvidia.com/gpu"}, {"operator", "Exists"}});
        }
        std::string api = w.kind == "Job" ? "batch/v1" : "apps/v1";
        emit(Map{{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"metadata", Map{{"creationTimestamp", fmt::format("2026-12-02T{:02}:{:02}:{:02}Z", 8 + seq / 3600,
                                                                    seq / 60 % 60, seq % 60)},
                                  {"generateName", w.kind == "StatefulSet" ? std::string() : owner + "-"},
                                  {"labels", std::move(labels)},
                                  {"name", name},
                                  {"namespace", "bench"},
                                  {"ownerReferences", List{Owner(api, w.kind == "Deployment" ? "ReplicaSet" : w.kind, owner)}},
                                  {"resourceVersion", fmt::format("{}", 9900000 + r * 10000 + i)},
                                  {"uid", fmt::format("{:08x}-aa11-4b2c-9d3e-{:012x}", r, i)}}},
                 {"spec", std::move(spec)},
                 {"status", Map{{"conditions", List{Map{{"lastTransitionTime", "2026-12-02T09:30:00Z"},
                                                        {"message", "0/5000 nodes are available"},
                                                        {"reason", "Unschedulable"},
                                                        {"status", "False"},
                                                        {"type", "PodScheduled"}}}},
                                {"phase", "Pending"},
                                {"qosClass", "Burstable"}}}});
      }
    }
  }
}

Value MakePod(int node, int k, bool gpu, bool realistic) {
  std::string node_name = fmt::format("ip-10-{}-{}-{}.ec2.internal", node / 65536 % 256, node / 256 % 256, node % 256);
  std::string app = k == 0 ? "kube-proxy" : fmt::format("app-{}", (node + k) % 97);
  if (realistic) return MakeRealisticPod(node_name, node, k, app, gpu);
  Map requests = {{"cpu", k == 0 ? "100m" : "500m"}, {"memory", k == 0 ? "64Mi" : "1Gi"}};
  Map resources;
  if (gpu && k == 1) {  // extended resources: limits equal to the requests, as the API server requires
    requests.emplace_back("nvidia.com/gpu", "1");
    requests.emplace_back("nvidia.com/gpu-memory", "16Gi");
    resources.emplace_back("limits", Map{{"nvidia.com/gpu", "1"}, {"nvidia.com/gpu-memory", "16Gi"}});
  }
  resources.emplace(resources.begin(), "requests", std::move(requests));
  return Map{{"apiVersion", "v1"},
             {"kind", "Pod"},
             {"metadata", Map{{"labels", Map{{"app", app}}},
                              {"name", fmt::format("{}-{}-{}", app, node, k)},
                              {"namespace", k == 0 ? "kube-system" : "apps"}}},
             {"spec", Map{{"containers", List{Map{{"image", "registry.example.com/app:1.0"},
                                                  {"name", "main"},
                                                  {"resources", std::move(resources)}}}},
                          {"nodeName", node_name},
                          {"schedulerName", "default-scheduler"}}},
             {"status", Map{{"phase", "Running"}}}};
}

}  // namespace

std::string GenerateCluster(const ClusterSpec& spec, Format format) {
  std::mt19937 rng(spec.seed);
  std::string out = format == Format::kJson ? "{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n" : "apiVersion: v1\nitems:\n";
  int gpu_every = spec.gpu_fraction > 0 ? static_cast<int>(1.0 / spec.gpu_fraction) : 0;
  bool first = true;
  auto emit = [&](const Value& v) {
    if (format == Format::kJson) {
      if (!first) out += ",\n";
      out += "        ";
      Json(v, 8, out);
    } else {
      std::string item;
      Yaml(v, 2, item);
      out += "- " + item.substr(2);
    }
    first = false;
  };
  for (int i = 0; i < spec.nodes; ++i) {
    bool gpu = gpu_every > 0 && i % gpu_every == gpu_every - 1;
    emit(MakeNode(i, rng, gpu, spec.realistic));
    for (int k = 0; k < spec.pods_per_node; ++k) emit(MakePod(i, k, gpu, spec.realistic));
  }
  if (spec.realistic && spec.pods_per_node > 0) EmitAppOwners(emit);
  if (spec.pending > 0) EmitPendingQueue(spec.pending, emit);
  if (format == Format::kJson) {
    out += "\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n";
  } else {
    out += "kind: List\nmetadata:\n  resourceVersion: \"\"\n";
  }
  return out;
}

std::vector<std::string> PendingPodsJson(const ClusterSpec& spec) {
  std::vector<std::string> pods;
  EmitPendingQueue(spec.pending, [&](const Value& v) {
    const Map& object = std::get<Map>(v.v);
    auto kind = std::find_if(object.begin(), object.end(), [](const auto& field) { return field.first == "kind"; });
    if (kind == object.end() || std::get<std::string>(kind->second.v) != "Pod") return;
    Json(v, 0, pods.emplace_back());
  });
  return pods;
}

}  // namespace policy::bench
