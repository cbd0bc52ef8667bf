#include "compiler/k8s/pod_reader.h"

#include <fmt/format.h>

#include "compiler/k8s/decode.h"
#include "compiler/k8s/object_reader.h"
#include "compiler/k8s/strict_fields.h"

namespace policy::k8s {
namespace {

class FirstPod final : public ObjectVisitor {
 public:
  explicit FirstPod(DiagnosticSink& diags) : diags_(diags) {}

  void Visit(NodeRef object, std::string_view default_kind) override {
    ++count_;
    if (count_ == 2) {
      Diagnostic& d = diags_.Error(DiagCode::kNotAPod, object.GetSpan(), "the pod file holds more than one object",
                                   "a second object");
      d.help = "give one Pod or one workload per file";
    }
    if (count_ > 1) return;
    if (!object.IsMapping()) {
      diags_.Error(DiagCode::kWrongType, object.GetSpan(),
                   fmt::format("expected a Kubernetes object (a mapping), found {}", object.Describe()));
      return;
    }
    pod_ = DecodePodOrTemplate(object, default_kind, diags_);
    if (pod_) WarnUnknownFields(object, KindOf(object, default_kind), diags_);
  }

  size_t count() const { return count_; }
  std::optional<Pod>& pod() { return pod_; }

 private:
  DiagnosticSink& diags_;
  size_t count_ = 0;
  std::optional<Pod> pod_;
};

}  // namespace

std::optional<Pod> ReadPod(const Source& source, DiagnosticSink& diags) {
  size_t errors = diags.ErrorCount();
  FirstPod visitor(diags);
  if (!ReadObjects(source, visitor, diags)) return std::nullopt;
  if (visitor.count() == 0) {
    Diagnostic& d = diags.Error(DiagCode::kNoObjects, Span{&source, 0, 0}, "the pod file holds no object");
    d.help = "give a Pod, or a workload such as a Deployment";
    return std::nullopt;
  }
  if (diags.ErrorCount() != errors) return std::nullopt;
  return std::move(visitor.pod());
}

}  // namespace policy::k8s
