#include "dlsched/engine/cluster_state.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <functional>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "dlsched/core/queue.h"

namespace dlsched::engine {

TaskRef JobState::TaskAt(JobIndex j, int slot) const {
  if (slot < NumPs()) return {j, core::Role::kPS, slot};
  slot -= NumPs();
  if (slot < NumChief()) return {j, core::Role::kChief, slot};
  return {j, core::Role::kWorker, slot - NumChief()};
}

ClusterState::ClusterState(const core::ClusterSpec& cluster) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id.fetch_add(1, std::memory_order_relaxed);
  int max_gpu = 0;
  for (const auto& node : cluster.nodes) {
    max_gpu = std::max<int>(max_gpu, static_cast<int>(node.allocatable[core::kGpu]));
  }
  gpu_buckets_.assign(max_gpu + 1, {});
  by_phase_.resize(core::kNumJobPhases);
  for (const auto& node : cluster.nodes) AddNode(node);
  quotas_ = QuotaBook(cluster.queues, cluster.cohorts);
  ReadFlavors();
  elastic_rest_.assign(static_cast<size_t>(quotas_.NumQueues()), core::Resources{});
}

void ClusterState::ReadFlavors() {
  flavor_pairs_.clear();
  flavor_type_.clear();
  queue_flavored_.assign(static_cast<size_t>(quotas_.NumQueues()), {});
  for (int n = 0; n < quotas_.NumNodes(); ++n) {
    const bool queue = n < quotas_.NumQueues();
    for (const core::ResourceId id : quotas_.LineIds(n)) {
      const std::optional<core::FlavorKey> key = core::SplitFlavor(core::ResourceName(id));
      if (!key) continue;
      const int base = core::FindResource(key->resource);
      if (base < 0) continue;  // the config interns it with the line
      const auto [type, added] =
          flavor_type_.emplace(std::string(key->gpu_type), static_cast<int>(flavor_pairs_.size()));
      if (added) flavor_pairs_.emplace_back();
      FlavorPairs& pairs = flavor_pairs_[static_cast<size_t>(type->second)];
      const std::pair<core::ResourceId, core::ResourceId> pair{static_cast<core::ResourceId>(base),
                                                               id};
      if (std::find(pairs.begin(), pairs.end(), pair) == pairs.end()) pairs.push_back(pair);
      std::vector<core::ResourceId>& mine = queue_flavored_[static_cast<size_t>(n)];
      if (queue && std::find(mine.begin(), mine.end(), pair.first) == mine.end()) {
        mine.push_back(pair.first);
      }
    }
  }
  node_flavors_.assign(gpu_type_.size(), -1);
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(gpu_type_.size()); ++n) {
    node_flavors_[n] = FlavorIndex(gpu_type_[n]);
  }
}

const core::Resources& ClusterState::Charged(const core::Resources& req, NodeIndex n) const {
  if (node_flavors_[n] < 0) return req;
  thread_local core::Resources charged;
  bool any = false;
  for (const auto& [base, flavored] : flavor_pairs_[static_cast<size_t>(node_flavors_[n])]) {
    if (req[base] <= 0) continue;
    if (!any) charged = req;
    any = true;
    charged[flavored] += req[base];
  }
  return any ? charged : req;
}

std::optional<std::string> ClusterState::FlavorRefusal(JobIndex j, const core::Resources& req,
                                                       NodeIndex n) const {
  if (auto why = FlavorTypeRefusal(j, req, n)) return why;
  const int q = jobs_[j].queue;
  if (q < 0 || !HasFlavors()) return std::nullopt;
  const core::Resources& charged = Charged(req, n);
  if (&charged == &req || quotas_.Admits(q, charged, Capped(j))) return std::nullopt;
  return quotas_.Refusal(q, charged, Capped(j));
}

std::optional<std::string> ClusterState::FlavorTypeRefusal(JobIndex j, const core::Resources& req,
                                                           NodeIndex n) const {
  const int q = jobs_[j].queue;
  if (q < 0 || !HasFlavors()) return std::nullopt;
  const core::QueueSpec& spec = quotas_.Spec(q);
  for (const core::ResourceId base : queue_flavored_[static_cast<size_t>(q)]) {
    if (req[base] <= 0) continue;
    const core::QuotaLine* line = nullptr;
    if (node_flavors_[n] >= 0) {
      for (const auto& [b, flavored] : flavor_pairs_[static_cast<size_t>(node_flavors_[n])]) {
        if (b == base) line = spec.Line(flavored);
      }
    }
    if (line == nullptr) {
      return gpu_type_[n].empty()
                 ? fmt::format("queue {} has no quota of {} on nodes without a GPU type", spec.name,
                               core::ResourceName(base))
                 : fmt::format("queue {} has no quota of {} for GPU type {}", spec.name,
                               core::ResourceName(base), gpu_type_[n]);
    }
  }
  return std::nullopt;
}

void ClusterState::RecountQuotaUsage() {
  quotas_.ClearUsage();
  for (JobIndex j = 0; j < NumJobs(); ++j) {
    const JobState& js = jobs_[j];
    if (js.queue < 0 || js.placed_tasks == 0) continue;
    for (int slot = 0; slot < static_cast<int>(js.task_node.size()); ++slot) {
      const NodeIndex n = js.task_node[slot];
      if (n != kNoNode) quotas_.Add(js.queue, Charged(Request(js.TaskAt(j, slot)), n));
    }
  }
}

void ClusterState::SetQueues(std::span<const core::QueueSpec> queues,
                             std::span<const core::CohortSpec> cohorts) {
  const uint64_t version = quotas_.TotalVersion();
  quotas_ = QuotaBook(queues, cohorts);
  quotas_.ContinueVersions(version);
  ReadFlavors();
  elastic_rest_.assign(static_cast<size_t>(quotas_.NumQueues()), core::Resources{});
  for (JobIndex j = 0; j < NumJobs(); ++j) {
    JobState& js = jobs_[j];
    js.queue = quotas_.Empty() ? -1 : quotas_.Find(js.spec->queue);
    js.rest_counted = 0;
    RecountRest(j);
    if (js.queue < 0 || js.placed_tasks == 0) continue;
    for (int slot = 0; slot < static_cast<int>(js.task_node.size()); ++slot) {
      const NodeIndex n = js.task_node[slot];
      if (n != kNoNode) quotas_.Add(js.queue, Charged(Request(js.TaskAt(j, slot)), n));
    }
  }
  caps_owner_ = 0;
  memo_owner_ = 0;
  ++room_epoch_;
  std::vector<JobIndex> pending;
  PendingJobs(&pending);
  for (const JobIndex j : pending) BumpReason(j);
}

NodeIndex ClusterState::FindNode(std::string_view name) const {
  auto it = node_by_name_.find(std::string(name));
  return it == node_by_name_.end() ? kNoNode : it->second;
}

NodeIndex ClusterState::AddNode(const core::NodeSpec& spec) {
  assert(FindNode(spec.name) == kNoNode);
  ++room_epoch_;
  ++node_epoch_;
  ForgetTouched();
  const auto n = static_cast<NodeIndex>(names_.size());
  specs_.push_back(spec);
  ReadGpuType(n);
  ReadSwitch(n);
  names_.push_back(spec.name);
  node_by_name_.emplace(spec.name, n);
  present_.push_back(1);
  ++num_present_;
  if (!spec.taints.empty()) ++num_tainted_;
  schedulable_.push_back(0);
  allocatable_.push_back(spec.allocatable);
  requested_.emplace_back();
  nonzero_requested_.emplace_back();
  tasks_on_.push_back(0);
  share_used_.emplace_back();
  bucket_pos_.push_back(-1);
  const int gpu = static_cast<int>(spec.allocatable[core::kGpu]);
  if (gpu > MaxGpuPerNode()) gpu_buckets_.resize(gpu + 1);
  SetSchedulable(n, spec.schedulable);
  return n;
}

void ClusterState::UpdateNode(NodeIndex n, const core::NodeSpec& spec) {
  assert(Present(n));
  ++node_epoch_;
  ForgetTouched();
  core::NodeSpec& cur = specs_[n];
  num_tainted_ += (spec.taints.empty() ? 0 : 1) - (cur.taints.empty() ? 0 : 1);
  cur.labels = spec.labels;
  ReadGpuType(n);
  ReadSwitch(n);
  cur.taints = spec.taints;
  SetAllocatable(n, spec.allocatable);
  SetSchedulable(n, spec.schedulable);
  cur.schedulable = spec.schedulable;
}

void ClusterState::SetAllocatable(NodeIndex n, const core::Resources& a) {
  ++room_epoch_;
  ++node_epoch_;
  ForgetTouched();
  const int gpu = static_cast<int>(a[core::kGpu]);
  if (gpu > MaxGpuPerNode()) gpu_buckets_.resize(gpu + 1);
  const bool on = Schedulable(n);
  if (on) {
    Unbucket(n);
    capacity_ -= allocatable_[n];
  }
  allocatable_[n] = a;
  specs_[n].allocatable = a;
  if (on) {
    capacity_ += allocatable_[n];
    Bucket(n);
  }
}

void ClusterState::RemoveNode(NodeIndex n) {
  ++room_epoch_;
  ++node_epoch_;
  ForgetTouched();
  assert(Present(n));
  SetSchedulable(n, false);
  std::erase_if(releasing_, [&](const Releasing& r) {
    if (r.hold.node != n) return false;
    DropHold(r.hold);
    return true;
  });
  std::erase_if(foreign_, [&](const auto& kv) {
    if (kv.second.node != n) return false;
    DropHold(kv.second);
    return true;
  });
  assert(tasks_on_[n] == 0);
  share_used_[n].clear();
  node_by_name_.erase(names_[n]);
  if (!specs_[n].taints.empty()) --num_tainted_;
  specs_[n].taints.clear();
  present_[n] = 0;
  --num_present_;
  allocatable_[n] = core::Resources{};
  specs_[n].allocatable = core::Resources{};
  specs_[n].schedulable = false;
}

std::vector<TaskRef> ClusterState::TasksOn(NodeIndex n) const {
  std::vector<TaskRef> out;
  if (tasks_on_[n] == 0) return out;
  for (JobIndex j = 0; j < NumJobs(); ++j) {
    const JobState& js = jobs_[j];
    if (js.placed_tasks == 0) continue;
    for (int s = 0; s < static_cast<int>(js.task_node.size()); ++s) {
      if (js.task_node[s] == n) out.push_back(js.TaskAt(j, s));
    }
  }
  return out;
}

void ClusterState::Unbucket(NodeIndex n) {
  if (bucket_pos_[n] < 0) return;
  auto& b = gpu_buckets_[std::clamp(FreeGpu(n), 0, MaxGpuPerNode())];
  const NodeIndex last = b.back();
  b[bucket_pos_[n]] = last;
  bucket_pos_[last] = bucket_pos_[n];
  b.pop_back();
  bucket_pos_[n] = -1;
}

void ClusterState::Bucket(NodeIndex n) {
  auto& b = gpu_buckets_[std::clamp(FreeGpu(n), 0, MaxGpuPerNode())];
  bucket_pos_[n] = static_cast<int32_t>(b.size());
  b.push_back(n);
}

int ClusterState::MaxFreeGpu() const {
  for (int g = MaxGpuPerNode(); g > 0; --g) {
    if (!gpu_buckets_[g].empty()) return g;
  }
  return 0;
}

void ClusterState::SetSchedulable(NodeIndex n, bool on) {
  if (Schedulable(n) == on || (on && !Present(n))) return;
  ++room_epoch_;
  ++node_epoch_;
  ForgetTouched();
  if (on) {
    ++num_schedulable_;
    schedulable_[n] = 1;
    capacity_ += allocatable_[n];
    Bucket(n);
  } else {
    Unbucket(n);
    --num_schedulable_;
    schedulable_[n] = 0;
    capacity_ -= allocatable_[n];
  }
}

void ClusterState::Rebucket(NodeIndex n, int old_free_gpu) {
  const int now_free = FreeGpu(n);
  if (bucket_pos_[n] < 0 || now_free == old_free_gpu) return;
  auto& from = gpu_buckets_[std::clamp(old_free_gpu, 0, MaxGpuPerNode())];
  NodeIndex last = from.back();
  from[bucket_pos_[n]] = last;
  bucket_pos_[last] = bucket_pos_[n];
  from.pop_back();
  // Over-committed GPUs (a node shrunk under its tasks, or foreign pods)
  // clamp to bucket 0.
  Bucket(n);
}

void ClusterState::ReserveJobs(size_t n) {
  jobs_.reserve(jobs_.size() + n);
  phase_pos_.reserve(phase_pos_.size() + n);
  job_by_name_.reserve(job_by_name_.size() + n);
}

void ClusterState::UseRecordFields(std::vector<const RecordField*> fields) {
  record_fields_ = std::move(fields);
}

bool ClusterState::SetRecord(JobIndex j, const RecordField& field, double value) {
  const int slot = RecordSlot(field);
  if (slot < 0) return false;
  jobs_[j].record[slot] = value;
  return true;
}

JobIndex ClusterState::AddJob(const core::JobSpec* spec, core::Time now) {
  JobState js;
  js.spec = spec;
  js.num_ps = spec->role(core::Role::kPS).replicas;
  js.num_chief = spec->role(core::Role::kChief).replicas;
  js.phase = core::JobPhase::kSubmitted;
  js.phase_since = now;
  js.task_node.assign(spec->NumTasks(spec->role(core::Role::kWorker).max_replicas), kNoNode);
  js.target_workers = spec->role(core::Role::kWorker).replicas;
  js.steps_done = spec->steps_done;
  js.attained = spec->attained;
  js.launch_attained = spec->launch_attained;
  if (!quotas_.Empty()) js.queue = quotas_.Find(spec->queue);
  js.record.reserve(record_fields_.size());
  for (const RecordField* f : record_fields_) {
    const auto given = spec->policy_state.find(f->state.name);
    js.record.push_back(given != spec->policy_state.end() ? given->second
                                                          : f->InitialFor(spec->submit_time));
  }
  for (int r = 0; r < core::kNumRoles; ++r) {
    js.scoring_request[r] = spec->roles()[r].ScoringRequest();
  }
  jobs_.push_back(std::move(js));
  const auto j = static_cast<JobIndex>(jobs_.size() - 1);
  job_by_name_.emplace(spec->name, j);  // the first of equal names wins
  auto& list = by_phase_[static_cast<int>(core::JobPhase::kSubmitted)];
  phase_pos_.push_back(static_cast<int32_t>(list.size()));
  list.push_back(j);
  return j;
}

void ClusterState::SetPhase(JobIndex j, core::JobPhase p, core::Time now) {
  JobState& js = jobs_[j];
  js.phase_since = now;
  if (js.phase == p) return;
  const core::JobPhase was = js.phase;
  auto& from = by_phase_[static_cast<int>(js.phase)];
  const JobIndex last = from.back();
  from[phase_pos_[j]] = last;
  phase_pos_[last] = phase_pos_[j];
  from.pop_back();
  auto& to = by_phase_[static_cast<int>(p)];
  phase_pos_[j] = static_cast<int32_t>(to.size());
  to.push_back(j);
  js.phase = p;
  if (was == core::JobPhase::kRunning || p == core::JobPhase::kRunning) RecountRest(j);
  if (InPendingPhase(p)) {
    entered_pending_.push_back(j);
  } else if (InPendingPhase(was)) {
    left_pending_.push_back(j);
  }
}

void ClusterState::ReadGpuType(NodeIndex n) {
  const core::Labels& labels = specs_[n].labels;
  auto it = labels.find(std::string(core::kGpuTypeLabel));
  if (gpu_type_.size() <= static_cast<size_t>(n)) gpu_type_.resize(static_cast<size_t>(n) + 1);
  const std::string type = it == labels.end() ? std::string() : it->second;
  const bool changed = type != gpu_type_[n];
  gpu_type_[n] = type;
  any_gpu_type_ = any_gpu_type_ || !gpu_type_[n].empty();
  if (node_flavors_.size() <= static_cast<size_t>(n)) {
    node_flavors_.resize(static_cast<size_t>(n) + 1, -1);
  }
  node_flavors_[n] = FlavorIndex(type);
  // Tasks on a node whose type changed were charged to the old type's
  // lines (a relabelled node; rare): count every queue's usage again.
  if (changed && HasFlavors() && tasks_on_.size() > static_cast<size_t>(n) && tasks_on_[n] > 0) {
    RecountQuotaUsage();
  }
}

void ClusterState::ReadSwitch(NodeIndex n) {
  const core::Labels& labels = specs_[n].labels;
  auto it = labels.find(std::string(core::kSwitchLabel));
  if (switch_.size() <= static_cast<size_t>(n)) switch_.resize(static_cast<size_t>(n) + 1, -1);
  if (it == labels.end()) {
    switch_[n] = -1;
    return;
  }
  auto [at, fresh] = switch_ids_.emplace(it->second, static_cast<int>(switch_ids_.size()));
  switch_[n] = at->second;
}

ClusterState::Span ClusterState::SpanOf(JobIndex j) const {
  const JobState& js = jobs_[j];
  Span span;
  if (js.placed_tasks == 0) return span;
  // Most jobs sit on one node: no vector, no sort.
  NodeIndex first = kNoNode;
  bool one = true;
  for (NodeIndex n : js.task_node) {
    if (n == kNoNode) continue;
    if (first == kNoNode) first = n;
    one = one && n == first;
  }
  if (one) return Span{.nodes = 1, .switches = SwitchOf(first) >= 0 ? 1 : 0};
  std::vector<NodeIndex> nodes;
  std::vector<int> switches;
  for (NodeIndex n : js.task_node) {
    if (n == kNoNode) continue;
    nodes.push_back(n);
    if (SwitchOf(n) >= 0) switches.push_back(SwitchOf(n));
  }
  auto distinct = [](auto& v) {
    std::sort(v.begin(), v.end());
    return static_cast<int>(std::unique(v.begin(), v.end()) - v.begin());
  };
  span.nodes = distinct(nodes);
  span.switches = distinct(switches);
  return span;
}

double ClusterState::PlacedRate(JobIndex j) const {
  const JobState& js = jobs_[j];
  const core::ThroughputProfile& tp = js.spec->throughput;
  const int worker0 = js.SlotOf(core::Role::kWorker, 0);
  if (js.placed_workers == 0) return 0;
  NodeIndex first = kNoNode;
  double locality = 1.0;
  for (NodeIndex n : js.task_node) {
    if (n == kNoNode) continue;
    if (first == kNoNode) first = n;
    if (n != first) {
      locality = 1.0 - tp.locality_sensitivity;
      break;
    }
  }
  // Across switches (two of its nodes labelled with different ones): a
  // further factor, on every rate below.
  double across = 1.0;
  if (tp.switch_sensitivity > 0 && !switch_ids_.empty()) {
    int seen = -1;
    for (NodeIndex n : js.task_node) {
      const int s = n == kNoNode ? -1 : SwitchOf(n);
      if (s < 0) continue;
      if (seen < 0) seen = s;
      if (s != seen) {
        across = 1.0 - tp.switch_sensitivity;
        break;
      }
    }
  }
  // On GPU types its tables list: the slowest of them.
  if (any_gpu_type_ && tp.by_gpu_type) {
    double rate = -1;
    bool typed = false;
    for (int slot = worker0; slot < static_cast<int>(js.task_node.size()); ++slot) {
      const NodeIndex n = js.task_node[slot];
      if (n == kNoNode) continue;
      typed = typed || tp.by_gpu_type->contains(gpu_type_[n]);
      const double on = tp.RateOn(gpu_type_[n], js.placed_workers);
      rate = rate < 0 ? on : std::min(rate, on);
    }
    if (typed) return rate * locality * across;
  }
  const auto& placements = tp.placements;
  if (!placements.empty()) {
    // The workers on each node, most first.
    std::vector<NodeIndex> nodes;
    nodes.reserve(static_cast<size_t>(js.placed_workers));
    for (int slot = worker0; slot < static_cast<int>(js.task_node.size()); ++slot) {
      if (js.task_node[slot] != kNoNode) nodes.push_back(js.task_node[slot]);
    }
    std::sort(nodes.begin(), nodes.end());
    std::vector<int> shape;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i == 0 || nodes[i] != nodes[i - 1]) shape.push_back(0);
      ++shape.back();
    }
    std::sort(shape.begin(), shape.end(), std::greater<>());
    if (auto it = placements.find(shape); it != placements.end()) return it->second * across;
  }
  return tp.Rate(js.placed_workers) * locality * across;
}

core::Resources ClusterState::Held(JobIndex j) const {
  const JobState& js = jobs_[j];
  core::Resources held;
  if (js.placed_tasks == 0) return held;
  // Tasks of a role ask for the same: counted per role. The PS and Chief
  // slots are looked at only when a job has both.
  const core::RoleSpecs& roles = js.spec->roles();
  const auto& ps = roles[static_cast<int>(core::Role::kPS)].resources;
  const auto& chief = roles[static_cast<int>(core::Role::kChief)].resources;
  const int others = js.placed_tasks - js.placed_workers;
  if (others > 0 && js.num_chief == 0) {
    held.AddTimes(ps, others);
  } else if (others > 0 && js.num_ps == 0) {
    held.AddTimes(chief, others);
  } else if (others > 0) {
    for (int slot = 0; slot < js.num_ps + js.num_chief; ++slot) {
      if (js.task_node[slot] != kNoNode) held += slot < js.num_ps ? ps : chief;
    }
  }
  if (js.placed_workers > 0)
    held.AddTimes(roles[static_cast<int>(core::Role::kWorker)].resources, js.placed_workers);
  return held;
}

void ClusterState::RecountRest(JobIndex j) {
  JobState& js = jobs_[j];
  if (js.queue < 0) return;
  const core::RoleSpec& w = js.spec->role(core::Role::kWorker);
  const int32_t rest = js.phase == core::JobPhase::kRunning && !js.removed
                           ? std::max(0, w.max_replicas - js.placed_workers)
                           : 0;
  if (rest == js.rest_counted) return;
  elastic_rest_[js.queue] += w.resources * (rest - js.rest_counted);
  js.rest_counted = rest;
}

void ClusterState::PendingJobs(std::vector<JobIndex>* out) const {
  out->clear();
  for (core::JobPhase p :
       {core::JobPhase::kWaiting, core::JobPhase::kStarving, core::JobPhase::kStandby}) {
    for (JobIndex j : JobsInPhase(p)) {
      if (jobs_[j].IsPending()) out->push_back(j);
    }
  }
  std::sort(out->begin(), out->end());
}

JobIndex ClusterState::FindJob(std::string_view name) const {
  auto it = job_by_name_.find(std::string(name));
  return it == job_by_name_.end() ? -1 : it->second;
}

void ClusterState::RemoveJob(JobIndex j) {
  JobState& js = jobs_[j];
  assert(!js.removed && js.placed_tasks == 0);
  auto& from = by_phase_[static_cast<int>(js.phase)];
  const JobIndex last = from.back();
  from[phase_pos_[j]] = last;
  phase_pos_[last] = phase_pos_[j];
  from.pop_back();
  phase_pos_[j] = -1;
  js.removed = true;
  RecountRest(j);
  left_pending_.push_back(j);  // if it was in the pending order
  auto it = job_by_name_.find(js.spec->name);
  if (it != job_by_name_.end() && it->second == j) job_by_name_.erase(it);
}

void ClusterState::PlaceTask(TaskRef t, NodeIndex n, int device) {
  JobState& js = jobs_[t.job];
  const int s = js.SlotOf(t.role, t.index);
  NodeIndex& slot = js.task_node[s];
  assert(slot == kNoNode);
  const core::Resources& req = Request(t);
  const int old_gpu = FreeGpu(n);
  requested_[n] += req;
  total_requested_ += req;
  if (const int64_t milli = req.v[core::kGpuMilli]; milli > 0) {
    if (js.task_device.empty()) js.task_device.assign(js.task_node.size(), -1);
    js.task_device[s] = static_cast<int16_t>(TakeShare(n, milli, device));
  }
  if (js.queue >= 0) quotas_.Add(js.queue, Charged(req, n));
  nonzero_requested_[n] += js.scoring_request[static_cast<int>(t.role)];
  ++tasks_on_[n];
  slot = n;
  ++js.placed_tasks;
  if (t.role == core::Role::kWorker) {
    ++js.placed_workers;
    if (js.rest_counted > 0) RecountRest(t.job);
  }
  Rebucket(n, old_gpu);
  touched_.push_back(n);
}

void ClusterState::RemoveTask(TaskRef t) {
  UnplaceTentative(t);
  ++room_epoch_;
}

void ClusterState::UnplaceTentative(TaskRef t) {
  JobState& js = jobs_[t.job];
  const int s = js.SlotOf(t.role, t.index);
  NodeIndex& slot = js.task_node[s];
  assert(slot != kNoNode);
  const NodeIndex n = slot;
  const core::Resources& req = Request(t);
  const int old_gpu = FreeGpu(n);
  requested_[n] -= req;
  total_requested_ -= req;
  if (const int64_t milli = req.v[core::kGpuMilli]; milli > 0) {
    GiveShare(n, milli, js.task_device[s]);
    js.task_device[s] = -1;
  }
  if (js.queue >= 0) quotas_.Sub(js.queue, Charged(req, n));
  nonzero_requested_[n] -= js.scoring_request[static_cast<int>(t.role)];
  --tasks_on_[n];
  slot = kNoNode;
  --js.placed_tasks;
  if (t.role == core::Role::kWorker) {
    --js.placed_workers;
    if (js.phase == core::JobPhase::kRunning) RecountRest(t.job);
  }
  Rebucket(n, old_gpu);
  touched_.push_back(n);
}

}  // namespace dlsched::engine

namespace dlsched::engine {

void ClusterState::AddHold(Hold& h) {
  ++hold_epoch_;
  const int old_gpu = FreeGpu(h.node);
  requested_[h.node] += h.request;
  total_requested_ += h.request;
  if (const int64_t milli = h.request.v[core::kGpuMilli]; milli > 0) {
    h.device = TakeShare(h.node, milli, h.device);
  }
  nonzero_requested_[h.node] += h.scoring;
  ++tasks_on_[h.node];
  Rebucket(h.node, old_gpu);
  touched_.push_back(h.node);
}

void ClusterState::DropHold(const Hold& h) {
  ++room_epoch_;
  ++hold_epoch_;
  const int old_gpu = FreeGpu(h.node);
  requested_[h.node] -= h.request;
  total_requested_ -= h.request;
  if (const int64_t milli = h.request.v[core::kGpuMilli]; milli > 0) {
    GiveShare(h.node, milli, h.device);
  }
  nonzero_requested_[h.node] -= h.scoring;
  --tasks_on_[h.node];
  Rebucket(h.node, old_gpu);
  touched_.push_back(h.node);
}

void ClusterState::AssumeTask(TaskRef t, NodeIndex n, int device) {
  PlaceTask(t, n, device);
  assumed_.insert(Key(t));
}

void ClusterState::ConfirmTask(TaskRef t) { assumed_.erase(Key(t)); }

void ClusterState::ForgetTask(TaskRef t) {
  if (assumed_.erase(Key(t)) == 0) return;
  RemoveTask(t);
}

bool ClusterState::IsAssumed(TaskRef t) const { return assumed_.contains(Key(t)); }

void ClusterState::ReleaseTask(TaskRef t) {
  const JobState& js = jobs_[t.job];
  Hold h{js.NodeOf(t.role, t.index), Request(t), ScoringRequest(t), DeviceOf(t)};
  assumed_.erase(Key(t));
  RemoveTask(t);
  AddHold(h);
  releasing_.push_back(Releasing{t, h});
}

void ClusterState::TaskGone(TaskRef t) {
  for (auto it = releasing_.begin(); it != releasing_.end(); ++it) {
    if (it->task == t) {
      DropHold(it->hold);
      releasing_.erase(it);
      return;
    }
  }
}

int64_t ClusterState::ReleasingGpus() const {
  int64_t gpus = 0;
  for (const Releasing& r : releasing_) gpus += r.hold.request[core::kGpu];
  return gpus;
}

int64_t ClusterState::ReleasingGpusOn(NodeIndex n) const {
  int64_t gpus = 0;
  for (const Releasing& r : releasing_) {
    if (r.hold.node == n) gpus += r.hold.request[core::kGpu];
  }
  return gpus;
}

std::vector<JobIndex> ClusterState::ReleasingJobs() const {
  std::vector<JobIndex> jobs;
  for (const Releasing& r : releasing_) {
    if (std::find(jobs.begin(), jobs.end(), r.task.job) == jobs.end()) jobs.push_back(r.task.job);
  }
  return jobs;
}

void ClusterState::AddForeignTask(std::string_view key, NodeIndex n, const core::Resources& request,
                                  const core::Resources& scoring_request, int device) {
  RemoveForeignTask(key);
  Hold h{n, request, scoring_request, device};
  AddHold(h);
  foreign_.emplace(std::string(key), h);
}

void ClusterState::RemoveForeignTask(std::string_view key) {
  auto it = foreign_.find(std::string(key));
  if (it == foreign_.end()) return;
  DropHold(it->second);
  foreign_.erase(it);
}

int64_t ClusterState::ShareRoom(NodeIndex n) const {
  if (allocatable_[n][core::kGpuMilli] <= 0) return 0;
  int64_t room = FreeGpu(n) > 0 ? core::kMilliPerGpu : 0;
  for (const int16_t used : share_used_[n]) {
    if (used > 0) room = std::max<int64_t>(room, core::kMilliPerGpu - used);
  }
  return room;
}

int64_t ClusterState::FreeCount(NodeIndex n, core::ResourceId id, int64_t each) const {
  if (id != core::kGpuMilli) return FreeOf(n, id) / each;
  if (allocatable_[n][core::kGpuMilli] <= 0) return 0;
  int64_t count = std::max(0, FreeGpu(n)) * (core::kMilliPerGpu / each);
  for (const int16_t used : share_used_[n]) {
    if (used > 0) count += (core::kMilliPerGpu - used) / each;
  }
  return count;
}

bool ClusterState::ShareFits(const core::Resources& req, NodeIndex n) const {
  if (req.v[core::kGpuMilli] > ShareRoom(n)) return false;
  core::Resources rest = req;
  rest.v[core::kGpuMilli] = 0;
  return rest.FitsInDifference(allocatable_[n], requested_[n]);
}

int ClusterState::TightestDevice(NodeIndex n, int64_t milli) const {
  if (allocatable_[n][core::kGpuMilli] <= 0 || milli <= 0) return -1;
  const std::vector<int16_t>& used = share_used_[n];
  int best = -1;
  for (int d = 0; d < static_cast<int>(used.size()); ++d) {
    if (used[d] > 0 && used[d] + milli <= core::kMilliPerGpu &&
        (best < 0 || used[d] > used[best])) {
      best = d;
    }
  }
  if (best >= 0 || FreeGpu(n) <= 0) return best;
  // A fully free device: the lowest index holding no share (whole-GPU
  // tasks take devices without an index, so one is below the node's GPUs).
  for (int d = 0;; ++d) {
    if (d >= static_cast<int>(used.size()) || used[d] == 0) return d;
  }
}

int ClusterState::TakeShare(NodeIndex n, int64_t milli, int device) {
  std::vector<int16_t>& used = share_used_[n];
  const auto gpus = static_cast<int>(allocatable_[n][core::kGpu]);
  const auto at = [&](int d) { return d < static_cast<int>(used.size()) ? used[d] : 0; };
  const bool takes = device >= 0 && device < std::max(gpus, static_cast<int>(used.size())) &&
                     at(device) + milli <= core::kMilliPerGpu && (at(device) > 0 || FreeGpu(n) > 0);
  if (!takes) device = TightestDevice(n, milli);
  if (device < 0) {
    // Over-committed (a pod already running where it does not fit: a node
    // shrunk, or pods bound by someone else): the least held device keeps
    // the count.
    device = 0;
    for (int d = 1; d < std::max(gpus, 1); ++d) {
      if (at(d) < at(device)) device = d;
    }
  }
  if (device >= static_cast<int>(used.size())) used.resize(device + 1, 0);
  if (used[device] == 0) {
    ++requested_[n][core::kGpu];
    ++total_requested_[core::kGpu];
    ++nonzero_requested_[n][core::kGpu];
  }
  used[device] = static_cast<int16_t>(used[device] + milli);
  return device;
}

void ClusterState::GiveShare(NodeIndex n, int64_t milli, int device) {
  std::vector<int16_t>& used = share_used_[n];
  assert(device >= 0 && device < static_cast<int>(used.size()) && used[device] >= milli);
  used[device] = static_cast<int16_t>(used[device] - milli);
  if (used[device] == 0) {
    --requested_[n][core::kGpu];
    --total_requested_[core::kGpu];
    --nonzero_requested_[n][core::kGpu];
  }
}

const std::vector<std::pair<ClusterState::TaskShape, int64_t>>& ClusterState::TaskCensus() const {
  for (; census_upto_ < NumJobs(); ++census_upto_) {
    const core::JobSpec& spec = *jobs_[census_upto_].spec;
    for (int r = 0; r < core::kNumRoles; ++r) {
      const core::RoleSpec& role = spec.roles()[r];
      const int64_t count =
          static_cast<core::Role>(r) == core::Role::kWorker ? role.min_replicas : role.replicas;
      if (count <= 0) continue;
      const core::Resources& req = role.resources;
      TaskShape shape{req[core::kCpu], 0, 0};
      if (req[core::kGpuMilli] > 0) {
        shape.gpu_milli = req[core::kGpuMilli];
        shape.gpus = 1;
      } else if (req[core::kGpu] > 0) {
        shape.gpu_milli = core::kMilliPerGpu;
        shape.gpus = req[core::kGpu];
      }
      auto it = std::find_if(census_.begin(), census_.end(),
                             [&](const auto& e) { return e.first == shape; });
      if (it == census_.end()) {
        census_.emplace_back(shape, count);
      } else {
        it->second += count;
      }
    }
  }
  return census_;
}

}  // namespace dlsched::engine
