#include "benchmarks/cluster_gen.h"

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

Value MakeNode(int i, std::mt19937& rng, bool gpu) {
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

Value MakePod(int node, int k, bool gpu) {
  std::string node_name = fmt::format("ip-10-{}-{}-{}.ec2.internal", node / 65536 % 256, node / 256 % 256, node % 256);
  std::string app = k == 0 ? "kube-proxy" : fmt::format("app-{}", (node + k) % 97);
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
    emit(MakeNode(i, rng, gpu));
    for (int k = 0; k < spec.pods_per_node; ++k) emit(MakePod(i, k, gpu));
  }
  if (format == Format::kJson) {
    out += "\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n";
  } else {
    out += "kind: List\nmetadata:\n  resourceVersion: \"\"\n";
  }
  return out;
}

}  // namespace policy::bench
