#pragma once
/// CEL's cost model as Kubernetes bounds a DRA device selector: the
/// worst-case estimate the API server compares to
/// `CELSelectorExpressionMaxCost` when a DeviceClass or a claim is written
/// (cel-go's checker/cost.go with the apiserver library's function costs and
/// the DRA environment's declared sizes: a driver name up to 63 characters,
/// 32 attributes or capacities a device, an attribute value up to 64), and
/// the limit the evaluator stops at while it runs (the same figure, as
/// k8s.io/dynamic-resource-allocation/cel sets `cel.CostLimit`).

#include <cstdint>
#include <string>

#include "compiler/cel/ast.h"

namespace policy::cel {

/// resourceapi.CELSelectorExpressionMaxCost: the estimate a selector may
/// have, and the cost at which its evaluation is cancelled.
inline constexpr uint64_t kCostLimit = 1'000'000;
/// cel-go's factors (common/cost.go): per character traversed, and per
/// regex character.
inline constexpr double kStringTraversalCostFactor = 0.1;
inline constexpr double kRegexStringLengthCostFactor = 0.25;

/// A range of cost, saturating at UINT64_MAX as cel-go's does.
struct CostEstimate {
  uint64_t min = 0, max = 0;
};

/// The worst-case cost of a checked selector, as env.EstimateCost gives it.
CostEstimate EstimateCost(const Expr& expr);

/// ceil(size * factor), saturating: cel-go's multiplyByCostFactor.
uint64_t CostOf(uint64_t size, double factor);

/// kube's validation words when the estimate is over the limit
/// (`Forbidden: too complex, exceeds cost limit`), with the figures.
std::string TooComplexMessage(const CostEstimate& cost);

}  // namespace policy::cel
