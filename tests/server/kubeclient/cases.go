package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

type testCase struct {
	name string
	run  func() error
}

func (c cluster) get(names ...string) []*Node {
	var out []*Node
	for _, name := range names {
		for _, n := range c.nodes {
			if n.Name == name {
				out = append(out, n)
			}
		}
	}
	return out
}

func (c cluster) podNamed(name string) *Pod {
	for _, pods := range c.onNode {
		for _, p := range pods {
			if p.Name == name {
				return p
			}
		}
	}
	return nil
}

func keys(m map[string]string) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func uids(v *Victims) []string {
	out := []string{}
	for _, p := range v.Pods {
		out = append(out, p.UID)
	}
	return out
}

// kube-scheduler's callExtenders refuses a node with no victim.
func checkVictims(result map[string]*Victims) error {
	for node, v := range result {
		if v == nil || len(v.Pods) == 0 {
			return fmt.Errorf("expected at least one victim pod on node %q", node)
		}
	}
	return nil
}

func cases(c cluster, cached, objects *HTTPExtender) []testCase {
	web := pod("web", "", "1500m", 100, 0)  // fits n4 alone
	big := pod("big", "", "3", 100, 0)      // fits nowhere; on n1 once low-2 goes
	small := pod("small", "", "500m", 0, 0) // fits n1, n2 and n4
	all := c.get("n1", "n2", "n3", "n4")
	return []testCase{
		{"filter by names (nodeCacheCapable): passed, FailedNodes, FailedAndUnresolvableNodes", func() error {
			passed, failed, unresolvable, err := cached.Filter(web, all)
			if err != nil {
				return err
			}
			if !same(names(passed), []string{"n4"}) || !same(keys(failed), []string{"n1", "n2"}) || !same(keys(unresolvable), []string{"n3"}) {
				return fmt.Errorf("passed %v, failed %v, unresolvable %v", names(passed), failed, unresolvable)
			}
			if failed["n1"] != "Insufficient cpu" || unresolvable["n3"] != "node(s) had untolerated taint(s)" {
				return fmt.Errorf("reasons %q, %q", failed["n1"], unresolvable["n3"])
			}
			return nil
		}},
		{"filter by node objects: the objects that pass come back whole", func() error {
			passed, failed, unresolvable, err := objects.Filter(web, all)
			if err != nil {
				return err
			}
			if !same(names(passed), []string{"n4"}) || !same(keys(failed), []string{"n1", "n2"}) || !same(keys(unresolvable), []string{"n3"}) {
				return fmt.Errorf("passed %v, failed %v, unresolvable %v", names(passed), failed, unresolvable)
			}
			if passed[0].Spec.ProviderID != "aws:///z1/n4" || passed[0].Status.NodeInfo.KubeletVersion != "v1.31.0" {
				return fmt.Errorf("n4 came back as %+v", passed[0])
			}
			return nil
		}},
		{"filter with an empty list of names", func() error {
			passed, failed, unresolvable, err := cached.Filter(web, []*Node{})
			if err != nil {
				return err
			}
			if len(passed)+len(failed)+len(unresolvable) != 0 {
				return fmt.Errorf("passed %v, failed %v, unresolvable %v", names(passed), failed, unresolvable)
			}
			return nil
		}},
		{"filter of a name the state does not have: unresolvable", func() error {
			ghost := node("ghost", "64")
			_, _, unresolvable, err := cached.Filter(web, append(c.get("n4"), ghost))
			if err != nil {
				return err
			}
			if _, ok := unresolvable["ghost"]; !ok {
				return fmt.Errorf("unresolvable %v", unresolvable)
			}
			return nil
		}},
		{"prioritize: 0-10 over the nodes sent, the best 10", func() error {
			for _, ext := range []*HTTPExtender{cached, objects} {
				scores, err := ext.Prioritize(small, c.get("n1", "n2", "n4"))
				if err != nil {
					return err
				}
				hosts, best := []string{}, int64(-1)
				for _, s := range scores {
					hosts = append(hosts, s.Host)
					if s.Score < 0 || s.Score > 10 {
						return fmt.Errorf("score %d for %s", s.Score, s.Host)
					}
					if s.Score > best {
						best = s.Score
					}
				}
				sort.Strings(hosts)
				if !same(hosts, []string{"n1", "n2", "n4"}) || best != 10 {
					return fmt.Errorf("nodeCacheCapable %v: %v", ext.NodeCacheCapable, scores)
				}
			}
			return nil
		}},
		{"prioritize: a node that does not fit scores 0", func() error {
			scores, err := cached.Prioritize(web, c.get("n3", "n4"))
			if err != nil {
				return err
			}
			got := map[string]int64{}
			for _, s := range scores {
				got[s.Host] = s.Score
			}
			if len(got) != 2 || got["n3"] != 0 || got["n4"] != 10 {
				return fmt.Errorf("%v", scores)
			}
			return nil
		}},
		{"preempt by UID: victims that do not make room are replaced by ones that do", func() error {
			proposed := map[string]*Victims{
				"n1": {Pods: []*Pod{c.podNamed("low-1")}, NumPDBViolations: 0},
				"n3": {Pods: []*Pod{c.podNamed("low-3")}, NumPDBViolations: 0},
			}
			result, err := cached.ProcessPreemption(big, proposed, c.onNode)
			if err != nil {
				return err
			}
			if err := checkVictims(result); err != nil {
				return err
			}
			if len(result) != 1 || result["n1"] == nil || !same(uids(result["n1"]), []string{"uid-low-2"}) {
				return fmt.Errorf("%s", describe(result))
			}
			return nil
		}},
		{"preempt with whole pods: victims that make room are kept, NumPDBViolations with them", func() error {
			proposed := map[string]*Victims{"n1": {Pods: []*Pod{c.podNamed("low-1"), c.podNamed("low-2")}, NumPDBViolations: 2}}
			result, err := objects.ProcessPreemption(big, proposed, c.onNode)
			if err != nil {
				return err
			}
			if len(result) != 1 || result["n1"] == nil || !same(uids(result["n1"]), []string{"uid-low-1", "uid-low-2"}) ||
				result["n1"].NumPDBViolations != 2 {
				return fmt.Errorf("%s", describe(result))
			}
			return nil
		}},
		{"preempt never names a node filter called unresolvable", func() error {
			_, _, unresolvable, err := cached.Filter(big, all)
			if err != nil {
				return err
			}
			proposed := map[string]*Victims{}
			for name, pods := range c.onNode {
				var lower []*Pod
				for _, p := range pods {
					if *p.Spec.Priority < *big.Spec.Priority {
						lower = append(lower, p)
					}
				}
				if len(lower) > 0 {
					proposed[name] = &Victims{Pods: lower}
				}
			}
			result, err := cached.ProcessPreemption(big, proposed, c.onNode)
			if err != nil {
				return err
			}
			if err := checkVictims(result); err != nil {
				return err
			}
			for name := range result {
				if _, ok := unresolvable[name]; ok {
					return fmt.Errorf("%s is unresolvable (%s) but preempt kept it", name, unresolvable[name])
				}
			}
			if result["n1"] == nil {
				return fmt.Errorf("n1 left out: %s", describe(result))
			}
			return nil
		}},
		{"malformed calls are errors as kube-scheduler reads them", func() error {
			for _, body := range []string{`{"Pod": `, `{"Pod": null, "NodeNames": ["n1"], "Nodes": null}`, `null`, `[1, 2]`} {
				for _, verb := range []string{"filter", "prioritize", "preempt", "bind"} {
					var answer interface{}
					err := cached.sendRaw(verb, []byte(body), &answer)
					if err != nil {
						continue // a status other than 200: kube's error
					}
					m, ok := answer.(map[string]interface{})
					if ok && verb != "prioritize" && verb != "preempt" {
						if e, _ := m["Error"].(string); e != "" {
							continue // filter and bind: Error set
						}
					}
					return fmt.Errorf("%s of %s: read as a success: %v", verb, body, answer)
				}
			}
			return nil
		}},
		{"bind without an API to bind through is an error", func() error {
			if err := cached.Bind("web", "default", "uid-web", "n4"); err == nil {
				return fmt.Errorf("bind succeeded")
			}
			return nil
		}},
		{"filter judges the node objects sent: one the state has not seen yet", func() error {
			n5 := node("n5", "8")
			passed, _, _, err := objects.Filter(big, append(c.get("n1", "n4"), n5))
			if err != nil {
				return err
			}
			if !same(names(passed), []string{"n5"}) {
				return fmt.Errorf("passed %v", names(passed))
			}
			return nil
		}},
	}
}

func describe(result map[string]*Victims) string {
	parts := []string{}
	for node, v := range result {
		parts = append(parts, fmt.Sprintf("%s: %v (%d)", node, uids(v), v.NumPDBViolations))
	}
	sort.Strings(parts)
	out, _ := json.Marshal(parts)
	return strings.TrimSpace(string(out))
}
