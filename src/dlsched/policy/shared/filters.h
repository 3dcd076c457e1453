#pragma once

#include <string>
#include <string_view>

#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// kube-scheduler's NodeAffinity filter: the node's labels must satisfy the
// task's nodeSelector (every key equal) and its required node affinity
// (any term; in a term, every requirement: In, NotIn, Exists,
// DoesNotExist, Gt, Lt). Rejects with "didn't match node selector or
// affinity".
class NodeAffinityFilter final : public engine::NodeFilter {
 public:
  std::string_view Name() const override { return "NodeAffinity"; }
  std::string Filter(const engine::ClusterState& state, engine::TaskRef t,
                     engine::NodeIndex n) const override;
  bool AppliesTo(const engine::ClusterState& state, engine::TaskRef t) const override;
};

// kube-scheduler's TaintToleration filter: every NoSchedule and NoExecute
// taint of the node must be tolerated by the task (PreferNoSchedule is a
// preference, not a rule). Rejects with "untolerated taint <key=value:Effect>"
// naming the first such taint.
class TaintTolerationFilter final : public engine::NodeFilter {
 public:
  std::string_view Name() const override { return "TaintToleration"; }
  std::string Filter(const engine::ClusterState& state, engine::TaskRef t,
                     engine::NodeIndex n) const override;
  bool AppliesTo(const engine::ClusterState& state, engine::TaskRef t) const override;
};

}  // namespace dlsched::policy
