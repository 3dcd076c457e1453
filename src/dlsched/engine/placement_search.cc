#include "dlsched/engine/placement.h"

#include <algorithm>
#include <bit>
#include <vector>

#include <fmt/format.h>

#include "dlsched/engine/placement_internal.h"
#include "dlsched/engine/profile.h"

// The search for a task's node (SelectNode): every feasible node scored,
// the scores kept between the tasks of a gang, or kube-scheduler's sampled
// search; and a task placed on the node it finds (PlaceTaskByScore).

namespace dlsched::engine {

using internal::Filtered;
using internal::FitsKnown;
using internal::Insufficient;
using internal::Shortfall;

int NodesToScore(int percentage, int nodes) {
  // kube-scheduler's numFeasibleNodesToFind (minFeasibleNodesToFind 100,
  // minFeasibleNodesPercentageToFind 5).
  constexpr int kMinNodes = 100;
  constexpr int kMinPercentage = 5;
  if (nodes < kMinNodes || percentage >= 100) return nodes;
  if (percentage <= 0) percentage = std::max(50 - nodes / 125, kMinPercentage);
  return std::max(static_cast<int>(static_cast<int64_t>(nodes) * percentage / 100), kMinNodes);
}

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

namespace {

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
  int& next_start = ctx.memos.next_start_node;
  const int start = next_start % num;
  int found = 0;
  int looked = 0;
  while (looked < num && found < want) {
    const NodeIndex n = (start + looked) % num;
    ++looked;
    if (!st.Present(n) || st.FreeGpuOf(n) < need_gpu || !FitsKnown(ctx, t, n, filtered)) continue;
    ++found;
    Better(n, TotalScore(ctx, t, n, trace), best, best_total);
  }
  next_start = (start + looked) % num;
  if (trace != nullptr && found == want) {
    trace->note = fmt::format(
        "scored the first {} feasible nodes of {} from {} on (percentageOfNodesToScore: {}%)", want,
        st.NumPresentNodes(), st.NodeName(start), ctx.profile.percentage_of_nodes_to_score);
  }
}

// SelectNode for a task whose every feasible node is scored by node-local
// scorers: the scores kept for its kind of task (Memos::NodeScores)
// are brought up to date by rescoring the nodes touched since
// (ClusterState::TouchedNodes), or built afresh from the free-GPU index.
// The same node wins as a full scan.
NodeIndex SelectKept(const CycleContext& ctx, TaskRef t, bool filtered) {
  const ClusterState& st = ctx.state();
  const std::vector<NodeIndex>& touched = st.TouchedNodes();
  const bool unconstrained = st.Job(t.job).spec->role(t.role).constraints.Empty();
  std::vector<Memos::NodeScores>& kept = ctx.memos.node_scores();
  Memos::NodeScores* found = nullptr;
  for (Memos::NodeScores& k : kept) {
    if ((k.job == t.job && k.role == t.role) ||
        (unconstrained && k.unconstrained && k.request == st.Request(t) &&
         k.scoring == st.ScoringRequest(t))) {
      found = &k;
      break;
    }
  }
  const bool fresh = found == nullptr;
  if (fresh && kept.size() < Memos::kKeptNodeScores) {
    found = &kept.emplace_back();
  } else if (fresh) {
    found = &*std::min_element(kept.begin(), kept.end(),
                               [](const auto& a, const auto& b) { return a.used < b.used; });
  }
  Memos::NodeScores& c = *found;
  c.used = ctx.memos.NextNodeScoresUse();
  // The better of two entries of the tournament (Better's order).
  auto pick = [&c](NodeIndex a, NodeIndex b) {
    if (a == kNoNode) return b;
    if (b == kNoNode) return a;
    return c.totals[b] > c.totals[a] || (c.totals[b] == c.totals[a] && b < a) ? b : a;
  };
  auto rescore = [&](NodeIndex n) {
    const bool feasible = FitsKnown(ctx, t, n, filtered);
    if (feasible) c.totals[n] = TotalScore(ctx, t, n, nullptr);
    size_t i = c.leaves + static_cast<size_t>(n);
    c.best[i] = feasible ? n : kNoNode;
    // Up to the first entry whose winner was another node and still is:
    // nothing above it changes.
    for (i /= 2; i >= 1; i /= 2) {
      const NodeIndex was = c.best[i];
      c.best[i] = pick(c.best[2 * i], c.best[2 * i + 1]);
      if (c.best[i] == was && was != n) break;
    }
  };
  if (!fresh && c.generation == st.TouchedGeneration()) {
    // Each node touched since once, however often it was.
    ctx.memos.NewPass(st.NumNodes());
    for (size_t i = c.touched; i < touched.size(); ++i) {
      if (!ctx.memos.Seen(touched[i])) rescore(touched[i]);
    }
  } else {
    c.generation = st.TouchedGeneration();
    c.job = t.job;
    c.role = t.role;
    c.unconstrained = unconstrained;
    c.request = st.Request(t);
    c.scoring = st.ScoringRequest(t);
    const auto nodes = static_cast<size_t>(st.NumNodes());
    c.leaves = std::bit_ceil(std::max<size_t>(nodes, 1));
    c.totals.assign(nodes, 0);
    c.best.assign(2 * c.leaves, kNoNode);
    const int need_gpu = static_cast<int>(st.Request(t)[core::kGpu]);
    for (int g = std::max(need_gpu, 0); g <= st.MaxGpuPerNode(); ++g) {
      for (NodeIndex n : st.NodesWithFreeGpu(g)) {
        if (!FitsKnown(ctx, t, n, filtered)) continue;
        c.totals[n] = TotalScore(ctx, t, n, nullptr);
        c.best[c.leaves + static_cast<size_t>(n)] = n;
      }
    }
    for (size_t i = c.leaves - 1; i >= 1; --i) c.best[i] = pick(c.best[2 * i], c.best[2 * i + 1]);
  }
  c.touched = touched.size();
  return c.best[1];
}

bool AllNodeLocal(const Profile& p) {
  return std::all_of(p.scorers.begin(), p.scorers.end(),
                     [](const auto& s) { return s->NodeLocal(); });
}

}  // namespace

NodeIndex SelectNode(const CycleContext& ctx, TaskRef t, TaskTrace* trace, NodeFailures* failures) {
  const ClusterState& st = ctx.state();
  const core::Resources& req = st.Request(t);
  if (!st.QuotaAdmits(t.job, req)) return kNoNode;  // no node would do
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
  // Kept scores follow the nodes touched; per-type quota changes a node's
  // answer without touching it (another node of its type filled the
  // line), and differs by queue: every node is looked at then.
  if (want >= st.NumPresentNodes() && trace == nullptr && failures == nullptr &&
      AllNodeLocal(ctx.profile) && !st.HasFlavors()) {
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
        if (auto why = st.FlavorRefusal(t.job, req, n)) {
          failures->Add(*why);
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
  // Per-type quotas make a node's answer depend on the job's queue too.
  if (!st.Job(t.job).spec->role(t.role).constraints.Empty() || st.HasFlavors()) return nullptr;
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
  // Its queue has no quota for it: no node is looked at.
  if (auto why = ctx.state().QuotaRefusal(t.job, ctx.state().Request(t))) {
    if (tt != nullptr) tt->note = *why;
    if (reason != nullptr) *reason = std::move(*why);
    return false;
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
      const core::Resources free = st.Free(m);
      if (const int r =
              core::FirstId(req, free, [&](core::ResourceId id) { return req[id] > free[id]; });
          why.empty() && r >= 0) {
        const auto id = static_cast<core::ResourceId>(r);
        why = fmt::format("insufficient {} (needs {}, {} free)", core::ResourceName(id),
                          core::FormatResourceAmount(id, req[id]),
                          core::FormatResourceAmount(id, std::max<int64_t>(0, free[id])));
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

}  // namespace dlsched::engine
