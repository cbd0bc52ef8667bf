// Fuzzes `policyc check` as a person runs it: the input is split into a
// policy (DSL, or the YAML form when it starts with `apiVersion`), a pod and
// a scheduler profile, each written to a file, and the check command itself
// runs them against the example cluster (with a storage snapshot), what
// would make it fit included. Every layer a typo can reach is on
// the path: file reading, the pod and profile readers, the engine (compile,
// plan, decide, explain) and the report. The command must end with exit 0,
// 1 or 2, never crash, leak or overflow. The pod then goes through
// `schedule` as a queue (a workload as its replicas) too, and `drain` runs
// on the cluster that left; `lint` reads the pod and policy too, and `fmt`
// the policy.
//
// Input: POLICY \0 POD \0 PROFILE \0 CEL (missing parts: none given; an
// empty profile part: no --profile). CEL, when given, is a DRA device
// selector: it goes into a ResourceClaim of a snapshot beside the example
// cluster (a DeviceClass, a slice of every node) that a pod names, and
// `check` reads, compiles and evaluates it as a person's dump would have it.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"

namespace {

std::string Dir() {
  static const std::string dir = [] {
    char path[] = "/tmp/policyc-fuzz-check-XXXXXX";
    const char* made = mkdtemp(path);
    return std::string(made != nullptr ? made : "/tmp");
  }();
  return dir;
}

std::string Write(const std::string& name, std::string_view text) {
  std::string path = Dir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(text.data(), static_cast<std::streamsize>(text.size()));
  return path;
}

}  // namespace

// The command prints its answer and its diagnostics; both go to /dev/null
// while it runs, so a 10-minute run does not write gigabytes of log. A crash
// inside it is reported by its artifact (build/fuzz/crashes/check-*): run
// `build/fuzz/tests/fuzz/fuzz_check ARTIFACT` to see the sanitizer's report.
class Quiet {
 public:
  Quiet() : out_(dup(1)), err_(dup(2)) {
    std::fflush(stdout);
    std::fflush(stderr);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    close(null);
  }
  ~Quiet() {
    std::fflush(stdout);
    std::fflush(stderr);
    dup2(out_, 1);
    dup2(err_, 2);
    close(out_);
    close(err_);
  }

 private:
  int out_, err_;
};

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  for (size_t start = 0; parts.size() < 4;) {
    size_t zero = input.find('\0', start);
    parts.push_back(input.substr(start, zero == std::string_view::npos ? std::string_view::npos : zero - start));
    if (zero == std::string_view::npos) break;
    start = zero + 1;
  }
  bool yaml_policy = parts[0].starts_with("apiVersion");
  // The example cluster, and a storage snapshot beside it so the volume
  // plugins have claims, volumes, classes and CSINodes to look up.
  std::string policy = Write(yaml_policy ? "policy.yaml" : "policy.policy", parts[0]);
  // --validate warn: a fuzzed field name still reaches the engine (strict
  // refusal is fuzzed through `inspect` below).
  std::vector<std::string> argv = {"--cluster", POLICYC_SOURCE_DIR "/examples/cluster.yaml",
                                   "--cluster", POLICYC_SOURCE_DIR "/tests/data/storage-cluster.yaml", "--output", "json",
                                   "--policy", policy, "--validate", "warn"};
  argv.push_back("--pod");
  argv.push_back(parts.size() > 1 ? Write("pod.yaml", parts[1]) : POLICYC_SOURCE_DIR "/examples/pods/gpu-training.yaml");
  if (parts.size() > 2 && !parts[2].empty()) {
    argv.push_back("--profile");
    argv.push_back(Write("profile.yaml", parts[2]));
  }
  int status;
  {
    Quiet quiet;
    status = policy::cli::RunCommand("check", argv);
  }
  if (status != 0 && status != 1 && status != 2) __builtin_trap();
  if (parts.size() > 1) {
    // The pod as a person gives it: strict field validation, every problem at once.
    {
      Quiet quiet;
      status = policy::cli::RunCommand("inspect", {"--pod", Dir() + "/pod.yaml", "--validate", "strict"});
    }
    if (status != 0 && status != 1 && status != 2) __builtin_trap();
    // A pod named, not a file: the snapshot's pods looked up by the pod
    // text's first line as a name (bound ones answered taken off their node).
    std::string name(parts[1].substr(0, std::min<size_t>(parts[1].find('\n'), 64)));
    std::error_code ec;
    if (!name.empty() && name != "-" && !std::filesystem::exists(name, ec) && !ec) {
      {
        Quiet quiet;
        status = policy::cli::RunCommand("check", {"--cluster", POLICYC_SOURCE_DIR "/examples/cluster.yaml", "--pod",
                                                   name, "-n", "ml", "--no-suggest"});
      }
      if (status != 0 && status != 1 && status != 2) __builtin_trap();
    }
  }
  if (parts.size() > 3) {
    // The selector as a YAML literal block, each line indented under it.
    std::string expression;
    for (char c : parts[3]) expression += c == '\n' ? std::string("\n                ") : std::string(1, c);
    std::string dra = std::string(R"(apiVersion: v1
kind: List
items:
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.example.com}
  spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: shared-gpus}
  spec:
    driver: gpu.example.com
    allNodes: true
    pool: {name: fabric, generation: 1, resourceSliceCount: 1}
    devices:
    - {name: gpu-0, attributes: {productName: {string: NVIDIA H100}, index: {int: 0}, driverVersion: {version: 550.54.15}}, capacity: {memory: {value: 80Gi}}}
    - {name: gpu-1, attributes: {productName: {string: NVIDIA L4}, index: {int: 1}, mig: {bool: true}}, capacity: {memory: {value: 24Gi}}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: fuzzed, namespace: default}
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
          selectors:
          - cel:
              expression: |-
                )") + expression + "\n";
    std::string dra_file = Write("dra.yaml", dra);
    std::string pod = Write("dra-pod.yaml", R"(apiVersion: v1
kind: Pod
metadata: {name: dra-pod, namespace: default}
spec:
  resourceClaims: [{name: gpu, resourceClaimName: fuzzed}]
  containers: [{name: main, image: pause, resources: {claims: [{name: gpu}]}}]
)");
    {
      Quiet quiet;
      status = policy::cli::RunCommand("check", {"--cluster", POLICYC_SOURCE_DIR "/examples/cluster.yaml", "--cluster",
                                                 dra_file, "--pod", pod, "--all-nodes", "--no-cache"});
    }
    if (status != 0 && status != 1 && status != 2) __builtin_trap();
  }
  // `fmt --diff` of the policy (a DSL file only: the YAML form is not formatted).
  if (!yaml_policy) {
    {
      Quiet quiet;
      status = policy::cli::RunCommand("fmt", {policy, "--diff"});
    }
    if (status != 0 && status != 1 && status != 2) __builtin_trap();
  }
  // `lint` of the same pod and policy against the same snapshot.
  if (parts.size() > 1) {
    std::vector<std::string> lint = {Dir() + "/pod.yaml", "--policy", policy, "--cluster",
                                     POLICYC_SOURCE_DIR "/examples/cluster.yaml", "--output", "json"};
    {
      Quiet quiet;
      status = policy::cli::RunCommand("lint", lint);
    }
    if (status != 0 && status != 1 && status != 2) __builtin_trap();
  }
  // The same pod (or workload: its replicas) as a queue for `schedule`,
  // preemption included, with the fuzzed policy and profile, writing the
  // cluster it leaves (the fuzzed pod's objects copied into it).
  if (parts.size() > 1) {
    std::vector<std::string> queue = {"--cluster", POLICYC_SOURCE_DIR "/examples/cluster.yaml", "--cluster",
                                      POLICYC_SOURCE_DIR "/tests/data/storage-cluster.yaml", "--pending",
                                      Dir() + "/pod.yaml", "--output", "jsonl", "--policy", policy,
                                      "--output-cluster", Dir() + "/after.yaml"};
    if (parts.size() > 2 && !parts[2].empty()) queue.insert(queue.end(), {"--profile", Dir() + "/profile.yaml"});
    {
      Quiet quiet;
      status = policy::cli::RunCommand("schedule", queue);
    }
    if (status != 0 && status != 1 && status != 2) __builtin_trap();
    // And `drain` on the cluster that run left (written only then).
    if (status != 2) {
      std::vector<std::string> drain = {"--cluster", Dir() + "/after.yaml", "--policy", policy, "--output", "json"};
      if (parts.size() > 2 && !parts[2].empty()) drain.insert(drain.end(), {"--profile", Dir() + "/profile.yaml"});
      {
        Quiet quiet;
        status = policy::cli::RunCommand("drain", drain);
      }
      if (status != 0 && status != 1 && status != 2) __builtin_trap();
    }
  }
  return 0;
}
