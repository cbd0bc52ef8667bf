// Fuzzes a CEL device selector through everything a tenant's selector meets:
// parse, check, kube's cost estimate, and evaluation on a GPU-like device,
// with the cost limit and policyc's bounds in force. A selector must end
// (libFuzzer's -timeout catches one that does not, -rss_limit_mb one that
// grows), and its outcome is a bool or an error with words.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/cel/compile.h"
#include "compiler/cel/cost.h"
#include "compiler/cel/eval.h"

using namespace policy;

namespace {

const k8s::Device& Gpu() {
  static const k8s::Device device = [] {
    k8s::Device d;
    d.name = "gpu-0";
    k8s::DeviceAttribute product;
    product.text = "NVIDIA A100-SXM4-40GB";
    d.attributes.emplace_back("gpu.example.com/productName", product);
    k8s::DeviceAttribute index;
    index.kind = k8s::DeviceAttribute::Kind::kInt;
    index.int_value = 1;
    d.attributes.emplace_back("gpu.example.com/index", index);
    k8s::DeviceAttribute version;
    version.kind = k8s::DeviceAttribute::Kind::kVersion;
    version.text = "550.54.15";
    d.attributes.emplace_back("gpu.example.com/driverVersion", version);
    d.capacity.emplace_back("gpu.example.com/memory", *k8s::Quantity::Parse("40Gi"));
    return d;
  }();
  return device;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 10240) return 0;  // kube's CELSelectorExpressionMaxLength
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::shared_ptr<const cel::Program> program = cel::CompileUncached(text);
  if (!program->expr) {
    if (program->problems.empty() || program->KubeError().empty()) __builtin_trap();
    return 0;
  }
  if (program->cost.min > program->cost.max) __builtin_trap();
  cel::Outcome outcome = cel::Evaluate(*program->expr, cel::DeviceInput{"gpu.example.com", &Gpu()});
  if (!outcome.error.empty() && outcome.matches) __builtin_trap();
  return 0;
}
