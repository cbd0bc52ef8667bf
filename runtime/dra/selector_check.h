#pragma once
/// What is wrong with DRA CEL selectors, said where they are written
/// (`object`: the object's span; a selector's own line and column place the
/// words): a selector that does not compile, and one the API server would
/// refuse as too complex (kube's cost estimate). Warnings: the object loads,
/// and the allocator fails on it as kube's does. The snapshot loader (as
/// its rt::SelectorCheck) and `--pod` manifests say them alike.

#include <vector>

#include "k8s/dra.h"
#include "support/diagnostic.h"

namespace policy::dra {

void CheckCelSelectors(const std::vector<k8s::CelSelector>& selectors, Span object, DiagnosticSink& diags);
void CheckCelSelectors(const k8s::DeviceClaimSpec& spec, Span object, DiagnosticSink& diags);

}  // namespace policy::dra
