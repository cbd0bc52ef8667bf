package main

// The Kubernetes types kube-scheduler's extender client marshals, restated
// with the json tags of k8s.io/api/core/v1 and k8s.io/kube-scheduler/
// extender/v1 for the fields this test uses: what encoding/json makes of
// them is what policyc serve receives from a real kube-scheduler (keys in
// PascalCase for the untagged extender types, `null` for nil pointers,
// maps and slices without omitempty, `creationTimestamp: null`, no kind
// or apiVersion on informer objects).

import (
	"encoding/json"
	"time"
)

// Time marshals as metav1.Time does: null when zero, else RFC 3339.
type Time struct{ time.Time }

func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(time.RFC3339))
}

type OwnerReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
	Controller *bool  `json:"controller,omitempty"`
}

type ObjectMeta struct {
	Name              string            `json:"name,omitempty"`
	Namespace         string            `json:"namespace,omitempty"`
	UID               string            `json:"uid,omitempty"`
	ResourceVersion   string            `json:"resourceVersion,omitempty"`
	CreationTimestamp Time              `json:"creationTimestamp,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	OwnerReferences   []OwnerReference  `json:"ownerReferences,omitempty"`
}

type TypeMeta struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
}

type ResourceRequirements struct {
	Limits   map[string]string `json:"limits,omitempty"`
	Requests map[string]string `json:"requests,omitempty"`
}

type VolumeMount struct {
	Name      string `json:"name"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
	MountPath string `json:"mountPath"`
}

type Container struct {
	Name                     string               `json:"name"`
	Image                    string               `json:"image,omitempty"`
	Resources                ResourceRequirements `json:"resources,omitempty"`
	VolumeMounts             []VolumeMount        `json:"volumeMounts,omitempty"`
	TerminationMessagePath   string               `json:"terminationMessagePath,omitempty"`
	TerminationMessagePolicy string               `json:"terminationMessagePolicy,omitempty"`
	ImagePullPolicy          string               `json:"imagePullPolicy,omitempty"`
}

// The service-account volume every real pod carries (a projected token,
// the cluster's CA and its namespace).
type Volume struct {
	Name      string           `json:"name"`
	Projected *ProjectedVolume `json:"projected,omitempty"`
}

type ProjectedVolume struct {
	Sources     []json.RawMessage `json:"sources"`
	DefaultMode *int32            `json:"defaultMode,omitempty"`
}

type Toleration struct {
	Key               string `json:"key,omitempty"`
	Operator          string `json:"operator,omitempty"`
	Value             string `json:"value,omitempty"`
	Effect            string `json:"effect,omitempty"`
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

type PodSpec struct {
	Volumes            []Volume          `json:"volumes,omitempty"`
	Containers         []Container       `json:"containers"`
	RestartPolicy      string            `json:"restartPolicy,omitempty"`
	DNSPolicy          string            `json:"dnsPolicy,omitempty"`
	NodeSelector       map[string]string `json:"nodeSelector,omitempty"`
	ServiceAccountName string            `json:"serviceAccountName,omitempty"`
	NodeName           string            `json:"nodeName,omitempty"`
	SchedulerName      string            `json:"schedulerName,omitempty"`
	Tolerations        []Toleration      `json:"tolerations,omitempty"`
	PriorityClassName  string            `json:"priorityClassName,omitempty"`
	Priority           *int32            `json:"priority,omitempty"`
	PreemptionPolicy   *string           `json:"preemptionPolicy,omitempty"`
	EnableServiceLinks *bool             `json:"enableServiceLinks,omitempty"`
}

type PodStatus struct {
	Phase     string `json:"phase,omitempty"`
	QOSClass  string `json:"qosClass,omitempty"`
	StartTime *Time  `json:"startTime,omitempty"`
}

type Pod struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       PodSpec   `json:"spec,omitempty"`
	Status     PodStatus `json:"status,omitempty"`
}

type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

type NodeSpec struct {
	PodCIDR       string  `json:"podCIDR,omitempty"`
	ProviderID    string  `json:"providerID,omitempty"`
	Unschedulable bool    `json:"unschedulable,omitempty"`
	Taints        []Taint `json:"taints,omitempty"`
}

type NodeCondition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	LastHeartbeatTime  Time   `json:"lastHeartbeatTime,omitempty"`
	LastTransitionTime Time   `json:"lastTransitionTime,omitempty"`
	Reason             string `json:"reason,omitempty"`
}

type DaemonEndpoint struct {
	Port int32 `json:"Port"`
}

type NodeDaemonEndpoints struct {
	KubeletEndpoint DaemonEndpoint `json:"kubeletEndpoint,omitempty"`
}

type NodeSystemInfo struct {
	MachineID               string `json:"machineID"`
	KernelVersion           string `json:"kernelVersion"`
	OSImage                 string `json:"osImage"`
	ContainerRuntimeVersion string `json:"containerRuntimeVersion"`
	KubeletVersion          string `json:"kubeletVersion"`
	OperatingSystem         string `json:"operatingSystem"`
	Architecture            string `json:"architecture"`
}

type NodeStatus struct {
	Capacity        map[string]string   `json:"capacity,omitempty"`
	Allocatable     map[string]string   `json:"allocatable,omitempty"`
	Conditions      []NodeCondition     `json:"conditions,omitempty"`
	DaemonEndpoints NodeDaemonEndpoints `json:"daemonEndpoints,omitempty"`
	NodeInfo        NodeSystemInfo      `json:"nodeInfo,omitempty"`
}

type Node struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       NodeSpec   `json:"spec,omitempty"`
	Status     NodeStatus `json:"status,omitempty"`
}

type ListMeta struct {
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

type NodeList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []Node `json:"items"`
}

// k8s.io/kube-scheduler/extender/v1: no json tags.

type ExtenderArgs struct {
	Pod       *Pod
	Nodes     *NodeList
	NodeNames *[]string
}

type FailedNodesMap map[string]string

type ExtenderFilterResult struct {
	Nodes                      *NodeList
	NodeNames                  *[]string
	FailedNodes                FailedNodesMap
	FailedAndUnresolvableNodes FailedNodesMap
	Error                      string
}

type HostPriority struct {
	Host  string
	Score int64
}

type HostPriorityList []HostPriority

type Victims struct {
	Pods             []*Pod
	NumPDBViolations int64
}

type MetaPod struct {
	UID string
}

type MetaVictims struct {
	Pods             []*MetaPod
	NumPDBViolations int64
}

type ExtenderPreemptionArgs struct {
	Pod                   *Pod
	NodeNameToVictims     map[string]*Victims
	NodeNameToMetaVictims map[string]*MetaVictims
}

type ExtenderPreemptionResult struct {
	NodeNameToMetaVictims map[string]*MetaVictims
}

type ExtenderBindingArgs struct {
	PodName      string
	PodNamespace string
	PodUID       string
	Node         string
}

type ExtenderBindingResult struct {
	Error string
}
