#include "dlsched/policy/kod2/preemptor_kod2.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dlsched/engine/profile.h"
#include "dlsched/policy/framework/args.h"
#include "dlsched/policy/kod2/order_kod2.h"

namespace dlsched::policy {

using engine::ClusterState;
using engine::JobIndex;
using engine::JobState;

namespace {

struct Victim {
  JobIndex job;
  double weight;
  int removed;
};
struct WorkerSlot {
  bool ps_node;  // its node holds one of the victim's PS
  engine::NodeIndex node;
  int index;
};

// J's weight as the waiting queue sees it: the key admission ordered it
// by. Without one (a caller other than an admission), the keys over the
// pending jobs, as admission would compute them.
double WaitingWeight(const engine::CycleContext& ctx, JobIndex j) {
  if (const std::optional<double> key = ctx.decisions.PendingKey(j)) return -*key;
  const ClusterState& st = ctx.state();
  std::vector<JobIndex> pending;
  st.PendingJobs(&pending);
  if (std::find(pending.begin(), pending.end(), j) == pending.end()) pending.push_back(j);
  std::vector<double> keys(pending.size());
  ctx.profile.order->Keys(st, pending, ctx.now, keys);
  return -keys[std::find(pending.begin(), pending.end(), j) - pending.begin()];
}

// Victims: running, above minReplicas, ranked below J (weight wj), not
// sized at this instant (a scale-out is not undone by a scale-in at once).
std::vector<Victim> LighterJobs(const engine::CycleContext& ctx, JobIndex j, double wj) {
  const ClusterState& st = ctx.state();
  std::vector<JobIndex> jobs;
  ActiveJobs(st, &jobs);
  std::erase_if(jobs, [&](JobIndex v) {
    const JobState& vs = st.Job(v);
    const core::RoleSpec& w = vs.spec->role(core::Role::kWorker);
    return v == j || vs.phase != core::JobPhase::kRunning || vs.placed_workers <= w.min_replicas ||
           vs.SizedAt(ctx.now) || w.resources.IsZero();  // removing such a worker frees nothing
  });
  std::vector<double> keys(jobs.size());
  ctx.profile.order->Keys(st, jobs, ctx.now, keys);
  std::vector<Victim> victims;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (Outranks(st, j, wj, jobs[i], -keys[i])) victims.push_back({jobs[i], -keys[i], 0});
  }
  return victims;
}

// Cheap bound before touching anything: shrinking every victim to its
// minimum must free enough in total for J's gang of `workers`.
bool MinimumsFreeEnough(const ClusterState& st, JobIndex j, int workers,
                        const std::vector<Victim>& victims) {
  const JobState& js = st.Job(j);
  core::Resources need = js.spec->Demand(workers);
  for (int s = 0; s < static_cast<int>(js.task_node.size()); ++s) {
    if (js.task_node[s] != engine::kNoNode) need -= st.Request(js.TaskAt(j, s));
  }
  core::Resources room = st.TotalFree();
  for (const Victim& v : victims) {
    const JobState& vs = st.Job(v.job);
    const core::RoleSpec& w = vs.spec->role(core::Role::kWorker);
    room += w.resources * (vs.placed_workers - w.min_replicas);
  }
  return need.FitsIn(room);
}

// The victim's placed workers in the order they go: nodes without a PS
// first, by ascending index; PS nodes last; on a node the highest slot
// first.
void ShrinkOrder(const JobState& vs, std::vector<WorkerSlot>* slots) {
  slots->clear();
  const int max = vs.spec->role(core::Role::kWorker).max_replicas;
  for (int i = 0; i < max; ++i) {
    const engine::NodeIndex n = vs.NodeOf(core::Role::kWorker, i);
    if (n == engine::kNoNode) continue;
    bool ps_node = false;
    for (int p = 0; p < vs.NumPs(); ++p) ps_node = ps_node || vs.NodeOf(core::Role::kPS, p) == n;
    slots->push_back({ps_node, n, i});
  }
  std::sort(slots->begin(), slots->end(), [](const WorkerSlot& a, const WorkerSlot& b) {
    if (a.ps_node != b.ps_node) return !a.ps_node;
    if (a.node != b.node) return a.node < b.node;
    return a.index > b.index;
  });
}

// Takes workers off the victims, lightest first, one at a time, until J's
// gang places; counts each victim's removed workers. False when even
// every victim at its minimum leaves no place (the caller rolls back).
bool ShrinkUntilPlaced(engine::CycleContext& ctx, JobIndex j, int workers,
                       const engine::Packer& packer, std::vector<Victim>& victims) {
  const ClusterState& st = ctx.state();
  std::vector<WorkerSlot> slots;
  for (Victim& v : victims) {
    const JobState& vs = st.Job(v.job);
    const int min = vs.spec->role(core::Role::kWorker).min_replicas;
    ShrinkOrder(vs, &slots);
    for (const WorkerSlot& s : slots) {
      if (st.Job(v.job).placed_workers <= min) break;
      ctx.session.Evict({v.job, core::Role::kWorker, s.index});
      ++v.removed;
      if (packer.PlaceGang(ctx, j, workers, nullptr)) return true;
    }
  }
  return false;
}

}  // namespace

bool Kod2ScaleIn::Preempt(engine::CycleContext& ctx, JobIndex j, int workers,
                          const engine::Packer& packer, std::string* reason) const {
  const ClusterState& st = ctx.state();
  std::vector<Victim> victims = LighterJobs(ctx, j, WaitingWeight(ctx, j));
  const std::string& jname = st.Job(j).spec->name;
  if (victims.empty()) {
    if (reason != nullptr) {
      *reason = fmt::format(
          "scale-in found no running job lighter than {} with workers above its minReplicas",
          jname);
    }
    return false;
  }
  if (!MinimumsFreeEnough(st, j, workers, victims)) {
    if (reason != nullptr) {
      *reason = fmt::format(
          "scale-in of every lighter running job to its minReplicas would not free enough for {}",
          jname);
    }
    return false;
  }
  // Lightest first; among equal weights the later submitted first.
  std::sort(victims.begin(), victims.end(), [&](const Victim& a, const Victim& b) {
    return Outranks(st, b.job, b.weight, a.job, a.weight);
  });
  const engine::Session::Mark mark = ctx.session.GetMark();
  if (!ShrinkUntilPlaced(ctx, j, workers, packer, victims)) {
    ctx.session.RollbackTo(mark);
    if (reason != nullptr) {
      *reason = fmt::format(
          "scale-in of every lighter running job to its minReplicas leaves no place for {}'s gang",
          jname);
    }
    return false;
  }
  for (const Victim& v : victims) {
    if (v.removed == 0) continue;
    ctx.decisions.Resize(v.job, st.Job(v.job).placed_workers,
                         fmt::format("scaled in {} of {} for {}", Workers(v.removed),
                                     st.Job(v.job).spec->name, jname),
                         restart_on_resize_, /*preempted=*/true, /*by=*/j);
  }
  return true;
}

core::Result<std::unique_ptr<engine::Preemptor>> MakeKod2ScaleIn(const YAML::Node& args,
                                                                 const std::string& where) {
  ArgReader reader(args, where);
  DLSCHED_TRY_LET(restart, reader.Bool("restartOnResize", false));
  DLSCHED_TRY(reader.Finish());
  return std::make_unique<Kod2ScaleIn>(*restart);
}

}  // namespace dlsched::policy
