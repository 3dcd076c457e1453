#include "dlsched/policy/admission_kod2.h"

#include <fmt/format.h>

#include "dlsched/engine/placement.h"
#include "dlsched/engine/profile.h"
#include "dlsched/policy/order_kod2.h"

namespace dlsched::policy {

using engine::ActionKind;
using engine::ClusterState;
using engine::JobIndex;

std::string NeverFitsReason(engine::CycleContext& ctx, JobIndex j, int workers,
                            const engine::Packer& packer) {
  const ClusterState& st = ctx.state();
  const core::JobSpec& spec = *st.Job(j).spec;
  const core::Resources need = spec.Demand(workers);
  const core::Resources& capacity = st.Capacity();
  for (int r = 0; r < core::NumResources(); ++r) {
    const auto id = static_cast<core::ResourceId>(r);
    if (need[id] > capacity[id]) {
      return fmt::format("its gang of {} needs {} {}, the cluster has {} in all", Workers(workers),
                         core::FormatResourceAmount(id, need[id]), core::ResourceName(id),
                         core::FormatResourceAmount(id, capacity[id]));
    }
  }
  for (const core::Role role : {core::Role::kPS, core::Role::kChief, core::Role::kWorker}) {
    const int count = role == core::Role::kWorker ? workers : spec.role(role).replicas;
    if (count == 0) continue;
    const core::Resources& req = spec.role(role).resources;
    bool fits = false;
    for (engine::NodeIndex n = 0; n < st.NumNodes() && !fits; ++n) {
      fits = st.Schedulable(n) && req.FitsIn(st.Allocatable(n));
    }
    if (!fits) {
      return fmt::format("a {} ({}) is larger than any node", core::RoleName(role),
                         core::FormatResources(req));
    }
  }
  // The packer on the empty cluster: evict every placed task, try, undo.
  // Tracing is off meanwhile: these placements never happen.
  const JobIndex trace_job = ctx.trace_job;
  ctx.trace_job = -1;
  const engine::Session::Mark mark = ctx.session.GetMark();
  for (int p = 0; p < core::kNumJobPhases; ++p) {
    const auto phase = static_cast<core::JobPhase>(p);
    if (phase == core::JobPhase::kSubmitted || core::IsFinal(phase)) continue;
    for (const JobIndex other : st.JobsInPhase(phase)) {
      const engine::JobState& os = st.Job(other);
      for (int s = 0; s < static_cast<int>(os.task_node.size()); ++s) {
        if (os.task_node[s] != engine::kNoNode) ctx.session.Evict(os.TaskAt(other, s));
      }
    }
  }
  std::string why;
  const bool ok = packer.PlaceGang(ctx, j, workers, &why);
  ctx.session.RollbackTo(mark);
  ctx.trace_job = trace_job;
  return ok ? "" : why + " even on the empty cluster";
}

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
    auto wait = [&](std::string why) {
      if (trace != nullptr) trace->outcome = why;
      ctx.decisions.Wait(j, std::move(why));
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
        const std::string never = NeverFitsReason(ctx, j, workers, *profile.packer);
        if (!never.empty()) {
          wait(fmt::format(
              "waiting: {}; it can never start on this cluster, so it does not hold back "
              "lighter jobs",
              never));
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
