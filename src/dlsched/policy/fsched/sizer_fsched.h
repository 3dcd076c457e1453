#pragma once

#include "dlsched/engine/extension_points.h"
#include "dlsched/policy/fsched/fsched_allocation.h"

namespace dlsched::policy {

// F-scheduling (docs/policies/fsched.md): elastic allocation of GPUs by
// throughput with a bound on the variance of the jobs' slowdowns.
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
// Hand-over (hold_until_checkpoint, with restart): the GPUs a shrinking job
// gives up stay held (kResize with `hold`: releasing tasks) until its
// checkpoint is done. Their coming owner is placed in the cycle after,
// when the room is free: the allocation counts held GPUs as its pool, jobs
// are grown first into the room free now, and a job whose new size needs
// the held room waits for it whole ("waiting for A's checkpoint (ends at
// 105 s)"): a waiting or newly started job stays waiting, a running one
// keeps its size.
//
// Pay-back (pay_back, with restart): a running job grown with a restart
// must finish sooner for it: checkpoint + launch + work left / new rate <
// work left / current rate (rates with the locality factor of the
// placements). A plan in which one does not is recomputed with that job
// kept at its size. Shrinks are not tested: a job shrunk for others never
// finishes sooner; min_gain judges them.
//
// Workers that request no GPU are outside the allocation: such a job keeps
// the size it started with.
//
// Heterogeneity-aware (`aware`): a worker on a GPU of type A is worth its
// throughput on A (FschedInput::types): each GPU type (GpuTypes) is a pool
// of its own; a job grows on the type of its GPUs (that of its first task
// with GPUs: where admission started it, or where it runs), by as many
// workers as that type's nodes take; a waiting job the allocation admits
// starts on the type where its minimum runs fastest among those with room,
// placed on that type's nodes (PlaceGangOnNodes), and one that cannot be
// placed there is left out of this cycle's allocation, which is made again
// without it; a job whose GPUs are on several types is kept as it is. A
// job is never moved between types.
class FSchedulingSizer final : public engine::Sizer {
 public:
  struct Options {
    double v_bound = 0.5;  // bound on the variance of the slowdowns
    double min_gain = 1;   // steps/s a reallocation must add
    bool restart = true;   // resizes go Checkpointing -> ... -> Launching
    // With restart: GPUs a shrinking job gives up reach their new owner
    // when its checkpoint is done, not before.
    bool hold_until_checkpoint = true;
    // With restart: a running job grows only if it then finishes sooner.
    bool pay_back = true;
    // Heterogeneity-aware allocation (see above).
    bool aware = false;
  };

  explicit FSchedulingSizer(Options options) : options_(options) {}
  int StartWorkers(const engine::ClusterState& state, engine::JobIndex j) const override {
    return state.Job(j).spec->role(core::Role::kWorker).min_replicas;
  }
  // Reads admission's verdicts from the cycle's decisions and records its
  // own there (resizes; starts that replace waits; larger starts).
  bool ReadsVerdicts() const override { return true; }
  // The pay-back rule reads how much work running jobs have left.
  bool ReadsProgress() const override { return options_.restart && options_.pay_back; }
  void Resize(engine::CycleContext& ctx, const engine::Packer& packer) const override;
  const Options& options() const { return options_; }

 private:
  Options options_;
};

}  // namespace dlsched::policy
