#pragma once

#include <memory>
#include <string>
#include <vector>

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
//
// With fairSharing, a job of a queue in a cohort preempts as Kueue's fair
// sharing does (fairPreemptions): the candidates' queues are taken
// largest dominant resource share first (KueueShare: Kueue's DRS, exact,
// weighted); a job of J's own queue goes as it comes, another queue's
// the first of its jobs the first strategy allows (after which the
// shares are worked out again, the queue back in only while it borrows);
// if J still does not place, the second strategy takes the first
// remaining job of each queue once; then fill-back. borrowWithinCohort
// plays no part. With `elastic`, the same runs first over single workers
// of the candidates above their minimum (shrinks), then over whole jobs.
// Kueue's fair sharing preemption strategies, tried in order: preempt a
// job of a queue only if J's queue's share with J would be at most that
// queue's share without the job (kLessThanOrEqualToFinalShare), or
// strictly below that queue's share now (kLessThanInitialShare).
enum class FairStrategy : uint8_t { kLessThanOrEqualToFinalShare, kLessThanInitialShare };

class QueueReclaimPreemptor final : public engine::Preemptor {
 public:
  struct Options {
    // Defaults for queues that do not say (and for jobs of no queue).
    core::QueuePreemption defaults{core::PreemptionPolicy::kLowerPriority,
                                   core::PreemptionPolicy::kAny, core::PreemptionPolicy::kNever,
                                   std::nullopt};
    bool elastic = true;
    bool restart_on_resize = true;
    // Kueue's fair sharing (below) instead of the classical attempts, for
    // a waiting job of a queue in a cohort.
    bool fair_sharing = false;
    std::vector<FairStrategy> strategies = {FairStrategy::kLessThanOrEqualToFinalShare,
                                            FairStrategy::kLessThanInitialShare};
  };
  explicit QueueReclaimPreemptor(Options options) : options_(std::move(options)) {}
  bool Preempt(engine::CycleContext& ctx, engine::JobIndex j, int workers,
               const engine::Packer& packer, std::string* reason) const override;

 private:
  Options options_;
};

// Args: withinQueue (default LowerPriority), reclaimWithinCohort (Any),
// borrowWithinCohort (Never), maxPriorityThreshold (none), elastic (true),
// restartOnResize (true), fairSharing (false), preemptionStrategies
// ([LessThanOrEqualToFinalShare, LessThanInitialShare]; only with
// fairSharing).
core::Result<std::unique_ptr<engine::Preemptor>> MakeQueueReclaim(const YAML::Node& args,
                                                                  const std::string& where);

// Volcano's reclaim action, as its proportion (or capacity) plugin allows
// it (docs/queues.md, "Volcano's reclaim"): a waiting job J of queue Q
// reclaims only if Q, with J, holds no more than it deserves of any
// resource J asks for; the candidates are running jobs of other queues
// that hold more than they deserve (of some resource), and at least one of
// J's tasks of each resource it asks for; lower priority first, then the
// latest started. With `elastic`, their workers above the minimum are shed
// first, worker by worker, the least loss first, each only while its queue
// still holds more than it deserves; then whole jobs go in order while
// their queue does, until J places, and Kueue's fill-back gives back the
// ones J did not need. Deserved: Volcano's proportion (the weights
// water-filled over what each queue asks for, as VolcanoProportion
// orders by) or each queue's configured `deserved` (capacity).
class VolcanoReclaimPreemptor final : public engine::Preemptor {
 public:
  enum class Deserved : uint8_t { kProportion, kCapacity };
  struct Options {
    Deserved deserved = Deserved::kProportion;
    bool elastic = true;
    bool restart_on_resize = true;
  };
  explicit VolcanoReclaimPreemptor(Options options) : options_(options) {}
  bool Preempt(engine::CycleContext& ctx, engine::JobIndex j, int workers,
               const engine::Packer& packer, std::string* reason) const override;

 private:
  Options options_;
};

// Args: deserved (Proportion or Capacity; default Proportion), elastic
// (true), restartOnResize (true).
core::Result<std::unique_ptr<engine::Preemptor>> MakeVolcanoReclaim(const YAML::Node& args,
                                                                    const std::string& where);

}  // namespace dlsched::policy
