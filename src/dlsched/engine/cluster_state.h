#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dlsched/core/job.h"
#include "dlsched/core/lifecycle.h"
#include "dlsched/core/node.h"
#include "dlsched/core/resources.h"
#include "dlsched/core/time.h"

namespace dlsched::engine {

using NodeIndex = int32_t;
using JobIndex = int32_t;
inline constexpr NodeIndex kNoNode = -1;
// JobState::level_place of a job that has none yet.
inline constexpr double kNoPlace = std::numeric_limits<double>::infinity();

// One task of a job: the index-th replica of a role.
struct TaskRef {
  JobIndex job = -1;
  core::Role role = core::Role::kWorker;
  int32_t index = 0;
  friend bool operator==(const TaskRef&, const TaskRef&) = default;
};

// A pod waiting to be scheduled on its own (per-pod admission, the
// Kubernetes default). The backend keeps the queue in creation order and
// owns the backoff timers; the engine only reads them.
struct PendingPod {
  TaskRef task;
  core::Time not_before = 0;  // in backoff until then
  int attempts = 0;           // failed attempts so far
  // The RoomEpoch() of the cycle that last tried it (0: never tried). While
  // RoomEpoch() stays there, no room was freed since: the pod is parked
  // (kube's unschedulable pods), and not tried again.
  uint64_t tried_epoch = 0;
  std::string last_failure{};  // why its last attempt failed
  bool unresolvable = false;   // ... and no node could ever take it
  bool Parked(uint64_t room_epoch) const { return tried_epoch == room_epoch; }
};

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
  // Its level in an order that keeps levels (Tiresias' queues), and since
  // when: set by kSetLevel actions; 0 since submission at first.
  int level = 0;
  core::Time level_since = 0;
  // For starvation promotion (Tiresias' solve_starvation): `attained` when
  // the job was last promoted back to level 0 (0: never), and when it first
  // began to launch after that (kNever: not yet). Set by JobLifecycle.
  double level_base = 0;
  core::Time ran_since = core::kNever;
  // Its place in its level's list, for an order that keeps one list per
  // level as Tiresias' scheduler keeps its queues (JobOrder::KeepsPlaces):
  // among the jobs of its level that are running, or pending, as it is, a
  // lower place goes first. Set by kSetLevel actions; kNoPlace until then.
  double level_place = kNoPlace;
  // Node of each task slot, kNoNode when unplaced. Slots are laid out PS
  // replicas, then Chief replicas, then Worker slots 0..maxReplicas-1.
  std::vector<NodeIndex> task_node;
  // Per replica of each role, what kube-scheduler's scoring counts
  // (RoleSpec::ScoringRequest), computed once.
  core::Resources scoring_request[core::kNumRoles];
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
  // Training speed of its placement (steps/s): the throughput table's rate
  // for its placement if it lists one (ThroughputProfile::placements), else
  // the table at its placed workers, times 1 - localitySensitivity when its
  // tasks span nodes. Both backends estimate progress with it.
  double PlacedRate() const;
  bool removed = false;  // ClusterState::RemoveJob: gone from every index
  // The engine's memo of the job's last failed admission (kept in the cache
  // as kube-scheduler keeps an unschedulable pod out of its active queue
  // until a cluster event may let it fit): the verdict of a gang of
  // `workers` that could not start, valid while the state's RoomEpoch() is
  // still `epoch` (0: none). See AdmitInOrder.
  struct WaitMemo {
    uint64_t epoch = 0;
    int workers = 0;
    uint8_t status = 0;  // engine::WaitStatus
    std::string reason;
  };
  WaitMemo wait_memo;
  // Per-pod admission's last wait verdict on the job and what it was
  // worded from: the pods bound of `total`, and the pod the text names
  // (its failure at its `attempts`-th try), since the job entered its phase
  // at `since`. A queue that did not change is neither worded again nor
  // given a new verdict.
  struct PodWaitText {
    uint32_t reason_seq = 0;
    int placed = -1;
    int total = -1;
    core::Time since = -1;
    int role = -1;
    int index = -1;
    int attempts = 0;
    uint8_t status = 0;  // engine::WaitStatus
    std::string text;
  };
  PodWaitText pod_wait_text;
  // Bumped by the backend whenever it gives the job a reason other than a
  // wait verdict (started, resized, stopped, restarted, failed): a wait
  // verdict remembered before no longer stands.
  uint32_t reason_seq = 0;
  // The last wait verdict given to the job by an admission that gives one
  // only when it changes (Sizer::ReadsVerdicts false): it stands while
  // `reason_seq` is the job's and the engine that gave it still owns the
  // state's memos (given: false when none was).
  struct StandingWait {
    bool given = false;
    uint32_t reason_seq = 0;
    uint64_t owner = 0;
    uint8_t status = 0;  // engine::WaitStatus
    std::string reason;
  };
  StandingWait standing_wait;
  // The memo of engine::NeverFits for a gang of `workers` (`exact` or
  // not): its answer depends only on the nodes (and, when exact, on the
  // holds of foreign and releasing pods), so it holds while NodeEpoch()
  // (and HoldEpoch(), or the absence of any hold) stay as recorded
  // (node_epoch 0: none).
  struct NeverFitsMemo {
    uint64_t node_epoch = 0;
    uint64_t hold_epoch = 0;
    int workers = 0;
    bool exact = false;
    bool no_holds = false;  // no hold was there when it was computed
    std::optional<std::string> never;
  };
  NeverFitsMemo never_fits_memo;
  // The job is in ClusterState::PendingOrder's entries.
  bool in_pending_order = false;
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
  core::Resources Free(NodeIndex n) const { return allocatable_[n] - requested_[n]; }
  int NumTasksOn(NodeIndex n) const { return tasks_on_[n]; }
  const core::Resources& Capacity() const { return capacity_; }
  // Sum of requests over all nodes.
  const core::Resources& TotalRequested() const { return total_requested_; }
  core::Resources TotalFree() const { return capacity_ - total_requested_; }
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
  // (un)schedulable) starts a new generation, as ForgetTouched does (each
  // engine cycle begins with it, which keeps the journal short).
  const std::vector<NodeIndex>& TouchedNodes() const { return touched_; }
  uint64_t TouchedGeneration() const { return touched_generation_; }
  void ForgetTouched() {
    touched_.clear();
    ++touched_generation_;
  }
  // Where the next sampled node search begins (kube-scheduler's
  // nextStartNodeIndex; see SelectNode).
  int NextStartNode() const { return next_start_node_; }
  void SetNextStartNode(int n) { next_start_node_ = n; }

  // Jobs. Indices are stable for the life of the state; `spec` must
  // outlive the state.
  JobIndex AddJob(const core::JobSpec* spec, core::Time now);
  // Room for `n` more jobs, before adding many.
  void ReserveJobs(size_t n);
  int NumJobs() const { return static_cast<int>(jobs_.size()); }
  const JobState& Job(JobIndex j) const { return jobs_[j]; }
  JobState& MutableJob(JobIndex j) { return jobs_[j]; }
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
  // The jobs in a phase a pending job may be in (Waiting, Starving,
  // Standby) in the order of a JobOrder with static keys, as the engine
  // that owns the memos last sorted them (engine::OrderPending), and the
  // jobs moved into such a phase since (EnteredPending) and the jobs of
  // the order that left such a phase or were removed since (LeftPending);
  // each engine cycle ends by forgetting both. Another engine's claim drops
  // the order.
  struct OrderEntry {
    double key = 0;
    core::Time submit = 0;
    JobIndex job = -1;
    // PendingOrder::behind_epoch when the engine gave the job the order's
    // `behind_text` verdict (0: not given), see PendingOrder.
    uint32_t behind = 0;
  };
  struct PendingOrder {
    bool valid = false;
    std::vector<OrderEntry> entries;
    // A strict-order admission gives every job behind a blocked one the
    // same wait verdict, `behind_text`, and gives it again only when it
    // changes (JobState::StandingWait). An entry whose `behind` equals
    // `behind_epoch` stands on that verdict, so the admission passes over
    // it without reading its JobState. The epoch moves on, voiding every
    // such mark, when the text changes; a job that gets another reason
    // (BumpReason) or leaves and comes back gets a new, unmarked entry.
    uint32_t behind_epoch = 1;
    std::string behind_text;

    bool Marked(const OrderEntry& e) const { return e.behind == behind_epoch; }
    void Mark(OrderEntry& e, bool on) { e.behind = on ? behind_epoch : 0; }
  };
  PendingOrder& MutablePendingOrder() { return pending_order_; }
  const std::vector<JobIndex>& EnteredPending() const { return entered_pending_; }
  const std::vector<JobIndex>& LeftPending() const { return left_pending_; }
  void ForgetEnteredPending() {
    entered_pending_.clear();
    left_pending_.clear();
  }
  // The backend gave job `j` a reason other than a wait verdict: a wait
  // verdict it stood on no longer stands (JobState::reason_seq).
  // A job of the kept order leaves its place and comes back unmarked.
  void BumpReason(JobIndex j) {
    ++jobs_[j].reason_seq;
    if (jobs_[j].in_pending_order) {
      left_pending_.push_back(j);
      entered_pending_.push_back(j);
    }
  }

  // Per-pod queue (creation order).
  const std::vector<PendingPod>& Pods() const { return pods_; }
  std::vector<PendingPod>& MutablePods() { return pods_; }

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
  void PlaceTask(TaskRef t, NodeIndex n);
  void RemoveTask(TaskRef t);
  // RemoveTask for a Session undoing its own tentative placement: the room
  // it gives back was free when the session began, so it does not count as
  // freed room (RoomEpoch stays).
  void UnplaceTentative(TaskRef t);

  // Counts the changes that may let a gang fit where it failed before: a
  // task removed (other than UnplaceTentative), a releasing or foreign
  // task gone, a node added, changed, removed or made (un)schedulable. Any
  // other change only takes room, and a gang that failed to fit keeps
  // failing with less room, so a failure recorded at an epoch (WaitMemo)
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
  // Memos hold for the engine that wrote them: a cycle of engine `owner`
  // on a state whose memos another engine wrote invalidates them all.
  void ClaimMemos(uint64_t owner) {
    if (memo_owner_ != owner) {
      memo_owner_ = owner;
      ++room_epoch_;
      ++node_epoch_;
      DropPendingOrder();
    }
  }
  // The engine whose memos the state holds (ClaimMemos).
  uint64_t MemoOwner() const { return memo_owner_; }

  // A backend's placements: assumed until confirmed or forgotten.
  void AssumeTask(TaskRef t, NodeIndex n);
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
  // The jobs whose released tasks still hold room, each once, in the
  // order they were released.
  std::vector<JobIndex> ReleasingJobs() const;
  // Some foreign or releasing pod holds room on a node.
  bool HasHolds() const { return !foreign_.empty() || !releasing_.empty(); }

  // The shape of a gang of a job without node constraints: per role, how
  // many tasks and what each requests (and counts for scoring). Whether it
  // could ever fit (engine::NeverFits) depends on nothing else, so gangs of
  // one shape share the answer: as kube-scheduler's equivalence classes,
  // and since a trace holds thousands of jobs of a few shapes.
  struct GangShape {
    bool exact = false;
    std::array<int32_t, core::kNumRoles> count{};
    std::array<core::Resources, core::kNumRoles> request{};
    std::array<core::Resources, core::kNumRoles> scoring{};
    friend bool operator==(const GangShape&, const GangShape&) = default;
  };
  // True when gangs of `shape` were found to fit the empty cluster since
  // the nodes and the holds (foreign and releasing pods, if any) last
  // changed; NoteFitsEmpty records it.
  bool FitsEmpty(const GangShape& shape);
  void NoteFitsEmpty(const GangShape& shape);

  // A pod dlsched does not own, named `key` (namespace/name), on node `n`:
  // counts against the node like a task. Adding a key again moves it.
  void AddForeignTask(std::string_view key, NodeIndex n, const core::Resources& request,
                      const core::Resources& scoring_request);
  void RemoveForeignTask(std::string_view key);
  int NumForeignTasks() const { return static_cast<int>(foreign_.size()); }

 private:
  struct Hold {
    NodeIndex node = kNoNode;
    core::Resources request;
    core::Resources scoring;
  };
  struct Releasing {
    TaskRef task;
    Hold hold;
  };
  void AddHold(const Hold& h);
  void DropHold(const Hold& h);
  void SetAllocatable(NodeIndex n, const core::Resources& a);
  void Unbucket(NodeIndex n);
  void Bucket(NodeIndex n);
  static uint64_t Key(TaskRef t) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(t.job)) << 32) |
           (static_cast<uint64_t>(t.role) << 30) | static_cast<uint32_t>(t.index);
  }

  void Rebucket(NodeIndex n, int old_free_gpu);
  int FreeGpu(NodeIndex n) const {
    return static_cast<int>(allocatable_[n][core::kGpu] - requested_[n][core::kGpu]);
  }

  std::deque<core::NodeSpec> specs_;  // deque: references stay valid on AddNode
  std::vector<std::string> names_;
  std::unordered_map<std::string, NodeIndex> node_by_name_;  // present nodes
  std::vector<uint8_t> present_;
  std::vector<uint8_t> schedulable_;
  std::vector<core::Resources> allocatable_;
  std::vector<core::Resources> requested_;
  std::vector<core::Resources> nonzero_requested_;
  std::vector<int32_t> tasks_on_;
  int num_schedulable_ = 0;
  int num_present_ = 0;
  int num_tainted_ = 0;
  core::Resources capacity_;
  core::Resources total_requested_;
  uint64_t room_epoch_ = 1;
  uint64_t node_epoch_ = 1;
  int next_start_node_ = 0;
  std::vector<NodeIndex> touched_;
  uint64_t touched_generation_ = 1;
  uint64_t hold_epoch_ = 1;
  void DropPendingOrder();
  uint64_t memo_owner_ = 0;
  PendingOrder pending_order_;
  struct GangShapeHash {
    size_t operator()(const GangShape& s) const;
  };
  std::unordered_set<GangShape, GangShapeHash> fits_empty_;
  uint64_t fits_empty_node_epoch_ = 0;
  uint64_t fits_empty_hold_epoch_ = 0;
  bool fits_empty_no_holds_ = false;
  std::vector<JobIndex> entered_pending_;
  std::vector<JobIndex> left_pending_;
  std::vector<std::vector<NodeIndex>> gpu_buckets_;
  std::vector<int32_t> bucket_pos_;
  std::vector<JobState> jobs_;
  std::vector<std::vector<JobIndex>> by_phase_;
  std::vector<int32_t> phase_pos_;  // position of each job in its by_phase_ list
  std::vector<PendingPod> pods_;
  std::unordered_map<std::string, JobIndex> job_by_name_;  // jobs not removed
  std::unordered_set<uint64_t> assumed_;                   // Key(task)
  std::vector<Releasing> releasing_;
  std::unordered_map<std::string, Hold> foreign_;
};

using core::kDefaultMemoryRequest;
using core::kDefaultMilliCpuRequest;

}  // namespace dlsched::engine
