#pragma once
/// Lowering a checked CEL device selector (compiler/cel) to the IR, so that
/// the passes and the LLVM back end compile it like a policy: one function
/// whose "nodes" are devices of a device table (runtime/columnar/
/// device_columns.h), a table built with the column names below.
///
/// The function has two filters. Filter 0 fails where evaluating the
/// selector fails (CEL's error: a missing attribute, an attribute of another
/// type than the operator takes); filter 1 fails where it evaluates to
/// false. Errors follow CEL: `&&` and `||` absorb an error when the other
/// side decides (false, true), `!` and `?:` pass it on.
///
/// What lowers: `device.driver`, `device.attributes[D].N` and
/// `device.capacity[D].N` (index or field form) compared with constants
/// (==, !=, `in` a list, <, <=, >, >= with ints), `has()` of either,
/// attributes used as bools, a capacity's `compareTo`, `isGreaterThan` and
/// `isLessThan` with `quantity("...")` (milli-unit exact), `&&`, `||`, `!`,
/// `?:` and bool constants. Anything else (string functions, regexes,
/// semver comparisons, macros, arithmetic) is an Error naming it: the
/// selector then stays with the reference evaluator (compiler/cel/eval.h).

#include <string>
#include <string_view>
#include <vector>

#include "compiler/cel/ast.h"
#include "compiler/ir/ir.h"
#include "support/expected.h"

namespace policy::lower {

/// A device table's label columns, one per attribute and type: the value
/// as a label (an int in decimal, a bool as `true`/`false`, a version as
/// written) under the key of its type, so that an attribute of another type
/// reads as absent.
enum class AttributeColumn : uint8_t { kString, kInt, kBool, kVersion, kBadVersion };
std::string DeviceAttributeKey(AttributeColumn type, std::string_view qualified_name);
/// The driver's label; a capacity's presence label (`c:` + name, value `1`);
/// the capacity itself is the allocatable resource of its qualified name.
inline constexpr std::string_view kDeviceDriverKey = "driver:";
std::string DeviceCapacityKey(std::string_view qualified_name);

struct LoweredSelector {
  ir::Program program;                     ///< function 0: the selector
  std::vector<std::string> capacities;     ///< qualified capacity names it reads
};

/// The IR of `expr` (checked: cel::Check found no problem); an Error when
/// it uses what does not lower.
Expected<LoweredSelector> LowerSelector(const cel::Expr& expr, lang::TypeTable& types, const lang::Schema& schema);

}  // namespace policy::lower
