#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "dlsched/engine/extension_points.h"
#include "dlsched/policy/fsched_allocation.h"

namespace dlsched::policy {

// F-scheduling (SPEC section 4): elastic allocation of GPUs by throughput
// with a bound on the variance of the jobs' slowdowns.
//
// Jobs start at minReplicas (admission places them). Then, every cycle, the
// sizer recomputes the allocation (AllocateFsched) over:
//   - jobs in Running (they may grow or shrink),
//   - jobs the admission started in this cycle (their kStart is in the plan;
//     they may grow: the kStart's worker count is raised, no restart),
//   - pending jobs the admission could not start (the allocation may give
//     them their minimum by shrinking running jobs; their kWait becomes a
//     kStart),
//   - frozen jobs (Standby, Launching, RunningProtected, Checkpointing,
//     Stopping): kept as they are, counted in the variance only.
// A plan that changes a running job is applied only if it raises the total
// throughput by at least min_gain steps/s or gives resources to a job that
// had none; otherwise (or if the plan cannot be placed) the sizer falls back
// to the allocation with every running job kept as it is, which only sizes
// the jobs that start in this cycle and so costs nothing.
//
// Placement: shrinking removes workers from the nodes holding the fewest of
// the job's tasks first (nodes with its PS or Chief last); growing adds
// workers next to the job's tasks first, then on the node that can take all
// the remaining new workers with the least room to spare, else on the node
// with the most room, so each job spans as few nodes as possible. All on the
// Session, rolled back as a whole if any worker cannot be placed.
//
// Workers that request no GPU are outside the allocation: such a job keeps
// the size it started with.
class FSchedulingSizer final : public engine::Sizer {
 public:
  struct Options {
    double v_bound = 0.5;  // bound on the variance of the slowdowns
    double min_gain = 1;   // steps/s a reallocation must add
    bool restart = true;   // resizes go Checkpointing -> ... -> Launching
  };

  explicit FSchedulingSizer(Options options) : options_(options) {}
  int StartWorkers(const engine::ClusterState& state, engine::JobIndex j) const override {
    return state.Job(j).spec->role(core::Role::kWorker).min_replicas;
  }
  void Resize(engine::CycleContext& ctx, const engine::Packer& packer) const override;
  const Options& options() const { return options_; }

 private:
  enum class Kind : uint8_t { kRunning, kStarted, kWaiting, kFrozen };
  struct Entry {
    engine::JobIndex job;
    Kind kind;
    int current;  // workers held now (after this cycle's admission)
  };

  void Collect(const engine::CycleContext& ctx) const;
  // The admission's kStart or kWait action for job `j` in this cycle's
  // plan, or nullptr (index built by Collect).
  engine::Action* AdmissionAction(engine::Plan& plan, engine::JobIndex j) const;
  // Allocation over entries_; with `keep_running` running jobs are frozen.
  FschedAllocation Allocate(const engine::ClusterState& state, bool keep_running) const;
  // Places `alloc` on the session and emits the actions; false (and nothing
  // changed) if some worker cannot be placed.
  bool Apply(engine::CycleContext& ctx, const engine::Packer& packer, const FschedAllocation& alloc,
             double current_total) const;
  void ExplainWaiting(engine::CycleContext& ctx, const FschedAllocation& full) const;
  void Shrink(engine::CycleContext& ctx, engine::JobIndex j, int target) const;
  bool Grow(engine::CycleContext& ctx, engine::JobIndex j, int target) const;
  // Distinct nodes holding tasks of job `j` and how many of its tasks each
  // holds, into nodes_.
  void CountNodes(const engine::ClusterState& state, engine::JobIndex j) const;

  Options options_;
  // Scratch, reused across cycles.
  mutable std::vector<Entry> entries_;
  mutable std::vector<FschedJob> fjobs_;
  mutable std::vector<engine::JobIndex> pending_;
  mutable std::vector<std::pair<engine::JobIndex, int>> job_actions_;  // (job, action index)
  struct NodeCount {
    engine::NodeIndex node;
    int tasks;
    bool has_ps;  // holds a PS or Chief of the job
  };
  mutable std::vector<NodeCount> nodes_;
};

}  // namespace dlsched::policy
