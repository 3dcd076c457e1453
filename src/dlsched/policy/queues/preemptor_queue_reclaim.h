#pragma once

#include <memory>
#include <string>

#include <yaml-cpp/yaml.h>

#include "dlsched/core/error.h"
#include "dlsched/core/queue.h"
#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// Preemption by queue (docs/queues.md, "Preemption and reclaim"): Kueue's
// classical preemption, with each queue's policies (QueuePreemption; a
// field a queue leaves out takes the preemptor's default), and dlsched's
// elastic reclaim before it.
//
// Candidates are running jobs (phase Running) holding some resource the
// waiting job J (queue Q) is short of: those Q's quota lacks, else (the
// nodes lack room) every resource J asks for.
//   - A job of Q passing withinQueue (priority below J's; or, with
//     LowerOrNewerEqualPriority, equal and submitted after J).
//   - A job of another queue of Q's cohort that borrows (holds more than
//     its nominal quota) of a resource J is short of, passing
//     reclaimWithinCohort. It is a "reclaim" candidate when J fits in Q's
//     nominal quota with Q's current usage; otherwise, without
//     borrowWithinCohort, or when its priority is not below J's or is above
//     maxPriorityThreshold, only a "no borrowing" attempt may take it;
//     else a "while borrowing" candidate.
// Order: reclaim candidates, then the other queues' others, then Q's own;
// in each group the lower priority first, then the one that started last
// (it loses the least), then the lower job index.
//
// Attempts, as Kueue's: "borrowing allowed" skips the no-borrowing-only
// candidates; "no borrowing" succeeds only if Q stays within its nominal
// quota. Kueue tries the second first when Q is strictly under nominal,
// borrowWithinCohort is Never and no reclaim candidate exists.
// In an attempt, with `elastic`, the candidates that run more than their
// minReplicas workers are first shrunk towards it, worker by worker, the
// one losing the least work first (GPUs it holds x its checkpoint and
// relaunch delays when a resize restarts it), an other queue's job only
// while its queue still borrows, until J places: they get a kResize and
// nothing is evicted whole. Otherwise whole jobs are evicted in the order
// above (an other queue's job skipped once its queue no longer borrows, a
// job shrunk for another one in this cycle skipped) until J places, then
// each evicted job but the last is given back, latest first, if J still
// places without it (Kueue's fill-back); the rest get a kStop. On failure
// nothing changes.
class QueueReclaimPreemptor final : public engine::Preemptor {
 public:
  struct Options {
    // Defaults for queues that do not say (and for jobs of no queue).
    core::QueuePreemption defaults{core::PreemptionPolicy::kLowerPriority,
                                   core::PreemptionPolicy::kAny, core::PreemptionPolicy::kNever,
                                   std::nullopt};
    bool elastic = true;
    bool restart_on_resize = true;
  };
  explicit QueueReclaimPreemptor(Options options) : options_(std::move(options)) {}
  bool Preempt(engine::CycleContext& ctx, engine::JobIndex j, int workers,
               const engine::Packer& packer, std::string* reason) const override;

 private:
  Options options_;
};

// Args: withinQueue (default LowerPriority), reclaimWithinCohort (Any),
// borrowWithinCohort (Never), maxPriorityThreshold (none), elastic (true),
// restartOnResize (true).
core::Result<std::unique_ptr<engine::Preemptor>> MakeQueueReclaim(const YAML::Node& args,
                                                                  const std::string& where);

}  // namespace dlsched::policy
