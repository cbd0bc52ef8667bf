/* policyc.h: the C ABI of libpolicyc, for scheduler hosts that take policyc's
 * decisions in process (a Go scheduler-framework plugin through cgo, a custom
 * scheduler in C, C++ or Rust).
 *
 *   policyc_engine   a scheduling profile and policies, compiled; immutable
 *                    once made, used from any number of threads at once.
 *   policyc_cluster  the cluster state: nodes, bound pods, namespaces,
 *                    storage objects, PriorityClasses; loaded from a
 *                    snapshot, then changed one watch event at a time by
 *                    one writer thread at a time.
 *   policyc_view     a read-only view of a cluster for decisions; cheap
 *                    (no copy). Any number of threads may hold views and
 *                    decide at once; a change to the cluster waits until
 *                    every view is freed (and new views wait for it), so
 *                    free views promptly and never change a cluster while
 *                    holding a view of it: the change would wait for
 *                    itself. A view may be freed on any thread.
 *   policyc_result   one decision, owned by the caller.
 *
 * Every function returns a status; on an error, policyc_last_error() says
 * what and where (file:line:col for bad input). Nothing aborts the host:
 * bad input, null pointers and lengths that do not match are errors, and no
 * C++ exception crosses this boundary. Strings are UTF-8 and are passed
 * with their length; strings returned belong to the object they came from.
 *
 * Versioning: POLICYC_ABI_MAJOR changes on an incompatible change (a host
 * requires equality), POLICYC_ABI_MINOR on an addition (a host requires the
 * library's minor >= its header's). policyc_engine_new checks the version
 * the host was compiled with; option structs start with their size so that
 * fields can be appended. */
#ifndef POLICYC_H_
#define POLICYC_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define POLICYC_ABI_MAJOR 1
#define POLICYC_ABI_MINOR 0
#define POLICYC_ABI_VERSION ((uint32_t)((POLICYC_ABI_MAJOR << 16) | POLICYC_ABI_MINOR))

typedef struct policyc_engine policyc_engine;
typedef struct policyc_cluster policyc_cluster;
typedef struct policyc_view policyc_view;
typedef struct policyc_result policyc_result;

typedef enum policyc_status {
  POLICYC_OK = 0,
  POLICYC_E_INVALID_ARG = 1, /* a null pointer where one is needed, a bad option, a misuse */
  POLICYC_E_PARSE = 2,       /* input that does not read or decode (JSON, YAML, objects, events) */
  POLICYC_E_COMPILE = 3,     /* a profile or policy with errors */
  POLICYC_E_NOT_FOUND = 4,   /* a node or pod the cluster does not have */
  POLICYC_E_ABI = 5,         /* the host was compiled against an incompatible header */
  POLICYC_E_NO_MEMORY = 6,
  POLICYC_E_INTERNAL = 7     /* a bug in policyc; the message says what */
} policyc_status;

/* The library's POLICYC_ABI_VERSION. */
uint32_t policyc_abi_version(void);
/* The last error on this thread, or "" (valid until the thread's next call). */
const char* policyc_last_error(void);

/* An engine from a JSON configuration (NULL or empty: the default profile,
 * the interpreter):
 *   {"profile": "<a KubeSchedulerConfiguration, YAML or JSON>",
 *    "schedulerName": "default-scheduler",
 *    "plugins": ["NodeAffinity", ...],   (only these in-tree plugins, as check --plugins)
 *    "policies": [{"name": "gpu.policy", "source": "policy ..."}],
 *    "engine": "interp" | "jit" | "tiered",
 *    "jitOpt": 0..3}
 * `abi_version` is the host's POLICYC_ABI_VERSION. */
policyc_status policyc_engine_new(uint32_t abi_version, const char* config_json, size_t len, policyc_engine** out);
void policyc_engine_free(policyc_engine* engine);

/* An empty cluster. */
policyc_status policyc_cluster_new(policyc_cluster** out);
void policyc_cluster_free(policyc_cluster* cluster);
/* Replaces the state with a snapshot (`kubectl get nodes,pods,... -A -o
 * yaml|json`: a List, typed list or YAML stream). On error the state is
 * unchanged. */
policyc_status policyc_cluster_load(policyc_cluster* cluster, const char* snapshot, size_t len);
/* Applies one watch event, {"type": "ADDED"|"MODIFIED"|"DELETED", "object":
 * {...}}, of a Node, Pod, Namespace, Service, ReplicationController,
 * ReplicaSet, StatefulSet, PersistentVolumeClaim, PersistentVolume,
 * StorageClass, CSINode or PriorityClass ("BOOKMARK" events and other kinds
 * change nothing). A pod counts when it is bound (spec.nodeName) and not
 * finished. On error the state is unchanged. */
policyc_status policyc_cluster_apply(policyc_cluster* cluster, const char* event_json, size_t len);
/* kube-scheduler's assume: the pod (JSON) counts as bound to `node` until
 * an event shows it bound (which replaces it) or policyc_cluster_forget. */
policyc_status policyc_cluster_assume(policyc_cluster* cluster, const char* pod_json, size_t len, const char* node);
/* kube-scheduler's unreserve: the pod no longer counts. */
policyc_status policyc_cluster_forget(policyc_cluster* cluster, const char* pod_namespace, const char* pod_name);
/* Nodes, and pods counted as bound. */
size_t policyc_cluster_node_count(const policyc_cluster* cluster);
size_t policyc_cluster_pod_count(const policyc_cluster* cluster);
/* A read-only view for decisions (see above). */
policyc_status policyc_cluster_view(policyc_cluster* cluster, policyc_view** out);
void policyc_view_free(policyc_view* view);

typedef struct policyc_decide_opts {
  uint32_t struct_size; /* sizeof(policyc_decide_opts) */
  uint32_t flags;       /* none yet: 0 */
  /* Decide among these nodes only (an extender's NodeNames); NULL: every
   * node. A name the cluster does not have fails as unresolvable. */
  const char* const* candidates;
  size_t n_candidates;
} policyc_decide_opts;

/* Decides where `pod_json` (a Pod, JSON or YAML) fits on the view's
 * cluster: feasible nodes with their scores, the selected one, every other
 * node with its reasons. `opts` may be NULL. */
policyc_status policyc_decide(const policyc_engine* engine, const policyc_view* view, const char* pod_json, size_t len,
                              const policyc_decide_opts* opts, policyc_result** out);
size_t policyc_result_feasible_count(const policyc_result* result);
/* Feasible node `i` (best first) and its total score (the sum over plugins
 * of weight x normalized score, each 0..100). */
const char* policyc_result_feasible(const policyc_result* result, size_t i, int64_t* score);
/* The node kube-scheduler would pick; NULL when nothing is feasible. */
const char* policyc_result_selected(const policyc_result* result);
/* The sum of the plugins' weights x 100: the largest score there is. */
int64_t policyc_result_max_score(const policyc_result* result);
size_t policyc_result_failed_count(const policyc_result* result);
/* Failed node `i`, why (every failing plugin's reasons, as kube-scheduler
 * words them) and whether preemption cannot help there (1: kube-scheduler's
 * UnschedulableAndUnresolvable). */
const char* policyc_result_failed(const policyc_result* result, size_t i, const char** reason, int* unresolvable);
/* kube-scheduler's line over the nodes decided among: "0/6 nodes are
 * available: ..." or "4/6 nodes are available." */
const char* policyc_result_summary(const policyc_result* result);
/* The `policyc check --output json` document of this decision, owned by
 * the result (a result is used by one thread at a time). */
policyc_status policyc_result_explain_json(const policyc_result* result, const char** json, size_t* len);
void policyc_result_free(policyc_result* result);

#ifdef __cplusplus
}
#endif

#endif /* POLICYC_H_ */
