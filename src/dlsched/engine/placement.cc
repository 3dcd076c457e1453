#include "dlsched/engine/placement.h"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>

#include "dlsched/engine/extension_points.h"
#include "dlsched/engine/profile.h"

namespace dlsched::engine {

JobTrace* CycleContext::StartTrace(int position) {
  JobTrace t;
  t.time = now;
  t.cycle = cycle;
  t.position = position;
  traces->push_back(std::move(t));
  return &traces->back();
}

JobTrace* CycleContext::OpenTrace() {
  if (traces->empty()) return nullptr;
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
// (free or allocatable), or "" when it fits. Worded once per thread and
// resource: a failure's count asks it of every node.
enum class Shortfall { kInsufficient, kTooSmall };
std::string_view Insufficient(const core::Resources& need, const core::Resources& have,
                              Shortfall word) {
  for (int r = 0; r < core::NumResources(); ++r) {
    const auto id = static_cast<core::ResourceId>(r);
    if (need[id] <= have[id]) continue;
    thread_local std::vector<std::string> worded[2];
    std::vector<std::string>& cache = worded[static_cast<int>(word)];
    if (cache.size() <= static_cast<size_t>(r)) cache.resize(static_cast<size_t>(r) + 1);
    if (cache[r].empty()) {
      cache[r] =
          fmt::format("{} {}", word == Shortfall::kTooSmall ? "too small for" : "insufficient",
                      core::ResourceName(id));
    }
    return cache[r];
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

int NodesToScore(int percentage, int nodes) {
  // kube-scheduler's numFeasibleNodesToFind (minFeasibleNodesToFind 100,
  // minFeasibleNodesPercentageToFind 5).
  constexpr int kMinNodes = 100;
  constexpr int kMinPercentage = 5;
  if (nodes < kMinNodes || percentage >= 100) return nodes;
  if (percentage <= 0) percentage = std::max(50 - nodes / 125, kMinPercentage);
  return std::max(static_cast<int>(static_cast<int64_t>(nodes) * percentage / 100), kMinNodes);
}

namespace {

// The profile's weighted total score of node `n` for task `t`; each
// scorer's score goes into `trace` when given.
double TotalScore(const CycleContext& ctx, TaskRef t, NodeIndex n, TaskTrace* trace) {
  const Profile& p = ctx.profile;
  const ClusterState& st = ctx.state();
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
  return total;
}

// Keeps the highest total (ties: the lowest node index).
void Better(NodeIndex n, double total, NodeIndex* best, double* best_total) {
  if (*best == kNoNode || total > *best_total || (total == *best_total && n < *best)) {
    *best = n;
    *best_total = total;
  }
}

// kube-scheduler's sampled search: from where the last search stopped,
// nodes in index order until `want` feasible ones are found; only those
// are scored. The next search starts after the last node looked at.
void SelectSampled(const CycleContext& ctx, TaskRef t, TaskTrace* trace, int want, bool filtered,
                   NodeIndex* best, double* best_total) {
  const ClusterState& st = ctx.state();
  const int num = st.NumNodes();
  const int need_gpu = static_cast<int>(st.Request(t)[core::kGpu]);
  ClusterState& mst = ctx.session.mutable_state();
  const int start = mst.NextStartNode() % num;
  int found = 0;
  int looked = 0;
  while (looked < num && found < want) {
    const NodeIndex n = (start + looked) % num;
    ++looked;
    if (!st.Present(n) || st.FreeGpuOf(n) < need_gpu || !FitsKnown(ctx, t, n, filtered)) continue;
    ++found;
    Better(n, TotalScore(ctx, t, n, trace), best, best_total);
  }
  mst.SetNextStartNode((start + looked) % num);
  if (trace != nullptr && found == want) {
    trace->note = fmt::format(
        "scored the first {} feasible nodes of {} from {} on (percentageOfNodesToScore: {}%)", want,
        st.NumPresentNodes(), st.NodeName(start), ctx.profile.percentage_of_nodes_to_score);
  }
}

// SelectNode for a task whose every feasible node is scored by node-local
// scorers: the scores kept for its kind of task (CycleState::NodeScores)
// are brought up to date by rescoring the nodes touched since
// (ClusterState::TouchedNodes), or built afresh from the free-GPU index.
// The same node wins as a full scan.
NodeIndex SelectKept(const CycleContext& ctx, TaskRef t, bool filtered) {
  const ClusterState& st = ctx.state();
  const std::vector<NodeIndex>& touched = st.TouchedNodes();
  const bool unconstrained = st.Job(t.job).spec->role(t.role).constraints.Empty();
  std::vector<CycleState::NodeScores>& kept = ctx.decisions.node_scores();
  CycleState::NodeScores* found = nullptr;
  for (CycleState::NodeScores& k : kept) {
    if ((k.job == t.job && k.role == t.role) ||
        (unconstrained && k.unconstrained && k.request == st.Request(t) &&
         k.scoring == st.ScoringRequest(t))) {
      found = &k;
      break;
    }
  }
  const bool fresh = found == nullptr;
  if (fresh && kept.size() < CycleState::kKeptNodeScores) {
    found = &kept.emplace_back();
  } else if (fresh) {
    found = &*std::min_element(kept.begin(), kept.end(),
                               [](const auto& a, const auto& b) { return a.used < b.used; });
  }
  CycleState::NodeScores& c = *found;
  c.used = ctx.decisions.NextNodeScoresUse();
  auto rescore = [&](NodeIndex n) {
    const bool feasible = FitsKnown(ctx, t, n, filtered);
    const double total = feasible ? TotalScore(ctx, t, n, nullptr) : 0;
    int32_t& at = c.slot[n];
    if (feasible && at >= 0) {
      c.totals[at] = total;
    } else if (feasible) {
      at = static_cast<int32_t>(c.nodes.size());
      c.nodes.push_back(n);
      c.totals.push_back(total);
    } else if (at >= 0) {
      const NodeIndex last = c.nodes.back();
      c.nodes[at] = last;
      c.totals[at] = c.totals.back();
      c.slot[last] = at;
      c.nodes.pop_back();
      c.totals.pop_back();
      at = -1;
    }
  };
  if (!fresh && c.generation == st.TouchedGeneration()) {
    for (size_t i = c.touched; i < touched.size(); ++i) rescore(touched[i]);
  } else {
    c.generation = st.TouchedGeneration();
    c.job = t.job;
    c.role = t.role;
    c.unconstrained = unconstrained;
    c.request = st.Request(t);
    c.scoring = st.ScoringRequest(t);
    c.nodes.clear();
    c.totals.clear();
    c.slot.assign(st.NumNodes(), -1);
    const int need_gpu = static_cast<int>(st.Request(t)[core::kGpu]);
    for (int g = std::max(need_gpu, 0); g <= st.MaxGpuPerNode(); ++g) {
      for (NodeIndex n : st.NodesWithFreeGpu(g)) rescore(n);
    }
  }
  c.touched = touched.size();
  NodeIndex best = kNoNode;
  double best_total = 0;
  for (size_t i = 0; i < c.nodes.size(); ++i) Better(c.nodes[i], c.totals[i], &best, &best_total);
  return best;
}

bool AllNodeLocal(const Profile& p) {
  return std::all_of(p.scorers.begin(), p.scorers.end(),
                     [](const auto& s) { return s->NodeLocal(); });
}

}  // namespace

NodeIndex SelectNode(const CycleContext& ctx, TaskRef t, TaskTrace* trace, NodeFailures* failures) {
  const ClusterState& st = ctx.state();
  const core::Resources& req = st.Request(t);
  const int need_gpu = static_cast<int>(req[core::kGpu]);
  const bool filtered = Filtered(ctx, t);  // once per task, not per node
  NodeIndex best = kNoNode;
  double best_total = -1;
  // Sampling only pays when more nodes have the GPUs than are to be
  // scored; otherwise every feasible node is scored, as kube would. A
  // failure's count looks at every node.
  const int want = failures != nullptr ? st.NumPresentNodes()
                                       : NodesToScore(ctx.profile.percentage_of_nodes_to_score,
                                                      st.NumPresentNodes());
  if (want >= st.NumPresentNodes() && trace == nullptr && failures == nullptr &&
      AllNodeLocal(ctx.profile)) {
    return SelectKept(ctx, t, filtered);
  }
  bool sampled = false;
  if (want < st.NumPresentNodes()) {
    int candidates = 0;
    for (int g = std::max(need_gpu, 0); g <= st.MaxGpuPerNode() && candidates <= want; ++g) {
      candidates += static_cast<int>(st.NodesWithFreeGpu(g).size());
    }
    if (candidates > want) {
      SelectSampled(ctx, t, trace, want, filtered, &best, &best_total);
      sampled = true;
    }
  }
  int visited = 0;
  for (int g = std::max(need_gpu, 0); !sampled && g <= st.MaxGpuPerNode(); ++g) {
    for (NodeIndex n : st.NodesWithFreeGpu(g)) {
      ++visited;
      if (failures != nullptr) {
        if (const std::string why = StaticFailure(ctx, t, n); !why.empty()) {
          failures->Add(why);
          continue;
        }
        if (const auto why = Insufficient(req, st.Free(n), Shortfall::kInsufficient);
            !why.empty()) {
          failures->Add(why);
          continue;
        }
      } else if (!FitsKnown(ctx, t, n, filtered)) {
        continue;
      }
      Better(n, TotalScore(ctx, t, n, trace), &best, &best_total);
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

namespace {

// The failure kept for `t` (CycleState::FailureMemo): one of a task
// without node constraints of the same role and request, with no node
// touched since; nullptr when there is none. Such a task fails the same
// way: whether it fits a node depends on its request, its constraints
// and the nodes' free room alone.
const CycleState::FailureMemo* KnownFailure(CycleContext& ctx, TaskRef t) {
  const ClusterState& st = ctx.state();
  if (!st.Job(t.job).spec->role(t.role).constraints.Empty()) return nullptr;
  for (const CycleState::FailureMemo& m : ctx.decisions.failures()) {
    if (m.generation == st.TouchedGeneration() && m.touched == st.TouchedNodes().size() &&
        m.role == t.role && m.request == st.Request(t)) {
      return &m;
    }
  }
  return nullptr;
}

// The per-node count of why `t` fits no node ("0/N nodes fit ..."): one
// pass over the nodes, kept for the tasks that will fail the same way when
// `t` has no node constraints.
std::string FailureSummary(CycleContext& ctx, TaskRef t) {
  const ClusterState& st = ctx.state();
  NodeFailures failures;
  SelectNode(ctx, t, nullptr, &failures);
  CycleState::FailureMemo m{st.TouchedGeneration(), st.TouchedNodes().size(), t.role, st.Request(t),
                            failures.Summary(t, st.NumPresentNodes())};
  if (!st.Job(t.job).spec->role(t.role).constraints.Empty()) return std::move(m.text);
  std::vector<CycleState::FailureMemo>& kept = ctx.decisions.failures();
  if (kept.size() < CycleState::kKeptFailures) return kept.emplace_back(std::move(m)).text;
  return (kept[ctx.decisions.NextFailureSlot()] = std::move(m)).text;
}

}  // namespace

bool PlaceTaskByScore(CycleContext& ctx, TaskRef t, std::string* reason) {
  JobTrace* jt = ctx.TraceOf(t.job);
  TaskTrace* tt = nullptr;
  if (jt != nullptr) {
    jt->tasks.push_back(TaskTrace{t, {}, kNoNode, {}, {}});
    tt = &jt->tasks.back();
  }
  // A task that will fail as one before it did is not searched again
  // (a failed search leaves no trace: not even the sampled search's next
  // start moves, as it looked at every node).
  if (tt == nullptr) {
    if (const CycleState::FailureMemo* known = KnownFailure(ctx, t)) {
      if (reason != nullptr) *reason = known->text;
      return false;
    }
  }
  const NodeIndex n = SelectNode(ctx, t, tt);
  if (n == kNoNode && tt != nullptr) {
    const ClusterState& st = ctx.state();
    const core::Resources& req = st.Request(t);
    for (NodeIndex m = 0; m < st.NumNodes(); ++m) {
      if (!st.Present(m)) continue;
      std::string why = StaticFailure(ctx, t, m);
      for (int r = 0; why.empty() && r < core::NumResources(); ++r) {
        const auto id = static_cast<core::ResourceId>(r);
        if (req[id] <= st.Free(m)[id]) continue;
        why = fmt::format("insufficient {} (needs {}, {} free)", core::ResourceName(id),
                          core::FormatResourceAmount(id, req[id]),
                          core::FormatResourceAmount(id, std::max<int64_t>(0, st.Free(m)[id])));
      }
      if (!why.empty()) tt->rejected.emplace_back(m, std::move(why));
    }
  }
  if (n == kNoNode) {
    // The per-node count costs a second pass, paid only by a failure whose
    // reason someone reads.
    if (reason != nullptr || tt != nullptr) {
      const std::string why = FailureSummary(ctx, t);
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
    if (const std::string why = StaticFailure(ctx, t, n); !why.empty()) {
      failures.Add(why);
      continue;
    }
    const auto why = Insufficient(req, st.Allocatable(n), Shortfall::kTooSmall);
    if (why.empty()) return std::nullopt;
    failures.Add(why);
  }
  return fmt::format("{} ({}) even on an empty cluster", failures.Summary(t, st.NumPresentNodes()),
                     core::FormatResources(req));
}

namespace {

std::optional<std::string> ComputeNeverFits(CycleContext& ctx, JobIndex j, int workers,
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

// The shape of job `j`'s gang of `workers`, or nullopt when a role has
// node constraints (the answer then depends on the job).
std::optional<ClusterState::GangShape> ShapeOf(const ClusterState& st, JobIndex j, int workers,
                                               bool exact) {
  const JobState& js = st.Job(j);
  ClusterState::GangShape shape;
  shape.exact = exact;
  for (int r = 0; r < core::kNumRoles; ++r) {
    const auto role = static_cast<core::Role>(r);
    const core::RoleSpec& spec = js.spec->role(role);
    shape.count[r] = role == core::Role::kWorker ? workers : spec.replicas;
    if (shape.count[r] == 0) continue;
    if (!spec.constraints.Empty()) return std::nullopt;
    shape.request[r] = spec.resources;
    shape.scoring[r] = js.scoring_request[r];
  }
  return shape;
}

}  // namespace

std::optional<std::string> NeverFits(CycleContext& ctx, JobIndex j, int workers,
                                     const Packer& packer, bool exact) {
  // Nothing placed changes the answer (the exact check evicts every job's
  // tasks), so it is remembered until a node changes, or, when exact, a
  // foreign or releasing pod comes or goes.
  const ClusterState& st = ctx.state();
  const JobState::NeverFitsMemo& m = st.Job(j).never_fits_memo;
  // A pod released and gone since (the simulator's completions) leaves the
  // holds as they were: none.
  if (m.node_epoch == st.NodeEpoch() && m.workers == workers && m.exact == exact &&
      (!exact || m.hold_epoch == st.HoldEpoch() || (m.no_holds && !st.HasHolds()))) {
    return m.never;
  }
  // Gangs of one shape share a yes (a no is worded for its job).
  ClusterState& mst = ctx.session.mutable_state();
  std::optional<ClusterState::GangShape> shape = ShapeOf(st, j, workers, exact);
  std::optional<std::string> never;
  if (!shape || !mst.FitsEmpty(*shape)) {
    never = ComputeNeverFits(ctx, j, workers, packer, exact);
    if (shape && !never) mst.NoteFitsEmpty(*shape);
  }
  JobState::NeverFitsMemo& w = mst.MutableJob(j).never_fits_memo;
  w = {st.NodeEpoch(), st.HoldEpoch(), workers, exact, !st.HasHolds(), never};
  return never;
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
  // Sorted as one contiguous array: no job's spec is read during the sort.
  struct Entry {
    double key;
    core::Time submit;
    JobIndex job;
  };
  std::vector<Entry> entries(jobs->size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const JobIndex j = (*jobs)[i];
    entries[i] = {keys[i], st.Job(j).spec->submit_time, j};
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.submit != b.submit) return a.submit < b.submit;
    return a.job < b.job;
  });
  for (size_t i = 0; i < entries.size(); ++i) (*jobs)[i] = entries[i].job;
  if (keys_out != nullptr) {
    keys_out->resize(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) (*keys_out)[i] = entries[i].key;
  }
}

// Up to this many jobs leaving or entering the kept order are found by a
// binary search each; more, by a pass over the whole order.
constexpr size_t kFewChanges = 8;

std::span<ClusterState::OrderEntry> UpdatePendingOrder(CycleContext& ctx) {
  ClusterState& st = ctx.session.mutable_state();
  using Entry = ClusterState::OrderEntry;
  auto before = [](const Entry& a, const Entry& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.submit != b.submit) return a.submit < b.submit;
    return a.job < b.job;
  };
  auto pending_phase = [&](JobIndex j) {
    const JobState& js = st.Job(j);
    return !js.removed &&
           (js.phase == core::JobPhase::kWaiting || js.phase == core::JobPhase::kStarving ||
            js.phase == core::JobPhase::kStandby);
  };
  ClusterState::PendingOrder& order = st.MutablePendingOrder();
  std::vector<Entry>& kept = order.entries;
  // The jobs that left since go, read from the cache's list rather than
  // from every kept job's state. One that left and came back goes too and
  // is merged in again below, unmarked: its reason changed meanwhile.
  if (order.valid && !st.LeftPending().empty()) {
    std::vector<JobIndex> gone;
    for (JobIndex j : st.LeftPending()) {
      JobState& js = st.MutableJob(j);
      if (!js.in_pending_order) continue;  // listed twice
      js.in_pending_order = false;
      gone.push_back(j);
    }
    if (gone.size() <= kFewChanges) {
      // Found by their keys (static: the same as when they came in).
      std::vector<double> gone_keys(gone.size());
      ctx.profile.order->Keys(st, gone, ctx.now, gone_keys);
      for (size_t i = 0; i < gone.size(); ++i) {
        const Entry e{gone_keys[i], st.Job(gone[i]).spec->submit_time, gone[i]};
        auto it = std::lower_bound(kept.begin(), kept.end(), e, before);
        if (it == kept.end() || it->job != gone[i]) {
          // Not where its key puts it (an order whose keys are not static
          // after all): looked for.
          it = std::find_if(kept.begin(), kept.end(),
                            [&](const Entry& k) { return k.job == gone[i]; });
        }
        if (it != kept.end()) kept.erase(it);
      }
    } else {
      std::sort(gone.begin(), gone.end());
      std::erase_if(kept, [&](const Entry& e) {
        return std::binary_search(gone.begin(), gone.end(), e.job);
      });
    }
  }
  // The jobs to merge in: every one in a pending phase when the order is
  // new, else those that entered one since and are not in it.
  std::vector<JobIndex> added;
  if (!order.valid) {
    for (core::JobPhase p :
         {core::JobPhase::kWaiting, core::JobPhase::kStarving, core::JobPhase::kStandby}) {
      const auto& in = st.JobsInPhase(p);
      added.insert(added.end(), in.begin(), in.end());
    }
    order.valid = true;
  } else {
    // A job may have entered more than once since (Waiting, then Standby).
    for (JobIndex j : st.EnteredPending()) {
      if (st.Job(j).in_pending_order || !pending_phase(j)) continue;
      st.MutableJob(j).in_pending_order = true;
      added.push_back(j);
    }
  }
  if (added.empty()) return kept;
  std::vector<double> added_keys(added.size());
  ctx.profile.order->Keys(st, added, ctx.now, added_keys);
  std::vector<Entry> fresh(added.size());
  for (size_t i = 0; i < added.size(); ++i) {
    const JobIndex j = added[i];
    fresh[i] = {added_keys[i], st.Job(j).spec->submit_time, j};
    st.MutableJob(j).in_pending_order = true;
  }
  std::sort(fresh.begin(), fresh.end(), before);
  if (fresh.size() <= kFewChanges) {
    for (const Entry& e : fresh)
      kept.insert(std::upper_bound(kept.begin(), kept.end(), e, before), e);
    return kept;
  }
  const size_t middle = kept.size();
  kept.insert(kept.end(), fresh.begin(), fresh.end());
  std::inplace_merge(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(middle), kept.end(),
                     before);
  return kept;
}

void OrderPending(CycleContext& ctx, std::vector<JobIndex>* jobs, std::vector<double>* keys) {
  const ClusterState& st = ctx.state();
  if (!ctx.profile.order->StaticKeys()) {
    st.PendingJobs(jobs);
    OrderJobs(ctx, jobs, keys);
    return;
  }
  jobs->clear();
  keys->clear();
  for (const ClusterState::OrderEntry& e : UpdatePendingOrder(ctx)) {
    if (!st.Job(e.job).IsPending()) continue;  // a Standby job holding its gang
    jobs->push_back(e.job);
    keys->push_back(e.key);
  }
}

void EmitPlan(const Session& session, CycleState& decisions, Plan* plan) {
  plan->revisit_at = decisions.revisit_at();
  std::vector<Action> jobs = decisions.TakeActions();
  plan->actions.clear();
  const auto& steps = session.Steps();
  plan->actions.reserve(steps.size() + jobs.size());
  // A task placed and taken off again in the same cycle (F-scheduling takes
  // back a start that must wait for held room) was never bound: neither
  // step goes to the backend.
  std::vector<char> drop;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].assigned) continue;
    for (size_t k = i; k-- > 0;) {
      if (!(steps[k].task == steps[i].task)) continue;
      if (steps[k].assigned && steps[k].node == steps[i].node) {
        drop.resize(steps.size(), 0);
        drop[k] = drop[i] = 1;
      }
      break;
    }
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!drop.empty() && drop[i]) continue;
    const auto& s = steps[i];
    plan->actions.push_back(
        Action{s.assigned ? ActionKind::kBind : ActionKind::kUnbind, s.task, s.node, 0, {}});
  }
  for (auto& a : jobs) plan->actions.push_back(std::move(a));
}

}  // namespace dlsched::engine
