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
  std::vector<double> keys;
  engine::OrderPending(ctx, &jobs, &keys);
  ctx.decisions.SetPendingKeys(jobs, keys);
  engine::JobIndex blocker = -1;
  std::string behind;  // hooks.Behind(blocker), worded once
  std::string reason;
  engine::ClusterState& mutable_state = ctx.session.mutable_state();
  const bool standing = !profile.sizer->ReadsVerdicts();
  for (int pos = 0; pos < static_cast<int>(jobs.size()); ++pos) {
    const engine::JobIndex j = jobs[pos];
    engine::JobTrace* trace = ctx.BeginTrace(j, pos);
    if (st.Job(j).phase == core::JobPhase::kWaiting && profile.order->IsStarving(st, j, ctx.now)) {
      ctx.AddAction(engine::ActionKind::kStarve, j, "waited past the starvation limit");
    }
    // A verdict the job already stands on is not given again, unless the
    // sizer reads verdicts or the job is traced.
    auto wait = [&](const std::string& why,
                    engine::WaitStatus status = engine::WaitStatus::kUnschedulable) {
      if (trace != nullptr) trace->outcome = why;
      if (standing) {
        engine::JobState::StandingWait& w = mutable_state.MutableJob(j).standing_wait;
        const uint32_t seq = st.Job(j).reason_seq;
        if (trace == nullptr && w.given && w.reason_seq == seq && w.owner == st.MemoOwner() &&
            w.status == static_cast<uint8_t>(status) && w.reason == why) {
          return;
        }
        w = {true, seq, st.MemoOwner(), static_cast<uint8_t>(status), why};
      }
      ctx.decisions.Wait(j, why, status);
    };
    auto start = [&](int workers, bool after_preemption) {
      std::string outcome = hooks.Started(j, workers, after_preemption);
      if (trace != nullptr) trace->outcome = outcome;
      ctx.decisions.Start(j, workers, std::move(outcome));
      hooks.OnStarted(j);
    };
    if (blocker >= 0) {
      wait(behind);
      if (trace != nullptr) trace->outcome = hooks.Behind(blocker, true);
      continue;
    }
    auto block = [&] {
      blocker = j;
      behind = hooks.Behind(blocker, false);
    };
    const bool may_preempt = hooks.MayPreempt(j, keys[pos]);
    const int workers = profile.sizer->StartWorkers(st, j);
    // A gang that failed with no room freed since fails again (less room
    // cannot help), unless a preemptor could evict for it: with a profile
    // that never evicts, its remembered verdict stands without visiting a
    // node (kube-scheduler leaves an unschedulable pod aside until a
    // cluster event may make it fit). The traced job is always tried, so
    // `explain` shows the attempt.
    const bool memo = trace == nullptr && !profile.preemptor->MayEvict();
    if (memo) {
      const engine::JobState::WaitMemo& m = st.Job(j).wait_memo;
      if (m.epoch == st.RoomEpoch() && m.workers == workers) {
        const auto status = static_cast<engine::WaitStatus>(m.status);
        wait(m.reason, status);
        if (options.failure_blocks && status == engine::WaitStatus::kUnschedulable) block();
        continue;
      }
    }
    auto remember = [&](std::string why, engine::WaitStatus status) {
      if (!memo) return;
      engine::JobState::WaitMemo& m = mutable_state.MutableJob(j).wait_memo;
      m.epoch = st.RoomEpoch();
      m.workers = workers;
      m.status = static_cast<uint8_t>(status);
      m.reason = std::move(why);
    };
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
      std::string why = hooks.NeverFits(*never);
      wait(why, engine::WaitStatus::kUnschedulableUnresolvable);
      remember(std::move(why), engine::WaitStatus::kUnschedulableUnresolvable);
      continue;
    }
    std::string why = hooks.Waiting(reason, preempt_reason);
    wait(why);
    remember(std::move(why), engine::WaitStatus::kUnschedulable);
    if (options.failure_blocks) block();
  }
}

}  // namespace dlsched::policy
