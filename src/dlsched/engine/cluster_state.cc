#include "dlsched/engine/cluster_state.h"

#include <algorithm>
#include <cassert>

namespace dlsched::engine {

TaskRef JobState::TaskAt(JobIndex j, int slot) const {
  if (slot < NumPs()) return {j, core::Role::kPS, slot};
  slot -= NumPs();
  if (slot < NumChief()) return {j, core::Role::kChief, slot};
  return {j, core::Role::kWorker, slot - NumChief()};
}

ClusterState::ClusterState(const core::ClusterSpec& cluster) : specs_(&cluster.nodes) {
  const int n = static_cast<int>(cluster.nodes.size());
  names_.reserve(n);
  int max_gpu = 0;
  for (const auto& node : cluster.nodes) {
    names_.push_back(node.name);
    schedulable_.push_back(node.schedulable ? 1 : 0);
    allocatable_.push_back(node.allocatable);
    max_gpu = std::max<int>(max_gpu, static_cast<int>(node.allocatable[core::kGpu]));
  }
  requested_.assign(n, core::Resources{});
  nonzero_requested_.assign(n, core::Resources{});
  tasks_on_.assign(n, 0);
  capacity_ = cluster.Capacity();
  gpu_buckets_.assign(max_gpu + 1, {});
  bucket_pos_.assign(n, -1);
  for (NodeIndex i = 0; i < n; ++i) {
    if (!Schedulable(i)) continue;
    ++num_schedulable_;
    auto& b = gpu_buckets_[FreeGpu(i)];
    bucket_pos_[i] = static_cast<int32_t>(b.size());
    b.push_back(i);
  }
}

int ClusterState::MaxFreeGpu() const {
  for (int g = MaxGpuPerNode(); g > 0; --g) {
    if (!gpu_buckets_[g].empty()) return g;
  }
  return 0;
}

void ClusterState::SetSchedulable(NodeIndex n, bool on) {
  if (Schedulable(n) == on) return;
  const int g = FreeGpu(n);
  if (on) {
    ++num_schedulable_;
    schedulable_[n] = 1;
    capacity_ += allocatable_[n];
    bucket_pos_[n] = static_cast<int32_t>(gpu_buckets_[g].size());
    gpu_buckets_[g].push_back(n);
  } else {
    auto& b = gpu_buckets_[g];
    NodeIndex last = b.back();
    b[bucket_pos_[n]] = last;
    bucket_pos_[last] = bucket_pos_[n];
    b.pop_back();
    bucket_pos_[n] = -1;
    --num_schedulable_;
    schedulable_[n] = 0;
    capacity_ -= allocatable_[n];
  }
}

void ClusterState::Rebucket(NodeIndex n, int old_free_gpu) {
  const int now_free = FreeGpu(n);
  if (bucket_pos_[n] < 0 || now_free == old_free_gpu) return;
  auto& from = gpu_buckets_[old_free_gpu];
  NodeIndex last = from.back();
  from[bucket_pos_[n]] = last;
  bucket_pos_[last] = bucket_pos_[n];
  from.pop_back();
  // Over-committed GPUs (never done by the engine) clamp to bucket 0.
  auto& to = gpu_buckets_[std::clamp(now_free, 0, MaxGpuPerNode())];
  bucket_pos_[n] = static_cast<int32_t>(to.size());
  to.push_back(n);
}

JobIndex ClusterState::AddJob(const core::JobSpec* spec, core::Time now) {
  JobState js;
  js.spec = spec;
  js.phase = core::JobPhase::kSubmitted;
  js.phase_since = now;
  js.task_node.assign(spec->NumTasks(spec->role(core::Role::kWorker).max_replicas), kNoNode);
  js.target_workers = spec->role(core::Role::kWorker).replicas;
  for (int r = 0; r < core::kNumRoles; ++r) {
    js.scoring_request[r] = spec->roles[r].ScoringRequest();
  }
  jobs_.push_back(std::move(js));
  const auto j = static_cast<JobIndex>(jobs_.size() - 1);
  if (by_phase_.empty()) by_phase_.resize(core::kNumJobPhases);
  auto& list = by_phase_[static_cast<int>(core::JobPhase::kSubmitted)];
  phase_pos_.push_back(static_cast<int32_t>(list.size()));
  list.push_back(j);
  return j;
}

void ClusterState::SetPhase(JobIndex j, core::JobPhase p, core::Time now) {
  JobState& js = jobs_[j];
  js.phase_since = now;
  if (js.phase == p) return;
  auto& from = by_phase_[static_cast<int>(js.phase)];
  const JobIndex last = from.back();
  from[phase_pos_[j]] = last;
  phase_pos_[last] = phase_pos_[j];
  from.pop_back();
  auto& to = by_phase_[static_cast<int>(p)];
  phase_pos_[j] = static_cast<int32_t>(to.size());
  to.push_back(j);
  js.phase = p;
}

void ClusterState::PendingJobs(std::vector<JobIndex>* out) const {
  out->clear();
  if (by_phase_.empty()) return;
  for (core::JobPhase p :
       {core::JobPhase::kWaiting, core::JobPhase::kStarving, core::JobPhase::kStandby}) {
    for (JobIndex j : JobsInPhase(p)) {
      if (jobs_[j].IsPending()) out->push_back(j);
    }
  }
  std::sort(out->begin(), out->end());
}

JobIndex ClusterState::FindJob(const std::string& name) const {
  for (JobIndex j = 0; j < NumJobs(); ++j) {
    if (jobs_[j].spec->name == name) return j;
  }
  return -1;
}

void ClusterState::PlaceTask(TaskRef t, NodeIndex n) {
  JobState& js = jobs_[t.job];
  NodeIndex& slot = js.task_node[js.SlotOf(t.role, t.index)];
  assert(slot == kNoNode);
  const core::Resources& req = Request(t);
  const int old_gpu = FreeGpu(n);
  requested_[n] += req;
  total_requested_ += req;
  nonzero_requested_[n] += js.scoring_request[static_cast<int>(t.role)];
  ++tasks_on_[n];
  slot = n;
  ++js.placed_tasks;
  if (t.role == core::Role::kWorker) ++js.placed_workers;
  Rebucket(n, old_gpu);
}

void ClusterState::RemoveTask(TaskRef t) {
  JobState& js = jobs_[t.job];
  NodeIndex& slot = js.task_node[js.SlotOf(t.role, t.index)];
  assert(slot != kNoNode);
  const NodeIndex n = slot;
  const core::Resources& req = Request(t);
  const int old_gpu = FreeGpu(n);
  requested_[n] -= req;
  total_requested_ -= req;
  nonzero_requested_[n] -= js.scoring_request[static_cast<int>(t.role)];
  --tasks_on_[n];
  slot = kNoNode;
  --js.placed_tasks;
  if (t.role == core::Role::kWorker) --js.placed_workers;
  Rebucket(n, old_gpu);
}

}  // namespace dlsched::engine
