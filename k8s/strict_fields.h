#pragma once
/// kubectl's field validation for the pod a person gives policyc: a field
/// the Kubernetes API does not know (`spec.nodeselector`) would be dropped
/// by a lenient decoder, so the pod would be checked without it. Unknown
/// fields of the object, its metadata, its pod spec (a Pod's, or a
/// workload's template's) and its containers are refused (kubectl's
/// default, `--validate=strict`: K0220), warned about (`warn`: W0303), or
/// not looked at (`ignore`), each with a did-you-mean. Snapshots and pods a
/// host sends are not checked: the API server wrote them, and a newer
/// server's fields are not mistakes.

#include <cstdint>
#include <optional>
#include <string_view>

#include "k8s/document.h"
#include "support/diagnostic.h"

namespace policy::k8s {

/// kubectl's `--validate`: what an unknown field of a pod manifest is.
enum class FieldValidation : uint8_t { kStrict, kWarn, kIgnore };

/// `--validate`'s value: strict, warn or ignore (and kubectl's older true
/// and false, for strict and ignore); nullopt for anything else.
std::optional<FieldValidation> ParseFieldValidation(std::string_view value);

/// Errors (K0220, kStrict) or warnings (W0303, kWarn) for every unknown
/// field of `object`, a `kind`.
void CheckUnknownFields(NodeRef object, std::string_view kind, FieldValidation validation, DiagnosticSink& diags);

}  // namespace policy::k8s
