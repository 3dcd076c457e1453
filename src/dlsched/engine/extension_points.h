#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/engine/cycle_context.h"

namespace dlsched::engine {

// The extension points (docs/principles.md). Implementations live in policy/, are
// `final`, and are built from a profile by the policy registry. None of them
// may read a clock, do I/O or keep state between cycles: everything they
// need is in the ClusterState and the CycleContext.

// Which pending job goes first.
class JobOrder {
 public:
  virtual ~JobOrder() = default;
  // Fills keys[i] for jobs[i]. Jobs are served in ascending (key, submit
  // time, job index) order, so the order is a strict weak order and
  // deterministic whatever the keys. A key may depend on the whole set
  // (e.g. min-max normalisation) but only on the arguments.
  virtual void Keys(const ClusterState& state, std::span<const JobIndex> jobs, core::Time now,
                    std::span<double> keys) const = 0;
  // True when pending job `j` has waited past the order's starvation limit
  // (the backend then moves it Waiting -> Starving). Default: never.
  virtual bool IsStarving(const ClusterState& state, JobIndex j, core::Time now) const {
    (void)state;
    (void)j;
    (void)now;
    return false;
  }
  // True when a pending job's key depends on its spec alone (not on the
  // time, its progress or the other jobs): the order of the jobs that stay
  // pending cannot change, so the cache keeps them in order from one cycle
  // to the next (engine::OrderPending). Such an order never starves a job
  // (IsStarving false): admission passes over the jobs of its kept order
  // that stand behind a blocked one without asking. Default: no.
  virtual bool StaticKeys() const { return false; }
  // True when the keys read JobState::steps_done or attained: the backend
  // then brings every running job's progress up to date before each cycle.
  virtual bool ReadsProgress() const { return false; }
  // The fields of the job record this order keeps (engine::RecordField):
  // what it remembers about each job from one cycle to the next, e.g.
  // Tiresias' queue levels. Default: none.
  virtual std::span<const RecordField* const> RecordFields() const { return {}; }
};

// One queue's next pending job, as a QueueOrder sees it.
struct QueueHead {
  int queue = -1;  // in ClusterState::Quotas(); -1 for the jobs of no declared queue
  JobIndex job = -1;
  core::Resources need;  // what the gang it would start with asks for
  size_t position = 0;   // its place in the profile's JobOrder (0 first)
};

// A queue head's sort key: heads go in ascending (key, position) order,
// the key compared element by element.
using QueueKey = std::array<double, 4>;

// Which queue's job goes next when the jobs of several queues wait (the
// cluster's queues, ClusterState::Quotas()): the profile's JobOrder still
// orders the jobs within each queue, and the queue order picks among the
// queues' heads, again after every visit. Without declared queues it is
// not asked.
class QueueOrder {
 public:
  virtual ~QueueOrder() = default;
  // False for the order that keeps the JobOrder across queues as well
  // (None): admission then walks the jobs in JobOrder alone.
  virtual bool Interleaves() const { return true; }
  // The key of `head`. It may read the head's job and its queue's spec and
  // usage (QuotaBook), the cluster's capacity and this cycle's caps, never
  // another queue's usage: admission keeps each head's key until its
  // queue's usage changes (QuotaBook::Version).
  virtual QueueKey Key(const ClusterState& state, const QueueHead& head) const = 0;
  // Per queue, a cap on its usage for this cycle beyond its quota
  // (QuotaBook::SetCycleCaps): Volcano's deserved share. It may read the
  // queues' specs and usage, the nodes and the pending jobs: called before
  // a cycle's admission when one of those changed since the last call
  // (ClusterState::QueueCapsCurrent). Default: none.
  virtual std::vector<core::ResourceLimits> Caps(const ClusterState& state) const {
    (void)state;
    return {};
  }
};

// A hard rule about which nodes may take a task, checked before any
// scorer, as kube-scheduler's Filter plugins (NodeAffinity,
// TaintToleration). A filter looks only at the task's node constraints
// (core::NodeConstraints) and the node's labels and taints, never at what
// is placed: its answer does not change as the cluster fills, so a task
// every node's filters reject can never be placed, and tasks with the same
// constraints get the same answers. The engine checks the node's schedulable flag first and the
// free resources after every filter.
class NodeFilter {
 public:
  virtual ~NodeFilter() = default;
  virtual std::string_view Name() const = 0;
  // Empty when node `n` may take task `t`; otherwise why not, short and
  // the same for every node failing the same way, since it is counted:
  // "untolerated taint dedicated=infra:NoSchedule".
  virtual std::string Filter(const ClusterState& state, TaskRef t, NodeIndex n) const = 0;
  // False when Filter would pass every node for task `t` (the task has no
  // rules this filter checks, or no node has what it looks for): the
  // engine then skips the filter for the task's whole node scan.
  virtual bool AppliesTo(const ClusterState& state, TaskRef t) const {
    (void)state;
    (void)t;
    return true;
  }
};

// Scores a feasible node for one task, 0..100 (higher is better). Called
// before the task is placed; `n` has room for it.
class NodeScorer {
 public:
  virtual ~NodeScorer() = default;
  virtual std::string_view Name() const = 0;
  virtual int64_t Score(const ClusterState& state, TaskRef t, NodeIndex n) const = 0;
  // True when Score(t, n) depends only on node `n` (its allocatable and
  // requested resources, labels, taints) and on t's role: the engine may
  // then keep a node's score until a task is placed on or taken off it.
  virtual bool NodeLocal() const { return false; }
};

// Job-level placement of a gang.
class Packer {
 public:
  virtual ~Packer() = default;
  // Places every PS and Chief replica and `workers` workers of job `j` (its
  // unplaced slots) on nodes that pass every filter and have room
  // (engine::Fits). All or nothing: on failure the session is exactly as
  // before and `reason` says why. Whether the gang could ever be placed is
  // engine::NeverFits's question, not the packer's.
  virtual bool PlaceGang(CycleContext& ctx, JobIndex j, int workers, std::string* reason) const = 0;
};

// Frees room for a job that does not fit.
class Preemptor {
 public:
  virtual ~Preemptor() = default;
  // Tries to make job `j`'s gang of `workers` workers placeable by evicting
  // or shrinking other jobs, then places it with `packer`. On success the
  // session holds the evictions and the placement, the victims' Stop/Resize
  // actions are in the plan, and it returns true. On failure the session and
  // the plan are unchanged and `reason` may say why.
  virtual bool Preempt(CycleContext& ctx, JobIndex j, int workers, const Packer& packer,
                       std::string* reason) const = 0;
  // False for a preemptor that never evicts anything (a job's failure to
  // fit then depends only on free room, and admission may remember it).
  virtual bool MayEvict() const { return true; }
};

// Sizes jobs: how many workers a job starts with, and grow/shrink of running
// jobs after admission. Every size stays within [minReplicas, maxReplicas].
class Sizer {
 public:
  virtual ~Sizer() = default;
  virtual int StartWorkers(const ClusterState& state, JobIndex j) const = 0;
  // True when Resize reads admission's verdicts (CycleState::VerdictOf):
  // then admission gives every pending job a verdict in every cycle.
  // Otherwise a job whose wait verdict has not changed keeps its standing
  // one and gets none (JobState::StandingWait).
  virtual bool ReadsVerdicts() const { return false; }
  // True when Resize reads the progress of running jobs (JobState::
  // steps_done): a backend then brings it up to date before each cycle,
  // as for JobOrder::ReadsProgress.
  virtual bool ReadsProgress() const { return false; }
  // Called once per cycle after admission. Default: no resizing.
  virtual void Resize(CycleContext& ctx, const Packer& packer) const {
    (void)ctx;
    (void)packer;
  }
};

class Profile;

// Drives one cycle's admission of pending work: gang (whole jobs) or per-pod.
class Admission {
 public:
  virtual ~Admission() = default;
  virtual void Admit(CycleContext& ctx, const Profile& profile) const = 0;
  // True when admission works on the backend's per-pod queue
  // (ClusterState::Pods), which the backend then keeps.
  virtual bool UsesPodQueue() const { return false; }
  // The fields of the job record this admission keeps, as for
  // JobOrder::RecordFields. Default: none.
  virtual std::span<const RecordField* const> RecordFields() const { return {}; }
};

}  // namespace dlsched::engine
