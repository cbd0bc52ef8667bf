// A scheduler host in Go on libpolicyc, through cgo and include/policyc.h:
// load a snapshot, decide pods from several goroutines at once, apply a
// watch event, decide again. No module from outside: build it with
// Debian's golang-go after building libpolicyc.so (build/):
//
//	cd examples/embed/go && go build -o ../../../build/embed_go . &&
//	../../../build/embed_go ../../../examples/cluster.yaml ../../../examples/pods/gpu-training.yaml
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../../../include
#cgo LDFLAGS: -L${SRCDIR}/../../../build -lpolicyc -Wl,-rpath,${SRCDIR}/../../../build
#include <stdlib.h>
#include "policyc.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"
)

// Engine is a compiled profile; safe for concurrent use.
type Engine struct{ p *C.policyc_engine }

// Cluster is the cluster state: one writer at a time, any number of deciders.
type Cluster struct{ p *C.policyc_cluster }

// Node is a feasible node and its score.
type Node struct {
	Name  string
	Score int64
}

// Failed is a node the pod does not fit, why, and whether preemption cannot help.
type Failed struct {
	Name         string
	Reason       string
	Unresolvable bool
}

// Decision is where a pod goes, or why it does not.
type Decision struct {
	Selected string // "" when nothing fits
	Feasible []Node
	Failed   []Failed
	Summary  string
}

func lastError(what string) error { return fmt.Errorf("%s: %s", what, C.GoString(C.policyc_last_error())) }

// bytesArg passes b to C without a copy (it holds no Go pointers).
func bytesArg(b []byte) (*C.char, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return (*C.char)(unsafe.Pointer(&b[0])), C.size_t(len(b))
}

func NewEngine(config string) (*Engine, error) {
	var e *C.policyc_engine
	text, n := bytesArg([]byte(config))
	if C.policyc_engine_new(C.POLICYC_ABI_VERSION, text, n, &e) != C.POLICYC_OK {
		return nil, lastError("engine")
	}
	return &Engine{e}, nil
}

func (e *Engine) Close() { C.policyc_engine_free(e.p) }

func NewCluster() (*Cluster, error) {
	var c *C.policyc_cluster
	if C.policyc_cluster_new(&c) != C.POLICYC_OK {
		return nil, lastError("cluster")
	}
	return &Cluster{c}, nil
}

func (c *Cluster) Close() { C.policyc_cluster_free(c.p) }

func (c *Cluster) Load(snapshot []byte) error {
	text, n := bytesArg(snapshot)
	if C.policyc_cluster_load(c.p, text, n) != C.POLICYC_OK {
		return lastError("load")
	}
	return nil
}

func (c *Cluster) Apply(event []byte) error {
	text, n := bytesArg(event)
	if C.policyc_cluster_apply(c.p, text, n) != C.POLICYC_OK {
		return lastError("event")
	}
	return nil
}

func (c *Cluster) Nodes() int { return int(C.policyc_cluster_node_count(c.p)) }

// Decide places pod (JSON or YAML) on the cluster as it is now.
func (c *Cluster) Decide(e *Engine, pod []byte) (Decision, error) {
	var view *C.policyc_view
	if C.policyc_cluster_view(c.p, &view) != C.POLICYC_OK {
		return Decision{}, lastError("view")
	}
	defer C.policyc_view_free(view)
	var r *C.policyc_result
	text, n := bytesArg(pod)
	if C.policyc_decide(e.p, view, text, n, nil, &r) != C.POLICYC_OK {
		return Decision{}, lastError("decide")
	}
	defer C.policyc_result_free(r)
	var d Decision
	if s := C.policyc_result_selected(r); s != nil {
		d.Selected = C.GoString(s)
	}
	for i := C.size_t(0); i < C.policyc_result_feasible_count(r); i++ {
		var score C.int64_t
		name := C.policyc_result_feasible(r, i, &score)
		d.Feasible = append(d.Feasible, Node{C.GoString(name), int64(score)})
	}
	for i := C.size_t(0); i < C.policyc_result_failed_count(r); i++ {
		var reason *C.char
		var unresolvable C.int
		name := C.policyc_result_failed(r, i, &reason, &unresolvable)
		d.Failed = append(d.Failed, Failed{C.GoString(name), C.GoString(reason), unresolvable != 0})
	}
	d.Summary = C.GoString(C.policyc_result_summary(r))
	return d, nil
}

func print(name string, d Decision) {
	if d.Selected != "" {
		fmt.Printf("%s -> %s (score %d, %d feasible)\n", name, d.Selected, d.Feasible[0].Score, len(d.Feasible))
		return
	}
	fmt.Printf("%s stays Pending: %s\n", name, d.Summary)
	for _, f := range d.Failed {
		help := ""
		if !f.Unresolvable {
			help = " (preemption may help)"
		}
		fmt.Printf("  %-28s %s%s\n", f.Name, f.Reason, help)
	}
}

// A new A10G node in us-east-1b, as an informer would deliver it.
const nodeJoins = `{"type": "ADDED", "object": {"apiVersion": "v1", "kind": "Node",
  "metadata": {"name": "ip-10-0-2-99.ec2.internal", "labels": {"kubernetes.io/hostname": "ip-10-0-2-99",
    "topology.kubernetes.io/zone": "us-east-1b", "nvidia.com/gpu.product": "NVIDIA-A10G", "nvidia.com/gpu.memory": "23028"}},
  "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
  "status": {"allocatable": {"cpu": "47", "memory": "180Gi", "pods": "110", "nvidia.com/gpu": "4"}}}}`

func run(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: embed_go SNAPSHOT POD")
	}
	engine, err := NewEngine(`{"engine": "interp"}`)
	if err != nil {
		return err
	}
	defer engine.Close()
	cluster, err := NewCluster()
	if err != nil {
		return err
	}
	defer cluster.Close()
	snapshot, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	if err := cluster.Load(snapshot); err != nil {
		return err
	}
	pod, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	// Eight goroutines decide at once; every answer must be the same.
	answers := make([]Decision, 8)
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			answers[i], errs[i] = cluster.Decide(engine, pod)
		}(i)
	}
	wg.Wait()
	for i := range answers {
		if errs[i] != nil {
			return errs[i]
		}
		if fmt.Sprint(answers[i]) != fmt.Sprint(answers[0]) {
			return fmt.Errorf("goroutine %d decided differently", i)
		}
	}
	fmt.Printf("%d nodes; 8 goroutines decided alike\n", cluster.Nodes())
	print(args[1], answers[0])
	if err := cluster.Apply([]byte(nodeJoins)); err != nil {
		return err
	}
	d, err := cluster.Decide(engine, pod)
	if err != nil {
		return err
	}
	fmt.Printf("after a node joins: %d nodes\n", cluster.Nodes())
	print(args[1], d)
	// Bad input is an error, never a crash.
	if err := cluster.Apply([]byte(`{"type": "ADDED", "object": {"kind": "Node"`)); err != nil {
		fmt.Printf("a truncated event is refused: %v\n", err)
	}
	return nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "embed_go:", err)
		os.Exit(2)
	}
}
