#pragma once

#include <cstdint>
#include <string>
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
  // Backend bookkeeping: the backend's count of state changes when the pod
  // was last tried, so it knows whether retrying can help.
  uint64_t tried_epoch = 0;
};

// A job as the engine sees it.
struct JobState {
  const core::JobSpec* spec = nullptr;
  core::JobPhase phase = core::JobPhase::kSubmitted;
  core::Time phase_since = 0;  // when it entered `phase`
  core::Time last_launch = 0;  // duration of its last Launching stay
  double steps_done = 0;       // training progress (for LAS/SRTF-like orders)
  // Node of each task slot, kNoNode when unplaced. Slots are laid out PS
  // replicas, then Chief replicas, then Worker slots 0..maxReplicas-1.
  std::vector<NodeIndex> task_node;
  // Per replica of each role, what kube-scheduler's scoring counts
  // (RoleSpec::ScoringRequest), computed once.
  core::Resources scoring_request[core::kNumRoles];
  int placed_workers = 0;  // placed Worker slots
  int placed_tasks = 0;    // placed slots of any role
  int target_workers = 0;  // workers the job runs with once started

  int NumPs() const { return spec->role(core::Role::kPS).replicas; }
  int NumChief() const { return spec->role(core::Role::kChief).replicas; }
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
  bool IsPending() const {
    return phase == core::JobPhase::kWaiting || phase == core::JobPhase::kStarving ||
           (phase == core::JobPhase::kStandby && placed_tasks == 0);
  }
  bool IsActive() const { return !core::IsFinal(phase) && placed_tasks > 0 && !IsPending(); }
};

// The cluster and its jobs: what a backend keeps up to date and the engine
// reads. Nodes are a structure of arrays indexed by NodeIndex; the number of
// free GPUs of every node is indexed so "who can host g GPUs" is not a scan.
class ClusterState {
 public:
  explicit ClusterState(const core::ClusterSpec& cluster);

  // Nodes.
  int NumNodes() const { return static_cast<int>(names_.size()); }
  int NumSchedulable() const { return num_schedulable_; }
  const std::string& NodeName(NodeIndex n) const { return names_[n]; }
  const core::NodeSpec& NodeSpecOf(NodeIndex n) const { return (*specs_)[n]; }
  bool Schedulable(NodeIndex n) const { return schedulable_[n] != 0; }
  void SetSchedulable(NodeIndex n, bool on);
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
  int MaxFreeGpu() const;
  // Nodes with exactly `g` free GPUs (unordered). g in [0, MaxGpuPerNode()].
  const std::vector<NodeIndex>& NodesWithFreeGpu(int g) const { return gpu_buckets_[g]; }
  int MaxGpuPerNode() const { return static_cast<int>(gpu_buckets_.size()) - 1; }

  // Jobs. Indices are stable for the life of the state.
  JobIndex AddJob(const core::JobSpec* spec, core::Time now);
  int NumJobs() const { return static_cast<int>(jobs_.size()); }
  const JobState& Job(JobIndex j) const { return jobs_[j]; }
  JobState& MutableJob(JobIndex j) { return jobs_[j]; }
  JobIndex FindJob(const std::string& name) const;
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

 private:
  void Rebucket(NodeIndex n, int old_free_gpu);
  int FreeGpu(NodeIndex n) const {
    return static_cast<int>(allocatable_[n][core::kGpu] - requested_[n][core::kGpu]);
  }

  const std::vector<core::NodeSpec>* specs_;
  std::vector<std::string> names_;
  std::vector<uint8_t> schedulable_;
  std::vector<core::Resources> allocatable_;
  std::vector<core::Resources> requested_;
  std::vector<core::Resources> nonzero_requested_;
  std::vector<int32_t> tasks_on_;
  int num_schedulable_ = 0;
  core::Resources capacity_;
  core::Resources total_requested_;
  std::vector<std::vector<NodeIndex>> gpu_buckets_;
  std::vector<int32_t> bucket_pos_;
  std::vector<JobState> jobs_;
  std::vector<std::vector<JobIndex>> by_phase_;
  std::vector<int32_t> phase_pos_;  // position of each job in its by_phase_ list
  std::vector<PendingPod> pods_;
};

using core::kDefaultMemoryRequest;
using core::kDefaultMilliCpuRequest;

}  // namespace dlsched::engine
