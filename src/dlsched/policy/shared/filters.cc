#include "dlsched/policy/shared/filters.h"

#include "dlsched/core/affinity.h"

namespace dlsched::policy {

std::string NodeAffinityFilter::Filter(const engine::ClusterState& state, engine::TaskRef t,
                                       engine::NodeIndex n) const {
  const core::NodeConstraints& c = state.Job(t.job).spec->role(t.role).constraints;
  if (!c.HasLabelRules()) return {};
  if (core::MatchesLabels(c, state.NodeSpecOf(n).labels)) return {};
  return "didn't match node selector or affinity";
}

std::string TaintTolerationFilter::Filter(const engine::ClusterState& state, engine::TaskRef t,
                                          engine::NodeIndex n) const {
  const std::vector<core::Taint>& taints = state.NodeSpecOf(n).taints;
  if (taints.empty()) return {};
  const core::Taint* bad = core::FirstUntoleratedTaint(
      taints, state.Job(t.job).spec->role(t.role).constraints.tolerations);
  if (bad == nullptr) return {};
  return "untolerated taint " + core::FormatTaint(*bad);
}

bool NodeAffinityFilter::AppliesTo(const engine::ClusterState& state, engine::TaskRef t) const {
  return state.Job(t.job).spec->role(t.role).constraints.HasLabelRules();
}

bool TaintTolerationFilter::AppliesTo(const engine::ClusterState& state, engine::TaskRef) const {
  return state.NumTaintedNodes() > 0;
}

}  // namespace dlsched::policy
