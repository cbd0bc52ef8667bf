#pragma once
/// The readers of in-tree plugins' `pluginConfig` args (KubeSchedulerConfiguration),
/// each named by its plugin's row (InTreePlugin::read_args, profile.cpp): args
/// become params of the plugin's stdlib policies, or choose its score file.
/// An error goes to `diags` with the span of the field it is about.

#include "runtime/sched/profile.h"

namespace policy::rt {

/// NodeResourcesFitArgs: scoringStrategy (type, resources, requestedToCapacityRatio.shape),
/// ignoredResources, ignoredResourceGroups.
void FitArgs(const InTreePlugin& plugin, k8s::NodeRef args, Profile& profile, DiagnosticSink& diags);
/// NodeResourcesBalancedAllocationArgs: resources (weights must be 1, at most two).
void BalancedArgs(const InTreePlugin& plugin, k8s::NodeRef args, Profile& profile, DiagnosticSink& diags);
/// InterPodAffinityArgs: hardPodAffinityWeight (0..100), ignorePreferredTermsOfExistingPods.
void InterPodArgs(const InTreePlugin& plugin, k8s::NodeRef args, Profile& profile, DiagnosticSink& diags);
/// PodTopologySpreadArgs: defaultingType System (kube-scheduler's own defaults) or
/// List (defaultConstraints, without selectors: Profile::spread_defaults).
void SpreadArgs(const InTreePlugin& plugin, k8s::NodeRef args, Profile& profile, DiagnosticSink& diags);

}  // namespace policy::rt
