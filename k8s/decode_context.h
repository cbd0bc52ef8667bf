#pragma once
/// Field readers shared by the decoders (internal to k8s).
///
/// Each reader checks the field's type the way Kubernetes' JSON decoding
/// would (null is absent; a number is not a string) and reports a
/// diagnostic at the field on mismatch.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/document.h"
#include "k8s/objects.h"
#include "support/diagnostic.h"

namespace policy::k8s {

class DecodeContext {
 public:
  explicit DecodeContext(DiagnosticSink& diags) : diags_(diags), errors_at_start_(diags.ErrorCount()) {}

  /// True when no error was reported since this context was made.
  bool Clean() const { return diags_.ErrorCount() == errors_at_start_; }

  Diagnostic& Error(DiagCode code, NodeRef at, std::string message, std::string label = {});

  /// `parent[key]` if it is a mapping; invalid if absent or null (reported
  /// when of another type).
  NodeRef Mapping(NodeRef parent, std::string_view key);
  NodeRef Sequence(NodeRef parent, std::string_view key);
  /// `node` must be a mapping (`what` names it in the message).
  bool ExpectMapping(NodeRef node, std::string_view what);

  /// Reads a string field into `out` (left as is when absent).
  void String(NodeRef parent, std::string_view key, std::string* out);
  bool StringValue(NodeRef node, std::string_view what, std::string* out);
  void Int32(NodeRef parent, std::string_view key, std::optional<int32_t>* out);
  void Int64(NodeRef parent, std::string_view key, std::optional<int64_t>* out);
  void Bool(NodeRef parent, std::string_view key, bool* out);
  void StringMapField(NodeRef parent, std::string_view key, StringMap* out);
  void StringList(NodeRef parent, std::string_view key, std::vector<std::string>* out);
  /// A map of resource name to quantity.
  /// Returns the mapping it read (invalid when absent or mistyped).
  NodeRef Resources(NodeRef parent, std::string_view key, ResourceList* out);
  std::optional<Quantity> QuantityValue(NodeRef node, std::string_view what);

  /// Reports a value outside `allowed` (a bad enum) and returns false.
  bool BadEnum(NodeRef at, std::string_view field, std::string_view found,
               std::initializer_list<std::string_view> allowed, DiagCode code = DiagCode::kBadEnum);

  DiagnosticSink& diags() { return diags_; }

 private:
  bool TypeError(NodeRef node, std::string_view what, std::string_view expected);

  DiagnosticSink& diags_;
  size_t errors_at_start_;
};

/// Go's strconv.ParseInt(text, 0, 64) after YAML's `_` removal.
std::optional<int64_t> ParseGoInt(std::string_view text);

}  // namespace policy::k8s
