#include "dlsched/policy/queues/preemptor_queue_reclaim.h"

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dlsched/config/job_checks.h"
#include "dlsched/engine/profile.h"
#include "dlsched/policy/framework/args.h"

namespace dlsched::policy {

using core::PreemptionPolicy;
using engine::ClusterState;
using engine::JobIndex;
using engine::JobState;
using engine::QuotaBook;

namespace {

// A candidate's group, in the order candidates are tried.
enum class Kind : uint8_t {
  kReclaim,         // another queue's; J fits in its own nominal quota
  kWhileBorrowing,  // another queue's; J may take it while borrowing
  kNoBorrowOnly,    // another queue's; only if J then stays within nominal
  kWithin,          // J's own queue's
};

struct Candidate {
  JobIndex job;
  Kind kind;
  double lost = 0;  // GPU-seconds a resize of it loses
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
  for (core::ResourceId id : ids) {
    const core::QuotaLine* l = book.Spec(q).Line(id);
    if (l != nullptr && book.Usage(q)[id] > l->nominal) return true;
  }
  return false;
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

// The candidates for `r`, in the order they are tried.
std::vector<Candidate> Candidates(const ClusterState& st, const Request& r, bool restart) {
  const QuotaBook& book = st.Quotas();
  const core::JobSpec& js = *st.Job(r.job).spec;
  const std::string* cohort =
      r.queue >= 0 && !book.Spec(r.queue).cohort.empty() ? &book.Spec(r.queue).cohort : nullptr;
  // J fits in its own queue's nominal quota, as it uses it now (Kueue's
  // hierarchical advantage, for a flat cohort).
  const bool advantage = r.queue >= 0 && WithinNominal(book, r.queue, r.need);
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
    if (vs.queue == r.queue) {
      if (!Allows(r.policy.within_queue, js, *vs.spec)) continue;
      kind = Kind::kWithin;
    } else {
      if (cohort == nullptr || vs.queue < 0 || book.Spec(vs.queue).cohort != *cohort ||
          !BorrowsAny(book, vs.queue, r.short_of) ||
          !Allows(r.policy.reclaim_within_cohort, js, *vs.spec)) {
        continue;
      }
      if (advantage) {
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
    out.push_back({v, kind, ResizeLoss(vs, held, restart)});
  }
  // Kueue's groups (reclaim, other queues, own queue); in each the lower
  // priority, then the latest started, then the lower index.
  auto group = [](Kind k) { return k == Kind::kReclaim ? 0 : k == Kind::kWithin ? 2 : 1; };
  std::sort(out.begin(), out.end(), [&](const Candidate& a, const Candidate& b) {
    if (group(a.kind) != group(b.kind)) return group(a.kind) < group(b.kind);
    const JobState& ja = st.Job(a.job);
    const JobState& jb = st.Job(b.job);
    if (ja.spec->priority != jb.spec->priority) return ja.spec->priority < jb.spec->priority;
    if (ja.phase_since != jb.phase_since) return ja.phase_since > jb.phase_since;
    return a.job < b.job;
  });
  return out;
}

// An attempt: with `no_borrowing`, J must stay within its nominal quota.
class Attempt {
 public:
  Attempt(engine::CycleContext& ctx, const Request& r, const engine::Packer& packer,
          bool no_borrowing)
      : ctx_(ctx), r_(r), packer_(packer), no_borrowing_(no_borrowing) {}

  bool Takes(const Candidate& c) const { return no_borrowing_ || c.kind != Kind::kNoBorrowOnly; }
  // An other queue's candidate stops being one once its queue no longer
  // borrows what J is short of.
  bool Valid(const Candidate& c) const {
    const int q = ctx_.state().Job(c.job).queue;
    return c.kind == Kind::kWithin || BorrowsAny(ctx_.state().Quotas(), q, r_.short_of);
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
  }
  return "";
}

// Elastic reclaim: shrinks the resizable candidates towards their
// minimum, the least loss first, until J places. On success the session
// holds the removals and J's gang and the victims' kResize actions are in
// the plan.
bool ShrinkUntilPlaced(engine::CycleContext& ctx, const Request& r, const Attempt& attempt,
                       std::vector<Candidate> candidates, bool restart) {
  const ClusterState& st = ctx.state();
  std::erase_if(candidates, [&](const Candidate& c) {
    const JobState& vs = st.Job(c.job);
    const core::RoleSpec& w = vs.spec->role(core::Role::kWorker);
    return !attempt.Takes(c) || vs.placed_workers <= w.min_replicas || vs.SizedAt(ctx.now) ||
           w.resources.IsZero();
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
  return true;
}

// From `mark`: evicts the victims not spared, then places J.
bool TryWith(engine::CycleContext& ctx, engine::Session::Mark mark, const Attempt& attempt,
             std::span<const Candidate> victims, std::span<const uint8_t> spared) {
  ctx.session.RollbackTo(mark);
  for (size_t i = 0; i < victims.size(); ++i) {
    if (!spared[i]) ctx.session.EvictJob(victims[i].job);
  }
  return attempt.Places(nullptr);
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
  std::vector<uint8_t> spared(victims.size(), 0);
  bool current = true;  // the session holds J's placement for `spared`
  for (size_t i = victims.size() - 1; i-- > 0;) {
    spared[i] = 1;
    current = TryWith(ctx, mark, attempt, victims, spared);
    if (!current) spared[i] = 0;
  }
  if (!current && !TryWith(ctx, mark, attempt, victims, spared)) {
    // Only a non-deterministic packer gets here: the same state placed J
    // before. Keep the contract: leave nothing behind.
    ctx.session.RollbackTo(mark);
    *why = "preemption did not reproduce its placement";
    return false;
  }
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
  const std::vector<Candidate> candidates = Candidates(st, r, options_.restart_on_resize);
  const std::string qname = r.queue >= 0 ? "queue " + book.Spec(r.queue).name : "no queue";
  if (candidates.empty()) {
    return fail(
        fmt::format("no running job it may preempt ({}: {})", qname, PolicyWords(r.policy)));
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
  DLSCHED_TRY(reader.Finish());
  o.elastic = *elastic;
  o.restart_on_resize = *restart;
  return std::make_unique<QueueReclaimPreemptor>(std::move(o));
}

}  // namespace dlsched::policy
