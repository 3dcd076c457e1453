#include "dlsched/policy/fsched/sizer_fsched.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <span>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "dlsched/engine/placement.h"

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
    if (req[id] > 0) room = std::min(room, st.FreeOf(n, id) / req[id]);
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
struct Entry {
  JobIndex job;
  Kind kind;
  int current;      // workers held now (after this cycle's admission)
  double rate = 0;  // a running job's rate now (ClusterState::PlacedRate)
};

// Distinct nodes holding tasks of a job, and how many of its tasks each holds.
struct NodeCount {
  NodeIndex node;
  int tasks;
  bool has_ps;  // holds a PS or Chief of the job
};

// The jobs the allocation covers, in arrival order, from the cluster and
// admission's verdicts in this cycle.
std::vector<Entry> Collect(const engine::CycleContext& ctx) {
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
  std::sort(entries.begin(), entries.end(), [&st](const Entry& a, const Entry& b) {
    const core::Time sa = st.Job(a.job).spec->submit_time;
    const core::Time sb = st.Job(b.job).spec->submit_time;
    return sa != sb ? sa < sb : a.job < b.job;
  });
  return entries;
}

bool Holds(const FSchedulingSizer::Options& options) {
  return options.restart && options.hold_until_checkpoint;
}

// The allocation over `entries`; running jobs whose `keep` is set are
// frozen. GPUs held until a checkpoint ends are in the pool when the sizer
// hands GPUs over at checkpoints: they are coming to whoever gets them.
FschedAllocation Allocate(const ClusterState& st, std::span<const Entry> entries,
                          const FSchedulingSizer::Options& options, std::span<const char> keep) {
  std::vector<FschedJob> fjobs;
  fjobs.reserve(entries.size());
  int64_t free = std::max<int64_t>(0, st.TotalFree()[core::kGpu]);
  if (Holds(options)) free += st.ReleasingGpus();
  for (size_t k = 0; k < entries.size(); ++k) {
    const Entry& e = entries[k];
    const bool keep_running = keep[k] != 0;
    const JobState& js = st.Job(e.job);
    const core::RoleSpec& w = js.spec->role(core::Role::kWorker);
    FschedJob f;
    f.throughput = &js.spec->throughput;
    f.min_workers = w.min_replicas;
    f.max_workers = w.max_replicas;
    f.gpus_per_worker = WorkerGpus(js);
    f.fixed_gpus = FixedGpus(js);
    f.current_workers = e.current;
    f.frozen = e.kind == Kind::kFrozen || (keep_running && e.kind == Kind::kRunning);
    if (!f.frozen && e.kind != Kind::kWaiting) {
      free += f.fixed_gpus + int64_t{e.current} * f.gpus_per_worker;
    }
    fjobs.push_back(f);
  }
  FschedInput in;
  in.jobs = fjobs;
  in.free_gpus = static_cast<int>(free);
  in.cluster_gpus = static_cast<int>(st.Capacity()[core::kGpu]);
  in.v_bound = options.v_bound;
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

bool Grow(engine::CycleContext& ctx, JobIndex j, int target) {
  const ClusterState& st = ctx.state();
  while (st.Job(j).placed_workers < target) {
    const JobState& js = st.Job(j);
    const engine::TaskRef t = FreeWorkerSlot(js, j);
    if (t.index < 0) return false;
    NodeIndex best = engine::kNoNode;
    // Next to the job first: the node holding most of its tasks.
    int best_tasks = -1;
    for (const NodeCount& c : CountNodes(st, j)) {
      if (!engine::Fits(ctx, t, c.node)) continue;
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
          if (!engine::Fits(ctx, t, n)) continue;
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

// Places every growth and start of `alloc` on the session, the shrinks
// first when `shrink_first` (growing jobs may take the room they free),
// else after. Without `defer`, a job that cannot be placed makes the whole
// placement kUnplaceable (rolled back to `mark`); with it, that job is
// rolled back alone, a job started by admission in this cycle loses its
// start, and it is set in `deferred` (it waits for held room).
Outcome Place(engine::CycleContext& ctx, const engine::Packer& packer,
              std::span<const Entry> entries, const FschedAllocation& alloc, bool shrink_first,
              bool defer, engine::Session::Mark mark, std::vector<char>* deferred) {
  const ClusterState& st = ctx.state();
  const int n = static_cast<int>(entries.size());
  const auto shrink = [&] {
    for (int k = 0; k < n; ++k) {
      const Entry& e = entries[k];
      if (e.kind != Kind::kFrozen && alloc.workers[k] < e.current) {
        Shrink(ctx, e.job, alloc.workers[k]);
      }
    }
  };
  if (shrink_first) shrink();
  for (int k = 0; k < n; ++k) {
    const Entry& e = entries[k];
    const int target = alloc.workers[k];
    if (e.kind == Kind::kFrozen || target <= e.current) continue;
    const engine::Session::Mark job_mark = ctx.session.GetMark();
    bool ok = true;
    if (e.kind == Kind::kWaiting) {
      std::string why;
      ok = packer.PlaceGang(ctx, e.job, st.Job(e.job).spec->role(core::Role::kWorker).min_replicas,
                            &why);
    }
    if (ok) ok = Grow(ctx, e.job, target);
    if (ok) continue;
    if (!defer) {
      ctx.session.RollbackTo(mark);
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
      (*refused)[k] = 1;
      paid = false;
    }
  }
  return paid;
}

// Places `alloc` on the session and records the decisions. kUnplaceable
// (nothing changed) if some worker cannot be placed; kNotPaidBack (nothing
// changed) if a running job's restart to grow would not finish it sooner:
// those jobs are set in `refused`. Jobs it leaves waiting for held room are
// added to `waits_for_held`.
Outcome Apply(engine::CycleContext& ctx, const engine::Packer& packer,
              std::span<const Entry> entries, const FschedAllocation& alloc, double current_total,
              const FSchedulingSizer::Options& options, std::vector<char>* refused,
              std::vector<JobIndex>* waits_for_held) {
  const ClusterState& st = ctx.state();
  const engine::Session::Mark mark = ctx.session.GetMark();
  const int n = static_cast<int>(entries.size());
  const bool hold = Holds(options);
  const bool pay_back = options.restart && options.pay_back;
  std::vector<JobIndex> shrinking;
  for (int k = 0; k < n; ++k) {
    const Entry& e = entries[k];
    if (e.kind != Kind::kFrozen && alloc.workers[k] < e.current) shrinking.push_back(e.job);
  }
  std::vector<char> deferred(n, 0);
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
    const Outcome trial =
        Place(ctx, packer, entries, alloc, /*shrink_first=*/true, /*defer=*/false, mark, nullptr);
    const bool paid =
        trial != Outcome::kApplied || !pay_back || PaysBack(ctx, entries, alloc, deferred, refused);
    ctx.session.RollbackTo(mark);
    if (trial != Outcome::kApplied) return trial;
    if (!paid) return Outcome::kNotPaidBack;
  }
  // Without a hand-over at checkpoints, shrink first: growing jobs may take
  // the freed GPUs at once. With it, the freed GPUs are held until the
  // shrinking jobs' checkpoints end: jobs grow into the room free now, and
  // a job that needs more waits for the held room (`deferred`), whole.
  const bool room_coming = hold && (!shrinking.empty() || st.ReleasingGpus() > 0);
  const Outcome placed =
      Place(ctx, packer, entries, alloc, /*shrink_first=*/!hold, room_coming, mark, &deferred);
  if (placed != Outcome::kApplied) return placed;
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
      reason = fmt::format("started with {} by reallocation ({})", Workers(target), summary);
      ctx.decisions.Start(e.job, target, reason);
    }
    if (engine::JobTrace* trace = ctx.TraceOf(e.job)) trace->outcome = reason;
  }
  return Outcome::kApplied;
}

// Says why the reallocation did not start a job the admission left waiting.
// `held`: the jobs Apply left waiting for held room (their reason says so).
void ExplainWaiting(engine::CycleContext& ctx, std::span<const Entry> entries,
                    const FschedAllocation& full, std::span<const JobIndex> held) {
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
          "; reallocation: its minimum needs {} nvidia.com/gpu, {} left after the minimums of "
          "running and earlier jobs",
          FixedGpus(js) + js.spec->role(core::Role::kWorker).min_replicas * WorkerGpus(js),
          full.left_at_turn[k]);
      if (frozen_gpus > 0) {
        reason += fmt::format(" ({} held by launching or protected jobs)", frozen_gpus);
      }
    } else {
      reason += "; reallocation: the new allocation could not be placed";
    }
    if (engine::JobTrace* trace = ctx.TraceOf(e.job)) trace->outcome = reason;
    ctx.decisions.Wait(e.job, std::move(reason));
  }
}

}  // namespace

void FSchedulingSizer::Resize(engine::CycleContext& ctx, const engine::Packer& packer) const {
  const std::vector<Entry> entries = Collect(ctx);
  const ClusterState& st = ctx.state();
  double current_total = 0;
  for (const Entry& e : entries) current_total += st.Job(e.job).spec->throughput.Rate(e.current);

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
  // allocation made again (at most once per job).
  std::vector<char> refused(entries.size(), 0);
  std::vector<JobIndex> waits_for_held;
  FschedAllocation full;
  bool applied = false;
  for (size_t round = 0; round <= entries.size(); ++round) {
    full = Allocate(st, entries, options_, refused);
    const Effect ef = effect(full);
    const bool worth = !ef.changes_running || ef.admits_waiting ||
                       full.throughput - current_total >= options_.min_gain - 1e-9;
    if (!(ef.valid && ef.changes && worth)) break;
    const Outcome out =
        Apply(ctx, packer, entries, full, current_total, options_, &refused, &waits_for_held);
    applied = out == Outcome::kApplied;
    if (out != Outcome::kNotPaidBack) break;
  }
  if (!applied && has_new) {
    // Fallback: keep every running job as it is; size only this cycle's
    // starts.
    const std::vector<char> all(entries.size(), 1);
    const FschedAllocation kept = Allocate(st, entries, options_, all);
    const Effect ek = effect(kept);
    if (ek.valid && ek.changes) {
      Apply(ctx, packer, entries, kept, current_total, options_, &refused, &waits_for_held);
    }
  }
  ExplainWaiting(ctx, entries, full, waits_for_held);
}

}  // namespace dlsched::policy
