/* A minimal scheduler host in C on libpolicyc (include/policyc.h): load a
 * snapshot, apply watch events, decide pods, assume the placements.
 *
 *   build/examples/embed/c/embed_c examples/cluster.yaml examples/pods/gpu-training.yaml
 *
 * It builds with the project (CMake), or by hand against a built tree:
 *
 *   cc -std=c11 -Iinclude examples/embed/c/main.c -Lbuild -lpolicyc -Wl,-rpath,"$PWD/build" -o embed_c
 *
 * Prints, per pod, where it goes or kube-scheduler's line and each node's
 * reasons; exits 0, or 2 on an error (with the library's message). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policyc.h"

static char* read_file(const char* path, size_t* len) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* text = malloc((size_t)size + 1);
  *len = fread(text, 1, (size_t)size, f);
  text[*len] = '\0';
  fclose(f);
  return text;
}

static int check(policyc_status status, const char* what) {
  if (status == POLICYC_OK) return 1;
  fprintf(stderr, "embed_c: %s: %s\n", what, policyc_last_error());
  return 0;
}

/* Decides `pod` on the cluster now; assumes it where it goes. */
static int place(const policyc_engine* engine, policyc_cluster* cluster, const char* name, const char* pod, size_t len) {
  policyc_view* view = NULL;
  policyc_result* result = NULL;
  if (!check(policyc_cluster_view(cluster, &view), "view")) return 0;
  int ok = check(policyc_decide(engine, view, pod, len, NULL, &result), name);
  policyc_view_free(view); /* before changing the cluster */
  if (!ok) return 0;
  const char* node = policyc_result_selected(result);
  if (node != NULL) {
    int64_t score = 0;
    policyc_result_feasible(result, 0, &score);
    printf("%s -> %s (score %lld of %lld, %zu feasible)\n", name, node, (long long)score,
           (long long)policyc_result_max_score(result), policyc_result_feasible_count(result));
    ok = check(policyc_cluster_assume(cluster, pod, len, node), "assume");
  } else {
    printf("%s stays Pending: %s\n", name, policyc_result_summary(result));
    for (size_t i = 0; i < policyc_result_failed_count(result); ++i) {
      const char* reason = NULL;
      int unresolvable = 0;
      const char* failed = policyc_result_failed(result, i, &reason, &unresolvable);
      printf("  %-28s %s%s\n", failed, reason, unresolvable ? "" : " (preemption may help)");
    }
  }
  policyc_result_free(result);
  return ok;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: embed_c SNAPSHOT POD...\n");
    return 2;
  }
  policyc_engine* engine = NULL;
  policyc_cluster* cluster = NULL;
  const char* config = "{\"engine\": \"interp\"}";
  if (!check(policyc_engine_new(POLICYC_ABI_VERSION, config, strlen(config), &engine), "engine")) return 2;
  if (!check(policyc_cluster_new(&cluster), "cluster")) return 2;
  size_t len = 0;
  char* snapshot = read_file(argv[1], &len);
  if (snapshot == NULL) {
    fprintf(stderr, "embed_c: cannot read %s: %s\n", argv[1], strerror(errno));
    return 2;
  }
  if (!check(policyc_cluster_load(cluster, snapshot, len), argv[1])) return 2;
  free(snapshot);
  printf("loaded %zu nodes, %zu bound pods\n", policyc_cluster_node_count(cluster), policyc_cluster_pod_count(cluster));

  /* What an informer would deliver: a new A10G node joins in us-east-1b. */
  const char* event =
      "{\"type\": \"ADDED\", \"object\": {\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": "
      "\"ip-10-0-2-99.ec2.internal\", \"labels\": {\"kubernetes.io/hostname\": \"ip-10-0-2-99\", "
      "\"topology.kubernetes.io/zone\": \"us-east-1b\", \"nvidia.com/gpu.product\": \"NVIDIA-A10G\", "
      "\"nvidia.com/gpu.memory\": \"23028\"}}, \"spec\": {\"taints\": [{\"key\": \"nvidia.com/gpu\", "
      "\"value\": \"present\", \"effect\": \"NoSchedule\"}]}, \"status\": {\"allocatable\": {\"cpu\": "
      "\"47\", \"memory\": \"180Gi\", \"pods\": \"110\", \"nvidia.com/gpu\": \"4\"}}}}";
  for (int i = 2; i < argc; ++i) {
    char* pod = read_file(argv[i], &len);
    if (pod == NULL) {
      fprintf(stderr, "embed_c: cannot read %s: %s\n", argv[i], strerror(errno));
      return 2;
    }
    int ok = place(engine, cluster, argv[i], pod, len);
    free(pod);
    if (!ok) return 2;
  }
  if (!check(policyc_cluster_apply(cluster, event, strlen(event)), "event")) return 2;
  printf("after the event: %zu nodes\n", policyc_cluster_node_count(cluster));
  for (int i = 2; i < argc; ++i) {
    char* pod = read_file(argv[i], &len);
    int ok = place(engine, cluster, argv[i], pod, len);
    free(pod);
    if (!ok) return 2;
  }
  policyc_cluster_free(cluster);
  policyc_engine_free(engine);
  return 0;
}
