#pragma once
/// The reference interpreter: evaluates a policy program's filters and
/// scores for one pod, node by node, over the NodeTable.
///
/// It is the oracle the JIT is tested against, so it is written to be
/// obviously right rather than fast: a tree walk over the IR with `let`
/// slots computed on first use per node.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "k8s/objects.h"
#include "runtime/columnar/node_table.h"
#include "compiler/binding/pod_view.h"
#include "runtime/interp/cluster_view.h"
#include "runtime/interp/value.h"

namespace policy::rt {

class DeviceTable;
class DeviceColumns;
struct SelectorVerdicts;

/// One failing filter of one node. A `filter for` fails once per element.
struct FilterFailure {
  size_t filter = 0;
  std::string reason;  ///< the rendered reason (the policy's name when it gives none)
  std::string detail;  ///< the rendered detail, or empty
  bool unresolvable = false;  ///< the filter is marked `unresolvable`
};

class Interpreter {
 public:
  /// `cluster` (may be null: the interpreter makes its own) answers the
  /// cluster-wide builtins, `pod_view` (likewise) reads the pod's fields;
  /// share both across a pod's plugins.
  Interpreter(const ir::Program& program, const k8s::Pod& pod, const NodeTable& table, ClusterView* cluster = nullptr,
              const binding::PodView* pod_view = nullptr);

  /// Whether Filter and Prefilter render details (true by default); a
  /// caller that shows only reasons turns them off and pays for none.
  void SetDetails(bool on) { details_ = on; }
  /// Whether function `f` applies to the pod (its `when`, true without one).
  bool Applies(size_t f);
  /// Every failing filter of function `f` on node `row`, in filter order.
  std::vector<FilterFailure> Filter(size_t f, RowId row);
  /// Bit i set when filter i of function `f` fails on node `row` (filters
  /// past the 64th share bit 63); no messages are rendered.
  uint64_t FailingFilters(size_t f, RowId row);
  /// The first failing prefilter of function `f` on node `row` (`row` is
  /// not read by prefilters that do not read the node).
  std::optional<FilterFailure> Prefilter(size_t f, RowId row, bool node_level);
  /// The raw value of score `s` of function `f` on node `row`.
  int64_t Score(size_t f, size_t s, RowId row);
  /// The value of cluster-builtin call `call` (its arguments pod-side) of
  /// function `f` on every row: out[row], for RowCount() rows; bools as 0/1.
  void ClusterValues(size_t f, ir::NodeId call, int64_t* out);
  /// A number that moves whenever ClusterValues(f, call) may answer
  /// differently for the same table rows (the versions of the pod sets or
  /// term groups it counts); nullopt when there is none to give (its value
  /// depends on more, such as the feasible rows).
  std::optional<uint64_t> ClusterVersion(size_t f, ir::NodeId call);
  /// For a cluster call whose values move row by row with what binds
  /// change (claimsFit: the devices a claim takes are on one node), what
  /// its values depend on now; nullopt for the others.
  std::optional<dra::FitVersion> ClusterRowsVersion(size_t f, ir::NodeId call);
  /// Adds to `rows` those where such a call may answer otherwise than it
  /// did at `since`; false when any row may.
  bool ClusterRowsMoved(size_t f, ir::NodeId call, const dra::FitVersion& since, std::vector<RowId>& rows);
  /// Takes the values of cluster call `call` on every row as ClusterValues
  /// would answer them, kept up to date by the caller: a call that keeps
  /// its answers per row (claimsFit) reads them instead of computing.
  void KnowClusterValues(size_t f, ir::NodeId call, const int64_t* values);
  /// The call's value on one row (ClusterValues of that row).
  int64_t ClusterValueAt(size_t f, ir::NodeId call, RowId row);

 private:
  Value Eval(ir::NodeId id);
  Value EvalLoop(const ir::Loop& loop);
  Value EvalTaintScan(const ir::TaintScan& scan);
  Value Load(lang::FieldId field, const Value& object);
  Value IndexOf(const Value& object, const Value& key);
  bool Contains(const Value& collection, const Value& element);
  /// (element, none) per element; (key, value) for maps and resources;
  /// (position, element) for a list when `indexed` (a loop binding two names).
  std::vector<std::pair<Value, Value>> Elements(const Value& collection, bool indexed = false);
  Value Builtin(const ir::CallBuiltin& call);
  Value ClusterBuiltin(lang::BuiltinId id, const std::vector<Value>& args);
  bool CelMatches(const Value& device, ir::NodeId text);
  ClusterView& Cluster();
  std::string Render(const ir::Message& message);
  std::string RenderDetail(const ir::Message& message);  ///< counted (work_counters.h)
  std::string Text(const Value& v, lang::TypeRef type);
  void Begin(size_t f, RowId row);

  const ir::Program& program_;
  const NodeTable& table_;
  std::unique_ptr<binding::PodView> own_pod_view_;
  const binding::PodView* pod_view_;  ///< the pod's fields, as partial evaluation reads them too
  const ir::Function* function_ = nullptr;
  RowId row_ = 0;
  std::vector<std::optional<Value>> slots_;
  const k8s::Pod& pod_;
  ClusterView* cluster_;
  std::unique_ptr<ClusterView> own_cluster_;
  bool details_ = true;
  std::shared_ptr<const DeviceTable> devices_;  ///< the table `node.devices` was last read from
  RowId devices_row_ = 0;                        ///< ... for this row, as devices_list_
  Value devices_list_;
  const DeviceColumns* cel_columns_ = nullptr;   ///< the columns cel_'s answers are of
  std::vector<std::pair<ir::NodeId, std::shared_ptr<const SelectorVerdicts>>> cel_;  ///< by the call's text node
};

}  // namespace policy::rt
