#include "dlsched/policy/fsched/sizer_fsched.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <span>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "dlsched/engine/placement.h"
#include "dlsched/policy/shared/gpu_types.h"

namespace dlsched::policy {

using engine::ActionKind;
using engine::ClusterState;
using engine::JobIndex;
using engine::JobState;
using engine::NodeIndex;

namespace {

constexpr core::JobPhase kFrozenPhases[] = {
    core::JobPhase::kStandby, core::JobPhase::kLaunching, core::JobPhase::kRunningProtected,
    core::JobPhase::kCheckpointing, core::JobPhase::kStopping};

int WorkerGpus(const JobState& js) {
  return static_cast<int>(js.spec->role(core::Role::kWorker).resources[core::kGpu]);
}

int FixedGpus(const JobState& js) {
  const core::JobSpec& s = *js.spec;
  return static_cast<int>(s.role(core::Role::kPS).resources[core::kGpu] * js.NumPs() +
                          s.role(core::Role::kChief).resources[core::kGpu] * js.NumChief());
}

// How many more tasks like `t` node `n` has room for.
int64_t Room(const ClusterState& st, engine::TaskRef t, NodeIndex n) {
  const core::Resources& req = st.Request(t);
  int64_t room = INT64_MAX;
  core::FirstId(req, [&](core::ResourceId id) {
    if (req[id] > 0) room = std::min(room, st.FreeCount(n, id, req[id]));
    return false;
  });
  return room;
}

std::string Workers(int n) { return fmt::format("{} worker{}", n, n == 1 ? "" : "s"); }

// The lowest unplaced worker slot of job `j` (scale-out fills the lowest).
engine::TaskRef FreeWorkerSlot(const JobState& js, JobIndex j) {
  const int max_w = js.spec->role(core::Role::kWorker).max_replicas;
  for (int i = 0; i < max_w; ++i) {
    if (js.NodeOf(core::Role::kWorker, i) == engine::kNoNode) return {j, core::Role::kWorker, i};
  }
  return {j, core::Role::kWorker, -1};
}

enum class Kind : uint8_t { kRunning, kStarted, kWaiting, kFrozen };

// What the allocation must do with an entry, beyond its own rules
// (`keep` of Allocate): nothing, keep a running job at its size (its
// restart would not pay back, or the fallback), or leave a waiting job out
// (aware: it could not be placed on the type it was given).
constexpr char kFree = 0;
constexpr char kKeep = 1;
constexpr char kLeaveOut = 2;

// How many entries are left out (kLeaveOut).
int64_t LeftOut(std::span<const char> keep) {
  return std::count(keep.begin(), keep.end(), kLeaveOut);
}

struct Entry {
  JobIndex job;
  Kind kind;
  int current;      // workers held now (after this cycle's admission)
  double rate = 0;  // a running job's rate now (ClusterState::PlacedRate)
  int type = -1;    // aware: the GPU type it holds its GPUs on (GpuTypes index)
  core::Time submit = 0;
};

// Aware: the cluster's GPU types (none when the sizer is agnostic).
bool Aware(const GpuTypes& types) { return !types.names.empty(); }

// f(workers) of a job that holds `type` (aware), else its table.
double RateAt(const GpuTypes& types, const JobState& js, int type, int workers) {
  return Aware(types) && type >= 0
             ? js.spec->throughput.RateOn(types.names[static_cast<size_t>(type)], workers)
             : js.spec->throughput.Rate(workers);
}

// Distinct nodes holding tasks of a job, and how many of its tasks each holds.
struct NodeCount {
  NodeIndex node;
  int tasks;
  bool has_ps;  // holds a PS or Chief of the job
};

// The jobs the allocation covers, in arrival order, from the cluster and
// admission's verdicts in this cycle. Aware: each placed job's type (that of
// its first task with GPUs); a job whose GPUs are on several types is kept
// as it is (frozen).
std::vector<Entry> Collect(const engine::CycleContext& ctx, const GpuTypes& types) {
  const ClusterState& st = ctx.state();
  std::vector<Entry> entries;
  for (JobIndex j : st.JobsInPhase(core::JobPhase::kRunning)) {
    const JobState& js = st.Job(j);
    if (js.placed_tasks == 0) continue;
    // A job sized at this instant keeps its size for the rest of it.
    const bool resizable = WorkerGpus(js) > 0 && !js.SizedAt(ctx.now);
    entries.push_back(
        {j, resizable ? Kind::kRunning : Kind::kFrozen, js.placed_workers, st.PlacedRate(j)});
  }
  for (core::JobPhase p : kFrozenPhases) {
    for (JobIndex j : st.JobsInPhase(p)) {
      const JobState& js = st.Job(j);
      if (js.IsPending() || js.placed_workers == 0) continue;
      entries.push_back({j, Kind::kFrozen, js.placed_workers});
    }
  }
  std::vector<JobIndex> pending;
  st.PendingJobs(&pending);
  for (JobIndex j : pending) {
    const JobState& js = st.Job(j);
    const bool gpu = WorkerGpus(js) > 0;
    const engine::Action* verdict = ctx.decisions.VerdictOf(j);
    if (verdict != nullptr && verdict->kind == ActionKind::kStart) {
      entries.push_back({j, gpu ? Kind::kStarted : Kind::kFrozen, js.placed_workers});
    } else if (gpu && js.placed_tasks == 0) {
      entries.push_back({j, Kind::kWaiting, 0});
    }
  }
  // Sorted with the submit times at hand, not read from the specs at
  // every comparison.
  for (Entry& e : entries) e.submit = st.Job(e.job).spec->submit_time;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.submit != b.submit ? a.submit < b.submit : a.job < b.job;
  });
  if (!Aware(types)) return entries;
  for (Entry& e : entries) {
    if (e.kind == Kind::kWaiting) continue;
    e.type = JobGpuType(st, types, e.job);
    if (e.type < 0 || !OnOneGpuType(st, e.job)) e.kind = Kind::kFrozen;
  }
  return entries;
}

bool Holds(const FSchedulingSizer::Options& options) {
  return options.restart && options.hold_until_checkpoint;
}

// The allocation over `entries`; running jobs whose `keep` is set are
// frozen. GPUs held until a checkpoint ends are in the pool when the sizer
// hands GPUs over at checkpoints: they are coming to whoever gets them.
// Aware: each type is a pool of its own, its free GPUs (and held ones)
// counted on its nodes.
FschedAllocation Allocate(const ClusterState& st, const GpuTypes& types,
                          std::span<const Entry> entries, const FSchedulingSizer::Options& options,
                          std::span<const char> keep) {
  std::vector<FschedJob> fjobs;
  fjobs.reserve(entries.size());
  int64_t free = std::max<int64_t>(0, st.TotalFree()[core::kGpu]);
  if (Holds(options)) free += st.ReleasingGpus();
  const size_t num_types = types.names.size();
  std::vector<int> type_free(num_types, 0);
  std::vector<int> type_gpus(num_types, 0);
  for (size_t t = 0; t < num_types; ++t) {
    type_gpus[t] = static_cast<int>(types.capacity[t]);
    for (NodeIndex n : types.nodes[t]) {
      type_free[t] += static_cast<int>(std::max<int64_t>(0, st.FreeOf(n, core::kGpu)));
      if (Holds(options)) type_free[t] += static_cast<int>(st.ReleasingGpusOn(n));
    }
  }
  for (size_t k = 0; k < entries.size(); ++k) {
    const Entry& e = entries[k];
    const bool keep_running = keep[k] == kKeep;
    const JobState& js = st.Job(e.job);
    const core::RoleSpec& w = js.spec->role(core::Role::kWorker);
    FschedJob f;
    f.throughput = &js.spec->throughput;
    f.min_workers = w.min_replicas;
    f.max_workers = w.max_replicas;
    f.gpus_per_worker = WorkerGpus(js);
    f.fixed_gpus = FixedGpus(js);
    f.current_workers = e.current;
    f.frozen = e.kind == Kind::kFrozen || (keep_running && e.kind == Kind::kRunning) ||
               (keep[k] == kLeaveOut && e.kind == Kind::kWaiting);
    f.type = e.type;
    if (!f.frozen && e.kind != Kind::kWaiting) {
      const int held = f.fixed_gpus + e.current * f.gpus_per_worker;
      free += held;
      if (e.type >= 0) type_free[static_cast<size_t>(e.type)] += held;
    }
    fjobs.push_back(f);
  }
  FschedInput in;
  in.jobs = fjobs;
  in.free_gpus = static_cast<int>(free);
  in.cluster_gpus = static_cast<int>(st.Capacity()[core::kGpu]);
  in.v_bound = options.v_bound;
  in.types = types.names;
  in.type_free = type_free;
  in.type_gpus = type_gpus;
  return AllocateFsched(in);
}

std::vector<NodeCount> CountNodes(const ClusterState& st, JobIndex j) {
  std::vector<NodeCount> nodes;
  const JobState& js = st.Job(j);
  const int first_worker = js.SlotOf(core::Role::kWorker, 0);
  for (int s = 0; s < static_cast<int>(js.task_node.size()); ++s) {
    const NodeIndex n = js.task_node[s];
    if (n == engine::kNoNode) continue;
    auto it =
        std::find_if(nodes.begin(), nodes.end(), [n](const NodeCount& c) { return c.node == n; });
    if (it == nodes.end()) {
      nodes.push_back({n, 0, false});
      it = nodes.end() - 1;
    }
    ++it->tasks;
    if (s < first_worker) it->has_ps = true;
  }
  return nodes;
}

// Removes workers from the nodes where the job is thinnest, so what is left
// stays together; the node of its PS (or Chief) goes last; within a node the
// highest slot goes first. Ties between nodes: the higher node index first.
void Shrink(engine::CycleContext& ctx, JobIndex j, int target) {
  const ClusterState& st = ctx.state();
  const int max_w = st.Job(j).spec->role(core::Role::kWorker).max_replicas;
  while (st.Job(j).placed_workers > target) {
    const JobState& js = st.Job(j);
    int slot = -1;
    std::tuple<bool, int, NodeIndex> best_key;
    for (const NodeCount& c : CountNodes(st, j)) {
      int highest = -1;
      for (int i = max_w - 1; i >= 0 && highest < 0; --i) {
        if (js.NodeOf(core::Role::kWorker, i) == c.node) highest = i;
      }
      if (highest < 0) continue;  // only its PS/Chief there
      const std::tuple<bool, int, NodeIndex> key(c.has_ps, c.tasks, -c.node);
      if (slot < 0 || key < best_key) {
        slot = highest;
        best_key = key;
      }
    }
    if (slot < 0) return;
    ctx.session.Evict({j, core::Role::kWorker, slot});
  }
}

// Aware (`type` >= 0): only on nodes of GPU type `type`.
bool Grow(engine::CycleContext& ctx, JobIndex j, int target, const GpuTypes& types, int type) {
  const ClusterState& st = ctx.state();
  const auto on_type = [&](NodeIndex n) {
    return type < 0 || st.GpuType(n) == types.names[static_cast<size_t>(type)];
  };
  while (st.Job(j).placed_workers < target) {
    const JobState& js = st.Job(j);
    const engine::TaskRef t = FreeWorkerSlot(js, j);
    if (t.index < 0) return false;
    NodeIndex best = engine::kNoNode;
    // Next to the job first: the node holding most of its tasks.
    int best_tasks = -1;
    for (const NodeCount& c : CountNodes(st, j)) {
      if (!on_type(c.node) || !engine::Fits(ctx, t, c.node)) continue;
      if (c.tasks > best_tasks || (c.tasks == best_tasks && c.node < best)) {
        best = c.node;
        best_tasks = c.tasks;
      }
    }
    if (best == engine::kNoNode) {
      // A new node: one that takes every remaining worker with the least room
      // to spare (keeps big holes for others), else the roomiest.
      const int64_t need = target - js.placed_workers;
      NodeIndex fit = engine::kNoNode;
      int64_t fit_room = INT64_MAX;
      NodeIndex roomiest = engine::kNoNode;
      int64_t most_room = 0;
      const int gpu = static_cast<int>(st.Request(t)[core::kGpu]);
      for (int g = std::max(gpu, 0); g <= st.MaxGpuPerNode(); ++g) {
        for (NodeIndex n : st.NodesWithFreeGpu(g)) {
          if (!on_type(n) || !engine::Fits(ctx, t, n)) continue;
          const int64_t room = Room(st, t, n);
          if (room >= need && (room < fit_room || (room == fit_room && n < fit))) {
            fit = n;
            fit_room = room;
          }
          if (room > most_room || (room == most_room && n < roomiest)) {
            roomiest = n;
            most_room = room;
          }
        }
      }
      best = fit != engine::kNoNode ? fit : roomiest;
    }
    if (best == engine::kNoNode) return false;
    ctx.session.Assign(t, best);
  }
  return true;
}

// "A's checkpoint (ends at 105 s)": whose held GPUs a job waits for, from
// this plan's shrinks (`shrinking`, their checkpoints begin now) and the
// jobs still holding released tasks.
std::string HeldBy(const engine::CycleContext& ctx, std::span<const JobIndex> shrinking) {
  const ClusterState& st = ctx.state();
  std::vector<std::pair<core::Time, JobIndex>> ends;
  for (JobIndex j : shrinking) ends.emplace_back(ctx.now + st.Job(j).spec->checkpoint_delay, j);
  bool deleting = false;
  for (JobIndex j : st.ReleasingJobs()) {
    const JobState& js = st.Job(j);
    if (js.phase == core::JobPhase::kCheckpointing) {
      ends.emplace_back(js.phase_since + js.spec->checkpoint_delay, j);
    } else {
      deleting = true;
    }
  }
  std::sort(ends.begin(), ends.end());
  std::string out;
  for (const auto& [end, j] : ends) {
    out += fmt::format("{}{}'s checkpoint (ends at {:g} s)", out.empty() ? "" : ", ",
                       st.Job(j).spec->name, end);
  }
  if (deleting) out += out.empty() ? "pods being deleted" : ", pods being deleted";
  return out;
}

enum class Outcome : uint8_t { kApplied, kUnplaceable, kNotPaidBack };

// Aware: `alloc`'s throughput, slowdowns and variance again after Place
// lowered some sizes.
void Settle(const ClusterState& st, const GpuTypes& types, std::span<const Entry> entries,
            FschedAllocation* alloc) {
  alloc->throughput = 0;
  std::vector<double> held;
  for (size_t k = 0; k < entries.size(); ++k) {
    const int workers = alloc->workers[k];
    const double rate = RateAt(types, st.Job(entries[k].job), alloc->type[k], workers);
    alloc->throughput += rate;
    alloc->slowdown[k] = alloc->best[k] > 0 && workers > 0 ? rate / alloc->best[k] : 0;
    if (workers > 0) held.push_back(alloc->slowdown[k]);
  }
  alloc->variance = PopulationVariance(held);
}

// Places every growth and start of `alloc` on the session, the shrinks
// first when `shrink_first` (growing jobs may take the room they free),
// else after. Without `defer`, a job that cannot be placed makes the whole
// placement kUnplaceable (rolled back to `mark`); with it, that job is
// rolled back alone, a job started by admission in this cycle loses its
// start, and it is set in `deferred` (it waits for held room). `failed`
// gets the entry that could not be placed (kUnplaceable), else -1.
//
// Aware: a waiting job is placed on the nodes of the type the allocation
// picked for it (PlaceGangOnNodes), and every job grows on its type, by as
// many workers as fit there (`alloc`'s sizes are lowered to what was
// placed; Settle recomputes its totals).
Outcome Place(engine::CycleContext& ctx, const engine::Packer& packer, const GpuTypes& types,
              std::span<const Entry> entries, FschedAllocation* alloc, bool shrink_first,
              bool defer, engine::Session::Mark mark, std::vector<char>* deferred, int* failed) {
  const ClusterState& st = ctx.state();
  const int n = static_cast<int>(entries.size());
  *failed = -1;
  const auto shrink = [&] {
    for (int k = 0; k < n; ++k) {
      const Entry& e = entries[k];
      if (e.kind != Kind::kFrozen && alloc->workers[k] < e.current) {
        Shrink(ctx, e.job, alloc->workers[k]);
      }
    }
  };
  if (shrink_first) shrink();
  for (int k = 0; k < n; ++k) {
    const Entry& e = entries[k];
    const int target = alloc->workers[k];
    if (e.kind == Kind::kFrozen || target <= e.current) continue;
    const engine::Session::Mark job_mark = ctx.session.GetMark();
    bool ok = true;
    const int type = Aware(types) ? alloc->type[k] : -1;
    if (e.kind == Kind::kWaiting) {
      std::string why;
      const int min_workers = st.Job(e.job).spec->role(core::Role::kWorker).min_replicas;
      ok = type >= 0 ? PlaceGangOnNodes(ctx, e.job, min_workers,
                                        types.nodes[static_cast<size_t>(type)], "", &why)
                     : packer.PlaceGang(ctx, e.job, min_workers, &why);
    }
    if (ok) ok = Grow(ctx, e.job, target, types, type);
    if (!ok && type >= 0 && st.Job(e.job).placed_workers > 0) {
      // Aware: the allocation counts GPUs only; a job grows by as many
      // workers as its type's nodes take (CPU, memory), the rest of its
      // GPUs wait for the next cycle.
      alloc->workers[k] = st.Job(e.job).placed_workers;
      ok = true;
    }
    if (ok) continue;
    if (!defer) {
      ctx.session.RollbackTo(mark);
      *failed = k;
      return Outcome::kUnplaceable;
    }
    ctx.session.RollbackTo(job_mark);
    // A job admission started in this cycle gives back what it holds: its
    // start waits for held room (see Apply).
    if (e.kind == Kind::kStarted) ctx.session.EvictJob(e.job);
    (*deferred)[k] = 1;
  }
  if (!shrink_first) shrink();
  return Outcome::kApplied;
}

// Pay-back: a running job restarted to grow (on the placement now on the
// session) must finish sooner for it. Sets the jobs that would not in
// `refused`; false if there is one.
bool PaysBack(const engine::CycleContext& ctx, std::span<const Entry> entries,
              const FschedAllocation& alloc, std::span<const char> deferred,
              std::vector<char>* refused) {
  const ClusterState& st = ctx.state();
  bool paid = true;
  for (int k = 0; k < static_cast<int>(entries.size()); ++k) {
    const Entry& e = entries[k];
    if (e.kind != Kind::kRunning || alloc.workers[k] <= e.current || deferred[k]) continue;
    const JobState& js = st.Job(e.job);
    if (js.spec->total_steps <= 0) continue;  // its work is unknown (a TrainingJob may not say)
    const double left = std::max(0.0, js.spec->total_steps - js.steps_done);
    const double rate = st.PlacedRate(e.job);  // its new placement, on the session
    const double keep = e.rate > 0 ? left / e.rate : core::kNever;
    const double restart =
        js.spec->checkpoint_delay + js.spec->launch_delay + (rate > 0 ? left / rate : core::kNever);
    if (!(restart < keep)) {
      (*refused)[k] = kKeep;
      paid = false;
    }
  }
  return paid;
}

// Places `alloc` on the session and records the decisions. kUnplaceable
// (nothing changed) if some worker cannot be placed; kNotPaidBack (nothing
// changed) if a running job's restart to grow would not finish it sooner:
// those jobs are set in `refused` (kKeep). Aware, a waiting job that could
// not be placed on the type it was given makes the placement kUnplaceable
// and is set in `refused` (kLeaveOut). Jobs it leaves waiting for held
// room are added to `waits_for_held`.
Outcome Apply(engine::CycleContext& ctx, const engine::Packer& packer, const GpuTypes& types,
              std::span<const Entry> entries, const FschedAllocation& planned, double current_total,
              const FSchedulingSizer::Options& options, std::vector<char>* refused,
              std::vector<JobIndex>* waits_for_held) {
  const ClusterState& st = ctx.state();
  const engine::Session::Mark mark = ctx.session.GetMark();
  const int n = static_cast<int>(entries.size());
  FschedAllocation alloc = planned;  // aware: sizes lowered to what was placed
  const bool hold = Holds(options);
  const bool pay_back = options.restart && options.pay_back;
  std::vector<JobIndex> shrinking;
  for (int k = 0; k < n; ++k) {
    const Entry& e = entries[k];
    if (e.kind != Kind::kFrozen && alloc.workers[k] < e.current) shrinking.push_back(e.job);
  }
  std::vector<char> deferred(n, 0);
  int failed = -1;
  const auto unplaceable = [&] {
    if (Aware(types) && failed >= 0 && entries[failed].kind == Kind::kWaiting) {
      (*refused)[failed] = kLeaveOut;
    }
    return Outcome::kUnplaceable;
  };
  // With a hand-over at checkpoints the room a shrink frees is held until
  // the shrinking job's checkpoint ends, and the jobs that need it wait for
  // it (below). A shrink is committed only for a plan that holds once that
  // room is free: placed with the shrinks done first, and paid back, as
  // the cycle at the checkpoint's end will find it. Without this test a
  // job could be shrunk for a growth that turns out unplaceable, or not
  // worth its restart, when the room comes; the next allocation then gives
  // the room back to the shrunk job, and with no delays the two undo each
  // other at one instant for ever (the livelock of issue 22).
  if (hold && !shrinking.empty()) {
    FschedAllocation trial_alloc = planned;
    const Outcome trial = Place(ctx, packer, types, entries, &trial_alloc, /*shrink_first=*/true,
                                /*defer=*/false, mark, nullptr, &failed);
    const bool paid = trial != Outcome::kApplied || !pay_back ||
                      PaysBack(ctx, entries, trial_alloc, deferred, refused);
    ctx.session.RollbackTo(mark);
    if (trial != Outcome::kApplied) return unplaceable();
    if (!paid) return Outcome::kNotPaidBack;
  }
  // Without a hand-over at checkpoints, shrink first: growing jobs may take
  // the freed GPUs at once. With it, the freed GPUs are held until the
  // shrinking jobs' checkpoints end: jobs grow into the room free now, and
  // a job that needs more waits for the held room (`deferred`), whole.
  const bool room_coming = hold && (!shrinking.empty() || st.ReleasingGpus() > 0);
  const Outcome placed = Place(ctx, packer, types, entries, &alloc, /*shrink_first=*/!hold,
                               room_coming, mark, &deferred, &failed);
  if (placed != Outcome::kApplied) return unplaceable();
  if (alloc.workers != planned.workers) Settle(st, types, entries, &alloc);
  if (pay_back && !PaysBack(ctx, entries, alloc, deferred, refused)) {
    ctx.session.RollbackTo(mark);
    return Outcome::kNotPaidBack;
  }

  const std::string summary =
      fmt::format("total throughput {:.1f} -> {:.1f} steps/s, variance {:.4f}", current_total,
                  alloc.throughput, alloc.variance);
  // A running job shrunk while another starts gives up GPUs for that
  // admission: a preemption by the first job that starts.
  JobIndex admitted = -1;
  for (int k = 0; k < n && admitted < 0; ++k) {
    const Entry& e = entries[k];
    if ((e.kind == Kind::kWaiting && alloc.workers[k] > 0) || e.kind == Kind::kStarted) {
      admitted = e.job;
    }
  }
  std::string held_by;
  for (int k = 0; k < n; ++k) {
    const Entry& e = entries[k];
    const int target = alloc.workers[k];
    if (e.kind == Kind::kFrozen || target == e.current) continue;
    std::string reason;
    if (deferred[k]) {
      if (e.kind == Kind::kRunning) continue;  // keeps its size until the room is free
      if (held_by.empty()) held_by = HeldBy(ctx, shrinking);
      reason = fmt::format("waiting for {}: F-scheduling gives it {} then ({})", held_by,
                           Workers(target), summary);
      ctx.decisions.Wait(e.job, reason);
      waits_for_held->push_back(e.job);
    } else if (e.kind == Kind::kRunning) {
      const bool preempted = target < e.current && admitted >= 0;
      reason = fmt::format("reallocated: {} -> {} ({}{})", e.current, Workers(target), summary,
                           preempted ? fmt::format("; for {}", st.Job(admitted).spec->name) : "");
      ctx.decisions.Resize(e.job, target, reason, options.restart, preempted,
                           preempted ? admitted : -1,
                           /*hold=*/hold && target < e.current);
    } else if (e.kind == Kind::kStarted) {
      reason = fmt::format("started with {} (F-scheduling: {})", Workers(target), summary);
      ctx.decisions.ResizeStart(e.job, target, reason);
    } else {  // kWaiting: its wait becomes a start (or a start is added)
      reason = fmt::format("started with {}{} by reallocation ({})", Workers(target),
                           Aware(types) ? " on " + types.Name(alloc.type[k]) : "", summary);
      ctx.decisions.Start(e.job, target, reason);
    }
    if (engine::JobTrace* trace = ctx.TraceOf(e.job)) trace->outcome = reason;
  }
  return Outcome::kApplied;
}

// Says why the reallocation did not start a job the admission left waiting.
// `held`: the jobs Apply left waiting for held room (their reason says so).
// `refused`: aware, the jobs left out because they could not be placed on
// the type they were given (kLeaveOut).
void ExplainWaiting(engine::CycleContext& ctx, const GpuTypes& types,
                    std::span<const Entry> entries, const FschedAllocation& full,
                    std::span<const char> refused, std::span<const JobIndex> held) {
  const ClusterState& st = ctx.state();
  int frozen_gpus = 0;
  for (const Entry& e : entries) {
    if (e.kind != Kind::kFrozen) continue;
    const JobState& js = st.Job(e.job);
    frozen_gpus += FixedGpus(js) + e.current * WorkerGpus(js);
  }
  for (int k = 0; k < static_cast<int>(entries.size()); ++k) {
    const Entry& e = entries[k];
    if (e.kind != Kind::kWaiting) continue;
    const engine::Action* wait = ctx.decisions.VerdictOf(e.job);
    if (wait == nullptr || wait->kind != ActionKind::kWait) continue;        // started after all
    if (std::find(held.begin(), held.end(), e.job) != held.end()) continue;  // said by Apply
    const JobState& js = st.Job(e.job);
    std::string reason = wait->reason;
    if (full.left_at_turn[k] >= 0) {
      reason += fmt::format(
          "; reallocation: its minimum needs {} nvidia.com/gpu, {} left{} after the minimums of "
          "running and earlier jobs",
          FixedGpus(js) + js.spec->role(core::Role::kWorker).min_replicas * WorkerGpus(js),
          full.left_at_turn[k], Aware(types) ? " on any one GPU type" : "");
      if (frozen_gpus > 0) {
        reason += fmt::format(" ({} held by launching or protected jobs)", frozen_gpus);
      }
    } else if (refused[k] == kLeaveOut) {
      reason += "; reallocation: it could not be placed on the nodes of the GPU type it was given";
    } else {
      reason += "; reallocation: the new allocation could not be placed";
    }
    if (engine::JobTrace* trace = ctx.TraceOf(e.job)) trace->outcome = reason;
    ctx.decisions.Wait(e.job, std::move(reason));
  }
}

}  // namespace

void FSchedulingSizer::Resize(engine::CycleContext& ctx, const engine::Packer& packer) const {
  const GpuTypes types = options_.aware ? GpuTypes::Of(ctx.state()) : GpuTypes{};
  const std::vector<Entry> entries = Collect(ctx, types);
  const ClusterState& st = ctx.state();
  double current_total = 0;
  for (const Entry& e : entries) current_total += RateAt(types, st.Job(e.job), e.type, e.current);

  // What a plan does relative to now.
  struct Effect {
    bool changes = false;          // some job's size changes
    bool changes_running = false;  // ... a running one (it restarts)
    bool admits_waiting = false;   // a job that had nothing gets its minimum
    bool valid = true;             // no running job dropped to 0 (never, if consistent)
  };
  const auto effect = [&entries](const FschedAllocation& a) {
    Effect ef;
    for (int k = 0; k < static_cast<int>(entries.size()); ++k) {
      const Entry& e = entries[k];
      if (e.kind == Kind::kFrozen || a.workers[k] == e.current) continue;
      ef.changes = true;
      if (e.kind == Kind::kRunning) ef.changes_running = true;
      if (e.kind == Kind::kWaiting) ef.admits_waiting = true;
      if (e.kind != Kind::kWaiting && a.workers[k] == 0) ef.valid = false;
    }
    return ef;
  };

  bool has_elastic = false;
  bool has_new = false;
  for (const Entry& e : entries) {
    has_elastic = has_elastic || e.kind != Kind::kFrozen;
    has_new = has_new || e.kind == Kind::kStarted || e.kind == Kind::kWaiting;
  }
  if (!has_elastic) return;

  // F-scheduling's rule: a reallocation (it restarts running jobs) must raise
  // the total throughput by min_gain or give resources to a job that had none.
  // A plan that only sizes jobs starting in this cycle restarts nobody. A
  // running job whose restart would not pay back is kept at its size and the
  // allocation made again (at most once per job). Aware, a waiting job that
  // cannot be placed on the type it was given is left out of this cycle and
  // the allocation made again (at most once per job), so one job that fits
  // no type's nodes does not hold back every other.
  std::vector<char> refused(entries.size(), kFree);
  std::vector<JobIndex> waits_for_held;
  FschedAllocation full;
  bool applied = false;
  for (size_t round = 0; round <= 2 * entries.size(); ++round) {
    full = Allocate(st, types, entries, options_, refused);
    const Effect ef = effect(full);
    const int64_t left_out_before = LeftOut(refused);
    const bool worth = !ef.changes_running || ef.admits_waiting ||
                       full.throughput - current_total >= options_.min_gain - 1e-9;
    if (!(ef.valid && ef.changes && worth)) break;
    const Outcome out = Apply(ctx, packer, types, entries, full, current_total, options_, &refused,
                              &waits_for_held);
    applied = out == Outcome::kApplied;
    const bool left_out = out == Outcome::kUnplaceable && LeftOut(refused) > left_out_before;
    if (out != Outcome::kNotPaidBack && !left_out) break;
  }
  if (!applied && has_new) {
    // Fallback: keep every running job as it is; size only this cycle's
    // starts (aware: again without a waiting job that cannot be placed).
    for (size_t round = 0; round <= entries.size(); ++round) {
      std::vector<char> keep(entries.size(), kKeep);
      for (size_t k = 0; k < entries.size(); ++k) {
        if (refused[k] == kLeaveOut) keep[k] = kLeaveOut;
      }
      const FschedAllocation kept = Allocate(st, types, entries, options_, keep);
      const Effect ek = effect(kept);
      if (!ek.valid || !ek.changes) break;
      const int64_t before = LeftOut(keep);
      const Outcome out =
          Apply(ctx, packer, types, entries, kept, current_total, options_, &keep, &waits_for_held);
      if (out != Outcome::kUnplaceable || LeftOut(keep) == before) break;
      for (size_t k = 0; k < entries.size(); ++k) {
        if (keep[k] == kLeaveOut) refused[k] = kLeaveOut;
      }
    }
  }
  ExplainWaiting(ctx, types, entries, full, refused, waits_for_held);
}

}  // namespace dlsched::policy
