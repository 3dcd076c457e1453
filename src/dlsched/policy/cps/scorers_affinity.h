#pragma once

// Soft placement preferences between the tasks of one parameter-server job
// (docs/policies/cps-volcano-affinity.md): workers near their PS, PS apart from
// each other. Both only rank feasible nodes, so they never make a job
// unschedulable. Each Score visits the slots of the task's own job only
// (JobState::task_node), never other jobs or other nodes: O(tasks of the job)
// per node scored.
//
// The task being scored is not placed yet (the NodeScorer contract); its own
// slot is skipped anyway, so scoring an already placed task gives the same
// answer as if it were lifted off first.

#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// For a Worker or Chief: the share of the job's placed PS replicas that
// node n holds, 100 * (PS on n) / (PS placed) (0 when no PS is placed).
// For a PS: the share of the job's placed workers and chiefs on n,
// 100 * (workers on n) / (workers placed) (0 when none is placed).
// Proportional rather than all-or-nothing, so that when the PS are spread
// a worker leans towards the node holding more of them, and a task never
// scores 100 on a node that holds only part of its peers.
class PsWorkerAffinity final : public engine::NodeScorer {
 public:
  std::string_view Name() const override { return "PsWorkerAffinity"; }
  int64_t Score(const engine::ClusterState& state, engine::TaskRef t,
                engine::NodeIndex n) const override;
};

// For a PS: 100 * (placed PS elsewhere) / (placed PS), i.e. 100 on a node
// holding no other PS of the job, 0 on a node holding all of them (100 when
// it is the job's first PS). For Worker and Chief tasks: kNeutral on every
// node, which adds the same to every candidate and so cannot change their
// choice.
class PsAntiAffinity final : public engine::NodeScorer {
 public:
  static constexpr int64_t kNeutral = 0;
  std::string_view Name() const override { return "PsAntiAffinity"; }
  int64_t Score(const engine::ClusterState& state, engine::TaskRef t,
                engine::NodeIndex n) const override;
};

}  // namespace dlsched::policy
