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

std::string StaticFailure(const CycleContext& ctx, TaskRef t, NodeIndex n) {
  const ClusterState& st = ctx.state();
  if (!st.Schedulable(n)) return "unschedulable";
  for (const auto& f : ctx.profile.filters) {
    std::string why = f->Filter(st, t, n);
    if (!why.empty()) return why;
  }
  return {};
}

namespace {

// True when some filter of the profile may reject a node for `t`.
bool Filtered(const CycleContext& ctx, TaskRef t) {
  for (const auto& f : ctx.profile.filters) {
    if (f->AppliesTo(ctx.state(), t)) return true;
  }
  return false;
}

bool PassesFilters(const CycleContext& ctx, TaskRef t, NodeIndex n) {
  for (const auto& f : ctx.profile.filters) {
    if (f->AppliesTo(ctx.state(), t) && !f->Filter(ctx.state(), t, n).empty()) return false;
  }
  return true;
}

// Fits, with Filtered(ctx, t) known.
bool FitsKnown(const CycleContext& ctx, TaskRef t, NodeIndex n, bool filtered) {
  const ClusterState& st = ctx.state();
  // Cheapest first: the answer is all that is asked.
  if (!st.Schedulable(n) || !st.Request(t).FitsIn(st.Free(n))) return false;
  return !filtered || PassesFilters(ctx, t, n);
}

}  // namespace

bool Fits(const CycleContext& ctx, TaskRef t, NodeIndex n) {
  return FitsKnown(ctx, t, n, Filtered(ctx, t));
}

namespace {

// "<word> <resource>" for the first resource `need` has more of than `have`
// (free or allocatable), or "" when it fits.
std::string Insufficient(const core::Resources& need, const core::Resources& have,
                         std::string_view word) {
  for (int r = 0; r < core::NumResources(); ++r) {
    const auto id = static_cast<core::ResourceId>(r);
    if (need[id] > have[id]) return fmt::format("{} {}", word, core::ResourceName(id));
  }
  return {};
}

}  // namespace

void NodeFailures::Add(std::string_view reason, int count) {
  if (count <= 0) return;
  for (auto& [r, c] : counts_) {
    if (r == reason) {
      c += count;
      return;
    }
  }
  counts_.emplace_back(std::string(reason), count);
}

int NodeFailures::Count() const {
  int n = 0;
  for (const auto& [r, c] : counts_) n += c;
  return n;
}

std::string NodeFailures::Summary(TaskRef t, int nodes, int fit) const {
  std::vector<std::pair<std::string, int>> sorted = counts_;
  // Most nodes first; ties by reason, so the message does not depend on
  // the order nodes were visited in.
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::string out = fmt::format("{}/{} nodes fit {}", fit, nodes, core::RoleName(t.role));
  for (size_t i = 0; i < sorted.size(); ++i) {
    out += fmt::format("{}{} {}", i == 0 ? ": " : ", ", sorted[i].second, sorted[i].first);
  }
  return out;
}

NodeIndex SelectNode(const CycleContext& ctx, TaskRef t, TaskTrace* trace, NodeFailures* failures) {
  const ClusterState& st = ctx.state();
  const Profile& p = ctx.profile;
  const core::Resources& req = st.Request(t);
  const int need_gpu = static_cast<int>(req[core::kGpu]);
  NodeIndex best = kNoNode;
  double best_total = -1;
  int visited = 0;
  const bool filtered = Filtered(ctx, t);  // once per task, not per node
  for (int g = std::max(need_gpu, 0); g <= st.MaxGpuPerNode(); ++g) {
    for (NodeIndex n : st.NodesWithFreeGpu(g)) {
      ++visited;
      if (failures != nullptr) {
        std::string why = StaticFailure(ctx, t, n);
        if (why.empty()) why = Insufficient(req, st.Free(n), "insufficient");
        if (!why.empty()) {
          failures->Add(why);
          continue;
        }
      } else if (!FitsKnown(ctx, t, n, filtered)) {
        continue;
      }
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
  if (failures != nullptr) {
    // Every schedulable node sits in one bucket of the free-GPU index; those
    // below the task's GPUs were not visited.
    failures->Add("unschedulable", st.NumPresentNodes() - st.NumSchedulable());
    if (const int skipped = st.NumSchedulable() - visited; skipped > 0) {
      int most = std::min(need_gpu, st.MaxGpuPerNode() + 1) - 1;
      while (most > 0 && st.NodesWithFreeGpu(most).empty()) --most;
      failures->Add(fmt::format("insufficient {} (needs {}, at most {} free)",
                                core::ResourceName(core::kGpu), need_gpu, most),
                    skipped);
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

bool PlaceTaskByScore(CycleContext& ctx, TaskRef t, std::string* reason) {
  JobTrace* jt = ctx.TraceOf(t.job);
  TaskTrace* tt = nullptr;
  if (jt != nullptr) {
    jt->tasks.push_back(TaskTrace{t, {}, kNoNode, {}});
    tt = &jt->tasks.back();
  }
  const NodeIndex n = SelectNode(ctx, t, tt);
  if (n == kNoNode) {
    // The per-node count costs a second pass, paid only by a failure whose
    // reason someone reads.
    if (reason != nullptr || tt != nullptr) {
      NodeFailures failures;
      SelectNode(ctx, t, nullptr, &failures);
      const std::string why = failures.Summary(t, ctx.state().NumPresentNodes());
      if (reason != nullptr) *reason = why;
      if (tt != nullptr) tt->note = why;
    }
    return false;
  }
  ctx.session.Assign(t, n);
  return true;
}

std::optional<std::string> TaskNeverFits(const CycleContext& ctx, TaskRef t) {
  const ClusterState& st = ctx.state();
  const core::Resources& req = st.Request(t);
  NodeFailures failures;
  for (NodeIndex n = 0; n < st.NumNodes(); ++n) {
    if (!st.Present(n)) continue;
    std::string why = StaticFailure(ctx, t, n);
    if (why.empty()) why = Insufficient(req, st.Allocatable(n), "too small for");
    if (why.empty()) return std::nullopt;
    failures.Add(why);
  }
  return fmt::format("{} ({}) even on an empty cluster", failures.Summary(t, st.NumPresentNodes()),
                     core::FormatResources(req));
}

std::optional<std::string> NeverFits(CycleContext& ctx, JobIndex j, int workers,
                                     const Packer& packer, bool exact) {
  const ClusterState& st = ctx.state();
  const core::JobSpec& spec = *st.Job(j).spec;
  for (const core::Role role : {core::Role::kPS, core::Role::kChief, core::Role::kWorker}) {
    const int count = role == core::Role::kWorker ? workers : spec.role(role).replicas;
    if (count == 0) continue;
    if (auto why = TaskNeverFits(ctx, TaskRef{j, role, 0})) return why;
  }
  const core::Resources need = spec.Demand(workers);
  const core::Resources& capacity = st.Capacity();
  for (int r = 0; r < core::NumResources(); ++r) {
    const auto id = static_cast<core::ResourceId>(r);
    if (need[id] > capacity[id]) {
      return fmt::format("its gang of {} worker{} needs {} {}, the cluster has {} in all", workers,
                         workers == 1 ? "" : "s", core::FormatResourceAmount(id, need[id]),
                         core::ResourceName(id), core::FormatResourceAmount(id, capacity[id]));
    }
  }
  if (!exact) return std::nullopt;
  // The packer on the empty cluster: evict every placed task, try, undo.
  // Tracing is off meanwhile: these placements never happen.
  const JobIndex trace_job = ctx.trace_job;
  ctx.trace_job = -1;
  const Session::Mark mark = ctx.session.GetMark();
  for (int p = 0; p < core::kNumJobPhases; ++p) {
    const auto phase = static_cast<core::JobPhase>(p);
    if (phase == core::JobPhase::kSubmitted || core::IsFinal(phase)) continue;
    for (const JobIndex other : st.JobsInPhase(phase)) {
      const JobState& os = st.Job(other);
      for (int s = 0; s < static_cast<int>(os.task_node.size()); ++s) {
        if (os.task_node[s] != kNoNode) ctx.session.Evict(os.TaskAt(other, s));
      }
    }
  }
  std::string why;
  const bool ok = packer.PlaceGang(ctx, j, workers, &why);
  ctx.session.RollbackTo(mark);
  ctx.trace_job = trace_job;
  if (ok) return std::nullopt;
  return why + " even on an empty cluster";
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
  plan->revisit_at = decisions.revisit_at();
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
