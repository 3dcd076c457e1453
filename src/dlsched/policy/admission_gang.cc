#include "dlsched/policy/admission_gang.h"

#include <optional>
#include <string>

#include <fmt/format.h>

#include "dlsched/engine/placement.h"
#include "dlsched/engine/profile.h"

namespace dlsched::policy {

void GangAdmission::Admit(engine::CycleContext& ctx, const engine::Profile& profile) const {
  std::vector<engine::JobIndex> jobs;
  ctx.state().PendingJobs(&jobs);
  std::vector<double> keys;
  engine::OrderJobs(ctx, &jobs, &keys);
  ctx.decisions.SetPendingKeys(jobs, keys);
  engine::JobIndex blocker = -1;
  std::string reason;
  for (int pos = 0; pos < static_cast<int>(jobs.size()); ++pos) {
    const engine::JobIndex j = jobs[pos];
    engine::JobTrace* trace = ctx.BeginTrace(j, pos);
    if (ctx.state().Job(j).phase == core::JobPhase::kWaiting &&
        profile.order->IsStarving(ctx.state(), j, ctx.now)) {
      ctx.AddAction(engine::ActionKind::kStarve, j, "waited past the starvation limit");
    }
    if (blocker >= 0) {
      std::string why = fmt::format("waiting: behind {} in strict order (backfill is off)",
                                    ctx.state().Job(blocker).spec->name);
      if (trace != nullptr) trace->outcome = why;
      ctx.decisions.Wait(j, std::move(why));
      continue;
    }
    const int workers = profile.sizer->StartWorkers(ctx.state(), j);
    reason.clear();
    bool placed = profile.packer->PlaceGang(ctx, j, workers, &reason);
    std::string outcome;
    if (placed) {
      outcome = fmt::format("started with {} worker{}", workers, workers == 1 ? "" : "s");
    } else {
      std::string preempt_reason;
      placed = profile.preemptor->Preempt(ctx, j, workers, *profile.packer, &preempt_reason);
      if (placed) {
        outcome = fmt::format("started with {} worker{} after preemption", workers,
                              workers == 1 ? "" : "s");
      } else if (!preempt_reason.empty()) {
        reason += "; " + preempt_reason;
      }
    }
    if (placed) {
      if (trace != nullptr) trace->outcome = outcome;
      ctx.decisions.Start(j, workers, std::move(outcome));
    } else {
      // A job that can never fit must not hold up a strict queue for ever.
      // Only a strict queue needs the exact answer (the packer on the empty
      // cluster); with backfill it only words the reason.
      const std::optional<std::string> never =
          engine::NeverFits(ctx, j, workers, *profile.packer, /*exact=*/!backfill_);
      std::string why =
          never ? "waiting: can never fit in this cluster: " + *never : "waiting: " + reason;
      const engine::WaitStatus status = never ? engine::WaitStatus::kUnschedulableUnresolvable
                                              : engine::WaitStatus::kUnschedulable;
      if (trace != nullptr) trace->outcome = why;
      ctx.decisions.Wait(j, std::move(why), status);
      if (!backfill_ && !never) blocker = j;
    }
  }
}

}  // namespace dlsched::policy
