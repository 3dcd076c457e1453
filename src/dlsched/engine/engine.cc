#include "dlsched/engine/engine.h"

#include <atomic>

#include "dlsched/engine/placement.h"

namespace dlsched::engine {

Engine::Engine(Profile profile) : profile_(std::move(profile)) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id.fetch_add(1, std::memory_order_relaxed);
}

Plan Engine::Cycle(ClusterState& state, const PodQueue& pods, Memos& memos, core::Time now,
                   const CycleOptions& options) const {
  Plan plan;
  // Memos written by another engine (another profile) do not hold here.
  memos.Claim(id_, state);
  // The queue order's caps for this cycle (worked out again only when what
  // they depend on changed); a cap raised is room freed.
  if (profile_.queue_order != nullptr && state.Quotas().NumQueues() > 0 &&
      !state.QueueCapsCurrent(id_) && state.SetQueueCaps(profile_.queue_order->Caps(state), id_)) {
    state.NoteRoomChanged();
  }
  plan.room_epoch = state.RoomEpoch();
  // The journal of touched nodes brings the kept node scores
  // (Memos::NodeScores) up to date from one cycle to the next; once it is
  // longer than a few passes over the nodes, rebuilding them costs less.
  if (state.TouchedNodes().size() > 4 * static_cast<size_t>(state.NumNodes()) + 1024) {
    state.ForgetTouched();
  }
  Session session(state);
  CycleState decisions;
  CycleContext ctx{session,       decisions,         pods,          memos, profile_, now,
                   options.cycle, options.trace_job, options.traces};
  profile_.admission->Admit(ctx, profile_);
  profile_.sizer->Resize(ctx, *profile_.packer);
  // The traced job's final verdict in this cycle, whichever stage gave it.
  if (JobTrace* trace = ctx.TraceOf(options.trace_job)) {
    const Action* verdict = decisions.VerdictOf(options.trace_job);
    trace->waiting = verdict != nullptr && verdict->kind == ActionKind::kWait;
    if (trace->waiting) trace->status = verdict->status;
  }
  EmitPlan(session, decisions, &plan);
  session.RollbackTo(0);
  // The pending order has merged them (or the order does not keep them).
  state.ForgetEnteredPending();
  return plan;
}

void ApplyPlacements(ClusterState& state, const Plan& plan) {
  for (const auto& a : plan.actions) {
    if (a.kind == ActionKind::kBind) {
      state.PlaceTask(a.task, a.node, a.device);
    } else if (a.kind == ActionKind::kUnbind) {
      state.RemoveTask(a.task);
    }
  }
}

}  // namespace dlsched::engine
