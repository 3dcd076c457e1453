#pragma once

// Parsers for Kubernetes' node placement rules, shared by the cluster file
// (a node's taints) and the workload file (a role's nodeSelector, affinity
// and tolerations). The YAML shapes are those of a Pod spec, so a pod
// template's fields read the same.

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "dlsched/config/yaml_util.h"
#include "dlsched/core/affinity.h"

namespace dlsched::config::internal {

// taints: [{key, value, effect}]; effect NoSchedule, PreferNoSchedule or
// NoExecute; value optional.
core::Status ParseTaints(const Reader& r, const YAML::Node& n, const std::string& path,
                         std::vector<core::Taint>& out);

// nodeSelector: {label: value}
core::Status ParseNodeSelector(const Reader& r, const YAML::Node& n, const std::string& path,
                               core::Labels& out);

// affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution:
//   {nodeSelectorTerms: [{matchExpressions: [{key, operator, values}]}]}}}
core::Status ParseAffinity(const Reader& r, const YAML::Node& n, const std::string& path,
                           std::vector<core::NodeSelectorTerm>& out);

// tolerations: [{key, operator, value, effect}]; operator Equal (default)
// or Exists; no effect tolerates every effect.
core::Status ParseTolerations(const Reader& r, const YAML::Node& n, const std::string& path,
                              std::vector<core::Toleration>& out);

}  // namespace dlsched::config::internal
