#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/engine/cluster_state.h"

namespace dlsched::engine {

// What the engine decided in one cycle, in the order it must be applied.
// Binds and unbinds replay the Session steps exactly; the backend applies
// them to its ClusterState and then acts on the job-level actions.
enum class ActionKind {
  kBind,       // put task on node
  kUnbind,     // take task off its node (scale-in or preemption of that task)
  kStart,      // all of the job's gang is bound: launch it
  kResize,     // a running job now has `workers` workers (after binds/unbinds);
               // with `restart` it checkpoints, stops and relaunches to get there
  kStop,       // the job was preempted as a whole (all its tasks unbound)
  kWait,       // the job stays pending; `reason` says why
  kBackoff,    // per-pod: the pod could not be placed; back it off
  kStarve,     // the job has waited past its order's starvation limit
  kSetRecord,  // the job's `field` of its record (RecordField) is now `value`
};

// Why something could not be scheduled, as kube-scheduler's framework
// status codes say it: not now (it may fit once others finish or shrink),
// never (no node could ever take it on this cluster: too large, or every
// node excluded by its selector, affinity or an untolerated taint), or an
// internal error of the scheduler.
enum class WaitStatus : uint8_t {
  kUnschedulable,              // kube's Unschedulable
  kUnschedulableUnresolvable,  // kube's UnschedulableAndUnresolvable
  kError,                      // kube's Error
};
std::string_view WaitStatusName(WaitStatus s);  // "Unschedulable", ...

struct Action {
  ActionKind kind;
  TaskRef task;  // job is task.job for job-level actions
  NodeIndex node = kNoNode;
  int workers = 0;
  std::string reason;
  bool restart = false;    // kResize: through Checkpointing -> ... -> Launching
  bool preempted = false;  // kResize: the job was shrunk to make room for another
  // kResize with `restart`: the workers it gives up (this plan's kUnbinds of
  // the job) keep their room until its checkpoint is done (releasing
  // tasks); nothing in the plan may be bound there. Without it they are
  // let go at once.
  bool hold = false;
  // kResize, kStop: the job whose start it made room for, or -1.
  JobIndex by = -1;
  // kSetRecord: the field of the job's record and its new value.
  const RecordField* field = nullptr;
  double value = 0;
  WaitStatus status = WaitStatus::kUnschedulable;  // kWait, kBackoff
  // kBind, kUnbind of a task asking for a GPU share: the device on `node`
  // (ClusterState::DeviceOf); -1 otherwise.
  int device = -1;
};

struct Plan {
  std::vector<Action> actions;
  // The engine wants another cycle at this time even if nothing else
  // happens by then (a job's level in its order changes), or kNever.
  core::Time revisit_at = core::kNever;
  // ClusterState::RoomEpoch() when the cycle began: a pod it backed off is
  // parked until the epoch moves on (room freed during or after the cycle).
  uint64_t room_epoch = 0;
  // True when the plan changes any placement or starts/stops a job
  // (kWait, kBackoff, kStarve and kSetRecord alone change no placement).
  bool ChangesState() const;
};

// Why each decision about a job was taken, for `dlsched explain`.
struct ScoredNode {
  NodeIndex node;
  std::vector<int64_t> scores;  // one per scorer, 0..100
  double total;                 // weighted sum
};
struct TaskTrace {
  TaskRef task;
  std::vector<ScoredNode> candidates;  // feasible nodes
  NodeIndex chosen = kNoNode;
  std::string note;  // e.g. why no node was feasible
  // When no node was feasible: each node and why not (the first resource
  // short, with the amounts, or the filter or state that excluded it).
  std::vector<std::pair<NodeIndex, std::string>> rejected;
};
struct JobTrace {
  core::Time time = 0;
  int64_t cycle = 0;
  int position = -1;  // position in the cycle's job order (0 = first)
  std::vector<TaskTrace> tasks;
  std::string outcome;   // "started with 2 workers", "waiting: ..."
  bool waiting = false;  // the job waits after this cycle; then `status` says how
  WaitStatus status = WaitStatus::kUnschedulable;
};

}  // namespace dlsched::engine
