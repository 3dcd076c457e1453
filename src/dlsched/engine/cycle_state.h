#pragma once

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dlsched/engine/memos.h"
#include "dlsched/engine/plan.h"

namespace dlsched::engine {

// What the stages of one cycle decide, and compute for each other. Owned by
// the cycle (Engine::Cycle), never by a policy: policies keep nothing
// between calls, so one Engine may run cycles on several threads at once.
// Its job-level actions, in the order they were first decided, follow the
// session's binds and unbinds in the cycle's plan (EmitPlan).
class CycleState {
 public:
  // Appends a job-level action no later stage revisits (kStarve, kStop,
  // kBackoff: `task` names the pod).
  void Add(ActionKind kind, TaskRef task, std::string reason, int workers = 0,
           WaitStatus status = WaitStatus::kUnschedulable, JobIndex by = -1);
  // Appends a kSetRecord: job `j`'s `field` is now `value`.
  void SetRecord(JobIndex j, const RecordField& field, double value);

  // Admission's verdict on a pending job: it starts with `workers` workers,
  // or it waits. A later verdict on the same job (a sizer that starts a job
  // admission left waiting, or grows one admission started) replaces the
  // earlier one in place, so verdicts keep the order in which jobs were
  // first decided.
  void Start(JobIndex j, int workers, std::string reason);
  void Wait(JobIndex j, std::string reason, WaitStatus status = WaitStatus::kUnschedulable);
  // The verdict (kStart or kWait) on job `j` in this cycle, or nullptr.
  const Action* VerdictOf(JobIndex j) const;
  // Changes a start verdict's size and reason (a sizer growing a job that
  // starts in this cycle). `j` must have a kStart verdict.
  void ResizeStart(JobIndex j, int workers, std::string reason);

  // A running job's new size. A second resize of the same job in the cycle
  // merges into the first: the size is the latest, the reasons are joined,
  // restart and preempted stick once set.
  // `by`: the job it makes room for (-1: none); the first one given sticks.
  // `hold` (Action::hold) sticks once set too.
  void Resize(JobIndex j, int workers, std::string reason, bool restart, bool preempted = false,
              JobIndex by = -1, bool hold = false);
  // The kResize of job `j` in this cycle, or nullptr.
  const Action* ResizeOf(JobIndex j) const;

  // Asks for another cycle at `t` (the earliest asked for wins).
  void RevisitAt(core::Time t) { revisit_at_ = std::min(revisit_at_, t); }
  core::Time revisit_at() const { return revisit_at_; }

  // Every job-level action, in order.
  std::span<const Action> actions() const { return actions_; }
  std::vector<Action> TakeActions() { return std::move(actions_); }

  // The job order's keys of this cycle's pending jobs as admission ordered
  // them (aging included), for the stages after it: a preemptor weighing
  // the job it frees room for reads them instead of recomputing.
  void SetPendingKeys(std::span<const JobIndex> jobs, std::span<const double> keys);
  // The same from the cache's kept order when every entry is pending: read
  // only if asked, so `entries` must stay as they are for the cycle.
  void SetPendingOrder(std::span<const Memos::OrderEntry> entries);
  std::optional<double> PendingKey(JobIndex j) const;

  // Why a task without node constraints found no node (the per-node
  // count of PlaceTaskByScore), kept while no node is touched: every such
  // task of the same role asking the same resources fails the same way,
  // so a queue of them is counted once. A few are kept, the oldest
  // making way.
  static constexpr size_t kKeptFailures = 16;
  struct FailureMemo {
    uint64_t generation = 0;  // ClusterState::TouchedGeneration()
    size_t touched = 0;       // TouchedNodes().size()
    core::Role role = core::Role::kWorker;
    core::Resources request;  // ClusterState::Request of the task
    std::string text;
  };
  std::vector<FailureMemo>& failures() { return failures_; }
  size_t NextFailureSlot() { return next_failure_++ % kKeptFailures; }

 private:
  // JobIndex -> position in actions_: open addressing with linear probing
  // in one flat array (a cycle records a verdict for every pending job, so
  // this is on the hot path; a node-based map allocated per insert).
  class JobSlots {
   public:
    // The slot of `j`, inserting `fresh_value` if absent; `inserted` says
    // which.
    size_t& Find(JobIndex j, size_t fresh_value, bool* inserted);
    const size_t* Get(JobIndex j) const;

   private:
    static size_t Home(JobIndex j, size_t mask);  // where j's probe starts
    void Grow();
    std::vector<std::pair<JobIndex, size_t>> table_;  // job -1: empty
    size_t used_ = 0;
  };
  size_t Put(JobSlots& index, Action action);

  std::vector<Action> actions_;
  std::vector<FailureMemo> failures_;
  size_t next_failure_ = 0;
  core::Time revisit_at_ = core::kNever;
  JobSlots verdict_of_;
  JobSlots resize_of_;
  // Pending jobs and their keys as admission gave them; sorted by job on
  // the first PendingKey call (only preemptors ask).
  std::vector<JobIndex> pending_jobs_;
  std::vector<double> pending_key_values_;
  std::span<const Memos::OrderEntry> pending_entries_;
  mutable std::vector<std::pair<JobIndex, double>> pending_keys_;
  mutable bool pending_paired_ = true;
};

}  // namespace dlsched::engine
