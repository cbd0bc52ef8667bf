package main

// kube-scheduler's HTTPExtender (pkg/scheduler/extender.go), restated for
// this test: how it sends each verb and what it takes from the answer.
//   - send: POST PREFIX/VERB with the JSON body; a status other than 200
//     is an error ("failed VERB with extender at URL URL, code N"), else
//     the body is decoded into the result.
//   - Filter: Error non-empty is an error; with nodeCacheCapable and
//     NodeNames non-nil the names are the result (each must be among the
//     nodes sent), else Nodes.Items; FailedNodes are resolvable by
//     preemption, FailedAndUnresolvableNodes not.
//   - Prioritize: the list as it is (kube ignores a failing prioritize).
//   - ProcessPreemption: NodeNameToMetaVictims when nodeCacheCapable, else
//     NodeNameToVictims; the answer's victims turned back into pods by UID
//     among the pods kube has on that node (one not there is an error).
//   - Bind: Error non-empty is an error.
// The http.Client keeps connections alive, as kube's does.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
)

type HTTPExtender struct {
	URL              string
	NodeCacheCapable bool
	Client           *http.Client
}

// Connections, over every HTTPExtender: calls that followed a call answered
// 200 (whose connection Go's client keeps: kube's reads such a body to its
// end), and those of them that went over a kept connection. A call after
// an error status may open a new one: neither kube's client nor this one
// reads an error's body.
var connections struct {
	afterOK, reused int
	lastOK          bool
}

func (h *HTTPExtender) send(verb string, args, result interface{}) error {
	out, err := json.Marshal(args)
	if err != nil {
		return err
	}
	return h.sendRaw(verb, out, result)
}

func (h *HTTPExtender) sendRaw(verb string, body []byte, result interface{}) error {
	url := strings.TrimRight(h.URL, "/") + "/" + verb
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	afterOK := connections.lastOK
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if afterOK && info.Reused {
			connections.reused++
		}
		if os.Getenv("KUBECLIENT_DEBUG") != "" {
			fmt.Fprintf(os.Stderr, "%s after-ok=%v reused=%v %.40s\n", verb, afterOK, info.Reused, body)
		}
	}}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	if afterOK {
		connections.afterOK++
	}
	connections.lastOK = false
	resp, err := h.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("failed %v with extender at URL %v, code %v", verb, url, resp.StatusCode)
	}
	connections.lastOK = true
	return json.NewDecoder(resp.Body).Decode(result)
}

// Filter: the nodes that pass, and the failed ones with their reasons.
func (h *HTTPExtender) Filter(pod *Pod, nodes []*Node) ([]*Node, FailedNodesMap, FailedNodesMap, error) {
	byName := map[string]*Node{}
	args := &ExtenderArgs{Pod: pod}
	if h.NodeCacheCapable {
		names := make([]string, 0, len(nodes))
		for _, n := range nodes {
			names = append(names, n.Name)
			byName[n.Name] = n
		}
		args.NodeNames = &names
	} else {
		args.Nodes = &NodeList{}
		for _, n := range nodes {
			args.Nodes.Items = append(args.Nodes.Items, *n)
			byName[n.Name] = n
		}
	}
	var result ExtenderFilterResult
	if err := h.send("filter", args, &result); err != nil {
		return nil, nil, nil, err
	}
	if result.Error != "" {
		return nil, nil, nil, fmt.Errorf("%s", result.Error)
	}
	var passed []*Node
	if h.NodeCacheCapable && result.NodeNames != nil {
		for _, name := range *result.NodeNames {
			n, ok := byName[name]
			if !ok {
				return nil, nil, nil, fmt.Errorf("extender %q claims a filtered node %q which is not found in the input node list", h.URL, name)
			}
			passed = append(passed, n)
		}
	} else if result.Nodes != nil {
		for i := range result.Nodes.Items {
			passed = append(passed, &result.Nodes.Items[i])
		}
	}
	return passed, result.FailedNodes, result.FailedAndUnresolvableNodes, nil
}

func (h *HTTPExtender) Prioritize(pod *Pod, nodes []*Node) (HostPriorityList, error) {
	args := &ExtenderArgs{Pod: pod}
	if h.NodeCacheCapable {
		names := make([]string, 0, len(nodes))
		for _, n := range nodes {
			names = append(names, n.Name)
		}
		args.NodeNames = &names
	} else {
		args.Nodes = &NodeList{}
		for _, n := range nodes {
			args.Nodes.Items = append(args.Nodes.Items, *n)
		}
	}
	var result HostPriorityList
	if err := h.send("prioritize", args, &result); err != nil {
		return nil, err
	}
	return result, nil
}

// ProcessPreemption: the extender's candidates and victims, as pods kube
// has on each node (`onNode`).
func (h *HTTPExtender) ProcessPreemption(pod *Pod, victims map[string]*Victims, onNode map[string][]*Pod) (map[string]*Victims, error) {
	args := &ExtenderPreemptionArgs{Pod: pod}
	if h.NodeCacheCapable {
		meta := map[string]*MetaVictims{}
		for node, v := range victims {
			m := &MetaVictims{Pods: []*MetaPod{}, NumPDBViolations: v.NumPDBViolations}
			for _, p := range v.Pods {
				m.Pods = append(m.Pods, &MetaPod{UID: p.UID})
			}
			meta[node] = m
		}
		args.NodeNameToMetaVictims = meta
	} else {
		args.NodeNameToVictims = victims
	}
	var result ExtenderPreemptionResult
	if err := h.send("preempt", args, &result); err != nil {
		return nil, err
	}
	out := map[string]*Victims{}
	for node, meta := range result.NodeNameToMetaVictims {
		pods, ok := onNode[node]
		if !ok {
			return nil, fmt.Errorf("nodeinfo not found for node %q", node)
		}
		v := &Victims{Pods: []*Pod{}, NumPDBViolations: meta.NumPDBViolations}
		for _, mp := range meta.Pods {
			var found *Pod
			for _, p := range pods {
				if p.UID == mp.UID {
					found = p
				}
			}
			if found == nil {
				return nil, fmt.Errorf("extender: %v claims to preempt pod (UID: %v) on node: %v, but the pod is not found on that node", h.URL, mp.UID, node)
			}
			v.Pods = append(v.Pods, found)
		}
		out[node] = v
	}
	return out, nil
}

func (h *HTTPExtender) Bind(name, namespace, uid, node string) error {
	var result ExtenderBindingResult
	if err := h.send("bind", &ExtenderBindingArgs{PodName: name, PodNamespace: namespace, PodUID: uid, Node: node}, &result); err != nil {
		return err
	}
	if result.Error != "" {
		return fmt.Errorf("%s", result.Error)
	}
	return nil
}
