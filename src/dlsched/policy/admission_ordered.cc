#include "dlsched/policy/admission_ordered.h"

#include <optional>
#include <utility>
#include <vector>

#include "dlsched/engine/placement.h"

namespace dlsched::policy {

void AdmitInOrder(engine::CycleContext& ctx, const engine::Profile& profile,
                  const OrderedAdmissionOptions& options, OrderedAdmissionHooks& hooks) {
  const engine::ClusterState& st = ctx.state();
  std::vector<engine::JobIndex> jobs;
  st.PendingJobs(&jobs);
  std::vector<double> keys;
  engine::OrderJobs(ctx, &jobs, &keys);
  ctx.decisions.SetPendingKeys(jobs, keys);
  engine::JobIndex blocker = -1;
  std::string reason;
  for (int pos = 0; pos < static_cast<int>(jobs.size()); ++pos) {
    const engine::JobIndex j = jobs[pos];
    engine::JobTrace* trace = ctx.BeginTrace(j, pos);
    if (st.Job(j).phase == core::JobPhase::kWaiting && profile.order->IsStarving(st, j, ctx.now)) {
      ctx.AddAction(engine::ActionKind::kStarve, j, "waited past the starvation limit");
    }
    auto wait = [&](std::string why,
                    engine::WaitStatus status = engine::WaitStatus::kUnschedulable) {
      if (trace != nullptr) trace->outcome = why;
      ctx.decisions.Wait(j, std::move(why), status);
    };
    auto start = [&](int workers, bool after_preemption) {
      std::string outcome = hooks.Started(j, workers, after_preemption);
      if (trace != nullptr) trace->outcome = outcome;
      ctx.decisions.Start(j, workers, std::move(outcome));
      hooks.OnStarted(j);
    };
    if (blocker >= 0) {
      wait(hooks.Behind(blocker));
      continue;
    }
    const bool may_preempt = hooks.MayPreempt(j, keys[pos]);
    const int workers = profile.sizer->StartWorkers(st, j);
    reason.clear();
    if (profile.packer->PlaceGang(ctx, j, workers, &reason)) {
      start(workers, false);
      continue;
    }
    if (!may_preempt) {
      wait(hooks.IdleRoomOnly(reason));
      continue;
    }
    std::string preempt_reason;
    if (profile.preemptor->Preempt(ctx, j, workers, *profile.packer, &preempt_reason)) {
      start(workers, true);
      continue;
    }
    // A job that can never fit must not hold up the queue for ever.
    const std::optional<std::string> never =
        engine::NeverFits(ctx, j, workers, *profile.packer, options.exact_never_fits);
    if (never) {
      wait(hooks.NeverFits(*never), engine::WaitStatus::kUnschedulableUnresolvable);
      continue;
    }
    wait(hooks.Waiting(reason, preempt_reason));
    if (options.failure_blocks) blocker = j;
  }
}

}  // namespace dlsched::policy
