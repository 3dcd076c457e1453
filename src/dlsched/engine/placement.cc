#include "dlsched/engine/placement.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "dlsched/engine/extension_points.h"
#include "dlsched/engine/profile.h"

namespace dlsched::engine {

JobTrace* CycleContext::BeginTrace(JobIndex j, int position) {
  if (j != trace_job || traces == nullptr) return nullptr;
  JobTrace t;
  t.time = now;
  t.cycle = cycle;
  t.position = position;
  traces->push_back(std::move(t));
  return &traces->back();
}

JobTrace* CycleContext::TraceOf(JobIndex j) {
  if (j != trace_job || traces == nullptr || traces->empty()) return nullptr;
  JobTrace& t = traces->back();
  return t.cycle == cycle ? &t : nullptr;
}

NodeIndex SelectNode(const CycleContext& ctx, TaskRef t, TaskTrace* trace) {
  const ClusterState& st = ctx.state();
  const Profile& p = ctx.profile;
  const core::Resources& req = st.Request(t);
  const int need_gpu = static_cast<int>(req[core::kGpu]);
  NodeIndex best = kNoNode;
  double best_total = -1;
  for (int g = std::max(need_gpu, 0); g <= st.MaxGpuPerNode(); ++g) {
    for (NodeIndex n : st.NodesWithFreeGpu(g)) {
      if (!req.FitsIn(st.Free(n))) continue;
      double total = 0;
      ScoredNode scored;
      if (trace != nullptr) scored.node = n;
      for (size_t i = 0; i < p.scorers.size(); ++i) {
        const int64_t s = p.scorers[i]->Score(st, t, n);
        total += p.scorer_weights[i] * static_cast<double>(s);
        if (trace != nullptr) scored.scores.push_back(s);
      }
      if (trace != nullptr) {
        scored.total = total;
        trace->candidates.push_back(std::move(scored));
      }
      if (total > best_total || (total == best_total && n < best)) {
        best = n;
        best_total = total;
      }
    }
  }
  if (trace != nullptr) {
    std::sort(trace->candidates.begin(), trace->candidates.end(),
              [](const ScoredNode& a, const ScoredNode& b) {
                return a.total != b.total ? a.total > b.total : a.node < b.node;
              });
    trace->chosen = best;
  }
  return best;
}

std::string NoFitReason(const ClusterState& st, TaskRef t) {
  const core::Resources& req = st.Request(t);
  const std::string role(core::RoleName(t.role));
  if (req[core::kGpu] > 0) {
    const int max_free = st.MaxFreeGpu();
    if (req[core::kGpu] > max_free) {
      return fmt::format("{} needs {} nvidia.com/gpu on one node, largest free is {}", role,
                         req[core::kGpu], max_free);
    }
  }
  const core::Resources total_free = st.TotalFree();
  for (int r = 0; r < core::NumResources(); ++r) {
    const auto id = static_cast<core::ResourceId>(r);
    if (req[id] > total_free[id]) {
      return fmt::format("{} needs {} {}, the cluster has {} free", role,
                         core::FormatResourceAmount(id, req[id]), core::ResourceName(id),
                         core::FormatResourceAmount(id, total_free[id]));
    }
  }
  return fmt::format("no node has room for {} ({})", role, core::FormatResources(req));
}

bool PlaceTaskByScore(CycleContext& ctx, TaskRef t, std::string* reason) {
  JobTrace* jt = ctx.TraceOf(t.job);
  TaskTrace* tt = nullptr;
  if (jt != nullptr) {
    jt->tasks.push_back(TaskTrace{t, {}, kNoNode, {}});
    tt = &jt->tasks.back();
  }
  const NodeIndex n = SelectNode(ctx, t, tt);
  if (n == kNoNode) {
    if (reason != nullptr) *reason = NoFitReason(ctx.state(), t);
    if (tt != nullptr && reason != nullptr) tt->note = *reason;
    return false;
  }
  ctx.session.Assign(t, n);
  return true;
}

bool Packer::FitsEmptyCluster(const ClusterState& st, JobIndex j, int workers) const {
  const core::JobSpec& spec = *st.Job(j).spec;
  if (!spec.Demand(workers).FitsIn(st.Capacity())) return false;
  for (core::Role role : {core::Role::kPS, core::Role::kChief, core::Role::kWorker}) {
    if (spec.role(role).replicas == 0 && role != core::Role::kWorker) continue;
    const core::Resources& req = spec.role(role).resources;
    bool somewhere = false;
    for (NodeIndex n = 0; n < st.NumNodes() && !somewhere; ++n) {
      somewhere = st.Schedulable(n) && req.FitsIn(st.Allocatable(n));
    }
    if (!somewhere) return false;
  }
  return true;
}

void GangSlots(const ClusterState& st, JobIndex j, int workers, std::vector<TaskRef>* out) {
  out->clear();
  const JobState& js = st.Job(j);
  for (int i = 0; i < js.NumPs(); ++i) {
    if (js.NodeOf(core::Role::kPS, i) == kNoNode) out->push_back({j, core::Role::kPS, i});
  }
  for (int i = 0; i < js.NumChief(); ++i) {
    if (js.NodeOf(core::Role::kChief, i) == kNoNode) out->push_back({j, core::Role::kChief, i});
  }
  const int max_w = js.spec->role(core::Role::kWorker).max_replicas;
  int missing = workers - js.placed_workers;
  for (int i = 0; i < max_w && missing > 0; ++i) {
    if (js.NodeOf(core::Role::kWorker, i) == kNoNode) {
      out->push_back({j, core::Role::kWorker, i});
      --missing;
    }
  }
}

void OrderJobs(const CycleContext& ctx, std::vector<JobIndex>* jobs,
               std::vector<double>* keys_out) {
  const ClusterState& st = ctx.state();
  std::vector<double> keys(jobs->size());
  ctx.profile.order->Keys(st, *jobs, ctx.now, keys);
  std::vector<size_t> idx(jobs->size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    if (keys[a] != keys[b]) return keys[a] < keys[b];
    const core::Time sa = st.Job((*jobs)[a]).spec->submit_time;
    const core::Time sb = st.Job((*jobs)[b]).spec->submit_time;
    if (sa != sb) return sa < sb;
    return (*jobs)[a] < (*jobs)[b];
  });
  std::vector<JobIndex> sorted(jobs->size());
  for (size_t i = 0; i < idx.size(); ++i) sorted[i] = (*jobs)[idx[i]];
  *jobs = std::move(sorted);
  if (keys_out != nullptr) {
    keys_out->resize(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) (*keys_out)[i] = keys[idx[i]];
  }
}

void EmitPlan(const Session& session, CycleState& decisions, Plan* plan) {
  std::vector<Action> jobs = decisions.TakeActions();
  plan->actions.clear();
  plan->actions.reserve(session.Steps().size() + jobs.size());
  for (const auto& s : session.Steps()) {
    plan->actions.push_back(
        Action{s.assigned ? ActionKind::kBind : ActionKind::kUnbind, s.task, s.node, 0, {}});
  }
  for (auto& a : jobs) plan->actions.push_back(std::move(a));
}

}  // namespace dlsched::engine
