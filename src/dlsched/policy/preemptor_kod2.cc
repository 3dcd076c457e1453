#include "dlsched/policy/preemptor_kod2.h"

#include <algorithm>

#include <fmt/format.h>

#include "dlsched/engine/profile.h"
#include "dlsched/policy/args.h"
#include "dlsched/policy/order_kod2.h"

namespace dlsched::policy {

using engine::ClusterState;
using engine::JobIndex;
using engine::JobState;

bool Kod2ScaleIn::Preempt(engine::CycleContext& ctx, JobIndex j, int workers,
                          const engine::Packer& packer, std::string* reason) const {
  const ClusterState& st = ctx.state();
  const engine::JobOrder& order = *ctx.profile.order;

  // J's weight as the waiting queue sees it. The pending set does not change
  // within a cycle (phases do not), so this is the weight admission used.
  st.PendingJobs(&jobs_);
  if (std::find(jobs_.begin(), jobs_.end(), j) == jobs_.end()) jobs_.push_back(j);
  keys_.resize(jobs_.size());
  order.Keys(st, jobs_, ctx.now, keys_);
  const double wj = -keys_[std::find(jobs_.begin(), jobs_.end(), j) - jobs_.begin()];

  // Victims: running, above minReplicas, ranked below J.
  ActiveJobs(st, &jobs_);
  std::erase_if(jobs_, [&](JobIndex v) {
    const JobState& vs = st.Job(v);
    const core::RoleSpec& w = vs.spec->role(core::Role::kWorker);
    return v == j || vs.phase != core::JobPhase::kRunning || vs.placed_workers <= w.min_replicas ||
           w.resources.IsZero();  // removing such a worker frees nothing
  });
  keys_.resize(jobs_.size());
  order.Keys(st, jobs_, ctx.now, keys_);
  victims_.clear();
  for (size_t i = 0; i < jobs_.size(); ++i) {
    if (Outranks(st, j, wj, jobs_[i], -keys_[i])) victims_.push_back({jobs_[i], -keys_[i], 0});
  }
  const std::string& jname = st.Job(j).spec->name;
  if (victims_.empty()) {
    if (reason != nullptr) {
      *reason = fmt::format(
          "scale-in found no running job lighter than {} with workers above its minReplicas",
          jname);
    }
    return false;
  }

  // Cheap bound before touching anything: shrinking every victim to its
  // minimum must free enough in total.
  const JobState& js = st.Job(j);
  core::Resources need = js.spec->Demand(workers);
  for (int s = 0; s < static_cast<int>(js.task_node.size()); ++s) {
    if (js.task_node[s] != engine::kNoNode) need -= st.Request(js.TaskAt(j, s));
  }
  core::Resources room = st.TotalFree();
  for (const Victim& v : victims_) {
    const JobState& vs = st.Job(v.job);
    const core::RoleSpec& w = vs.spec->role(core::Role::kWorker);
    room += w.resources * (vs.placed_workers - w.min_replicas);
  }
  if (!need.FitsIn(room)) {
    if (reason != nullptr) {
      *reason = fmt::format(
          "scale-in of every lighter running job to its minReplicas would not free enough for {}",
          jname);
    }
    return false;
  }

  // Lightest first; among equal weights the later submitted first.
  std::sort(victims_.begin(), victims_.end(), [&](const Victim& a, const Victim& b) {
    return Outranks(st, b.job, b.weight, a.job, a.weight);
  });
  const engine::Session::Mark mark = ctx.session.GetMark();
  bool placed = false;
  for (Victim& v : victims_) {
    const JobState& vs = st.Job(v.job);
    const int min = vs.spec->role(core::Role::kWorker).min_replicas;
    slots_.clear();
    const int max = vs.spec->role(core::Role::kWorker).max_replicas;
    for (int i = 0; i < max; ++i) {
      const engine::NodeIndex n = vs.NodeOf(core::Role::kWorker, i);
      if (n == engine::kNoNode) continue;
      bool ps_node = false;
      for (int p = 0; p < vs.NumPs(); ++p) ps_node = ps_node || vs.NodeOf(core::Role::kPS, p) == n;
      slots_.push_back({ps_node, n, i});
    }
    // Nodes without a PS first, by ascending index; PS nodes last; on a node
    // the highest slot first.
    std::sort(slots_.begin(), slots_.end(), [](const WorkerSlot& a, const WorkerSlot& b) {
      if (a.ps_node != b.ps_node) return !a.ps_node;
      if (a.node != b.node) return a.node < b.node;
      return a.index > b.index;
    });
    for (const WorkerSlot& s : slots_) {
      if (st.Job(v.job).placed_workers <= min) break;
      ctx.session.Evict({v.job, core::Role::kWorker, s.index});
      ++v.removed;
      if (packer.PlaceGang(ctx, j, workers, nullptr)) {
        placed = true;
        break;
      }
    }
    if (placed) break;
  }
  if (!placed) {
    ctx.session.RollbackTo(mark);
    if (reason != nullptr) {
      *reason = fmt::format(
          "scale-in of every lighter running job to its minReplicas leaves no place for {}'s gang",
          jname);
    }
    return false;
  }
  for (const Victim& v : victims_) {
    if (v.removed == 0) continue;
    AddOrMergeResize(ctx, v.job, st.Job(v.job).placed_workers,
                     fmt::format("scaled in {} of {} for {}", Workers(v.removed),
                                 st.Job(v.job).spec->name, jname),
                     restart_on_resize_, /*preempted=*/true);
  }
  return true;
}

core::Result<std::unique_ptr<engine::Preemptor>> MakeKod2ScaleIn(const YAML::Node& args,
                                                                 const std::string& where) {
  ArgReader reader(args, where);
  auto restart = reader.Bool("restartOnResize", false);
  if (!restart) return std::unexpected(restart.error());
  if (auto st = reader.Finish(); !st) return std::unexpected(st.error());
  return std::make_unique<Kod2ScaleIn>(*restart);
}

}  // namespace dlsched::policy
