#include "dlsched/policy/admission_kod2.h"

#include <fmt/format.h>

#include "dlsched/engine/placement.h"
#include "dlsched/engine/profile.h"
#include "dlsched/policy/order_kod2.h"

namespace dlsched::policy {

using engine::ActionKind;
using engine::ClusterState;
using engine::JobIndex;

void Kod2Admission::Admit(engine::CycleContext& ctx, const engine::Profile& profile) const {
  const ClusterState& st = ctx.state();
  std::vector<JobIndex> jobs;
  st.PendingJobs(&jobs);
  if (jobs.empty()) return;
  std::vector<double> keys;
  engine::OrderJobs(ctx, &jobs, &keys);  // heaviest first
  ctx.decisions.SetPendingKeys(jobs, keys);

  // The heaviest running job (no aging: every job here holds resources).
  std::vector<JobIndex> running;
  ActiveJobs(st, &running);
  JobIndex heaviest = -1;
  double heaviest_w = 0;
  auto consider_running = [&](JobIndex r, double w) {
    if (heaviest < 0 || Outranks(st, r, w, heaviest, heaviest_w)) {
      heaviest = r;
      heaviest_w = w;
    }
  };
  std::vector<double> running_keys(running.size());
  profile.order->Keys(st, running, ctx.now, running_keys);
  for (size_t i = 0; i < running.size(); ++i) consider_running(running[i], -running_keys[i]);

  JobIndex blocker = -1;
  std::string reason;
  for (int pos = 0; pos < static_cast<int>(jobs.size()); ++pos) {
    const JobIndex j = jobs[pos];
    const double w = -keys[pos];
    engine::JobTrace* trace = ctx.BeginTrace(j, pos);
    if (st.Job(j).phase == core::JobPhase::kWaiting && profile.order->IsStarving(st, j, ctx.now)) {
      ctx.AddAction(ActionKind::kStarve, j, "waited past the starvation limit");
    }
    auto wait = [&](std::string why,
                    engine::WaitStatus status = engine::WaitStatus::kUnschedulable) {
      if (trace != nullptr) trace->outcome = why;
      ctx.decisions.Wait(j, std::move(why), status);
    };
    if (blocker >= 0) {
      wait(fmt::format(
          "waiting: behind heavier {}, which cannot start even with scale-in (KOD2 starts no "
          "lighter job meanwhile)",
          st.Job(blocker).spec->name));
      continue;
    }
    // Step 2 when J is at least as heavy as every running job, else step 3.
    const bool step2 = heaviest < 0 || w >= heaviest_w;
    const std::string relation =
        heaviest < 0
            ? fmt::format("weight {}, nothing running", FormatWeight(w))
            : fmt::format("weight {} {} {} of running {}", FormatWeight(w), step2 ? ">=" : "<",
                          FormatWeight(heaviest_w), st.Job(heaviest).spec->name);
    const int workers = profile.sizer->StartWorkers(st, j);
    reason.clear();
    std::string outcome;
    if (profile.packer->PlaceGang(ctx, j, workers, &reason)) {
      outcome = fmt::format("started with {} ({})", Workers(workers), relation);
    } else if (!step2) {
      wait(fmt::format("waiting: {} ({}: idle room only, no scale-in)", reason, relation));
      continue;
    } else {
      std::string scale_in;
      if (profile.preemptor->Preempt(ctx, j, workers, *profile.packer, &scale_in)) {
        outcome = fmt::format("started with {} after scale-in ({})", Workers(workers), relation);
      } else {
        const std::optional<std::string> never =
            engine::NeverFits(ctx, j, workers, *profile.packer, /*exact=*/true);
        if (never) {
          wait(fmt::format(
                   "waiting: {}; it can never start on this cluster, so it does not hold back "
                   "lighter jobs",
                   *never),
               engine::WaitStatus::kUnschedulableUnresolvable);
        } else {
          wait(fmt::format("waiting: {}{} ({}); no lighter job starts meanwhile", reason,
                           scale_in.empty() ? "" : "; " + scale_in, relation));
          blocker = j;
        }
        continue;
      }
    }
    if (trace != nullptr) trace->outcome = outcome;
    ctx.decisions.Start(j, workers, std::move(outcome));
    // J now runs: later jobs compare against its plain (unaged) weight.
    double key = 0;
    profile.order->Keys(st, std::span<const JobIndex>(&jobs[pos], 1), ctx.now,
                        std::span<double>(&key, 1));
    consider_running(j, -key);
  }
}

}  // namespace dlsched::policy
