#include "dlsched/policy/gavel/gavel.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dlsched/engine/placement.h"
#include "dlsched/engine/profile.h"
#include "dlsched/policy/gavel/gavel_allocation.h"
#include "dlsched/policy/shared/gpu_types.h"
#include "dlsched/policy/shared/rounds.h"

namespace dlsched::policy {

using engine::JobIndex;
using engine::JobState;
using engine::NodeIndex;

GavelRecord GavelRecord::Of(const engine::ClusterState& state, JobIndex j) {
  GavelRecord rec;
  const int at = state.RecordSlot(kWindow);
  if (at < 0) return rec;
  const double* v = state.Job(j).record.data() + at;
  rec.window = v[0];
  rec.counted = v[1];
  for (int w = 0; w < kTypeSlots; ++w) rec.seconds[static_cast<size_t>(w)] = v[2 + w];
  return rec;
}

core::Time GavelAdmission::NextRound(core::Time t) const {
  return Rounds{.interval = options_.round, .first = 0}.Next(t);
}

bool GavelAdmission::AtRound(core::Time t) const {
  return Rounds{.interval = options_.round, .first = 0}.At(t);
}

namespace {

// SplitMix64: the agnostic baselines' random choices, the same on every
// platform (std::shuffle's algorithm is the library's).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// FNV-1a: a job's own random permutation follows its name, so an operator
// that restarts (and numbers its jobs afresh) draws the same.
uint64_t NameHash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

// 0..n-1 in a random order drawn from `seed`.
std::vector<int> Permutation(int n, uint64_t seed) {
  std::vector<int> p(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) p[static_cast<size_t>(i)] = i;
  for (int i = n - 1; i > 0; --i) {
    seed = Mix(seed);
    std::swap(p[static_cast<size_t>(i)], p[seed % static_cast<uint64_t>(i + 1)]);
  }
  return p;
}

// The slot of type w's seconds in a job's record: a ninth type and beyond
// share the last.
int SecondsSlot(int w) { return std::min(w, GavelRecord::kTypeSlots - 1); }

// One round of GavelAdmission (its comment says the steps).
class GavelRound {
 public:
  GavelRound(engine::CycleContext& ctx, const engine::Profile& profile,
             const GavelAdmission& admission)
      : ctx_(ctx),
        profile_(profile),
        opt_(admission.options()),
        st_(ctx.state()),
        types_(GpuTypes::Of(st_)),
        round_index_(static_cast<int64_t>(std::floor((ctx.now + 1e-6) / opt_.round))),
        window_(static_cast<double>(round_index_ - round_index_ % opt_.reset_rounds) * opt_.round) {
  }

  // True when a job holds GPUs after this round: the next round may then
  // decide otherwise (its counts grow). Otherwise it would decide the same
  // unless something happens, and a cycle for the news asks for it.
  bool AnyRuns() const {
    for (const Job& job : jobs_) {
      if (job.started || (!job.pending && !job.evicted)) return true;
    }
    return false;
  }

  void Run() {
    Gather();
    Count();
    Rates();
    SelectAndPlace();
    Tell();
    PlaceWithoutGpus();
    WriteRecords();
  }

 private:
  struct Job {
    JobIndex j = -1;
    int workers = 0;
    double gpus = 0;
    bool pending = false;
    int on_type = -1;  // the type a placed job's first GPU task is on
    GavelRecord was;   // its record as the cycle found it
    GavelRecord rec;   // ... and as this round leaves it
    int picked = -1;   // the type it is picked on this round, or -1
    std::string why;   // a picked pending job that could not be placed
    bool started = false;
    bool evicted = false;  // a running job not picked where it runs: stopped
  };

  // Every unfinished job in arrival order, at its size; those that need no
  // GPU apart.
  void Gather() {
    std::vector<JobIndex> all;
    st_.PendingJobs(&all);
    for (core::JobPhase p :
         {core::JobPhase::kLaunching, core::JobPhase::kRunning, core::JobPhase::kRunningProtected,
          core::JobPhase::kCheckpointing, core::JobPhase::kStopping}) {
      for (JobIndex v : st_.JobsInPhase(p)) {
        if (!st_.Job(v).IsPending()) all.push_back(v);
      }
    }
    std::sort(all.begin(), all.end(), [&](JobIndex a, JobIndex b) {
      const core::Time sa = st_.Job(a).spec->submit_time;
      const core::Time sb = st_.Job(b).spec->submit_time;
      return sa != sb ? sa < sb : a < b;
    });
    for (JobIndex j : all) {
      const JobState& js = st_.Job(j);
      Job job;
      job.j = j;
      job.pending = js.IsPending();
      job.workers = job.pending ? profile_.sizer->StartWorkers(st_, j) : js.target_workers;
      job.gpus = static_cast<double>(js.spec->Demand(job.workers)[core::kGpu]);
      if (job.gpus <= 0) {
        if (job.pending) no_gpus_.push_back(job);
        continue;
      }
      job.was = job.rec = GavelRecord::Of(st_, j);
      if (!job.pending) job.on_type = JobGpuType(st_, types_, j);
      jobs_.push_back(std::move(job));
    }
  }

  // Each job's counts brought to this round's window and to now: a running
  // job has run on its type since it was last counted (or the window
  // began, or it began to run, whichever is latest).
  void Count() {
    for (Job& job : jobs_) {
      GavelRecord& rec = job.rec;
      if (rec.window != window_) {
        rec.window = window_;
        rec.counted = window_;
        rec.seconds.fill(0);
      }
      const JobState& js = st_.Job(job.j);
      const bool runs =
          js.phase == core::JobPhase::kRunning || js.phase == core::JobPhase::kRunningProtected;
      if (runs && job.on_type >= 0) {
        const double from = std::max({rec.counted, window_, js.phase_since});
        if (ctx_.now > from) {
          rec.seconds[static_cast<size_t>(SecondsSlot(job.on_type))] += ctx_.now - from;
        }
      }
      if (runs) rec.counted = std::max(rec.counted, ctx_.now);
    }
  }

  // The problem: each job's rate at its size on each type.
  void Rates() {
    const int types = static_cast<int>(types_.names.size());
    problem_.jobs = static_cast<int>(jobs_.size());
    problem_.types = types;
    problem_.capacity = types_.capacity;
    for (const Job& job : jobs_) {
      const core::JobSpec& spec = *st_.Job(job.j).spec;
      for (int w = 0; w < types; ++w) {
        problem_.rate.push_back(
            spec.throughput.RateOn(types_.names[static_cast<size_t>(w)], job.workers));
      }
      problem_.gpus.push_back(job.gpus);
      problem_.weight.push_back(opt_.weights[static_cast<size_t>(spec.priority)]);
    }
  }

  // The allocation of the problem (recomputed when a pick could not be
  // placed, without that job on that type).
  void Allocate() {
    const int types = problem_.types;
    if (opt_.policy == GavelAdmission::Policy::kMaxMinFairness) {
      alloc_ = MaxMinFairness(problem_, opt_.aware);
      return;
    }
    std::vector<int> order(jobs_.size());
    std::vector<int> pick;
    for (size_t i = 0; i < jobs_.size(); ++i) {
      order[i] = static_cast<int>(i);
      if (opt_.aware) continue;
      const std::vector<int> p =
          Permutation(types, Mix(opt_.seed ^ NameHash(st_.Job(jobs_[i].j).spec->name)));
      pick.insert(pick.end(), p.begin(), p.end());
    }
    alloc_ = Fifo(problem_, order, opt_.aware, pick);
  }

  // Gavel's priorities: X[i][w] over the job's share of the time received
  // on w in the window, each count starting at half a round.
  void Prioritise() {
    const int types = problem_.types;
    const double prior = opt_.round / 2;
    std::vector<double> total(static_cast<size_t>(types), 0.0);
    for (const Job& job : jobs_) {
      for (int w = 0; w < types; ++w) total[static_cast<size_t>(w)] += prior + Seconds(job, w);
    }
    priority_.assign(alloc_.x.size(), 0.0);
    for (int i = 0; i < problem_.jobs; ++i) {
      for (int w = 0; w < types; ++w) {
        const double x = alloc_.At(i, w, types);
        if (x <= 0) continue;
        const double share =
            (prior + Seconds(jobs_[static_cast<size_t>(i)], w)) / total[static_cast<size_t>(w)];
        priority_[static_cast<size_t>(i * types + w)] = x / share;
      }
    }
  }

  double Seconds(const Job& job, int w) const {
    return job.rec.seconds[static_cast<size_t>(SecondsSlot(w))];
  }

  // The types in the order their jobs are picked: aware, those the jobs
  // run fastest on first (the sum over jobs of the rate there over the
  // job's best rate; ties by name); agnostic, shuffled each round.
  std::vector<int> TypeOrder() const {
    const int types = problem_.types;
    if (!opt_.aware) {
      return Permutation(types, Mix(opt_.seed ^ Mix(static_cast<uint64_t>(round_index_))));
    }
    std::vector<double> speed(static_cast<size_t>(types), 0.0);
    for (int i = 0; i < problem_.jobs; ++i) {
      double best = 0;
      for (int w = 0; w < types; ++w) best = std::max(best, problem_.Rate(i, w));
      if (best <= 0) continue;
      for (int w = 0; w < types; ++w) speed[static_cast<size_t>(w)] += problem_.Rate(i, w) / best;
    }
    std::vector<int> order(static_cast<size_t>(types));
    for (int w = 0; w < types; ++w) order[static_cast<size_t>(w)] = w;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return speed[static_cast<size_t>(a)] > speed[static_cast<size_t>(b)];
    });
    return order;
  }

  // Types in order; on each, the jobs by priority, then allocation, then
  // arrival, each taking its GPUs while the type has them.
  void Select() {
    const int types = problem_.types;
    std::vector<double> left = problem_.capacity;
    std::vector<int> by;
    for (Job& job : jobs_) job.picked = -1;
    for (int w : TypeOrder()) {
      by.clear();
      for (int i = 0; i < problem_.jobs; ++i) {
        if (jobs_[static_cast<size_t>(i)].picked < 0 && problem_.Usable(i, w)) by.push_back(i);
      }
      std::stable_sort(by.begin(), by.end(), [&](int a, int b) {
        const double pa = priority_[static_cast<size_t>(a * types + w)];
        const double pb = priority_[static_cast<size_t>(b * types + w)];
        if (pa != pb) return pa > pb;
        return alloc_.At(a, w, types) > alloc_.At(b, w, types);
      });
      for (int i : by) {
        Job& job = jobs_[static_cast<size_t>(i)];
        if (job.picked >= 0 || job.gpus > left[static_cast<size_t>(w)]) continue;
        if (opt_.policy == GavelAdmission::Policy::kFifo &&
            priority_[static_cast<size_t>(i * types + w)] <= 0) {
          continue;
        }
        job.picked = w;
        left[static_cast<size_t>(w)] -= job.gpus;
      }
    }
  }

  // Allocates, picks the jobs, frees the room of the running jobs not
  // picked where they run, and places the picked pending jobs on their
  // types in arrival order. A picked job that cannot be placed there after
  // all (its tasks' CPU or memory, the nodes' fragments, its queue's quota)
  // must not keep the type's GPUs from the others: the session is rolled
  // back, the job's rate on that type is taken as 0 for this round, and
  // the allocation and the pick are made again, at most kMaxTries times
  // (then the jobs that do not fit wait).
  void SelectAndPlace() {
    constexpr int kMaxTries = 16;
    const engine::Session::Mark mark = ctx_.session.GetMark();
    for (int attempt = 0;; ++attempt) {
      const bool retry = attempt < kMaxTries;
      Allocate();
      Prioritise();
      Select();
      for (Job& job : jobs_) {
        job.evicted = Evicted(job);
        if (job.evicted) ctx_.session.EvictJob(job.j);
      }
      bool failed = false;
      for (Job& job : jobs_) {
        job.started = false;
        if (!job.pending || job.picked < 0) continue;
        job.why.clear();
        job.started = PlaceOnType(job, &job.why);
        if (!job.started && retry) {
          const size_t i = static_cast<size_t>(&job - jobs_.data());
          problem_.rate[i * static_cast<size_t>(problem_.types) + static_cast<size_t>(job.picked)] =
              0;
          failed = true;
          break;
        }
      }
      if (!failed) return;
      ctx_.session.RollbackTo(mark);
    }
  }

  // A running job not picked where it runs gives its GPUs up (asked
  // before the session evicts anything).
  bool Evicted(const Job& job) const {
    const JobState& js = st_.Job(job.j);
    if (job.pending || js.phase != core::JobPhase::kRunning || !js.IsActive()) return false;
    return job.picked < 0 || job.picked != job.on_type;
  }

  // The stops, the starts and every pending job's verdict.
  void Tell() {
    for (const Job& job : jobs_) {
      if (!job.evicted) continue;
      // Named after the first job started on its type, if one was.
      JobIndex by = -1;
      for (const Job& other : jobs_) {
        if (other.started && other.picked == job.on_type) {
          by = other.j;
          break;
        }
      }
      ctx_.AddAction(engine::ActionKind::kStop, job.j,
                     job.picked < 0
                         ? std::string("preempted: not picked for this round (jobs further below "
                                       "their share of its GPU type took the GPUs)")
                         : fmt::format("preempted: picked on {} for this round, it runs on {}",
                                       TypeName(job.picked), TypeName(job.on_type)),
                     0, by);
    }
    int position = 0;
    for (const Job& job : jobs_) {
      if (!job.pending) continue;
      engine::JobTrace* trace = ctx_.BeginTrace(job.j, position++);
      if (job.started) {
        std::string outcome =
            fmt::format("started with {} worker{} (this round's pick on {})", job.workers,
                        job.workers == 1 ? "" : "s", TypeName(job.picked));
        if (trace != nullptr) trace->outcome = outcome;
        ctx_.decisions.Start(job.j, job.workers, std::move(outcome));
        continue;
      }
      Verdict(job, trace);
    }
  }

  void Verdict(const Job& job, engine::JobTrace* trace) {
    std::string reason;
    engine::WaitStatus status = engine::WaitStatus::kUnschedulable;
    const std::optional<std::string> never =
        engine::NeverFits(ctx_, job.j, job.workers, *profile_.packer, false);
    bool usable = false;
    const int i = static_cast<int>(&job - jobs_.data());
    for (int w = 0; w < problem_.types; ++w) usable = usable || problem_.Usable(i, w);
    if (never) {
      reason = "waiting: can never fit in this cluster: " + *never;
      status = engine::WaitStatus::kUnschedulableUnresolvable;
    } else if (!job.why.empty()) {
      reason = "waiting: picked for this round, but " + job.why;
    } else if (!usable) {
      reason = "waiting: no GPU type of the cluster has its GPUs and a rate for it";
      status = engine::WaitStatus::kUnschedulableUnresolvable;
    } else {
      reason =
          "waiting: not picked for this round (jobs further below their share of the GPU "
          "types took them)";
    }
    if (trace != nullptr) trace->outcome = reason;
    ctx_.decisions.Wait(job.j, std::move(reason), status);
  }

  std::string TypeName(int w) const { return types_.Name(w); }

  bool PlaceOnType(const Job& job, std::string* why) {
    return PlaceGangOnNodes(ctx_, job.j, job.workers, types_.nodes[static_cast<size_t>(job.picked)],
                            fmt::format("the {} nodes", TypeName(job.picked)), why);
  }

  // Jobs that need no GPU are not Gavel's: placed by the profile's packer
  // in arrival order when they fit.
  void PlaceWithoutGpus() {
    for (const Job& job : no_gpus_) {
      std::string why;
      if (profile_.packer->PlaceGang(ctx_, job.j, job.workers, &why)) {
        ctx_.decisions.Start(job.j, job.workers,
                             fmt::format("started with {} worker{} (no GPUs)", job.workers,
                                         job.workers == 1 ? "" : "s"));
      } else {
        ctx_.decisions.Wait(job.j, "waiting: " + why);
      }
    }
  }

  void WriteRecords() {
    for (const Job& job : jobs_) {
      const GavelRecord& was = job.was;
      engine::CycleState& d = ctx_.decisions;
      if (job.rec.window != was.window) d.SetRecord(job.j, GavelRecord::kWindow, job.rec.window);
      if (job.rec.counted != was.counted) {
        d.SetRecord(job.j, GavelRecord::kCounted, job.rec.counted);
      }
      for (int w = 0; w < GavelRecord::kTypeSlots; ++w) {
        const size_t k = static_cast<size_t>(w);
        if (job.rec.seconds[k] != was.seconds[k]) {
          d.SetRecord(job.j, GavelRecord::kSeconds[k], job.rec.seconds[k]);
        }
      }
    }
  }

  engine::CycleContext& ctx_;
  const engine::Profile& profile_;
  const GavelAdmission::Options& opt_;
  const engine::ClusterState& st_;
  const GpuTypes types_;
  const int64_t round_index_;
  const core::Time window_;
  std::vector<Job> jobs_;
  std::vector<Job> no_gpus_;
  GavelProblem problem_;
  GavelAllocation alloc_;
  std::vector<double> priority_;
};

// True when some job holds GPUs (placed, not finished).
bool AnyHoldsGpus(const engine::ClusterState& st) {
  for (core::JobPhase p :
       {core::JobPhase::kLaunching, core::JobPhase::kRunning, core::JobPhase::kRunningProtected,
        core::JobPhase::kCheckpointing, core::JobPhase::kStopping, core::JobPhase::kStandby}) {
    for (JobIndex v : st.JobsInPhase(p)) {
      if (st.Held(v)[core::kGpu] > 0) return true;
    }
  }
  return false;
}

}  // namespace

void GavelAdmission::Admit(engine::CycleContext& ctx, const engine::Profile& profile) const {
  // As Gavel's simulator, whose round ends when its jobs do: with no job on
  // a GPU the next round is now.
  if (!AtRound(ctx.now) && AnyHoldsGpus(ctx.state())) {
    const core::Time next = NextRound(ctx.now);
    WaitForRound(ctx, next,
                 fmt::format("waiting: Gavel decides in rounds of {:g}s, next at {:g}s",
                             options_.round, next));
    return;
  }
  GavelRound round(ctx, profile, *this);
  round.Run();
  if (round.AnyRuns()) ctx.decisions.RevisitAt(NextRound(ctx.now + kRoundSlack + 1e-6));
}

}  // namespace dlsched::policy
