#pragma once

// The baselines of the Tiresias paper as its public simulator
// (SymbioticLab/Tiresias, simulator/run_sim.py) implements them
// (docs/policies/tiresias.md): strict FIFO is the Gang admission without
// backfill; these are the re-planning admission and the orders of its
// `sjf` and `shortest` schedules.

#include <limits>
#include <span>
#include <vector>

#include "dlsched/engine/extension_points.h"
#include "dlsched/policy/shared/rounds.h"

namespace dlsched::policy {

// What the Tiresias pieces keep about each job from one cycle to the next
// (its engine record; the Replan admission sets it, a levelled order reads
// it): its level (queue), since when (its arrival at first), and its place
// in that level's list (kNoPlace until it has one); for starvation
// promotion, the service it had attained when it was last promoted back to
// level 0 (0: never) and when it first began to launch after that (kNever:
// not yet; the engine stamps it). A snapshot and a TrainingJob's status
// carry them under the names below.
struct LevelRecord {
  static constexpr double kNoPlace = std::numeric_limits<double>::infinity();
  static constexpr engine::RecordField kLevel{.state = core::CarriedField("level"),
                                              .shown = "queue"};
  static constexpr engine::RecordField kSince{
      .state = core::CarriedField("levelSince"), .initial_is_arrival = true, .shown = {}};
  static constexpr engine::RecordField kBase{
      .state = core::CarriedField("levelBaseGpuSeconds"), .in_status = true, .shown = {}};
  static constexpr engine::RecordField kRanSince{.state = core::CarriedField("ranSince"),
                                                 .initial = core::kNever,
                                                 .stamped_at_launch = true,
                                                 .in_status = true,
                                                 .shown = {}};
  static constexpr engine::RecordField kPlace{
      .state = core::CarriedField("levelPlace"), .initial = kNoPlace, .shown = {}};
  static constexpr const engine::RecordField* kFields[] = {&kLevel, &kSince, &kBase, &kRanSince,
                                                           &kPlace};

  int level = 0;
  core::Time since = 0;
  double base = 0;
  core::Time ran_since = core::kNever;
  double place = kNoPlace;

  // Where the fields begin in each job's JobState::record, or kNotKept;
  // then job `j`'s record (the initial values when not kept).
  static constexpr size_t kNotKept = static_cast<size_t>(-1);
  static size_t At(const engine::ClusterState& state);
  static LevelRecord Of(const engine::ClusterState& state, engine::JobIndex j, size_t at);
  static LevelRecord Of(const engine::ClusterState& state, engine::JobIndex j) {
    return Of(state, j, At(state));
  }
};

// An order that sorts jobs into levels by what they have done (as
// Tiresias' queues by attained service), which the Replan admission keeps
// in each job's LevelRecord. Replan with any other order keeps every job
// at the level it is at.
class LevelledOrder : public engine::JobOrder {
 public:
  // The level a job should be at `now` (a running job may go down; a
  // starving one back up), given its state and record.
  virtual int Level(const engine::JobState& js, const LevelRecord& rec, core::Time now) const = 0;
  // When its level will next change if nothing else does (the admission
  // asks the backend for a cycle then), or kNever; a job placed in this
  // cycle's session counts as running.
  virtual core::Time NextLevelChange(const engine::JobState& js, const LevelRecord& rec,
                                     core::Time now) const = 0;
  // The same for job `j` of `state`.
  int Level(const engine::ClusterState& state, engine::JobIndex j, core::Time now) const {
    return Level(state.Job(j), LevelRecord::Of(state, j), now);
  }
  core::Time NextLevelChange(const engine::ClusterState& state, engine::JobIndex j,
                             core::Time now) const {
    return NextLevelChange(state.Job(j), LevelRecord::Of(state, j), now);
  }
  // True when the keys read each job's place in its level's list
  // (Tiresias' per-queue lists): Replan then keeps the lists as Tiresias'
  // scheduler does after each pass (running jobs ahead of pending ones,
  // newcomers at the end).
  virtual bool KeepsPlaces() const = 0;
  std::span<const engine::RecordField* const> RecordFields() const override {
    return LevelRecord::kFields;
  }
};

// Re-plans every cycle over all jobs, running and pending alike, as
// Tiresias' preemptive schedules do at every event: jobs in the profile's
// order each take their demand from the cluster's total resources while
// it lasts, skipping (not blocking on) a job that does not fit; a running
// job that no longer makes the cut is preempted (stopped back to the
// queue, keeping its progress), and every pending job that makes it starts
// through the packer. Jobs that are frozen (RunningProtected) or already
// stopping keep what they hold and are not re-planned.
//
// With `interval` > 0 (Pollux's simulator, which schedules every 60 s) it
// decides only in rounds: cycles at a positive multiple of `interval`
// seconds, or less than kRoundSlack after one. Any other cycle decides
// nothing (a job that arrived in it is told when the next round is) and
// asks the backend for a cycle at the next round; level changes are
// waited for to the round at or after them.
class ReplanAdmission final : public engine::Admission {
 public:
  explicit ReplanAdmission(double interval = 0) : interval_(interval) {}
  void Admit(engine::CycleContext& ctx, const engine::Profile& profile) const override;

  // A cycle this long after a round's time still holds the round
  // (policy::Rounds::kSlack).
  static constexpr double kRoundSlack = Rounds::kSlack;

  // The first round at or after `t` (t itself without rounds).
  core::Time NextRound(core::Time t) const;
  // It keeps each job's LevelRecord.
  std::span<const engine::RecordField* const> RecordFields() const override {
    return LevelRecord::kFields;
  }

 private:
  bool AtRound(core::Time now) const;
  // A cycle between rounds.
  void WaitForRound(engine::CycleContext& ctx) const;

  double interval_ = 0;
};

// Tiresias' `sjf`: the job asking for the fewest GPUs first (key = GPUs of
// the job at its initial size).
class GpuDemandOrder final : public engine::JobOrder {
 public:
  void Keys(const engine::ClusterState& state, std::span<const engine::JobIndex> jobs,
            core::Time now, std::span<double> keys) const override;
};

// Tiresias' `shortest` (SRTF with oracle durations): the least remaining
// running time first, at the job's current size (running) or initial size
// (pending): (totalSteps - stepsDone) / steps per second at that size from
// the throughput table (not counting the locality factor of a placement).
// For a trace job that is its duration minus the time it has run.
class RemainingTimeOrder final : public engine::JobOrder {
 public:
  void Keys(const engine::ClusterState& state, std::span<const engine::JobIndex> jobs,
            core::Time now, std::span<double> keys) const override;
  bool ReadsProgress() const override { return true; }
};

// Tiresias' discretised two-dimensional least-attained-service
// (`dlas-gpu`): a job's level (queue) is the number of `thresholds` its
// attained service (GPU-seconds run) has reached; lower levels go first. A
// running job's crossing of its next threshold is a level change the
// backend wakes up for, at the whole second at or after it (Tiresias'
// times are whole seconds). Needs the Replan admission, which records
// level changes.
//
// Within a level, by `queue_order`:
// - kList (the default, Tiresias' own): each level is a list, as the
//   simulator keeps one per queue: the jobs running when the cycle began,
//   then the pending ones, each by its place in the list
//   (LevelRecord::place, which the Replan admission keeps as the
//   simulator rearranges its lists after every pass), then those that
//   enter the level now (arrivals, then demoted or promoted jobs, each by
//   arrival).
// - kEntry: the jobs running when the cycle began, then the pending ones,
//   then those that entered the level at this instant, each group by the
//   time it entered the level.
// - kStrictEntry (Pollux's port of Tiresias): strictly by when each job
//   entered the level, running or not.
//
// With `starvation` N > 0 (Tiresias' solve_starvation, its `dlas-gpu-N`
// schedules; 0, the default, is `dlas-gpu`): a job pending above level 0
// that has run since it last entered level 0 (for e seconds: its
// GPU-seconds since then over the GPUs of its size) and has been pending
// for N x e seconds (rounded down to the second) since it first ran after
// that goes back to level 0, and its service counts afresh.
//
// With `count_launching` (Pollux's port of Tiresias), a job's service also
// counts the GPU-seconds it spent launching (JobState::launch_attained):
// from each placement on, as Pollux counts a job's time in its RUNNING
// status.
class LasOrder final : public LevelledOrder {
 public:
  enum class QueueOrder { kList, kEntry, kStrictEntry };
  LasOrder(std::vector<double> thresholds, double starvation,
           QueueOrder queue_order = QueueOrder::kList, bool count_launching = false)
      : thresholds_(std::move(thresholds)),
        starvation_(starvation),
        queue_order_(queue_order),
        count_launching_(count_launching) {}
  void Keys(const engine::ClusterState& state, std::span<const engine::JobIndex> jobs,
            core::Time now, std::span<double> keys) const override;
  bool ReadsProgress() const override { return true; }
  using LevelledOrder::Level;
  using LevelledOrder::NextLevelChange;
  int Level(const engine::JobState& js, const LevelRecord& rec, core::Time now) const override;
  core::Time NextLevelChange(const engine::JobState& js, const LevelRecord& rec,
                             core::Time now) const override;
  bool KeepsPlaces() const override { return queue_order_ == QueueOrder::kList; }

 private:
  // When job `j` will have starved long enough to go back to level 0
  // (kNever: it cannot, or starvation is off).
  core::Time StarvedAt(const engine::JobState& js, const LevelRecord& rec) const;
  // The service the thresholds are compared with: GPU-seconds attained
  // since the last promotion, and with count_launching_ those spent
  // launching (plus a margin for the sums' rounding).
  double Service(const engine::JobState& js, const LevelRecord& rec, core::Time now) const;
  static constexpr double kServiceSlack = 1e-6;

  std::vector<double> thresholds_;  // ascending GPU-seconds
  double starvation_ = 0;
  QueueOrder queue_order_ = QueueOrder::kList;
  bool count_launching_ = false;
};

}  // namespace dlsched::policy
