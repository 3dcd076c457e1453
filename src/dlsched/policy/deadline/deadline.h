#pragma once

// Deadline-aware gang scheduling, the worked example of
// docs/writing-a-policy.md: one piece at each of three extension points,
// registered as the unit `deadline` (deadline.cc). A job's `deadline`
// (workload file: seconds after its arrival) is when it fails if it has
// not completed.

#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// JobOrder `EarliestDeadline`: earliest deadline first. A job's key is
// when its deadline falls, arrival + deadline. A job without a deadline
// counts as having `default_deadline` seconds, for the order only; with
// 0 (the default) it has none and goes after every job that has one. Ties
// (and jobs without one) go by arrival, then job index (the engine's rule).
class EarliestDeadlineOrder final : public engine::JobOrder {
 public:
  explicit EarliestDeadlineOrder(core::Time default_deadline)
      : default_deadline_(default_deadline) {}
  void Keys(const engine::ClusterState& state, std::span<const engine::JobIndex> jobs,
            core::Time now, std::span<double> keys) const override;
  // A key depends on the job's spec alone.
  bool StaticKeys() const override { return true; }

 private:
  core::Time default_deadline_;
};

// NodeScorer `KeepTogether`: a job's tasks on one node. For task t of job
// j: 100 x (j's other placed tasks on node n) / (j's other placed tasks),
// 0 while none is placed, so a job's first task goes where the profile's
// other scorers say and the rest follow it while that node has room. (A
// job whose tasks span nodes trains at 1 - localitySensitivity of its
// speed.)
class KeepTogetherScorer final : public engine::NodeScorer {
 public:
  std::string_view Name() const override { return "KeepTogether"; }
  int64_t Score(const engine::ClusterState& state, engine::TaskRef t,
                engine::NodeIndex n) const override;
};

// Sizer `DeadlineFit`: a job with a deadline starts with the fewest
// workers in [minReplicas, maxReplicas] whose rate (the throughput table's)
// trains its remaining steps, after its launch delay, within deadline /
// `headroom` seconds; a job without a deadline, or one that no size can
// finish in time, starts with `replicas`. It never resizes a running job.
// A sizer is not told the time: the budget is counted as if the job
// started on arrival, and `headroom` (>= 1) leaves room for the wait.
class DeadlineFitSizer final : public engine::Sizer {
 public:
  explicit DeadlineFitSizer(double headroom) : headroom_(headroom) {}
  int StartWorkers(const engine::ClusterState& state, engine::JobIndex j) const override;

 private:
  double headroom_;
};

}  // namespace dlsched::policy
