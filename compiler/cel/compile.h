#pragma once
/// A CEL device selector parsed and checked once per distinct text, as kube
/// caches compiled selectors (k8s.io/dynamic-resource-allocation/cel's
/// cache): the allocator asks for each selector of every class and request
/// it meets.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/cel/ast.h"
#include "compiler/cel/cost.h"

namespace policy::cel {

struct Program {
  std::string text;
  ExprPtr expr;                   ///< null when there are problems
  std::vector<Problem> problems;  ///< syntax, then type problems
  /// The worst-case cost when it checks (kube's estimate); over
  /// kCostLimit, the API server refuses the object that holds it.
  CostEstimate cost;
  bool TooComplex() const { return expr != nullptr && cost.max > kCostLimit; }
  /// kube's error text: `compilation failed: ERROR: <input>:1:5: ...`.
  std::string KubeError() const;
};

/// The program of `text`, compiled at the first ask. The cache is bounded
/// (it starts over past 4,096 texts) and safe to use from several threads.
std::shared_ptr<const Program> Compile(std::string_view text);

/// Compiles without the cache.
std::shared_ptr<const Program> CompileUncached(std::string_view text);

}  // namespace policy::cel
