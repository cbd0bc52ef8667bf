#pragma once
/// A document node written as JSON: scalars as Kubernetes reads them (YAML's
/// resolved types: numbers, booleans, null; anything else a string), mappings
/// and sequences in order. What `schedule --output-cluster` and the
/// extender's echoed node objects write.

#include "k8s/document.h"
#include "support/json_writer.h"

namespace policy::k8s {

void WriteJson(JsonWriter& w, NodeRef value);

}  // namespace policy::k8s
