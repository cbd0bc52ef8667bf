// kubeclient drives `policyc serve` as kube-scheduler does: every request
// marshalled by encoding/json from the types kube-scheduler sends
// (types.go), every answer read as its HTTPExtender reads it
// (extender.go), over one kept-alive connection. It writes a cluster of
// its own as a snapshot, starts serve on it, runs each case and prints
// `N passed, M failed` (exit 1 on a failure).
//
//	go build -o build/kubeclient ./tests/server/kubeclient && build/kubeclient -policyc build/policyc
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"
)

func int32p(v int32) *int32 { return &v }

var started = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// A pod as the API holds it: a ReplicaSet's, with the service-account
// volume every pod gets.
func pod(name, node, cpu string, priority int32, startedAfter time.Duration) *Pod {
	yes := true
	p := &Pod{
		ObjectMeta: ObjectMeta{Name: name, Namespace: "default", UID: "uid-" + name, ResourceVersion: "100",
			CreationTimestamp: Time{started}, Labels: map[string]string{"app": name},
			OwnerReferences: []OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name + "-rs", UID: "uid-rs-" + name, Controller: &yes}}},
		Spec: PodSpec{
			Volumes: []Volume{{Name: "kube-api-access-x", Projected: &ProjectedVolume{Sources: []json.RawMessage{
				json.RawMessage(`{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}}`),
				json.RawMessage(`{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}}`)}, DefaultMode: int32p(420)}}},
			Containers: []Container{{Name: "c", Image: "nginx:1.25", Resources: ResourceRequirements{Requests: map[string]string{"cpu": cpu, "memory": "256Mi"}},
				VolumeMounts:           []VolumeMount{{Name: "kube-api-access-x", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: "File", ImagePullPolicy: "IfNotPresent"}},
			RestartPolicy: "Always", DNSPolicy: "ClusterFirst", ServiceAccountName: "default", NodeName: node,
			SchedulerName: "default-scheduler", Priority: int32p(priority),
			Tolerations: []Toleration{{Key: "node.kubernetes.io/not-ready", Operator: "Exists", Effect: "NoExecute"}},
		},
	}
	if node != "" {
		st := Time{started.Add(startedAfter)}
		p.Status = PodStatus{Phase: "Running", QOSClass: "Burstable", StartTime: &st}
	} else {
		p.Status = PodStatus{Phase: "Pending", QOSClass: "Burstable"}
	}
	return p
}

func node(name, cpu string, taints ...Taint) *Node {
	return &Node{
		ObjectMeta: ObjectMeta{Name: name, ResourceVersion: "7", CreationTimestamp: Time{started},
			Labels: map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "topology.kubernetes.io/zone": "z1"}},
		Spec: NodeSpec{ProviderID: "aws:///z1/" + name, Taints: taints},
		Status: NodeStatus{
			Capacity:    map[string]string{"cpu": cpu, "memory": "8Gi", "pods": "110"},
			Allocatable: map[string]string{"cpu": cpu, "memory": "8Gi", "pods": "110"},
			Conditions:  []NodeCondition{{Type: "Ready", Status: "True", LastHeartbeatTime: Time{started}, Reason: "KubeletReady"}},
			NodeInfo:    NodeSystemInfo{KubeletVersion: "v1.31.0", OperatingSystem: "linux", Architecture: "amd64"},
		},
	}
}

// The cluster: n1 (4 CPU) runs low-1 (1) and low-2 (2) at priority 0; n2
// (4) runs mid (3) at 500; n3 (4) is tainted and runs low-3 (3); n4 has 2
// CPU and nothing on it.
type cluster struct {
	nodes  []*Node
	onNode map[string][]*Pod
}

func makeCluster() cluster {
	c := cluster{onNode: map[string][]*Pod{}}
	c.nodes = []*Node{node("n1", "4"), node("n2", "4"), node("n3", "4", Taint{Key: "dedicated", Value: "gpu", Effect: "NoSchedule"}), node("n4", "2")}
	for _, p := range []*Pod{pod("low-1", "n1", "1", 0, time.Minute), pod("low-2", "n1", "2", 0, 2*time.Minute),
		pod("mid", "n2", "3", 500, time.Minute), pod("low-3", "n3", "3", 0, time.Minute)} {
		c.onNode[p.Spec.NodeName] = append(c.onNode[p.Spec.NodeName], p)
	}
	for _, n := range c.nodes {
		if c.onNode[n.Name] == nil {
			c.onNode[n.Name] = []*Pod{}
		}
	}
	return c
}

// The snapshot serve loads: the objects as the API lists them.
func (c cluster) write(path string) error {
	var items []interface{}
	for _, n := range c.nodes {
		obj := *n
		obj.TypeMeta = TypeMeta{Kind: "Node", APIVersion: "v1"}
		items = append(items, obj)
	}
	names := make([]string, 0, len(c.onNode))
	for name := range c.onNode {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, p := range c.onNode[name] {
			obj := *p
			obj.TypeMeta = TypeMeta{Kind: "Pod", APIVersion: "v1"}
			items = append(items, obj)
		}
	}
	out, err := json.Marshal(map[string]interface{}{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

type serve struct {
	cmd *exec.Cmd
	url string
}

func startServe(policyc, snapshot string) (*serve, error) {
	cmd := exec.Command(policyc, "serve", "--cluster", snapshot, "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := bufio.NewScanner(stderr)
	at := regexp.MustCompile(`serving the extender at (http://127\.0\.0\.1:\d+/\S+)/\{`)
	for lines.Scan() {
		if m := at.FindStringSubmatch(lines.Text()); m != nil {
			go func() {
				for lines.Scan() {
				}
			}()
			return &serve{cmd: cmd, url: m[1]}, nil
		}
	}
	cmd.Process.Kill()
	return nil, fmt.Errorf("serve did not start")
}

func main() {
	policyc := flag.String("policyc", "build/policyc", "the policyc binary")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "kubeclient")
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	defer os.RemoveAll(tmp)
	c := makeCluster()
	snapshot := filepath.Join(tmp, "cluster.json")
	if err := c.write(snapshot); err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	s, err := startServe(*policyc, snapshot)
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	cached := &HTTPExtender{URL: s.url, NodeCacheCapable: true, Client: client}
	objects := &HTTPExtender{URL: s.url, NodeCacheCapable: false, Client: client}

	passed, failed := 0, 0
	for _, tc := range cases(c, cached, objects) {
		if err := tc.run(); err != nil {
			failed++
			fmt.Printf("FAIL %s: %v\n", tc.name, err)
		} else {
			passed++
			fmt.Printf("ok   %s\n", tc.name)
		}
	}
	// Keep-alive: every call after one answered 200 goes over a kept connection.
	if connections.afterOK == 0 || connections.reused < connections.afterOK {
		failed++
		fmt.Printf("FAIL keep-alive: %d of %d calls after a 200 reused a connection\n", connections.reused, connections.afterOK)
	} else {
		passed++
		fmt.Printf("ok   keep-alive: %d calls after a 200, each on a kept connection\n", connections.afterOK)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.cmd.Wait(); err != nil {
		failed++
		fmt.Printf("FAIL serve's exit on SIGTERM: %v\n", err)
	}
	fmt.Printf("kubeclient: %d passed, %d failed\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}

func names(nodes []*Node) []string {
	out := []string{}
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	sort.Strings(out)
	return out
}

func same(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }
