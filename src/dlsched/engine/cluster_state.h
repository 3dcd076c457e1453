#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "dlsched/core/job.h"
#include "dlsched/core/lifecycle.h"
#include "dlsched/core/node.h"
#include "dlsched/core/resources.h"
#include "dlsched/core/time.h"
#include "dlsched/engine/quota.h"
#include "dlsched/engine/record.h"

namespace dlsched::engine {

using NodeIndex = int32_t;
using JobIndex = int32_t;
inline constexpr NodeIndex kNoNode = -1;

// One task of a job: the index-th replica of a role.
struct TaskRef {
  JobIndex job = -1;
  core::Role role = core::Role::kWorker;
  int32_t index = 0;
  friend bool operator==(const TaskRef&, const TaskRef&) = default;
};

// A phase a pending job may be in: Waiting, Starving, Standby (the
// phases of the pending order, engine::Memos; a Standby job holding its
// whole gang is in one without being pending).
inline bool InPendingPhase(core::JobPhase p) {
  return p == core::JobPhase::kWaiting || p == core::JobPhase::kStarving ||
         p == core::JobPhase::kStandby;
}

// A job as the engine sees it.
struct JobState {
  const core::JobSpec* spec = nullptr;
  // The spec's PS and Chief replicas, kept beside the phase: SlotOf runs
  // for every queued pod of every visited job.
  int num_ps = 0;
  int num_chief = 0;
  core::JobPhase phase = core::JobPhase::kSubmitted;
  core::Time phase_since = 0;  // when it entered `phase`
  core::Time last_launch = 0;  // duration of its last Launching stay
  double steps_done = 0;       // training progress (for LAS/SRTF-like orders)
  // GPU-seconds the job has run (Running or RunningProtected, times the
  // GPUs it held), kept by the backend like steps_done.
  double attained = 0;
  // GPU-seconds the job has spent launching (each finished Launching stay,
  // times the GPUs it held), kept by the life cycle: an order that counts
  // service from the moment a job is placed (Pollux's Tiresias) adds it to
  // `attained`.
  double launch_attained = 0;
  // What the profile's policy keeps about the job (engine::RecordField):
  // one value per field of ClusterState::RecordFields, in that order.
  std::vector<double> record;
  // Node of each task slot, kNoNode when unplaced. Slots are laid out PS
  // replicas, then Chief replicas, then Worker slots 0..maxReplicas-1.
  std::vector<NodeIndex> task_node;
  // The GPU device of each placed slot asking for a share of one
  // (core::kGpuMilli), -1 otherwise; empty until the job places a share.
  std::vector<int16_t> task_device;
  // Per replica of each role, what kube-scheduler's scoring counts
  // (RoleSpec::ScoringRequest), computed once.
  core::Resources scoring_request[core::kNumRoles];
  // Its queue in ClusterState::Quotas(), -1 when it names no declared queue
  // (it then runs without quota).
  int32_t queue = -1;
  // The workers below its maximum counted in its queue's ElasticRest.
  int32_t rest_counted = 0;
  int placed_workers = 0;  // placed Worker slots
  int placed_tasks = 0;    // placed slots of any role
  int target_workers = 0;  // workers the job runs with once started
  // When its size was last decided (a kStart or a kResize applied by
  // JobLifecycle), kNever before. A sizer leaves a job sized at this
  // instant alone for the rest of it (SizedAt): a decision is not undone at
  // the instant it was taken, so the cycles of one instant end (each one
  // that changes anything sizes a job that the next ones keep).
  core::Time sized_at = core::kNever;
  bool SizedAt(core::Time now) const { return sized_at == now; }

  int NumPs() const { return num_ps; }
  int NumChief() const { return num_chief; }
  int SlotOf(core::Role role, int index) const {
    switch (role) {
      case core::Role::kPS:
        return index;
      case core::Role::kChief:
        return NumPs() + index;
      case core::Role::kWorker:
        return NumPs() + NumChief() + index;
    }
    return -1;
  }
  TaskRef TaskAt(JobIndex j, int slot) const;
  NodeIndex NodeOf(core::Role role, int index) const { return task_node[SlotOf(role, index)]; }
  // Waiting to be placed: Waiting, Starving, or in Standby without its
  // whole gang (preempted, or restarting after a lost task).
  bool IsPending() const {
    return phase == core::JobPhase::kWaiting || phase == core::JobPhase::kStarving ||
           (phase == core::JobPhase::kStandby &&
            (placed_tasks == 0 || placed_tasks < spec->NumTasks(target_workers)));
  }
  bool IsActive() const { return !core::IsFinal(phase) && placed_tasks > 0 && !IsPending(); }
  bool removed = false;  // ClusterState::RemoveJob: gone from every index
  // Bumped by the backend whenever it gives the job a reason other than a
  // wait verdict (started, resized, stopped, restarted, failed): a wait
  // verdict remembered before (engine::Memos) no longer stands.
  uint32_t reason_seq = 0;
};

// The cluster and its jobs: what a backend keeps up to date and the engine
// reads, a cache in the sense of kube-scheduler's and Volcano's. Nodes are a
// structure of arrays indexed by NodeIndex; the number of free GPUs of every
// node is indexed so "who can host g GPUs" is not a scan.
//
// Identities are stable: a NodeIndex or JobIndex names the same node or job
// for the life of the state (a removed one keeps its index, which is never
// reused; names find them, FindNode / FindJob). Besides the tasks of its
// jobs, a node's requested resources count
//   - foreign tasks: pods dlsched does not own (AddForeignTask);
//   - releasing tasks: tasks taken off their job (ReleaseTask) whose pods
//     are not gone yet; they hold their resources until TaskGone, as
//     Volcano's Releasing tasks.
// A task placed by a backend before the placement is confirmed is assumed
// (AssumeTask), then confirmed (ConfirmTask) or forgotten if the bind fails
// (ForgetTask), as kube-scheduler's AssumePod / ForgetPod.
class ClusterState {
 public:
  explicit ClusterState(const core::ClusterSpec& cluster);

  // Nodes. Indices run over every node ever added, removed ones included
  // (they are unschedulable, hold nothing and count in no total).
  int NumNodes() const { return static_cast<int>(names_.size()); }
  // Nodes present (not removed).
  int NumPresentNodes() const { return num_present_; }
  int NumSchedulable() const { return num_schedulable_; }
  // Present nodes with at least one taint.
  int NumTaintedNodes() const { return num_tainted_; }
  const std::string& NodeName(NodeIndex n) const { return names_[n]; }
  const core::NodeSpec& NodeSpecOf(NodeIndex n) const { return specs_[n]; }
  // Node n's GPU type (its core::kGpuTypeLabel), empty when it has none.
  std::string_view GpuType(NodeIndex n) const { return gpu_type_[n]; }
  // Job j's training speed where it is placed (steps/s): the throughput
  // table's rate for its placement if it lists one
  // (ThroughputProfile::placements), else the table at its placed workers,
  // times 1 - localitySensitivity when its tasks span nodes. A job with a
  // table per GPU type, a worker of which is on a node of a type listed,
  // runs at the slowest rate of its workers' types instead
  // (ThroughputProfile::RateOn: a type not listed counts at the table),
  // times the same locality factor. Each of these rates is times
  // 1 - switchSensitivity (ThroughputProfile::switch_sensitivity) when two
  // of its nodes are under different switches (core::kSwitchLabel; a node
  // without one crosses none). Both backends estimate progress with it.
  double PlacedRate(JobIndex j) const;
  // Node n's switch (its core::kSwitchLabel), numbered in order of first
  // sight; -1 when it has none.
  int SwitchOf(NodeIndex n) const { return switch_[n]; }
  // How many nodes, and switches (SwitchOf >= 0), job j's placed tasks are on.
  struct Span {
    int nodes = 0;
    int switches = 0;
  };
  Span SpanOf(JobIndex j) const;
  bool Present(NodeIndex n) const { return present_[n] != 0; }
  bool Schedulable(NodeIndex n) const { return schedulable_[n] != 0; }
  void SetSchedulable(NodeIndex n, bool on);
  // The present node named `name`, or kNoNode.
  NodeIndex FindNode(std::string_view name) const;
  // Adds a node; its name must not be present. Returns its new index.
  NodeIndex AddNode(const core::NodeSpec& spec);
  // Replaces a present node's allocatable, labels, taints and schedulable
  // flag (the name stays). Tasks already there stay, even if the node is
  // now over-committed or they no longer pass a filter: evicting them is
  // the backend's decision (NoExecute taints: the life cycle's).
  void UpdateNode(NodeIndex n, const core::NodeSpec& spec);
  // Removes a node that holds no task of any job (the caller takes them
  // off first: TasksOn). Its foreign and releasing tasks go with it.
  void RemoveNode(NodeIndex n);
  // The job tasks on node `n` (a scan of the active jobs: for rare events).
  std::vector<TaskRef> TasksOn(NodeIndex n) const;
  const core::Resources& Allocatable(NodeIndex n) const { return allocatable_[n]; }
  const core::Resources& Requested(NodeIndex n) const { return requested_[n]; }
  // Requested resources as kube-scheduler's scoring counts them (each
  // task's ScoringRequest); used by the resource scorers.
  const core::Resources& NonZeroRequested(NodeIndex n) const { return nonzero_requested_[n]; }
  // What node n has free. Its shares (core::kGpuMilli) are the largest
  // share one task can get there: ShareRoom(n).
  core::Resources Free(NodeIndex n) const {
    core::Resources free = allocatable_[n] - requested_[n];
    free[core::kGpuMilli] = ShareRoom(n);
    return free;
  }
  // Free(n)[id], without building Free(n).
  int64_t FreeOf(NodeIndex n, core::ResourceId id) const {
    if (id == core::kGpuMilli) return ShareRoom(n);
    return allocatable_[n][id] - requested_[n][id];
  }
  // req.FitsIn(Free(n)), without building Free(n).
  bool FreeHolds(const core::Resources& req, NodeIndex n) const {
    if (req.v[core::kGpuMilli] > 0) return ShareFits(req, n);
    return req.FitsInDifference(allocatable_[n], requested_[n]);
  }

  // Shared GPUs. A node whose allocatable lists core::kGpuMilli (any
  // amount > 0) lets tasks share its GPU devices: a task asking for m
  // thousandths of a GPU (0 < m < 1000, core::GpuShareProblem) runs on one
  // device whose shares stay within 1000. A device holding any share is
  // taken from the node's whole GPUs (Requested(n)[kGpu] counts it, and
  // NodesWithFreeGpu sees only fully free devices); the last share gone
  // gives it back. Requested(n)[kGpuMilli] is the shares' sum.
  // The largest share one more task can get on node n: 1000 with a fully
  // free device, else the most any device holding shares has left; 0 on a
  // node that does not take shares.
  int64_t ShareRoom(NodeIndex n) const;
  // How many requests of `each` of resource `id` node n has room for, one
  // beside the other: FreeOf(n, id) / each (below 0 on an over-committed
  // node), but for shares the sum over its devices (each >= 1).
  int64_t FreeCount(NodeIndex n, core::ResourceId id, int64_t each) const;
  // Thousandths held on each device of node n (index = device; a device
  // with none holds no share, or a whole-GPU task, or nothing). Empty when
  // the node never held a share.
  std::span<const int16_t> SharesOn(NodeIndex n) const { return share_used_[n]; }
  // The device a placed task's share is on, or -1 (no share, or unplaced).
  int DeviceOf(TaskRef t) const {
    const JobState& js = jobs_[t.job];
    if (js.task_device.empty()) return -1;
    return js.task_device[js.SlotOf(t.role, t.index)];
  }
  // The device a share of `milli` would take on node n: the one with the
  // least room that takes it (ties: the lowest index), a device already
  // holding shares before a fully free one; -1 when none can.
  int TightestDevice(NodeIndex n, int64_t milli) const;

  // The tasks of every job ever added, counted by shape (CPU millicores,
  // share thousandths, whole GPUs; each PS and Chief replica and a job's
  // minimum workers): the target workload a fragmentation-aware placement
  // (the fgd scorer) measures against. Counted as asked, from the jobs
  // added since the last call.
  struct TaskShape {
    int64_t cpu = 0;
    int64_t gpu_milli = 0;  // a share, or 1000 per whole GPU
    int64_t gpus = 0;       // devices: 1 for a share, else whole GPUs
    friend bool operator==(const TaskShape&, const TaskShape&) = default;
  };
  const std::vector<std::pair<TaskShape, int64_t>>& TaskCensus() const;
  int NumTasksOn(NodeIndex n) const { return tasks_on_[n]; }
  const core::Resources& Capacity() const { return capacity_; }
  // Sum of requests over all nodes.
  const core::Resources& TotalRequested() const { return total_requested_; }
  core::Resources TotalFree() const { return capacity_ - total_requested_; }
  // req.FitsIn(TotalFree()), without building TotalFree().
  bool TotalFreeHolds(const core::Resources& req) const {
    return req.FitsInDifference(capacity_, total_requested_);
  }
  // What job `j`'s placed tasks request, summed.
  core::Resources Held(JobIndex j) const;
  int MaxFreeGpu() const;
  // Nodes with exactly `g` free GPUs (unordered). g in [0, MaxGpuPerNode()].
  const std::vector<NodeIndex>& NodesWithFreeGpu(int g) const { return gpu_buckets_[g]; }
  int MaxGpuPerNode() const { return static_cast<int>(gpu_buckets_.size()) - 1; }
  // Node `n`'s free GPUs (whole units), as the free-GPU index counts them.
  int FreeGpuOf(NodeIndex n) const { return FreeGpu(n); }
  // Every node a task or hold was placed on or taken off, in order,
  // repeats included, since the journal's generation began: what was true
  // of the other nodes' free resources at TouchedNodes().size() still is.
  // A change to a node itself (added, removed, resized, relabelled,
  // (un)schedulable) starts a new generation, as ForgetTouched does (an
  // engine cycle begins with it once the journal is long: it keeps the
  // journal a few passes over the nodes long at most).
  const std::vector<NodeIndex>& TouchedNodes() const { return touched_; }
  uint64_t TouchedGeneration() const { return touched_generation_; }
  void ForgetTouched() {
    touched_.clear();
    ++touched_generation_;
  }

  // Jobs. Indices are stable for the life of the state; `spec` must
  // outlive the state.
  JobIndex AddJob(const core::JobSpec* spec, core::Time now);
  // Room for `n` more jobs, before adding many.
  void ReserveJobs(size_t n);
  int NumJobs() const { return static_cast<int>(jobs_.size()); }
  const JobState& Job(JobIndex j) const { return jobs_[j]; }
  JobState& MutableJob(JobIndex j) { return jobs_[j]; }
  // The fields every job's record keeps (the profile's, Profile::
  // RecordFields), set before the first job is added.
  void UseRecordFields(std::vector<const RecordField*> fields);
  std::span<const RecordField* const> RecordFields() const { return record_fields_; }
  // Where `field` is in every job's record, or -1 when the profile does
  // not keep it.
  int RecordSlot(const RecordField& field) const {
    for (size_t i = 0; i < record_fields_.size(); ++i) {
      if (record_fields_[i] == &field) return static_cast<int>(i);
    }
    return -1;
  }
  // Job `j`'s value of `field`, or the field's initial value when the
  // profile does not keep it.
  double Record(JobIndex j, const RecordField& field) const {
    const int slot = RecordSlot(field);
    return slot >= 0 ? jobs_[j].record[slot] : field.InitialFor(jobs_[j].spec->submit_time);
  }
  // Sets it; false (and nothing set) when the profile does not keep it.
  bool SetRecord(JobIndex j, const RecordField& field, double value);
  // The job named `name` not removed, or -1.
  JobIndex FindJob(std::string_view name) const;
  // Forgets a job that holds no task and has no pending pod: it leaves
  // every index (JobsInPhase, PendingJobs, FindJob); Job(j) stays readable
  // with `removed` set.
  void RemoveJob(JobIndex j);
  // Moves job `j` to phase `p` (the backend checks the transition), keeping
  // the per-phase job index up to date.
  void SetPhase(JobIndex j, core::JobPhase p, core::Time now);
  // Jobs currently in phase `p`, in no particular order; O(1) to maintain,
  // so a cycle visits the jobs that matter, not every job ever submitted.
  const std::vector<JobIndex>& JobsInPhase(core::JobPhase p) const {
    return by_phase_[static_cast<int>(p)];
  }
  // Pending jobs (see JobState::IsPending), ascending by index.
  void PendingJobs(std::vector<JobIndex>* out) const;
  // The jobs moved into a phase a pending job may be in (Waiting,
  // Starving, Standby) since the last engine cycle (EnteredPending), and
  // those that left such a phase or were removed or given another reason
  // (BumpReason) since (LeftPending): the events that keep the pending
  // order of engine::Memos. Each engine cycle ends by forgetting both.
  const std::vector<JobIndex>& EnteredPending() const { return entered_pending_; }
  const std::vector<JobIndex>& LeftPending() const { return left_pending_; }
  void ForgetEnteredPending() {
    entered_pending_.clear();
    left_pending_.clear();
  }
  // The backend gave job `j` a reason other than a wait verdict: a wait
  // verdict it stood on no longer stands (JobState::reason_seq).
  // A pending job leaves the kept order and comes back unmarked.
  void BumpReason(JobIndex j) {
    ++jobs_[j].reason_seq;
    if (InPendingPhase(jobs_[j].phase)) {
      left_pending_.push_back(j);
      entered_pending_.push_back(j);
    }
  }

  // The queues' quotas and usage (the cluster's `queues`); every task
  // placed counts against its job's queue.
  const QuotaBook& Quotas() const { return quotas_; }
  // The queues and cohorts change (a live cluster's Queue objects): every
  // job is mapped to its queue by name again (-1 when none is declared
  // now) and its placed tasks count against it, whether or not the new
  // quota has room for them: a queue shrunk below its usage holds what it
  // holds and admits nothing more until it is back within its quota. Every
  // memo and cap of the old queues is dropped and pending jobs are
  // reconsidered.
  void SetQueues(std::span<const core::QueueSpec> queues,
                 std::span<const core::CohortSpec> cohorts);
  // Why job `j`'s queue may not take `more` now, or nullopt (always for a
  // job without a queue).
  std::optional<std::string> QuotaRefusal(JobIndex j, const core::Resources& more) const {
    const int q = jobs_[j].queue;
    if (q < 0 || quotas_.Admits(q, more, Capped(j))) return std::nullopt;
    return quotas_.Refusal(q, more, Capped(j));
  }
  // What queue `q`'s running jobs below their maximum would take to reach
  // it (a worker's request times the workers missing), kept as tasks are
  // placed and removed and jobs start and stop running: Volcano counts
  // these pods as the queue's demand.
  const core::Resources& ElasticRest(int q) const { return elastic_rest_[q]; }
  // Job `j`'s worker range changed in place (a live cluster's edit): its
  // ElasticRest count follows, and the queue caps are worked out again.
  void RangeChanged(JobIndex j) {
    RecountRest(j);
    caps_owner_ = 0;
  }
  // QuotaBook::SetCycleCaps, by the engine `owner` (Engine's id).
  bool SetQueueCaps(std::vector<core::ResourceLimits> caps, uint64_t owner) {
    caps_owner_ = owner;
    caps_version_ = quotas_.TotalVersion();
    caps_node_epoch_ = node_epoch_;
    return quotas_.SetCycleCaps(std::move(caps));
  }
  // True when the caps `owner` set still stand: since then no queue's
  // usage, no node and no pending job changed (EnteredPending and
  // LeftPending empty), so a queue order's Caps would give them again.
  bool QueueCapsCurrent(uint64_t owner) const {
    return caps_owner_ == owner && caps_version_ == quotas_.TotalVersion() &&
           caps_node_epoch_ == node_epoch_ && entered_pending_.empty() && left_pending_.empty();
  }
  bool QuotaAdmits(JobIndex j, const core::Resources& more) const {
    const int q = jobs_[j].queue;
    return q < 0 || quotas_.Admits(q, more, Capped(j));
  }
  // Per-GPU-type quotas (quota lines "R@T", core::SplitFlavor): whether
  // any queue or cohort has one. Without, the three below are trivial.
  bool HasFlavors() const { return !flavor_pairs_.empty(); }
  // What a task requesting `req` on node `n` takes from its queue: `req`,
  // and for each resource R that a per-type line keys, req[R] again under
  // R@T for n's GPU type T. (A reference to a per-thread copy when it adds
  // anything: valid until the next call on the thread.)
  const core::Resources& Charged(const core::Resources& req, NodeIndex n) const;
  // Whether job `j`'s queue lets a task requesting `req` run on node `n`
  // by its per-type lines: a queue with an R@T line for some T takes R
  // only on nodes of a type T it has a line for, within that line (and
  // within R's line, QuotaAdmits, when it has one). Always true for a job
  // without a queue.
  bool FlavorAdmits(JobIndex j, const core::Resources& req, NodeIndex n) const {
    return !HasFlavors() || !FlavorRefusal(j, req, n);
  }
  // Why not, worded ("queue team-a has no quota of nvidia.com/gpu for GPU
  // type k80", or QuotaBook::Refusal's words), or nullopt.
  std::optional<std::string> FlavorRefusal(JobIndex j, const core::Resources& req,
                                           NodeIndex n) const;
  // The first half of FlavorRefusal: whether the queue may take `req` on
  // a node of n's type at all, whatever its lines hold now.
  std::optional<std::string> FlavorTypeRefusal(JobIndex j, const core::Resources& req,
                                               NodeIndex n) const;
  // Whether this cycle's queue caps bind job `j`: they do, except for a
  // pending job whose queue holds nothing but its own tasks (a gang larger
  // than its queue's share would otherwise wait for ever, and with it
  // every queue whose share it leaves unused).
  bool Capped(JobIndex j) const {
    const JobState& js = jobs_[j];
    return !js.IsPending() || quotas_.Tasks(js.queue) != js.placed_tasks;
  }

  // Resources a task requests.
  const core::Resources& Request(TaskRef t) const {
    return jobs_[t.job].spec->role(t.role).resources;
  }
  // What kube-scheduler's scoring counts for the task (defaults for cpu and
  // memory its containers leave unset).
  const core::Resources& ScoringRequest(TaskRef t) const {
    return jobs_[t.job].scoring_request[static_cast<int>(t.role)];
  }

  // Low-level placement. Callers go through Session, which logs undo steps.
  // A task asking for a GPU share goes on `device` (which must take it) or,
  // with -1, on TightestDevice.
  void PlaceTask(TaskRef t, NodeIndex n, int device = -1);
  void RemoveTask(TaskRef t);
  // RemoveTask for a Session undoing its own tentative placement: the room
  // it gives back was free when the session began, so it does not count as
  // freed room (RoomEpoch stays).
  void UnplaceTentative(TaskRef t);

  // Counts the changes that may let a gang fit where it failed before: a
  // task removed (other than UnplaceTentative), a releasing or foreign
  // task gone, a node added, changed, removed or made (un)schedulable. Any
  // other change only takes room, and a gang that failed to fit keeps
  // failing with less room, so a failure recorded at an epoch (engine::Memos)
  // holds while the epoch stays. A backend that runs a cycle and does not
  // apply its plan's binds must call NoteRoomChanged (the cycle's end
  // rolls its placements back without counting them).
  uint64_t RoomEpoch() const { return room_epoch_; }
  void NoteRoomChanged() { ++room_epoch_; }
  // Counts the changes to the nodes themselves: added, removed, labels,
  // taints, allocatable or schedulable changed. What no placement can
  // change (whether a gang could ever fit) holds while it stays.
  uint64_t NodeEpoch() const { return node_epoch_; }
  // Counts the pods held on nodes outside any job's placement: a foreign
  // pod or a releasing task added or gone.
  uint64_t HoldEpoch() const { return hold_epoch_; }
  // Process-unique: which state a memo store's memos are for.
  uint64_t Id() const { return id_; }
  // The memo store (engine::Memos) of the cycle about to run: true when
  // the last cycle on this state used another store, or none.
  bool ClaimMemos(uint64_t store) { return std::exchange(memo_owner_, store) != store; }
  // A store dropped its memos: what the state keeps by its counts (the
  // parked pods of a PodQueue) is tried again, as after a node change.
  void NoteMemosDropped() {
    ++room_epoch_;
    ++node_epoch_;
  }

  // A backend's placements: assumed until confirmed or forgotten.
  void AssumeTask(TaskRef t, NodeIndex n, int device = -1);
  void ConfirmTask(TaskRef t);
  // Takes an assumed task off its node (its bind failed).
  void ForgetTask(TaskRef t);
  bool IsAssumed(TaskRef t) const;
  int NumAssumed() const { return static_cast<int>(assumed_.size()); }

  // Takes a placed task off its job at once (the engine sees the job
  // without it) while its node keeps the resources until TaskGone(t).
  void ReleaseTask(TaskRef t);
  // The released task's pod is gone: its node gets the resources back.
  // Releases of one slot go in the order they were made.
  void TaskGone(TaskRef t);
  int NumReleasing() const { return static_cast<int>(releasing_.size()); }
  // GPUs (whole units) of the releasing tasks: room that comes free when
  // their pods are gone (or their jobs' checkpoints are done).
  int64_t ReleasingGpus() const;
  // ... of those on node n.
  int64_t ReleasingGpusOn(NodeIndex n) const;
  // The jobs whose released tasks still hold room, each once, in the
  // order they were released.
  std::vector<JobIndex> ReleasingJobs() const;
  // Some foreign or releasing pod holds room on a node.
  bool HasHolds() const { return !foreign_.empty() || !releasing_.empty(); }

  // A pod dlsched does not own, named `key` (namespace/name), on node `n`:
  // counts against the node like a task (a share on `device`, or the
  // tightest when -1 or out of range). Adding a key again moves it.
  void AddForeignTask(std::string_view key, NodeIndex n, const core::Resources& request,
                      const core::Resources& scoring_request, int device = -1);
  void RemoveForeignTask(std::string_view key);
  int NumForeignTasks() const { return static_cast<int>(foreign_.size()); }

 private:
  struct Hold {
    NodeIndex node = kNoNode;
    core::Resources request;
    core::Resources scoring;
    int device = -1;  // its share's device, or -1
  };
  struct Releasing {
    TaskRef task;
    Hold hold;
  };
  void AddHold(Hold& h);
  void DropHold(const Hold& h);
  void SetAllocatable(NodeIndex n, const core::Resources& a);
  void Unbucket(NodeIndex n);
  void Bucket(NodeIndex n);
  static uint64_t Key(TaskRef t) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(t.job)) << 32) |
           (static_cast<uint64_t>(t.role) << 30) | static_cast<uint32_t>(t.index);
  }

  void Rebucket(NodeIndex n, int old_free_gpu);
  // Node n's gpu_type_ from its labels (and its node_flavors_).
  void ReadGpuType(NodeIndex n);
  // Node n's switch_ from its labels.
  void ReadSwitch(NodeIndex n);
  // flavor_pairs_ and queue_flavored_ from the quota book, node_flavors_
  // from them.
  void ReadFlavors();
  // Every queue's usage counted again from the placed tasks.
  void RecountQuotaUsage();
  // Brings job `j`'s count in its queue's ElasticRest up to date.
  void RecountRest(JobIndex j);
  // FreeHolds for a request with a share.
  bool ShareFits(const core::Resources& req, NodeIndex n) const;
  // Puts `milli` on device `device` of node n (TightestDevice when -1 or
  // not one that takes it) and returns the device; takes it off again.
  int TakeShare(NodeIndex n, int64_t milli, int device);
  void GiveShare(NodeIndex n, int64_t milli, int device);
  int FreeGpu(NodeIndex n) const {
    return static_cast<int>(allocatable_[n][core::kGpu] - requested_[n][core::kGpu]);
  }

  std::deque<core::NodeSpec> specs_;  // deque: references stay valid on AddNode
  std::vector<std::string> names_;
  std::unordered_map<std::string, NodeIndex> node_by_name_;  // present nodes
  std::vector<uint8_t> present_;
  std::vector<uint8_t> schedulable_;
  std::vector<std::string> gpu_type_;                // per node: GpuType
  bool any_gpu_type_ = false;                        // a node had a GPU type
  std::vector<int> switch_;                          // per node: SwitchOf
  std::unordered_map<std::string, int> switch_ids_;  // switch label -> number
  // Per-GPU-type quotas: by GPU type, (R, R@T) for each R some line R@T
  // of any queue or cohort keys (any type); each node's entry (nullptr:
  // none, or no type); each queue's resources R it has an R@T line for.
  // (Indices, not pointers: a copied state keeps its own.)
  using FlavorPairs = std::vector<std::pair<core::ResourceId, core::ResourceId>>;
  std::vector<FlavorPairs> flavor_pairs_;
  std::unordered_map<std::string, int> flavor_type_;  // GPU type -> flavor_pairs_ index
  std::vector<int> node_flavors_;                     // per node: that index, or -1
  std::vector<std::vector<core::ResourceId>> queue_flavored_;
  // The flavor_pairs_ index of GPU type `type`, or -1.
  int FlavorIndex(const std::string& type) const {
    const auto it = flavor_type_.find(type);
    return it == flavor_type_.end() ? -1 : it->second;
  }
  std::vector<core::Resources> allocatable_;
  std::vector<core::Resources> requested_;
  std::vector<core::Resources> nonzero_requested_;
  std::vector<int32_t> tasks_on_;
  std::vector<std::vector<int16_t>> share_used_;               // per node, per device: SharesOn
  mutable std::vector<std::pair<TaskShape, int64_t>> census_;  // TaskCensus
  mutable JobIndex census_upto_ = 0;                           // jobs counted in census_
  int num_schedulable_ = 0;
  int num_present_ = 0;
  int num_tainted_ = 0;
  core::Resources capacity_;
  core::Resources total_requested_;
  uint64_t room_epoch_ = 1;
  uint64_t node_epoch_ = 1;
  std::vector<NodeIndex> touched_;
  uint64_t touched_generation_ = 1;
  uint64_t hold_epoch_ = 1;
  uint64_t id_;
  uint64_t memo_owner_ = 0;
  uint64_t caps_owner_ = 0;
  uint64_t caps_version_ = 0;
  uint64_t caps_node_epoch_ = 0;
  std::vector<JobIndex> entered_pending_;
  std::vector<JobIndex> left_pending_;
  std::vector<std::vector<NodeIndex>> gpu_buckets_;
  std::vector<int32_t> bucket_pos_;
  std::vector<const RecordField*> record_fields_;
  QuotaBook quotas_;
  std::vector<core::Resources> elastic_rest_;  // per queue: ElasticRest
  std::vector<JobState> jobs_;
  std::vector<std::vector<JobIndex>> by_phase_;
  std::vector<int32_t> phase_pos_;  // position of each job in its by_phase_ list
  std::unordered_map<std::string, JobIndex> job_by_name_;  // jobs not removed
  std::unordered_set<uint64_t> assumed_;                   // Key(task)
  std::vector<Releasing> releasing_;
  std::unordered_map<std::string, Hold> foreign_;
};

using core::kDefaultMemoryRequest;
using core::kDefaultMilliCpuRequest;

}  // namespace dlsched::engine
