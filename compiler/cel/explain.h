#pragma once
/// Why a CEL device selector is false for one device, in words a person can
/// act on: the comparison that failed, with the device's value and the one
/// asked (`memory 24Gi, the selector asks >= 40Gi`), and where in the
/// expression it is.

#include <cstdint>
#include <string>

#include "compiler/cel/ast.h"
#include "compiler/cel/value.h"

namespace policy::cel {

struct FalseBecause {
  std::string have;    ///< the device's side: `memory 24Gi`, `driver is "x"`
  std::string asks;    ///< the selector's: `>= 40Gi`, `== "y"`, `to startsWith "NVIDIA"`
  uint32_t begin = 0;  ///< byte offset of the failing part in the expression
};

/// Call for a device the selector does not match (it evaluated to false).
FalseBecause ExplainFalse(const Expr& expr, const DeviceInput& device);

}  // namespace policy::cel
