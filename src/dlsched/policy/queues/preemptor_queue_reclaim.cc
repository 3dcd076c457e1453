#include "dlsched/policy/queues/preemptor_queue_reclaim.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dlsched/config/job_checks.h"
#include "dlsched/engine/profile.h"
#include "dlsched/policy/framework/args.h"
#include "dlsched/policy/queues/queue_orders.h"

namespace dlsched::policy {

using core::PreemptionPolicy;
using engine::ClusterState;
using engine::JobIndex;
using engine::JobState;
using engine::QuotaBook;

namespace {

// A candidate's group, in the order candidates are tried.
enum class Kind : uint8_t {
  kReclaim,         // another queue's; J has Kueue's hierarchical advantage
  kWhileBorrowing,  // another queue's; J may take it while borrowing
  kNoBorrowOnly,    // another queue's; only if J then stays within nominal
  kWithin,          // J's own queue's
  kFairShare,       // another queue's, under fair sharing
  kVolcano,         // another queue's, above its deserved share (VolcanoReclaim)
};

struct Candidate {
  JobIndex job;
  Kind kind;
  double lost = 0;  // GPU-seconds a resize of it loses
  // Another queue's job: the lowest cohort over its queue and J's.
  int lca = -1;
};

// The preemption of one waiting job.
struct Request {
  JobIndex job = -1;
  int queue = -1;  // -1: none
  int workers = 0;
  core::Resources need;                    // what its gang needs beyond what it holds
  std::vector<core::ResourceId> short_of;  // what it is short of
  core::QueuePreemption policy;            // its queue's, defaults filled in
};

core::QueuePreemption Effective(const core::QueuePreemption& defaults, const QuotaBook& book,
                                int q) {
  core::QueuePreemption p = defaults;
  if (q < 0) return p;
  const core::QueuePreemption& own = book.Spec(q).preemption;
  if (own.within_queue) p.within_queue = own.within_queue;
  if (own.reclaim_within_cohort) p.reclaim_within_cohort = own.reclaim_within_cohort;
  if (own.borrow_within_cohort) p.borrow_within_cohort = own.borrow_within_cohort;
  if (own.max_priority_threshold) p.max_priority_threshold = own.max_priority_threshold;
  return p;
}

// Whether `policy` lets job `j` preempt job `v`.
bool Allows(std::optional<PreemptionPolicy> policy, const core::JobSpec& j,
            const core::JobSpec& v) {
  switch (policy.value_or(PreemptionPolicy::kNever)) {
    case PreemptionPolicy::kNever:
      return false;
    case PreemptionPolicy::kLowerPriority:
      return v.priority < j.priority;
    case PreemptionPolicy::kLowerOrNewerEqualPriority:
      return v.priority < j.priority || (v.priority == j.priority && j.submit_time < v.submit_time);
    case PreemptionPolicy::kAny:
      return true;
  }
  return false;
}

// Whether queue `q` holds more than its nominal quota of one of `ids`.
bool BorrowsAny(const QuotaBook& book, int q, std::span<const core::ResourceId> ids) {
  return book.Over(q, ids);
}

// Whether queue `q` and every cohort over it below `lca` hold more than
// their quota of one of `ids` (Kueue's test of a candidate for reclaim in
// a tree: the borrowing reaches up to the cohort J shares with it).
bool BorrowsUpTo(const QuotaBook& book, int q, int lca, std::span<const core::ResourceId> ids) {
  for (int n = q; n >= 0 && n != lca; n = book.Parent(n)) {
    if (!book.Over(n, ids)) return false;
  }
  return true;
}

// Whether queue `q` holding `extra` more stays within its nominal quota of
// every resource it lists.
bool WithinNominal(const QuotaBook& book, int q, const core::Resources& extra) {
  for (const core::QuotaLine& l : book.Spec(q).quota) {
    if (book.Usage(q)[l.id] + extra[l.id] > l.nominal) return false;
  }
  return true;
}

// The resources job `r.job` is short of: those its queue's quota lacks,
// else (the nodes lack room) every one its gang asks for.
std::vector<core::ResourceId> ShortOf(const ClusterState& st, int q, const core::Resources& need) {
  std::vector<core::ResourceId> out;
  const int width = need.Width();
  if (q >= 0) {
    const QuotaBook& book = st.Quotas();
    for (const core::QuotaLine& l : book.Spec(q).quota) {
      if (need[l.id] > 0 && need[l.id] > book.Available(q, l.id)) out.push_back(l.id);
    }
  }
  if (out.empty()) {
    for (int id = 0; id < width; ++id) {
      if (need[id] > 0) out.push_back(static_cast<core::ResourceId>(id));
    }
  }
  return out;
}

// GPU-seconds job `v` loses to a resize: while it checkpoints and
// relaunches, its GPUs make no progress.
double ResizeLoss(const JobState& vs, const core::Resources& held, bool restart) {
  if (!restart) return 0;
  return static_cast<double>(held[core::kGpu]) *
         (vs.spec->checkpoint_delay + vs.spec->launch_delay);
}

// Kueue's groups (reclaim, other queues, own queue); in each the lower
// priority, then the latest started, then the lower index.
void SortCandidates(const ClusterState& st, std::vector<Candidate>& out) {
  auto group = [](Kind k) { return k == Kind::kReclaim ? 0 : k == Kind::kWithin ? 2 : 1; };
  std::sort(out.begin(), out.end(), [&](const Candidate& a, const Candidate& b) {
    if (group(a.kind) != group(b.kind)) return group(a.kind) < group(b.kind);
    const JobState& ja = st.Job(a.job);
    const JobState& jb = st.Job(b.job);
    if (ja.spec->priority != jb.spec->priority) return ja.spec->priority < jb.spec->priority;
    if (ja.phase_since != jb.phase_since) return ja.phase_since > jb.phase_since;
    return a.job < b.job;
  });
}

// The candidates for `r`, in the order they are tried. Under `fair`
// sharing another queue's are kFairShare, borrowWithinCohort aside.
std::vector<Candidate> Candidates(const ClusterState& st, const Request& r, bool restart,
                                  bool fair) {
  const QuotaBook& book = st.Quotas();
  const core::JobSpec& js = *st.Job(r.job).spec;
  std::vector<Candidate> out;
  for (JobIndex v : st.JobsInPhase(core::JobPhase::kRunning)) {
    const JobState& vs = st.Job(v);
    if (v == r.job || vs.placed_tasks == 0) continue;
    const core::Resources held = st.Held(v);
    if (std::none_of(r.short_of.begin(), r.short_of.end(),
                     [&](core::ResourceId id) { return held[id] > 0; })) {
      continue;
    }
    Kind kind;
    int lca = -1;
    if (vs.queue == r.queue) {
      if (!Allows(r.policy.within_queue, js, *vs.spec)) continue;
      kind = Kind::kWithin;
    } else {
      // Another queue of J's cohort tree that borrows (under fair sharing,
      // that itself borrows; else up to the cohort it shares with J).
      lca = r.queue >= 0 && vs.queue >= 0 ? book.CommonAncestor(r.queue, vs.queue) : -1;
      if (lca < 0 ||
          !(fair ? BorrowsAny(book, vs.queue, r.short_of)
                 : BorrowsUpTo(book, vs.queue, lca, r.short_of)) ||
          !Allows(r.policy.reclaim_within_cohort, js, *vs.spec)) {
        continue;
      }
      if (fair) {
        kind = Kind::kFairShare;
      } else if (book.FitsBelow(r.queue, r.need, lca)) {
        // Kueue's hierarchical advantage: J fits within the quota of its
        // queue or of a cohort over it below the one it shares with v.
        kind = Kind::kReclaim;
      } else if (r.policy.borrow_within_cohort.value_or(PreemptionPolicy::kNever) ==
                     PreemptionPolicy::kNever ||
                 vs.spec->priority >= js.priority ||
                 (r.policy.max_priority_threshold &&
                  vs.spec->priority > *r.policy.max_priority_threshold)) {
        kind = Kind::kNoBorrowOnly;
      } else {
        kind = Kind::kWhileBorrowing;
      }
    }
    out.push_back({v, kind, ResizeLoss(vs, held, restart), lca});
  }
  SortCandidates(st, out);
  return out;
}

// An attempt: with `no_borrowing`, J must stay within its nominal quota.
class Attempt {
 public:
  // `over`: whether an other queue's job is still fair game (default: its
  // queue still borrows what J is short of).
  Attempt(engine::CycleContext& ctx, const Request& r, const engine::Packer& packer,
          bool no_borrowing, std::function<bool(int queue)> over = {})
      : ctx_(ctx), r_(r), packer_(packer), no_borrowing_(no_borrowing), over_(std::move(over)) {}

  bool Takes(const Candidate& c) const { return no_borrowing_ || c.kind != Kind::kNoBorrowOnly; }
  // An other queue's candidate stops being one once its queue no longer
  // borrows what J is short of (or, VolcanoReclaim's, holds no more than
  // it deserves).
  bool Valid(const Candidate& c) const {
    if (c.kind == Kind::kWithin) return true;
    const int q = ctx_.state().Job(c.job).queue;
    return over_ ? over_(q) : BorrowsUpTo(ctx_.state().Quotas(), q, c.lca, r_.short_of);
  }
  // Places J's gang on the session if it fits now.
  bool Places(std::string* why) const {
    if (no_borrowing_ && r_.queue >= 0 && !WithinNominal(ctx_.state().Quotas(), r_.queue, r_.need))
      return false;
    return packer_.PlaceGang(ctx_, r_.job, r_.workers, why);
  }

 private:
  engine::CycleContext& ctx_;
  const Request& r_;
  const engine::Packer& packer_;
  bool no_borrowing_;
  std::function<bool(int queue)> over_;
};

// Why `v` goes: "queue team-a reclaims its quota from team-b".
std::string Why(const ClusterState& st, const Request& r, const Candidate& c) {
  const QuotaBook& book = st.Quotas();
  const core::JobSpec& js = *st.Job(r.job).spec;
  const JobState& vs = st.Job(c.job);
  switch (c.kind) {
    case Kind::kReclaim:
    case Kind::kNoBorrowOnly:
      return fmt::format("queue {} reclaims its quota from {}", book.Spec(r.queue).name,
                         book.Spec(vs.queue).name);
    case Kind::kWhileBorrowing:
      return fmt::format("queue {} borrows from {} (priority {} > {})", book.Spec(r.queue).name,
                         book.Spec(vs.queue).name, core::PriorityClassName(js.priority),
                         core::PriorityClassName(vs.spec->priority));
    case Kind::kWithin:
      return fmt::format("priority {} > {}{}", core::PriorityClassName(js.priority),
                         core::PriorityClassName(vs.spec->priority),
                         r.queue >= 0 ? " in queue " + book.Spec(r.queue).name : "");
    case Kind::kFairShare:
      return fmt::format("fair sharing: queue {} borrows more than {}", book.Spec(vs.queue).name,
                         book.Spec(r.queue).name);
    case Kind::kVolcano:
      return fmt::format(
          "queue {} reclaims its deserved share from {}, which holds more than it "
          "deserves",
          book.Spec(r.queue).name, book.Spec(vs.queue).name);
  }
  return "";
}

// Whether a candidate may shed workers now: above its minimum, not resized
// at this instant already, its workers holding something.
bool Shrinkable(const JobState& vs, core::Time now) {
  const core::RoleSpec& w = vs.spec->role(core::Role::kWorker);
  return vs.placed_workers > w.min_replicas && !vs.SizedAt(now) && !w.resources.IsZero();
}

// The kResize of each candidate that gave `removed[k]` workers for J.
void RecordShrinks(engine::CycleContext& ctx, const Request& r,
                   std::span<const Candidate> candidates, const std::vector<int>& removed,
                   bool restart) {
  const ClusterState& st = ctx.state();
  const std::string& jname = st.Job(r.job).spec->name;
  for (size_t k = 0; k < candidates.size(); ++k) {
    if (removed[k] == 0) continue;
    const JobIndex v = candidates[k].job;
    ctx.decisions.Resize(v, st.Job(v).placed_workers,
                         fmt::format("scaled in {} worker{} of {} for {}: {}", removed[k],
                                     removed[k] == 1 ? "" : "s", st.Job(v).spec->name, jname,
                                     Why(st, r, candidates[k])),
                         restart, /*preempted=*/true, /*by=*/r.job);
  }
}

// Elastic reclaim: shrinks the resizable candidates towards their
// minimum, the least loss first, until J places. On success the session
// holds the removals and J's gang and the victims' kResize actions are in
// the plan.
bool ShrinkUntilPlaced(engine::CycleContext& ctx, const Request& r, const Attempt& attempt,
                       std::vector<Candidate> candidates, bool restart) {
  const ClusterState& st = ctx.state();
  std::erase_if(candidates, [&](const Candidate& c) {
    return !attempt.Takes(c) || !Shrinkable(st.Job(c.job), ctx.now);
  });
  if (candidates.empty()) return false;
  auto group = [](Kind k) { return k == Kind::kWithin ? 1 : 0; };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](const Candidate& a, const Candidate& b) {
                     if (group(a.kind) != group(b.kind)) return group(a.kind) < group(b.kind);
                     const auto pa = st.Job(a.job).spec->priority;
                     const auto pb = st.Job(b.job).spec->priority;
                     if (pa != pb) return pa < pb;
                     return a.lost < b.lost;
                   });
  std::vector<int> removed(candidates.size(), 0);
  bool placed = false;
  for (size_t k = 0; k < candidates.size() && !placed; ++k) {
    const Candidate& c = candidates[k];
    const JobState& vs = st.Job(c.job);
    const core::RoleSpec& w = vs.spec->role(core::Role::kWorker);
    for (int i = w.max_replicas - 1; i >= 0 && vs.placed_workers > w.min_replicas; --i) {
      if (!attempt.Valid(c)) break;
      const engine::TaskRef t{c.job, core::Role::kWorker, i};
      if (vs.NodeOf(core::Role::kWorker, i) == engine::kNoNode) continue;
      ctx.session.Evict(t);
      ++removed[k];
      if (attempt.Places(nullptr)) {
        placed = true;
        break;
      }
    }
  }
  if (!placed) return false;
  RecordShrinks(ctx, r, candidates, removed, restart);
  return true;
}

// Kueue's fill-back over `n` removals made since `mark`, after which J
// placed: each but the last, latest first, is given back if J still
// places without it (`remove(i)` makes removal i again). On success the
// session holds the removals kept and J's gang, and `spared[i]` says which
// were given back; on failure (only a non-deterministic packer: the same
// state placed J before) the session is back at `mark`.
std::optional<std::vector<uint8_t>> FillBack(engine::CycleContext& ctx, engine::Session::Mark mark,
                                             size_t n, const Attempt& attempt,
                                             const std::function<void(size_t)>& remove) {
  std::vector<uint8_t> spared(n, 0);
  auto replay = [&] {
    ctx.session.RollbackTo(mark);
    for (size_t i = 0; i < n; ++i) {
      if (!spared[i]) remove(i);
    }
    return attempt.Places(nullptr);
  };
  bool current = true;  // the session holds J's placement for `spared`
  for (size_t i = n - 1; i-- > 0;) {
    spared[i] = 1;
    current = replay();
    if (!current) spared[i] = 0;
  }
  if (!current && !replay()) {
    ctx.session.RollbackTo(mark);
    return std::nullopt;
  }
  return spared;
}

// Kueue's remove-until-fits, then fill-back: evicts whole candidates in
// order until J places, then gives back each victim but the last, latest
// first, that J does not need. On success the session holds the evictions
// and J's gang and the victims' kStop actions are in the plan.
bool EvictUntilPlaced(engine::CycleContext& ctx, const Request& r, const Attempt& attempt,
                      std::span<const Candidate> candidates, std::string* why) {
  const engine::Session::Mark mark = ctx.session.GetMark();
  std::vector<Candidate> victims;
  bool placed = false;
  for (const Candidate& c : candidates) {
    // A job shrunk for another one in this cycle keeps its new size.
    if (!attempt.Takes(c) || !attempt.Valid(c) || ctx.decisions.ResizeOf(c.job) != nullptr) {
      continue;
    }
    ctx.session.EvictJob(c.job);
    victims.push_back(c);
    why->clear();
    if (attempt.Places(why)) {
      placed = true;
      break;
    }
  }
  if (!placed) {
    ctx.session.RollbackTo(mark);
    return false;
  }
  const auto kept = FillBack(ctx, mark, victims.size(), attempt,
                             [&](size_t i) { ctx.session.EvictJob(victims[i].job); });
  if (!kept) {
    *why = "preemption did not reproduce its placement";
    return false;
  }
  const std::vector<uint8_t>& spared = *kept;
  const ClusterState& st = ctx.state();
  for (size_t i = 0; i < victims.size(); ++i) {
    if (spared[i]) continue;
    ctx.AddAction(
        engine::ActionKind::kStop, victims[i].job,
        fmt::format("preempted by {}: {}", st.Job(r.job).spec->name, Why(st, r, victims[i])), 0,
        r.job);
  }
  return true;
}

// ---- fair sharing (Kueue's fairPreemptions) --------------------------------

// Kueue's dominant resource share of node `n` (a queue or a cohort) while
// queue `q` holds `extra` more (less when negative), weighted: the largest,
// over the resources n counts, of borrowed x 1000 / what its parent could
// lend it, divided by its weight; infinite for a weight of 0 that borrows.
// Exact, where older Kueue releases rounded to whole numbers (floor(drs x
// 1000 / weight in thousandths)): with weights far from 1 that rounding makes
// unequal shares equal (a queue of weight 56 borrowing 10 of 640 GPUs has
// 0), and two queues at "0 <= 0" preempt each other in turn for ever;
// exact shares never do (docs/queues.md).
double KueueShare(const QuotaBook& book, int n, int q, const core::Resources& extra) {
  const double share = book.DominantShare(n, q, extra);
  if (share <= 0) return 0;
  const double weight = book.Weight(n);
  if (weight <= 0) return std::numeric_limits<double>::infinity();
  return share / weight;
}

// What fair preemption takes: a whole job, or (elastic) one of its workers.
struct Unit {
  size_t cand = 0;  // its candidate
  int worker = -1;  // -1: the whole job
  core::Resources res;
};

// Shares equal but for rounding compare equal.
constexpr double kShareEps = 1e-9;

// a <= b and a < b, with `kShareEps` of slack (a share may be infinite).
bool ShareAtMost(double a, double b) {
  return a <= b || (std::isfinite(b) && a <= b + kShareEps * std::max(1.0, b));
}
bool ShareBelow(double a, double b) {
  return std::isfinite(b) ? a < b - kShareEps * std::max(1.0, b) : std::isfinite(a);
}

// Kueue's TargetClusterQueueOrdering: which queue fair preemption takes
// from next. From the root of J's cohort tree down, each cohort picks its
// child of the largest share (a cohort over a queue when tied; among
// queues, or among cohorts, the lower index) until a queue is reached. A
// queue drops out once it has no units left or, unless it is J's, no
// longer borrows; a cohort once it no longer borrows (unless it is over
// J's queue) or all its children dropped out. Shares count J's gang as
// placed (Kueue simulates its admission first).
class TargetOrdering {
 public:
  TargetOrdering(const QuotaBook& book, const Request& r, std::span<const Candidate> candidates,
                 const ClusterState& st, const std::vector<Unit>& units)
      : book_(book),
        r_(r),
        units_(book.NumQueues()),
        pruned_(book.NumNodes(), 0),
        on_path_(book.NumNodes(), 0) {
    for (const Unit& u : units) units_[st.Job(candidates[u.cand].job).queue].push_back(u);
    root_ = r.queue;
    for (int n = book.Parent(r.queue); n >= 0; n = book.Parent(n)) on_path_[n] = 1, root_ = n;
  }

  // The next queue to take from, or -1 when none is left.
  int Next() {
    while (!pruned_[root_]) {
      const int q = NextIn(root_);
      if (q >= 0) return q;
    }
    return -1;
  }
  void Drop(int q) { pruned_[q] = 1; }
  std::vector<Unit>& Units(int q) { return units_[q]; }

  // Kueue's ComputeShares for target queue `t`: the shares of the
  // children of J's and t's lowest common cohort on their paths (the
  // "almost LCAs"): J's side's, and t's side's now and with `less` off t.
  double PreemptorShare(int t) const { return Share(AlmostLca(r_.queue, t), r_.need); }
  double TargetShare(int t, const core::Resources& less = {}) const {
    return KueueShare(book_, AlmostLca(t, r_.queue), t, core::Resources{} - less);
  }

 private:
  // The weighted share of node `n` with J's gang placed and `extra` more.
  double Share(int n, const core::Resources& extra) const {
    return KueueShare(book_, n, r_.queue, extra);
  }
  double Share(int n) const { return Share(n, r_.need); }
  bool Borrowing(int n) const { return book_.DominantShare(n, r_.queue, r_.need) > 0; }
  // The node over (or at) `a` whose parent is the lowest cohort over both.
  int AlmostLca(int a, int b) const {
    const int lca = book_.CommonAncestor(a, b);
    while (book_.Parent(a) != lca) a = book_.Parent(a);
    return a;
  }

  int NextIn(int cohort) {
    int best_q = -1, best_c = -1;
    double q_share = -1, c_share = -1;
    for (const int n : book_.Children(cohort)) {
      if (pruned_[n]) continue;
      const bool queue = n < book_.NumQueues();
      const bool drop = queue ? units_[n].empty() || (n != r_.queue && !Borrowing(n))
                              : !Borrowing(n) && !on_path_[n];
      if (drop) {
        pruned_[n] = 1;
        continue;
      }
      const double share = Share(n);
      if (queue && (best_q < 0 || ShareBelow(q_share, share))) best_q = n, q_share = share;
      if (!queue && (best_c < 0 || ShareBelow(c_share, share))) best_c = n, c_share = share;
    }
    if (best_q < 0 && best_c < 0) {
      pruned_[cohort] = 1;
      return -1;
    }
    if (best_c >= 0 && (best_q < 0 || ShareAtMost(q_share, c_share))) return NextIn(best_c);
    return best_q;
  }

  const QuotaBook& book_;
  const Request& r_;
  std::vector<std::vector<Unit>> units_;  // by queue, in candidate order
  std::vector<uint8_t> pruned_;
  std::vector<uint8_t> on_path_;  // the cohorts over J's queue
  int root_ = -1;
};

bool Allowed(FairStrategy s, double preemptor_new, double target_old, double target_new) {
  return s == FairStrategy::kLessThanOrEqualToFinalShare ? ShareAtMost(preemptor_new, target_new)
                                                         : ShareBelow(preemptor_new, target_old);
}

class FairPreemption {
 public:
  FairPreemption(engine::CycleContext& ctx, const Request& r, const Attempt& attempt,
                 std::span<const Candidate> candidates, std::span<const FairStrategy> strategies)
      : ctx_(ctx),
        r_(r),
        attempt_(attempt),
        candidates_(candidates),
        strategies_(strategies),
        mark_(ctx.session.GetMark()) {}

  // Kueue's fairPreemptions over `units` (in candidate order): on success
  // the session holds the removals and J's gang, and the targets (after
  // fill-back) are returned; on failure the session is as it was.
  std::optional<std::vector<Unit>> Run(const std::vector<Unit>& units) {
    const ClusterState& st = ctx_.state();
    const QuotaBook& book = st.Quotas();
    TargetOrdering first(book, r_, candidates_, st, units);
    std::vector<Unit> retry;
    bool fits = false;
    for (int t = first.Next(); t >= 0 && !fits; t = first.Next()) {
      std::vector<Unit>& left = first.Units(t);
      if (t == r_.queue) {  // J's own queue: its lower priority jobs go as they come
        const Unit u = left.front();
        left.erase(left.begin());
        fits = Take(u);
        continue;
      }
      const double preemptor_new = first.PreemptorShare(t);
      const double target_old = first.TargetShare(t);
      while (!left.empty()) {
        const Unit u = left.front();
        left.erase(left.begin());
        if (Allowed(strategies_[0], preemptor_new, target_old, first.TargetShare(t, u.res))) {
          fits = Take(u);
          break;  // the shares changed: the largest again
        }
        retry.push_back(u);
      }
    }
    if (!fits && strategies_.size() > 1) {
      // The second strategy: once per queue, its first unit left.
      // (A unit the first strategy took later is no longer a candidate.)
      std::erase_if(retry, [&](const Unit& u) {
        return std::any_of(taken_.begin(), taken_.end(), [&](const Unit& t) {
          return t.cand == u.cand && (t.worker < 0 || t.worker == u.worker);
        });
      });
      TargetOrdering second(book, r_, candidates_, st, retry);
      for (int t = second.Next(); t >= 0 && !fits; t = second.Next()) {
        if (Allowed(strategies_[1], second.PreemptorShare(t), second.TargetShare(t), 0)) {
          fits = Take(second.Units(t).front());
        }
        second.Drop(t);
      }
    }
    if (!fits) {
      ctx_.session.RollbackTo(mark_);
      return std::nullopt;
    }
    return FillBack();
  }

 private:
  // Removes `u`; whether J places now (its gang then on the session).
  bool Take(const Unit& u) {
    Remove(u);
    taken_.push_back(u);
    return attempt_.Places(nullptr);
  }

  // Takes `u` off the session: its job, or its one worker.
  void Remove(const Unit& u) {
    const JobIndex v = candidates_[u.cand].job;
    if (u.worker < 0) {
      ctx_.session.EvictJob(v);
    } else {
      ctx_.session.Evict({v, core::Role::kWorker, u.worker});
    }
  }

  // Kueue's fill-back: the targets J needs.
  std::optional<std::vector<Unit>> FillBack() {
    const auto spared = policy::FillBack(ctx_, mark_, taken_.size(), attempt_,
                                         [&](size_t i) { Remove(taken_[i]); });
    if (!spared) return std::nullopt;
    std::vector<Unit> out;
    for (size_t i = 0; i < taken_.size(); ++i) {
      if (!(*spared)[i]) out.push_back(taken_[i]);
    }
    return out;
  }

  engine::CycleContext& ctx_;
  const Request& r_;
  const Attempt& attempt_;
  std::span<const Candidate> candidates_;
  std::span<const FairStrategy> strategies_;
  engine::Session::Mark mark_;
  std::vector<Unit> taken_;
};

// Fair sharing, elastic: the units are the workers of the candidates that
// run more than their minimum (the last worker first), so a borrower
// shrinks as far as the strategies allow before anyone is evicted. On
// success J is placed and the kResize actions are in the plan.
bool FairShrink(engine::CycleContext& ctx, const Request& r, const Attempt& attempt,
                std::span<const Candidate> candidates, std::span<const FairStrategy> strategies,
                bool restart) {
  const ClusterState& st = ctx.state();
  std::vector<Unit> units;
  for (size_t k = 0; k < candidates.size(); ++k) {
    const JobState& vs = st.Job(candidates[k].job);
    if (!Shrinkable(vs, ctx.now)) continue;
    const core::RoleSpec& w = vs.spec->role(core::Role::kWorker);
    int spare = vs.placed_workers - w.min_replicas;
    for (int i = w.max_replicas - 1; i >= 0 && spare > 0; --i) {
      if (vs.NodeOf(core::Role::kWorker, i) == engine::kNoNode) continue;
      units.push_back({k, i, w.resources});
      --spare;
    }
  }
  if (units.empty()) return false;
  FairPreemption fair(ctx, r, attempt, candidates, strategies);
  const auto taken = fair.Run(units);
  if (!taken) return false;
  std::vector<int> removed(candidates.size(), 0);
  for (const Unit& u : *taken) ++removed[u.cand];
  RecordShrinks(ctx, r, candidates, removed, restart);
  return true;
}

// Fair sharing, whole jobs. On success J is placed and the kStop actions
// are in the plan.
bool FairEvict(engine::CycleContext& ctx, const Request& r, const Attempt& attempt,
               std::span<const Candidate> candidates, std::span<const FairStrategy> strategies) {
  const ClusterState& st = ctx.state();
  std::vector<Unit> units;
  for (size_t k = 0; k < candidates.size(); ++k) {
    // A job shrunk for another one in this cycle keeps its new size.
    if (ctx.decisions.ResizeOf(candidates[k].job) != nullptr) continue;
    units.push_back({k, -1, st.Held(candidates[k].job)});
  }
  FairPreemption fair(ctx, r, attempt, candidates, strategies);
  const auto taken = fair.Run(units);
  if (!taken) return false;
  for (const Unit& u : *taken) {
    const Candidate& c = candidates[u.cand];
    ctx.AddAction(engine::ActionKind::kStop, c.job,
                  fmt::format("preempted by {}: {}", st.Job(r.job).spec->name, Why(st, r, c)), 0,
                  r.job);
  }
  return true;
}

std::string PolicyWords(const core::QueuePreemption& p) {
  return fmt::format(
      "withinQueue {}, reclaimWithinCohort {}",
      core::PreemptionPolicyName(p.within_queue.value_or(PreemptionPolicy::kNever)),
      core::PreemptionPolicyName(p.reclaim_within_cohort.value_or(PreemptionPolicy::kNever)));
}

}  // namespace

bool QueueReclaimPreemptor::Preempt(engine::CycleContext& ctx, JobIndex j, int workers,
                                    const engine::Packer& packer, std::string* reason) const {
  const ClusterState& st = ctx.state();
  const QuotaBook& book = st.Quotas();
  const JobState& js = st.Job(j);
  Request r;
  r.job = j;
  r.queue = js.queue;
  r.workers = workers;
  r.need = js.spec->Demand(workers) - st.Held(j);
  r.policy = Effective(options_.defaults, book, r.queue);
  auto fail = [&](std::string text) {
    if (reason != nullptr) *reason = std::move(text);
    return false;
  };
  if (r.queue >= 0) {
    if (std::optional<std::string> never = book.NeverHolds(r.queue, r.need)) {
      return fail("no preemption can help: " + *never);
    }
  }
  r.short_of = ShortOf(st, r.queue, r.need);
  // Fair sharing applies to a queue in a cohort; others preempt as Kueue's
  // classical preemption does.
  const bool fair = options_.fair_sharing && r.queue >= 0 && !book.Spec(r.queue).cohort.empty();
  const std::vector<Candidate> candidates = Candidates(st, r, options_.restart_on_resize, fair);
  const std::string qname = r.queue >= 0 ? "queue " + book.Spec(r.queue).name : "no queue";
  if (candidates.empty()) {
    return fail(
        fmt::format("no running job it may preempt ({}: {})", qname, PolicyWords(r.policy)));
  }

  if (fair) {
    const Attempt attempt(ctx, r, packer, /*no_borrowing=*/false);
    if (options_.elastic &&
        FairShrink(ctx, r, attempt, candidates, options_.strategies, options_.restart_on_resize)) {
      return true;
    }
    if (FairEvict(ctx, r, attempt, candidates, options_.strategies)) return true;
    return fail(fmt::format(
        "fair sharing allows no preemption that makes room ({}: {}; the {} running job{} it "
        "may preempt)",
        qname, PolicyWords(r.policy), candidates.size(), candidates.size() == 1 ? "" : "s"));
  }

  // Kueue's attempts: "borrowing allowed" (false) and "no borrowing" (true).
  const bool others = std::any_of(candidates.begin(), candidates.end(),
                                  [](const Candidate& c) { return c.kind != Kind::kWithin; });
  const bool reclaim = std::any_of(candidates.begin(), candidates.end(),
                                   [](const Candidate& c) { return c.kind == Kind::kReclaim; });
  const bool borrow_forbidden =
      r.policy.borrow_within_cohort.value_or(PreemptionPolicy::kNever) == PreemptionPolicy::kNever;
  bool under_nominal = r.queue >= 0;  // strictly, on what J is short of
  for (core::ResourceId id : r.short_of) {
    const core::QuotaLine* l = r.queue >= 0 ? book.Spec(r.queue).Line(id) : nullptr;
    if (l != nullptr && l->nominal <= book.Usage(r.queue)[id]) under_nominal = false;
  }
  std::vector<bool> attempts;
  if (!others || (borrow_forbidden && !under_nominal)) {
    attempts = {false};
  } else if (borrow_forbidden && !reclaim) {
    attempts = {true, false};
  } else {
    attempts = {false, true};
  }

  std::string why;
  for (const bool no_borrowing : attempts) {
    const Attempt attempt(ctx, r, packer, no_borrowing);
    if (options_.elastic) {
      const engine::Session::Mark mark = ctx.session.GetMark();
      if (ShrinkUntilPlaced(ctx, r, attempt, candidates, options_.restart_on_resize)) return true;
      ctx.session.RollbackTo(mark);
    }
    if (EvictUntilPlaced(ctx, r, attempt, candidates, &why)) return true;
  }
  return fail(
      fmt::format("preempting the {} running job{} it may preempt ({}: {}) would not make "
                  "room{}",
                  candidates.size(), candidates.size() == 1 ? "" : "s", qname,
                  PolicyWords(r.policy), why.empty() ? "" : ": " + why));
}

core::Result<std::unique_ptr<engine::Preemptor>> MakeQueueReclaim(const YAML::Node& args,
                                                                  const std::string& where) {
  ArgReader reader(args, where);
  QueueReclaimPreemptor::Options o;
  for (core::PreemptionField f : core::kPreemptionFields) {
    const std::string_view key = core::PreemptionFieldKey(f);
    if (!reader.Has(key)) continue;
    const YAML::Node n = reader.Node(key);
    o.defaults.Field(f) = n.IsScalar() ? core::ParsePreemptionPolicy(f, n.Scalar()) : std::nullopt;
    if (!o.defaults.Field(f)) return reader.Expected(key, core::AllowedPolicies(f), n);
  }
  if (reader.Has("maxPriorityThreshold")) {
    const YAML::Node n = reader.Node("maxPriorityThreshold");
    if (n.IsScalar()) o.defaults.max_priority_threshold = config::PriorityFromName(n.Scalar());
    if (!o.defaults.max_priority_threshold) {
      return reader.Expected("maxPriorityThreshold", "low, normal or high", n);
    }
  }
  DLSCHED_TRY_LET(elastic, reader.Bool("elastic", true));
  DLSCHED_TRY_LET(restart, reader.Bool("restartOnResize", true));
  DLSCHED_TRY_LET(fair, reader.Bool("fairSharing", false));
  if (reader.Has("preemptionStrategies")) {
    const YAML::Node n = reader.Node("preemptionStrategies");
    const std::string allowed =
        "[LessThanOrEqualToFinalShare], [LessThanInitialShare] or [LessThanOrEqualToFinalShare, "
        "LessThanInitialShare]";
    o.strategies.clear();
    if (n.IsSequence()) {
      for (const YAML::Node& item : n) {
        if (!item.IsScalar()) break;
        if (item.Scalar() == "LessThanOrEqualToFinalShare") {
          o.strategies.push_back(FairStrategy::kLessThanOrEqualToFinalShare);
        } else if (item.Scalar() == "LessThanInitialShare") {
          o.strategies.push_back(FairStrategy::kLessThanInitialShare);
        } else {
          o.strategies.clear();
          break;
        }
      }
    }
    // Kueue's validation: one of the three lists.
    const bool valid = (o.strategies.size() == 1) ||
                       (o.strategies.size() == 2 &&
                        o.strategies[0] == FairStrategy::kLessThanOrEqualToFinalShare &&
                        o.strategies[1] == FairStrategy::kLessThanInitialShare);
    if (!valid) return reader.Expected("preemptionStrategies", allowed, n);
    if (!*fair) {
      return core::Errorf("{}: preemptionStrategies: only with fairSharing: true", where);
    }
  }
  DLSCHED_TRY(reader.Finish());
  o.fair_sharing = *fair;
  o.elastic = *elastic;
  o.restart_on_resize = *restart;
  return std::make_unique<QueueReclaimPreemptor>(std::move(o));
}

// ---- VolcanoReclaim ----------------------------------------------------------

namespace {

// What each queue deserves this cycle, per resource: Volcano's
// proportion (weights, water-filled over what the queues ask for) or
// capacity (each queue's configured `deserved`).
Shares DeservedShares(const ClusterState& st, VolcanoReclaimPreemptor::Deserved how) {
  if (how == VolcanoReclaimPreemptor::Deserved::kProportion) return ProportionDeserved(st);
  const QuotaBook& book = st.Quotas();
  Shares out(static_cast<size_t>(book.NumQueues()));
  for (int q = 0; q < book.NumQueues(); ++q) {
    const core::Resources& d = book.Spec(q).deserved;
    core::FirstId(d, [&](core::ResourceId id) {
      if (d[id] > 0) out[q].emplace_back(id, static_cast<double>(d[id]));
      return false;
    });
  }
  return out;
}

// Rounding slack: shares are fractions of canonical units.
constexpr double kShareSlack = 1e-6;

}  // namespace

bool VolcanoReclaimPreemptor::Preempt(engine::CycleContext& ctx, JobIndex j, int workers,
                                      const engine::Packer& packer, std::string* reason) const {
  const ClusterState& st = ctx.state();
  const QuotaBook& book = st.Quotas();
  const JobState& js = st.Job(j);
  auto fail = [&](std::string text) {
    if (reason != nullptr) *reason = std::move(text);
    return false;
  };
  if (js.queue < 0) return fail("a job of no queue reclaims nothing (VolcanoReclaim)");
  Request r;
  r.job = j;
  r.queue = js.queue;
  r.workers = workers;
  r.need = js.spec->Demand(workers) - st.Held(j);
  const Shares deserved = DeservedShares(st, options_.deserved);
  const std::string& qname = book.Spec(r.queue).name;
  // Volcano's preemptive check: the queue, with J, stays within what it
  // deserves on every resource J asks for.
  for (const auto& [id, d] : deserved[r.queue]) {
    if (r.need[id] > 0 &&
        static_cast<double>(book.Usage(r.queue)[id] + r.need[id]) > d + kShareSlack) {
      return fail(fmt::format(
          "queue {} would hold more than it deserves: {} {} with it, {} deserved", qname,
          core::FormatResourceAmount(id, book.Usage(r.queue)[id] + r.need[id]),
          core::ResourceName(id),
          core::FormatResourceAmount(id, static_cast<int64_t>(std::floor(d + kShareSlack)))));
    }
  }
  // Overused: a queue holding more than it deserves of some resource.
  auto overused = [&](int q) {
    return std::any_of(deserved[q].begin(), deserved[q].end(), [&](const auto& e) {
      return static_cast<double>(book.Usage(q)[e.first]) > e.second + kShareSlack;
    });
  };
  r.short_of = ShortOf(st, r.queue, r.need);
  const core::Resources& task = js.spec->role(core::Role::kWorker).resources;
  std::vector<Candidate> candidates;
  for (JobIndex v : st.JobsInPhase(core::JobPhase::kRunning)) {
    const JobState& vs = st.Job(v);
    if (v == r.job || vs.placed_tasks == 0 || vs.queue < 0 || vs.queue == r.queue) continue;
    if (!overused(vs.queue)) continue;
    const core::Resources held = st.Held(v);
    if (std::none_of(r.short_of.begin(), r.short_of.end(),
                     [&](core::ResourceId id) { return held[id] > 0; })) {
      continue;
    }
    // Volcano's proportion: a queue holding less than one of J's tasks of
    // some resource gives nothing.
    bool enough = true;
    core::FirstId(task, [&](core::ResourceId id) {
      if (book.Usage(vs.queue)[id] < task[id]) enough = false;
      return !enough;
    });
    if (!enough) continue;
    candidates.push_back({v, Kind::kVolcano, ResizeLoss(vs, held, options_.restart_on_resize)});
  }
  SortCandidates(st, candidates);
  if (candidates.empty()) {
    return fail(fmt::format(
        "no running job of a queue holding more than it deserves (queue {} reclaims its share)",
        qname));
  }
  const Attempt attempt(ctx, r, packer, /*no_borrowing=*/false, overused);
  if (options_.elastic) {
    const engine::Session::Mark mark = ctx.session.GetMark();
    if (ShrinkUntilPlaced(ctx, r, attempt, candidates, options_.restart_on_resize)) return true;
    ctx.session.RollbackTo(mark);
  }
  std::string why;
  if (EvictUntilPlaced(ctx, r, attempt, candidates, &why)) return true;
  return fail(fmt::format(
      "reclaiming from the {} running job{} of queues above their deserved share would not make "
      "room (queue {}){}",
      candidates.size(), candidates.size() == 1 ? "" : "s", qname, why.empty() ? "" : ": " + why));
}

core::Result<std::unique_ptr<engine::Preemptor>> MakeVolcanoReclaim(const YAML::Node& args,
                                                                    const std::string& where) {
  ArgReader reader(args, where);
  VolcanoReclaimPreemptor::Options o;
  if (reader.Has("deserved")) {
    const YAML::Node n = reader.Node("deserved");
    const std::string v = n.IsScalar() ? n.Scalar() : "";
    if (v == "Proportion") {
      o.deserved = VolcanoReclaimPreemptor::Deserved::kProportion;
    } else if (v == "Capacity") {
      o.deserved = VolcanoReclaimPreemptor::Deserved::kCapacity;
    } else {
      return reader.Expected("deserved", "Proportion or Capacity", n);
    }
  }
  DLSCHED_TRY_LET(elastic, reader.Bool("elastic", true));
  DLSCHED_TRY_LET(restart, reader.Bool("restartOnResize", true));
  DLSCHED_TRY(reader.Finish());
  o.elastic = *elastic;
  o.restart_on_resize = *restart;
  return std::make_unique<VolcanoReclaimPreemptor>(o);
}

}  // namespace dlsched::policy
