#include "dlsched/policy/kod2/sizer_kod2.h"

#include <algorithm>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "dlsched/engine/placement.h"
#include "dlsched/policy/framework/args.h"
#include "dlsched/policy/kod2/order_kod2.h"

namespace dlsched::policy {

using engine::ActionKind;
using engine::JobIndex;
using engine::JobState;
using engine::NodeIndex;

void Kod2ScaleOut::Resize(engine::CycleContext& ctx, const engine::Packer& /*packer*/) const {
  const engine::ClusterState& st = ctx.state();
  std::vector<JobIndex> jobs;
  // Jobs started in this cycle are still pending in the session's phases;
  // admission's verdicts name them.
  for (const engine::Action& a : ctx.decisions.actions()) {
    if (a.kind == ActionKind::kStart) jobs.push_back(a.task.job);
  }
  std::vector<JobIndex> active;
  ActiveJobs(st, &active);
  for (JobIndex j : active) {
    // A job sized at this instant keeps its size for the rest of it (a
    // scale-in for another job is not undone by a scale-out at once).
    const JobState& js = st.Job(j);
    if (js.phase == core::JobPhase::kRunning && !js.SizedAt(ctx.now)) jobs.push_back(j);
  }
  std::erase_if(jobs, [&](JobIndex j) {
    return st.Job(j).placed_workers >= st.Job(j).spec->role(core::Role::kWorker).max_replicas ||
           ctx.decisions.ResizeOf(j) != nullptr;
  });
  if (jobs.empty()) return;
  // Heaviest first. Every job here holds resources, so none is aged.
  engine::OrderJobs(ctx, &jobs);

  std::vector<core::Resources> no_room;  // worker requests no node could take
  std::vector<NodeIndex> own;
  std::vector<std::tuple<double, NodeIndex, NodeIndex>> by_speed;  // aware: -rate, order, node
  std::vector<std::string_view> dead;  // aware: types where a worker added nothing
  for (const JobIndex x : jobs) {
    const JobState& xs = st.Job(x);
    const core::RoleSpec& w = xs.spec->role(core::Role::kWorker);
    const core::Resources& req = w.resources;
    if (!st.TotalFreeHolds(req)) continue;
    // A worker at least this large already found no node in this cycle, and
    // room only shrinks as the cycle goes on.
    if (std::any_of(no_room.begin(), no_room.end(),
                    [&](const core::Resources& r) { return r.FitsIn(req); })) {
      continue;
    }
    const int before = xs.placed_workers;
    int slot = 0;             // lowest free worker slot is at or after this
    bool no_gain = false;     // aware: a worker that fit added nothing on some node
    bool no_gain_on = false;  // ... on the node `fill` was last called for
    // Puts as many workers on `n` as fit (aware: and raise the job's
    // speed); false once the job needs no more or no worker fits anywhere
    // any more.
    auto fill = [&](NodeIndex n) {
      no_gain_on = false;
      while (xs.placed_workers < w.max_replicas) {
        while (xs.NodeOf(core::Role::kWorker, slot) != engine::kNoNode) ++slot;
        const engine::TaskRef t{x, core::Role::kWorker, slot};
        if (!engine::Fits(ctx, t, n)) break;
        const engine::Session::Mark mark = ctx.session.GetMark();
        const double rate = aware_ ? st.PlacedRate(x) : 0;
        ctx.session.Assign(t, n);
        if (aware_ && !(st.PlacedRate(x) > rate * (1 + 1e-9))) {
          ctx.session.RollbackTo(mark);
          no_gain = no_gain_on = true;
          break;
        }
      }
      return xs.placed_workers < w.max_replicas && st.TotalFreeHolds(req);
    };
    // The job's own nodes: its PS node(s) first, then the others by index.
    own.clear();
    for (int p = 0; p < xs.NumPs(); ++p) {
      const NodeIndex n = xs.NodeOf(core::Role::kPS, p);
      if (n != engine::kNoNode && std::find(own.begin(), own.end(), n) == own.end()) {
        own.push_back(n);
      }
    }
    const auto ps_end = static_cast<std::ptrdiff_t>(own.size());
    for (int s = xs.NumPs(); s < static_cast<int>(xs.task_node.size()); ++s) {
      if (xs.task_node[s] != engine::kNoNode) own.push_back(xs.task_node[s]);
    }
    std::sort(own.begin() + ps_end, own.end());
    own.erase(std::unique(own.begin() + ps_end, own.end()), own.end());
    own.erase(std::remove_if(own.begin() + ps_end, own.end(),
                             [&](NodeIndex n) {
                               return std::find(own.begin(), own.begin() + ps_end, n) !=
                                      own.begin() + ps_end;
                             }),
              own.end());
    bool more = true;
    for (const NodeIndex n : own) {
      if (!(more = fill(n))) break;
    }
    if (more && !aware_) {
      idle_.ForEach(st, static_cast<int>(req[core::kGpu]), [&](NodeIndex n) {
        more = fill(n);
        return more;
      });
    } else if (more) {
      // The job's fastest types first (its rate there with one more
      // worker), most idle first within a type; a type where a worker
      // added nothing is not tried again.
      by_speed.clear();
      idle_.ForEach(st, static_cast<int>(req[core::kGpu]), [&](NodeIndex n) {
        by_speed.emplace_back(-xs.spec->throughput.RateOn(st.GpuType(n), xs.placed_workers + 1),
                              static_cast<NodeIndex>(by_speed.size()), n);
        return true;
      });
      std::sort(by_speed.begin(), by_speed.end());
      dead.clear();
      for (const auto& [speed, order, n] : by_speed) {
        if (std::find(dead.begin(), dead.end(), st.GpuType(n)) != dead.end()) continue;
        if (!(more = fill(n))) break;
        if (no_gain_on) dead.push_back(st.GpuType(n));
      }
    }
    // Every node was visited and the job still wants a worker that the
    // cluster's free total could hold: no single node has room for one
    // (unless one was passed over because a worker there added nothing).
    if (more && !no_gain) no_room.push_back(req);
    const int added = xs.placed_workers - before;
    if (added == 0) continue;
    const engine::Action* start = ctx.decisions.VerdictOf(x);
    if (start != nullptr && start->kind == ActionKind::kStart) {
      std::string reason = start->reason + fmt::format(", scaled out to {} into idle room",
                                                       Workers(xs.placed_workers));
      if (engine::JobTrace* trace = ctx.TraceOf(x)) trace->outcome = reason;
      ctx.decisions.ResizeStart(x, xs.placed_workers, std::move(reason));
      continue;
    }
    ctx.decisions.Resize(x, xs.placed_workers,
                         fmt::format("scaled out {} into idle room", Workers(added)),
                         restart_on_resize_);
  }
}

core::Result<std::unique_ptr<engine::Sizer>> MakeKod2ScaleOut(const YAML::Node& args,
                                                              const std::string& where) {
  ArgReader reader(args, where);
  DLSCHED_TRY_LET(restart, reader.Bool("restartOnResize", false));
  DLSCHED_TRY_LET(aware, reader.Either("heterogeneity", "aware", "agnostic", false));
  DLSCHED_TRY(reader.Finish());
  return std::make_unique<Kod2ScaleOut>(*restart, *aware);
}

}  // namespace dlsched::policy
