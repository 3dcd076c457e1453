#include "dlsched/policy/admission_per_pod.h"

#include <iterator>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dlsched/engine/placement.h"
#include "dlsched/engine/profile.h"

namespace dlsched::policy {

void PerPodAdmission::Admit(engine::CycleContext& ctx, const engine::Profile& /*profile*/) const {
  const engine::ClusterState& st = ctx.state();
  // Jobs with a pod in the queue, in first-pod order, and the last reason
  // each could not complete. Sized by the queue, not by every job ever seen.
  std::vector<engine::JobIndex> touched;
  // The last reason: a failed pod's text, or the pod in backoff (worded
  // only at the end, once per job: most queued pods are in backoff).
  struct LastReason {
    const engine::PendingPod* backoff = nullptr;
    std::string text;
  };
  std::vector<LastReason> reasons;
  std::vector<uint8_t> never;  // some pod of the job can never be placed
  std::map<std::pair<engine::JobIndex, core::Role>, std::optional<std::string>> never_fits;
  std::unordered_map<engine::JobIndex, size_t> slot;
  int position = 0;
  for (const engine::PendingPod& pod : st.Pods()) {
    const engine::JobIndex j = pod.task.job;
    const engine::JobState& js = st.Job(j);
    if (!js.IsPending() || js.NodeOf(pod.task.role, pod.task.index) != engine::kNoNode) continue;
    auto [it, fresh] = slot.try_emplace(j, touched.size());
    if (fresh) {
      touched.push_back(j);
      reasons.emplace_back();
      never.push_back(0);
      ctx.BeginTrace(j, position++);
    }
    LastReason& last_reason = reasons[it->second];
    if (pod.not_before > ctx.now) {
      last_reason.backoff = &pod;
      continue;
    }
    std::string reason;
    if (!engine::PlaceTaskByScore(ctx, pod.task, &reason)) {
      // Every pod of a role asks the same: once per job and role.
      auto [memo, first] = never_fits.try_emplace({j, pod.task.role});
      if (first) memo->second = engine::TaskNeverFits(ctx, pod.task);
      if (memo->second) {
        never[it->second] = 1;
        reason = "can never fit in this cluster: " + *memo->second;
      }
      last_reason.backoff = nullptr;
      last_reason.text = reason;
      ctx.decisions.Add(engine::ActionKind::kBackoff, pod.task, std::move(reason));
    }
  }
  for (size_t i = 0; i < touched.size(); ++i) {
    const engine::JobIndex j = touched[i];
    const engine::JobState& js = st.Job(j);
    const int total = js.spec->NumTasks(js.target_workers);
    engine::JobTrace* trace = ctx.TraceOf(j);
    if (js.placed_tasks == total) {
      std::string outcome = fmt::format("started: all {} pods bound", total);
      if (trace != nullptr) trace->outcome = outcome;
      ctx.decisions.Start(j, js.target_workers, std::move(outcome));
    } else {
      const LastReason& last = reasons[i];
      // Worded again only when what it says changed (most queued jobs wait
      // on the same pod's backoff cycle after cycle).
      engine::JobState::PodWaitText& memo = ctx.session.mutable_state().MutableJob(j).pod_wait_text;
      const int role = last.backoff == nullptr ? -1 : static_cast<int>(last.backoff->task.role);
      const int index = last.backoff == nullptr ? -1 : last.backoff->task.index;
      const core::Time not_before = last.backoff == nullptr ? 0 : last.backoff->not_before;
      if (memo.placed != js.placed_tasks || memo.total != total || memo.backoff_role != role ||
          memo.backoff_index != index || memo.not_before != not_before ||
          (role < 0 && memo.failure != last.text)) {
        memo.placed = js.placed_tasks;
        memo.total = total;
        memo.backoff_role = role;
        memo.backoff_index = index;
        memo.not_before = not_before;
        memo.failure = role < 0 ? last.text : std::string();
        memo.text = fmt::format("waiting: {} of {} pods bound (no gang); ", js.placed_tasks, total);
        if (last.backoff == nullptr) {
          memo.text += last.text;
        } else {
          fmt::format_to(std::back_inserter(memo.text), "{}[{}] in backoff until {:.1f}s",
                         core::RoleName(last.backoff->task.role), last.backoff->task.index,
                         last.backoff->not_before);
        }
      }
      std::string why = memo.text;
      const engine::WaitStatus status = never[i] ? engine::WaitStatus::kUnschedulableUnresolvable
                                                 : engine::WaitStatus::kUnschedulable;
      if (trace != nullptr) trace->outcome = why;
      ctx.decisions.Wait(j, std::move(why), status);
    }
  }
}

}  // namespace dlsched::policy
