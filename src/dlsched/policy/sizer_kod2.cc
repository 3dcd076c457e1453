#include "dlsched/policy/sizer_kod2.h"

#include <algorithm>

#include <fmt/format.h>

#include "dlsched/engine/placement.h"
#include "dlsched/policy/args.h"
#include "dlsched/policy/order_kod2.h"

namespace dlsched::policy {

using engine::ActionKind;
using engine::JobIndex;
using engine::JobState;
using engine::NodeIndex;

void Kod2ScaleOut::Resize(engine::CycleContext& ctx, const engine::Packer& /*packer*/) const {
  const engine::ClusterState& st = ctx.state();
  jobs_.clear();
  // Jobs started in this cycle are still pending in the session's phases;
  // their kStart actions name them.
  for (const engine::Action& a : ctx.plan.actions) {
    if (a.kind == ActionKind::kStart) jobs_.push_back(a.task.job);
  }
  ActiveJobs(st, &active_);
  for (JobIndex j : active_) {
    if (st.Job(j).phase == core::JobPhase::kRunning) jobs_.push_back(j);
  }
  std::erase_if(jobs_, [&](JobIndex j) {
    if (st.Job(j).placed_workers >= st.Job(j).spec->role(core::Role::kWorker).max_replicas) {
      return true;
    }
    return std::any_of(ctx.plan.actions.begin(), ctx.plan.actions.end(), [j](const auto& a) {
      return a.kind == ActionKind::kResize && a.task.job == j;
    });
  });
  if (jobs_.empty()) return;
  // Heaviest first. Every job here holds resources, so none is aged.
  engine::OrderJobs(ctx, &jobs_);

  no_room_.clear();
  for (const JobIndex x : jobs_) {
    const JobState& xs = st.Job(x);
    const core::RoleSpec& w = xs.spec->role(core::Role::kWorker);
    const core::Resources& req = w.resources;
    if (!req.FitsIn(st.TotalFree())) continue;
    // A worker at least this large already found no node in this cycle, and
    // room only shrinks as the cycle goes on.
    if (std::any_of(no_room_.begin(), no_room_.end(),
                    [&](const core::Resources& r) { return r.FitsIn(req); })) {
      continue;
    }
    const int before = xs.placed_workers;
    int slot = 0;  // lowest free worker slot is at or after this
    // Puts as many workers on `n` as fit; false once the job needs no more
    // or no worker fits anywhere any more.
    auto fill = [&](NodeIndex n) {
      while (xs.placed_workers < w.max_replicas) {
        while (xs.NodeOf(core::Role::kWorker, slot) != engine::kNoNode) ++slot;
        const engine::TaskRef t{x, core::Role::kWorker, slot};
        if (!ctx.session.Fits(t, n)) break;
        ctx.session.Assign(t, n);
      }
      return xs.placed_workers < w.max_replicas && req.FitsIn(st.TotalFree());
    };
    // The job's own nodes: its PS node(s) first, then the others by index.
    own_.clear();
    for (int p = 0; p < xs.NumPs(); ++p) {
      const NodeIndex n = xs.NodeOf(core::Role::kPS, p);
      if (n != engine::kNoNode && std::find(own_.begin(), own_.end(), n) == own_.end()) {
        own_.push_back(n);
      }
    }
    const auto ps_end = static_cast<std::ptrdiff_t>(own_.size());
    for (int s = xs.NumPs(); s < static_cast<int>(xs.task_node.size()); ++s) {
      if (xs.task_node[s] != engine::kNoNode) own_.push_back(xs.task_node[s]);
    }
    std::sort(own_.begin() + ps_end, own_.end());
    own_.erase(std::unique(own_.begin() + ps_end, own_.end()), own_.end());
    own_.erase(std::remove_if(own_.begin() + ps_end, own_.end(),
                              [&](NodeIndex n) {
                                return std::find(own_.begin(), own_.begin() + ps_end, n) !=
                                       own_.begin() + ps_end;
                              }),
               own_.end());
    bool more = true;
    for (const NodeIndex n : own_) {
      if (!(more = fill(n))) break;
    }
    if (more) {
      idle_.ForEach(st, static_cast<int>(req[core::kGpu]), [&](NodeIndex n) {
        more = fill(n);
        return more;
      });
      // Every node was visited and the job still wants a worker that the
      // cluster's free total could hold: no single node has room for one.
      if (more) no_room_.push_back(req);
    }
    const int added = xs.placed_workers - before;
    if (added == 0) continue;
    auto start = std::find_if(ctx.plan.actions.begin(), ctx.plan.actions.end(), [x](const auto& a) {
      return a.kind == ActionKind::kStart && a.task.job == x;
    });
    if (start != ctx.plan.actions.end()) {
      start->workers = xs.placed_workers;
      start->reason += fmt::format(", scaled out to {} into idle room", Workers(xs.placed_workers));
      if (engine::JobTrace* trace = ctx.TraceOf(x)) trace->outcome = start->reason;
      continue;
    }
    ctx.AddAction(ActionKind::kResize, x,
                  fmt::format("scaled out {} into idle room", Workers(added)), xs.placed_workers);
    ctx.plan.actions.back().restart = restart_on_resize_;
  }
}

core::Result<std::unique_ptr<engine::Sizer>> MakeKod2ScaleOut(const YAML::Node& args,
                                                              const std::string& where) {
  ArgReader reader(args, where);
  auto restart = reader.Bool("restartOnResize", false);
  if (!restart) return std::unexpected(restart.error());
  if (auto st = reader.Finish(); !st) return std::unexpected(st.error());
  return std::make_unique<Kod2ScaleOut>(*restart);
}

}  // namespace dlsched::policy
