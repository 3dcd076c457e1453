#include "dlsched/policy/baselines/tiresias/tiresias.h"

#include <cassert>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dlsched/core/limits.h"
#include "dlsched/engine/placement.h"
#include "dlsched/engine/profile.h"
#include "dlsched/policy/framework/plugins.h"
#include "dlsched/policy/shared/rounds.h"

namespace dlsched::policy {

using engine::JobIndex;
using engine::JobState;

core::Time ReplanAdmission::NextRound(core::Time t) const {
  return interval_ <= 0 ? t : Rounds{.interval = interval_, .first = 1}.Next(t);
}

bool ReplanAdmission::AtRound(core::Time now) const {
  return Rounds{.interval = interval_, .first = 1}.At(now);
}

void ReplanAdmission::WaitForRound(engine::CycleContext& ctx) const {
  const core::Time next = NextRound(ctx.now);
  policy::WaitForRound(
      ctx, next,
      fmt::format("waiting: decisions are made every {:g}s, next at {:g}s", interval_, next));
}

namespace {

// The GPUs of JobSpec::Demand(workers) alone: the orders ask it of every
// job at every cycle.
double GpusAt(const core::JobSpec& spec, int workers) {
  const core::RoleSpecs& roles = spec.roles();
  const auto gpus = [&roles](core::Role r, int n) {
    return roles[static_cast<int>(r)].resources.v[core::kGpu] * n;
  };
  return static_cast<double>(
      gpus(core::Role::kPS, roles[static_cast<int>(core::Role::kPS)].replicas) +
      gpus(core::Role::kChief, roles[static_cast<int>(core::Role::kChief)].replicas) +
      gpus(core::Role::kWorker, workers));
}

// One round of ReplanAdmission: every pending and running job in order,
// who makes the cut, the stops, the levels and the verdicts.
class ReplanPass {
 public:
  ReplanPass(engine::CycleContext& ctx, const engine::Profile& profile,
             const ReplanAdmission& admission)
      : ctx_(ctx),
        profile_(profile),
        admission_(admission),
        st_(ctx.state()),
        levelled_(dynamic_cast<const LevelledOrder*>(profile.order.get())) {}

  void Run() {
    Gather();
    Demands();
    Select();
    StopEvicted();
    SetLevels();
    Verdicts();
  }

 private:
  // The jobs in order with their keys, and the level each should be at
  // (LasOrder: running jobs go down, starving ones back up), before this
  // cycle places anything. Running jobs are re-planned with the pending
  // ones; launching, frozen and stopping jobs keep what they hold.
  void Gather() {
    st_.PendingJobs(&jobs_);
    for (JobIndex v : st_.JobsInPhase(core::JobPhase::kRunning)) {
      if (st_.Job(v).IsActive()) jobs_.push_back(v);
    }
    engine::OrderJobs(ctx_, &jobs_, &keys_);
    levels_.resize(jobs_.size());
    records_.resize(jobs_.size());
    const size_t at = LevelRecord::At(st_);
    for (size_t i = 0; i < jobs_.size(); ++i) {
      records_[i] = LevelRecord::Of(st_, jobs_[i], at);
      levels_[i] = levelled_ != nullptr ? levelled_->Level(st_.Job(jobs_[i]), records_[i], ctx_.now)
                                        : records_[i].level;
    }
    std::vector<JobIndex> pending;
    std::vector<double> pending_keys;
    for (size_t i = 0; i < jobs_.size(); ++i) {
      if (st_.Job(jobs_[i]).IsPending()) {
        pending.push_back(jobs_[i]);
        pending_keys.push_back(keys_[i]);
      }
    }
    ctx_.decisions.SetPendingKeys(pending, pending_keys);
  }

  // What each job needs of the cluster's room (counted over the whole
  // cluster, as Tiresias' `count` placement scheme): a pending job its
  // starting gang, a running job what it holds (which adds to the room).
  void Demands() {
    const size_t n = jobs_.size();
    total_ = st_.TotalFree();
    need_.resize(n);
    workers_.assign(n, 0);
    pending_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const JobState& js = st_.Job(jobs_[i]);
      const core::Resources held = st_.Held(jobs_[i]);
      // Whether it was pending when the cycle began (placing a Standby
      // job's gang in the session makes JobState::IsPending false).
      pending_[i] = js.IsPending();
      if (pending_[i]) {
        workers_[i] = profile_.sizer->StartWorkers(st_, jobs_[i]);
        need_[i] = js.spec->Demand(workers_[i]) - held;
      } else {
        total_ += held;
        need_[i] = held;
      }
    }
  }

  // Who makes the cut: each job in order takes its demand while the total
  // lasts. Then the running jobs that did not make it are evicted and the
  // pending ones that did are placed. A pending job the packer cannot place
  // after all (fragmentation, a PS that fits nowhere) must not hold room it
  // cannot use, nor cost running jobs their place: the session is rolled
  // back, the job is left out, and the selection is made again, at most
  // kMaxRounds times (then nobody is evicted).
  void Select() {
    constexpr int kMaxRounds = 16;
    const size_t n = jobs_.size();
    unplaceable_.assign(n, 0);
    selected_.assign(n, 0);
    placed_.assign(n, 0);
    why_.assign(n, std::string());
    const engine::Session::Mark mark = ctx_.session.GetMark();
    for (int round = 0;; ++round) {
      const bool evict = round < kMaxRounds;
      core::Resources room = total_;
      for (size_t i = 0; i < n; ++i) {
        selected_[i] = !unplaceable_[i] && (need_[i].FitsIn(room) || (!evict && !pending_[i]));
        if (selected_[i]) room -= need_[i];
      }
      for (size_t i = 0; i < n; ++i) {
        if (evict && !selected_[i] && !pending_[i]) ctx_.session.EvictJob(jobs_[i]);
      }
      if (!PlaceSelected(evict)) break;
      ctx_.session.RollbackTo(mark);
    }
  }

  // Places the selected pending jobs in order; true (retry) when one could
  // not be placed while evicting, which is then left out.
  bool PlaceSelected(bool evict) {
    for (size_t i = 0; i < jobs_.size(); ++i) {
      placed_[i] = 0;
      if (!selected_[i] || !pending_[i]) continue;
      why_[i].clear();
      if (profile_.packer->PlaceGang(ctx_, jobs_[i], workers_[i], &why_[i])) {
        placed_[i] = 1;
      } else if (evict) {
        unplaceable_[i] = 1;
        return true;
      }
    }
    return false;
  }

  // The running jobs that lost their place, named after the first pending
  // job ahead of them that started.
  void StopEvicted() {
    bool evicted = false;
    for (size_t i = 0; i < jobs_.size(); ++i) evicted = evicted || (!selected_[i] && !pending_[i]);
    JobIndex first_started = -1;
    for (size_t i = 0; i < jobs_.size() && evicted; ++i) {
      const JobIndex j = jobs_[i];
      if (pending_[i]) {
        if (placed_[i] && first_started < 0) first_started = j;
        continue;
      }
      if (selected_[i]) continue;
      ctx_.AddAction(
          engine::ActionKind::kStop, j,
          first_started < 0
              ? std::string("preempted: jobs ahead of it in the order need its resources")
              : fmt::format("preempted by {} (ahead of it in the order)",
                            st_.Job(first_started).spec->name),
          0, first_started);
    }
  }

  bool Enters(size_t i) const {
    return levels_[i] != records_[i].level || records_[i].place == LevelRecord::kNoPlace;
  }

  // An order that keeps lists (KeepsPlaces) numbers new places past the
  // lowest and highest of any unfinished job's, so they need no other
  // job's place changed: the front and back to number from.
  void PlaceRange(double* front, double* back) const {
    bool any = false;
    const size_t at = LevelRecord::At(st_);
    for (core::JobPhase p :
         {core::JobPhase::kWaiting, core::JobPhase::kStarving, core::JobPhase::kLaunching,
          core::JobPhase::kRunningProtected, core::JobPhase::kRunning,
          core::JobPhase::kCheckpointing, core::JobPhase::kStopping, core::JobPhase::kStandby}) {
      for (JobIndex v : st_.JobsInPhase(p)) {
        const double place = LevelRecord::Of(st_, v, at).place;
        if (place == LevelRecord::kNoPlace) continue;
        *front = any ? std::min(*front, place) : place;
        *back = any ? std::max(*back, place) : place;
        any = true;
      }
    }
    for (size_t i = 0; i < jobs_.size(); ++i) {
      if (!pending_[i] && !selected_[i] && !Enters(i)) --*front;
    }
  }

  // Levels (LasOrder): record each job's change and wake up for the next
  // one (a job just preempted may starve). An order that keeps lists also
  // gets each job's new place, as Tiresias' scheduler rearranges each
  // queue's list after its pass: the jobs running now first, then the
  // pending ones, each in the order of the list before the pass (`jobs`:
  // running, pending, then the jobs entering the level now). So a job that
  // starts, or keeps running in a level it just entered, goes behind every
  // running job; a running job that is stopped goes ahead of every pending
  // one, unless it just entered the level (then behind them, as a newcomer
  // that waits); any other job keeps its place.
  void SetLevels() {
    const bool lists = levelled_ != nullptr && levelled_->KeepsPlaces();
    double front = 0;
    double back = 0;
    if (lists) PlaceRange(&front, &back);
    for (size_t i = 0; i < jobs_.size(); ++i) {
      const JobIndex j = jobs_[i];
      double place = records_[i].place;
      if (lists) {
        const bool enters = Enters(i);
        const bool runs = pending_[i] ? placed_[i] != 0 : selected_[i] != 0;
        if (runs ? pending_[i] || enters : enters) {
          place = ++back;
        } else if (!runs && !pending_[i]) {
          place = front++;
        }
      }
      if (levels_[i] != records_[i].level || place != records_[i].place) {
        SetLevel(i, levels_[i], place);
      }
      const core::Time next = levelled_ != nullptr
                                  ? levelled_->NextLevelChange(st_.Job(j), records_[i], ctx_.now)
                                  : core::kNever;
      ctx_.decisions.RevisitAt(admission_.NextRound(next));
    }
  }

  // Records jobs_[i]'s new place and level: one that changes level enters
  // it now, and one promoted (starvation) counts its service afresh from
  // here and has not run since.
  void SetLevel(size_t i, int level, double place) {
    const JobIndex j = jobs_[i];
    const LevelRecord& was = records_[i];
    engine::CycleState& d = ctx_.decisions;
    if (place != was.place) d.SetRecord(j, LevelRecord::kPlace, place);
    if (level == was.level) return;
    if (level < was.level) {
      d.SetRecord(j, LevelRecord::kBase, st_.Job(j).attained);
      d.SetRecord(j, LevelRecord::kRanSince, core::kNever);
    }
    d.SetRecord(j, LevelRecord::kLevel, level);
    d.SetRecord(j, LevelRecord::kSince, ctx_.now);
  }

  // Each pending job's start or wait.
  void Verdicts() {
    int position = 0;
    for (size_t i = 0; i < jobs_.size(); ++i) {
      const JobIndex j = jobs_[i];
      if (!pending_[i]) continue;
      engine::JobTrace* trace = ctx_.BeginTrace(j, position++);
      auto wait = [&](std::string reason, engine::WaitStatus status) {
        if (trace != nullptr) trace->outcome = reason;
        ctx_.decisions.Wait(j, std::move(reason), status);
      };
      if (placed_[i]) {
        std::string outcome =
            fmt::format("started with {} worker{}", workers_[i], workers_[i] == 1 ? "" : "s");
        if (trace != nullptr) trace->outcome = outcome;
        ctx_.decisions.Start(j, workers_[i], std::move(outcome));
        continue;
      }
      const std::optional<std::string> never =
          engine::NeverFits(ctx_, j, workers_[i], *profile_.packer, false);
      if (never) {
        wait("waiting: can never fit in this cluster: " + *never,
             engine::WaitStatus::kUnschedulableUnresolvable);
      } else if (unplaceable_[i] || selected_[i]) {
        wait("waiting: " + why_[i], engine::WaitStatus::kUnschedulable);
      } else {
        wait("waiting: jobs ahead of it in the order hold the resources it needs",
             engine::WaitStatus::kUnschedulable);
      }
    }
  }

  engine::CycleContext& ctx_;
  const engine::Profile& profile_;
  const ReplanAdmission& admission_;
  const engine::ClusterState& st_;
  // The profile's order when it keeps levels, else null.
  const LevelledOrder* levelled_;
  std::vector<JobIndex> jobs_;
  std::vector<double> keys_;
  std::vector<int> levels_;
  std::vector<LevelRecord> records_;
  core::Resources total_;
  std::vector<core::Resources> need_;
  std::vector<int> workers_;
  std::vector<uint8_t> pending_;
  std::vector<uint8_t> unplaceable_;
  std::vector<uint8_t> selected_;
  std::vector<uint8_t> placed_;
  std::vector<std::string> why_;
};

}  // namespace

void ReplanAdmission::Admit(engine::CycleContext& ctx, const engine::Profile& profile) const {
  if (interval_ > 0 && !AtRound(ctx.now)) {
    WaitForRound(ctx);
    return;
  }
  ReplanPass(ctx, profile, *this).Run();
}

void GpuDemandOrder::Keys(const engine::ClusterState& state, std::span<const JobIndex> jobs,
                          core::Time /*now*/, std::span<double> keys) const {
  // Only the GPUs of JobSpec::Demand: this runs for every job every cycle.
  for (size_t i = 0; i < jobs.size(); ++i) {
    const core::JobSpec& spec = *state.Job(jobs[i]).spec;
    int64_t gpus = 0;
    for (const core::RoleSpec& r : spec.roles()) gpus += r.replicas * r.resources[core::kGpu];
    keys[i] = static_cast<double>(gpus);
  }
}

void RemainingTimeOrder::Keys(const engine::ClusterState& state, std::span<const JobIndex> jobs,
                              core::Time /*now*/, std::span<double> keys) const {
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobState& js = state.Job(jobs[i]);
    const core::JobSpec& spec = *js.spec;
    // The rate at its size, not where it happens to be placed: a key that
    // changed with the placement (the locality factor) would let two jobs
    // preempt each other in turn for ever.
    const int workers =
        js.placed_workers > 0 ? js.placed_workers : spec.role(core::Role::kWorker).replicas;
    const double rate = spec.throughput.Rate(workers);
    const double left = std::max(0.0, spec.total_steps - js.steps_done);
    keys[i] = rate > 0 ? left / rate : core::kMaxTime;
  }
}

// The level of `attained` GPU-seconds: how many thresholds it reached.
namespace {
int ThresholdsReached(const std::vector<double>& thresholds, double attained) {
  int level = 0;
  while (level < static_cast<int>(thresholds.size()) && attained >= thresholds[level]) ++level;
  return level;
}
// Whole seconds at or after `t`, as Tiresias' simulator counts time.
core::Time WholeSecond(core::Time t) { return std::ceil(t - 1e-9); }
// Pending when the cycle began (Tiresias' PENDING status in its update
// before the pass): placing the job in the cycle's session does not change
// its phase.
bool WaitedAtStart(const JobState& js) { return engine::InPendingPhase(js.phase); }
}  // namespace

size_t LevelRecord::At(const engine::ClusterState& state) {
  // The pieces name the five fields together, in kFields' order.
  const int at = state.RecordSlot(kLevel);
  if (at < 0) return kNotKept;
  const std::span<const engine::RecordField* const> fields = state.RecordFields();
  assert(fields.size() >= at + std::size(kFields) &&
         std::equal(std::begin(kFields), std::end(kFields), fields.begin() + at));
  (void)fields;
  return static_cast<size_t>(at);
}

LevelRecord LevelRecord::Of(const engine::ClusterState& state, JobIndex j, size_t at) {
  LevelRecord rec;
  const JobState& js = state.Job(j);
  rec.since = js.spec->submit_time;
  if (at == kNotKept) return rec;  // the initial values
  const double* v = js.record.data() + at;
  rec.level = static_cast<int>(v[0]);
  rec.since = v[1];
  rec.base = v[2];
  rec.ran_since = v[3];
  rec.place = v[4];
  return rec;
}

core::Time LasOrder::StarvedAt(const JobState& js, const LevelRecord& rec) const {
  if (starvation_ <= 0 || rec.level == 0 || rec.ran_since == core::kNever) return core::kNever;
  const core::JobSpec& spec = *js.spec;
  const double gpus = GpusAt(spec, spec.role(core::Role::kWorker).replicas);
  const double ran = gpus > 0 ? (js.attained - rec.base) / gpus : 0;
  if (ran <= 0) return core::kNever;
  // Pending N x ran seconds since it first ran, besides the ran seconds;
  // N x ran rounded down, as Tiresias' int(executed_time * N).
  return WholeSecond(rec.ran_since + ran + std::floor(starvation_ * ran + 1e-9));
}

double LasOrder::Service(const JobState& js, const LevelRecord& rec, core::Time now) const {
  double service = js.attained - rec.base;
  if (count_launching_) {
    service += js.launch_attained;
    if (js.phase == core::JobPhase::kLaunching) {
      service += GpusAt(*js.spec, js.placed_workers) * std::max(0.0, now - js.phase_since);
    }
    // Sums of the backend's steps: a threshold met on the second is met.
    service += kServiceSlack;
  }
  return service;
}

int LasOrder::Level(const JobState& js, const LevelRecord& rec, core::Time now) const {
  const int level = std::max(ThresholdsReached(thresholds_, Service(js, rec, now)), rec.level);
  // kNever (no promotion due) is after any `now`.
  if (level > 0 && WaitedAtStart(js) && now >= StarvedAt(js, rec)) return 0;
  return level;
}

core::Time LasOrder::NextLevelChange(const JobState& js, const LevelRecord& rec,
                                     core::Time now) const {
  const int level = Level(js, rec, now);
  if (js.placed_workers == 0) {
    // Pending: its promotion, if it starves (not if promoted now: it has
    // not run since).
    if (level == 0) return core::kNever;
    const core::Time due = StarvedAt(js, rec);
    return due > now ? due : core::kNever;
  }
  if (level >= static_cast<int>(thresholds_.size())) return core::kNever;
  const double gpus = GpusAt(*js.spec, js.placed_workers);
  if (gpus <= 0) return core::kNever;
  // Promoted now: its service counts afresh.
  const double base = level < rec.level ? js.attained : rec.base;
  // Whole seconds, as Tiresias' simulator (and at least 1 s ahead).
  const double left = thresholds_[level] - (Service(js, rec, now) - (base - rec.base));
  return now + std::max(1.0, WholeSecond(left / gpus));
}

void LasOrder::Keys(const engine::ClusterState& state, std::span<const JobIndex> jobs,
                    core::Time now, std::span<double> keys) const {
  const size_t at = LevelRecord::At(state);
  if (queue_order_ == QueueOrder::kStrictEntry) {
    // Strictly by when each entered its level (Pollux's queue lists).
    for (size_t i = 0; i < jobs.size(); ++i) {
      const LevelRecord rec = LevelRecord::Of(state, jobs[i], at);
      const int level = Level(state.Job(jobs[i]), rec, now);
      keys[i] = level * 1e13 + (level != rec.level ? now : rec.since);
    }
    return;
  }
  if (queue_order_ == QueueOrder::kEntry) {
    for (size_t i = 0; i < jobs.size(); ++i) {
      const JobState& js = state.Job(jobs[i]);
      const LevelRecord rec = LevelRecord::Of(state, jobs[i], at);
      const int level = Level(js, rec, now);
      const core::Time since = level != rec.level ? now : rec.since;
      const int group = since >= now ? 2 : (js.IsPending() ? 1 : 0);
      keys[i] = level * 1e13 + group * 1e12 + since;
    }
    return;
  }
  // Each level's list: running jobs, then pending ones, by place; then the
  // jobs entering it now: arrivals (no place yet), then demoted or promoted
  // jobs, each by arrival, as Tiresias appends them (its arrivals first,
  // then the changes of its update, which walks jobs in arrival order; the
  // engine breaks ties by arrival). A key is (level, group, place) folded
  // into one number, exact while places are whole numbers below 2^40 (they
  // grow by one a start, stop or queue change); else the keys are ranks.
  constexpr double kPlaces = 1099511627776.0;  // 2^40
  std::vector<std::pair<double, double>> major_minor(jobs.size());
  bool exact = true;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobState& js = state.Job(jobs[i]);
    const LevelRecord rec = LevelRecord::Of(state, jobs[i], at);
    const int level = Level(js, rec, now);
    const bool moves = level != rec.level;
    double group = 0;
    double place = 0;
    if (moves || rec.place == LevelRecord::kNoPlace) {
      group = 2;
      place = moves ? 1 : 0;
    } else {
      group = js.IsPending() ? 1 : 0;
      place = rec.place;
    }
    major_minor[i] = {level * 3.0 + group, place};
    exact = exact && level < 2048 && std::abs(place) < kPlaces && place == std::floor(place);
  }
  if (exact) {
    for (size_t i = 0; i < jobs.size(); ++i) {
      keys[i] = major_minor[i].first * (2 * kPlaces) + (major_minor[i].second + kPlaces);
    }
    return;
  }
  std::vector<size_t> by(jobs.size());
  for (size_t i = 0; i < by.size(); ++i) by[i] = i;
  std::sort(by.begin(), by.end(), [&](size_t a, size_t b) {
    const JobState& ja = state.Job(jobs[a]);
    const JobState& jb = state.Job(jobs[b]);
    return std::tie(major_minor[a], ja.spec->submit_time, jobs[a]) <
           std::tie(major_minor[b], jb.spec->submit_time, jobs[b]);
  });
  for (size_t r = 0; r < by.size(); ++r) keys[by[r]] = static_cast<double>(r);
}

namespace {

void RegisterTiresias(PluginTable& t) {
  t.admissions.emplace(
      "Replan",
      [](const YAML::Node& args,
         const std::string& where) -> core::Result<std::unique_ptr<engine::Admission>> {
        ArgReader reader(args, where);
        DLSCHED_TRY_LET(interval, reader.Double("interval", 0, 0, core::kMaxTime));
        if (*interval > 0 && *interval < 1) {
          return core::Errorf(
              "{}: expected 0 (decide in every cycle) or at least 1 second, got {:g}",
              reader.Path("interval"), *interval);
        }
        DLSCHED_TRY(reader.Finish());
        return std::make_unique<ReplanAdmission>(*interval);
      });
  t.requirements.push_back({"order",
                            "Las",
                            "admission",
                            {"Replan"},
                            "only Replan records a job's queue changes and wakes up for them"});
  t.orders.emplace("GpuDemand", NoArgs<engine::JobOrder, GpuDemandOrder>());
  t.orders.emplace("RemainingTime", NoArgs<engine::JobOrder, RemainingTimeOrder>());
  t.orders.emplace(
      "Las",
      [](const YAML::Node& args,
         const std::string& where) -> core::Result<std::unique_ptr<engine::JobOrder>> {
        ArgReader reader(args, where);
        std::vector<double> thresholds = {3250, 7200};
        const YAML::Node list = reader.Node("thresholds");
        if (list.IsDefined() && !list.IsNull()) {
          const std::string path = reader.Path("thresholds");
          if (!list.IsSequence()) {
            return core::Errorf("{}: expected a list of GPU-seconds, ascending", path);
          }
          thresholds.clear();
          for (size_t k = 0; k < list.size(); ++k) {
            double v = 0;
            if (!list[k].IsScalar() || !YAML::convert<double>::decode(list[k], v) ||
                !std::isfinite(v) || v <= 0 || (!thresholds.empty() && v <= thresholds.back())) {
              return core::Errorf(
                  "{}[{}]: expected a number of GPU-seconds > 0, above the one before", path, k);
            }
            thresholds.push_back(v);
          }
        }
        DLSCHED_TRY_LET(starvation, reader.Double("starvation", 0, 0, 1e6));
        LasOrder::QueueOrder queue_order = LasOrder::QueueOrder::kList;
        const YAML::Node within = reader.Node("queueOrder");
        if (within.IsDefined() && !within.IsNull()) {
          const std::string s = within.IsScalar() ? within.Scalar() : "";
          if (s == "entry") {
            queue_order = LasOrder::QueueOrder::kEntry;
          } else if (s == "strictEntry") {
            queue_order = LasOrder::QueueOrder::kStrictEntry;
          } else if (s != "list") {
            return reader.Expected("queueOrder", "list, entry or strictEntry", within);
          }
        }
        DLSCHED_TRY_LET(count_launching, reader.Bool("countLaunching", false));
        if (*count_launching && *starvation > 0) {
          return core::Errorf(
              "{}: not with countLaunching (a promotion restarts the count of the "
              "GPU-seconds run, not of those spent launching)",
              reader.Path("starvation"));
        }
        DLSCHED_TRY(reader.Finish());
        return std::make_unique<LasOrder>(std::move(thresholds), *starvation, queue_order,
                                          *count_launching);
      });
}

}  // namespace

DLSCHED_REGISTER_UNIT(tiresias, RegisterTiresias);

}  // namespace dlsched::policy
