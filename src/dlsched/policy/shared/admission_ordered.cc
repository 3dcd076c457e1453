#include "dlsched/policy/shared/admission_ordered.h"

#include <cassert>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "dlsched/engine/placement.h"

namespace dlsched::policy {

void AdmitInOrder(engine::CycleContext& ctx, const engine::Profile& profile,
                  const OrderedAdmissionOptions& options, OrderedAdmissionHooks& hooks) {
  const engine::ClusterState& st = ctx.state();
  engine::ClusterState& mutable_state = ctx.session.mutable_state();
  // The jobs in order: the cache's kept order (a JobOrder of static keys),
  // or sorted for this cycle.
  const bool kept = profile.order->StaticKeys();
  std::span<engine::ClusterState::OrderEntry> entries;
  std::vector<engine::JobIndex> jobs;
  std::vector<double> keys;
  // A Standby job holding its whole gang may be among the kept entries.
  bool skip_unpending = false;
  if (kept) {
    entries = engine::UpdatePendingOrder(ctx);
    skip_unpending = !st.JobsInPhase(core::JobPhase::kStandby).empty();
    if (skip_unpending) {
      for (const auto& e : entries) {
        if (!st.Job(e.job).IsPending()) continue;
        jobs.push_back(e.job);
        keys.push_back(e.key);
      }
      ctx.decisions.SetPendingKeys(jobs, keys);
    } else {
      ctx.decisions.SetPendingOrder(entries);
    }
  } else {
    engine::OrderPending(ctx, &jobs, &keys);
    ctx.decisions.SetPendingKeys(jobs, keys);
  }
  const size_t n = kept ? entries.size() : jobs.size();
  engine::JobIndex blocker = -1;
  std::string behind;  // hooks.Behind(blocker), worded once
  std::string reason;
  const bool standing = !profile.sizer->ReadsVerdicts();
  // In the kept order, the jobs behind a blocker that already stand on the
  // same verdict are marked (ClusterState::PendingOrder) and passed over
  // without reading their state: a long strict queue behind a blocked head
  // costs a few bytes a job per cycle.
  engine::ClusterState::PendingOrder& order = mutable_state.MutablePendingOrder();
  const bool marks = kept && standing;
  int pos = -1;
  for (size_t i = 0; i < n; ++i) {
    if (blocker >= 0 && marks) {
      size_t next = i;
      while (next < n && order.Marked(entries[next]) && entries[next].job != ctx.trace_job) {
        assert(!profile.order->IsStarving(st, entries[next].job, ctx.now));
        ++next;
        // Positions count pending jobs only (a Standby one may hold its gang).
        if (!skip_unpending || st.Job(entries[next - 1].job).IsPending()) ++pos;
      }
      i = next;
      if (i == n) break;
    }
    engine::ClusterState::OrderEntry* entry = kept ? &entries[i] : nullptr;
    const engine::JobIndex j = kept ? entry->job : jobs[i];
    if (skip_unpending && !st.Job(j).IsPending()) continue;
    ++pos;
    const double key = kept ? entry->key : keys[i];
    engine::JobTrace* trace = ctx.BeginTrace(j, pos);
    if (st.Job(j).phase == core::JobPhase::kWaiting && profile.order->IsStarving(st, j, ctx.now)) {
      ctx.AddAction(engine::ActionKind::kStarve, j, "waited past the starvation limit");
    }
    // A verdict the job already stands on is not given again, unless the
    // sizer reads verdicts or the job is traced.
    auto wait = [&](const std::string& why,
                    engine::WaitStatus status = engine::WaitStatus::kUnschedulable,
                    bool behind_verdict = false) {
      if (trace != nullptr) trace->outcome = why;
      if (standing) {
        engine::JobState::StandingWait& w = mutable_state.MutableJob(j).standing_wait;
        const uint32_t seq = st.Job(j).reason_seq;
        const bool stands = w.given && w.reason_seq == seq && w.owner == st.MemoOwner() &&
                            w.status == static_cast<uint8_t>(status) && w.reason == why;
        if (marks) order.Mark(*entry, behind_verdict);
        if (trace == nullptr && stands) return;
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
      wait(behind, engine::WaitStatus::kUnschedulable, true);
      if (trace != nullptr) trace->outcome = hooks.Behind(blocker, true);
      continue;
    }
    auto block = [&] {
      blocker = j;
      behind = hooks.Behind(blocker, false);
      // Marks given for another wording no longer say what a job stands on.
      if (marks && behind != order.behind_text) {
        order.behind_text = behind;
        ++order.behind_epoch;
      }
    };
    const bool may_preempt = hooks.MayPreempt(j, key);
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
