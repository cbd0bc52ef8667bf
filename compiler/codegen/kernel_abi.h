#pragma once
/* The C ABI between compiled policy kernels and the scheduling core.
 *
 * A kernel reads node columns only; which ones is fixed when it is compiled
 * (a CompiledFunction lists its label keys and resources in slot order) and
 * the core fills the slots from its NodeTable. The pod's own values (its
 * requests, the label values it accepts, the taints it tolerates) are
 * parameters, so one kernel serves every pod of its shape. Rows are
 * NodeTable rows. No pointer is null: a label or resource no node has is a
 * column of zeros (domain 0, absent; amount 0), so kernels load without
 * testing. */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct PolicyColumns {
  const uint32_t* const* labels;     /* [label slot]: per row, the label's domain id (0: absent) */
  const int64_t* const* resources;   /* [resource slot]: per row, as a quantity (milli-units, saturated) */
  const uint64_t* taint_bits;        /* per row, taint_words words: bit i = the node has dictionary taint i */
  uint64_t taint_words;
  const uint8_t* unschedulable;      /* per row */
  const uint32_t* pod_count;         /* per row: bound pods */
  const int64_t* const* label_ints;  /* [label slot]: per domain id, the value as a decimal integer */
  const uint8_t* const* label_is_int;/* [label slot]: per domain id, whether it is one */
  const int64_t* const* label_quantities;   /* [label slot]: per domain id, the value as a quantity (milli-units) */
  const uint8_t* const* label_is_quantity;  /* [label slot]: per domain id, whether it is one */
  const int64_t* const* cluster;     /* [cluster slot]: per row, the value of a cluster builtin call for this pod */
  const int64_t* params;             /* the pod's values the kernel was compiled to take (kernel_shape.h) */
  /* `node.devices` (Dynamic Resource Allocation): row r's devices are
   * device_ids[device_begin[r] .. device_begin[r + 1]), ids of the device table. */
  const uint32_t* device_begin;
  const uint32_t* device_ids;
  const uint8_t* device_allocated;          /* per device: an allocated claim holds it */
  const int64_t* const* device_capacity;    /* [capacity slot]: per device, milli-units (0: none) */
  const int8_t* const* device_selector;     /* [selector slot]: per device, 1 where the `cel` selector matches */
} PolicyColumns;

/* For rows[0..n): failed[k] gets bit f set when filter f fails on rows[k]. */
typedef void (*PolicyFilterKernel)(const PolicyColumns* columns, const uint32_t* rows, uint64_t n, uint64_t* failed);
/* For rows[0..n): writes the rows where every filter passes to passing[0..m), in order, and
 * returns m (passing must not overlap rows). */
typedef uint64_t (*PolicyPassKernel)(const PolicyColumns* columns, const uint32_t* rows, uint64_t n, uint32_t* passing);
/* For rows[0..n): out[k] = the raw value of the score on rows[k]. */
typedef void (*PolicyScoreKernel)(const PolicyColumns* columns, const uint32_t* rows, uint64_t n, int64_t* out);

#ifdef __cplusplus
}
#endif
