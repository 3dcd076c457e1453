#include "dlsched/policy/baselines/admission_per_pod.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dlsched/engine/placement.h"
#include "dlsched/engine/profile.h"

namespace dlsched::policy {

void PerPodAdmission::Admit(engine::CycleContext& ctx, const engine::Profile& /*profile*/) const {
  const engine::ClusterState& st = ctx.state();
  const uint64_t room = st.RoomEpoch();
  // A parked pod (tried, and no room freed since: kube's unschedulable
  // pods) or one in backoff is not tried. A job whose pods are all such
  // keeps its standing verdict: nothing it says can have changed (bound
  // pods lost and restarts bring new pods, which are tried). So only the
  // jobs with a pod to try are visited, and all of them when `explain`
  // traces a job (its position counts every job in the queue).
  auto ready = [&](const engine::PendingPod& pod) {
    return !pod.Parked(room) && pod.not_before <= ctx.now;
  };
  const bool all = ctx.trace_job >= 0;
  // The jobs to visit, ascending, and each one's position in `visited`
  // (kToVisit until its first pod is seen). Looking a pod's job up here
  // rather than in its JobState keeps the walk over a long queue of
  // parked pods within the cache.
  constexpr int32_t kToVisit = -1;
  std::vector<engine::JobIndex> to_visit;
  for (const engine::PendingPod& pod : st.Pods()) {
    if (all || ready(pod)) to_visit.push_back(pod.task.job);
  }
  if (to_visit.empty()) return;
  std::sort(to_visit.begin(), to_visit.end());
  to_visit.erase(std::unique(to_visit.begin(), to_visit.end()), to_visit.end());
  std::vector<int32_t> position(to_visit.size(), kToVisit);
  auto slot = [&](engine::JobIndex j) -> int32_t* {
    auto it = std::lower_bound(to_visit.begin(), to_visit.end(), j);
    return it == to_visit.end() || *it != j ? nullptr : &position[it - to_visit.begin()];
  };
  std::vector<engine::JobIndex> visited;
  // The pod a job's wait text names: the last of its pods in queue order
  // that is not bound; `text` when it failed in this cycle.
  struct LastPod {
    const engine::PendingPod* pod = nullptr;
    bool failed_now = false;
    std::string text;
  };
  std::vector<LastPod> last;
  // Some pod of the job can never be placed (its last failure said so).
  std::vector<uint8_t> never;
  std::map<std::pair<engine::JobIndex, core::Role>, std::optional<std::string>> never_fits;
  for (const engine::PendingPod& pod : st.Pods()) {
    const engine::JobIndex j = pod.task.job;
    int32_t* visit = slot(j);
    if (visit == nullptr) continue;
    int32_t& at = *visit;
    const engine::JobState& js = st.Job(j);
    if (!js.IsPending() || js.NodeOf(pod.task.role, pod.task.index) != engine::kNoNode) continue;
    if (at == kToVisit) {
      at = static_cast<int32_t>(visited.size());
      ctx.BeginTrace(j, at);
      visited.push_back(j);
      last.emplace_back();
      never.push_back(0);
    }
    LastPod& lp = last[static_cast<size_t>(at)];
    lp.pod = &pod;
    lp.failed_now = false;
    if (!ready(pod)) {
      if (pod.unresolvable) never[static_cast<size_t>(at)] = 1;
      continue;
    }
    std::string reason;
    if (engine::PlaceTaskByScore(ctx, pod.task, &reason)) {
      lp.pod = nullptr;
      continue;
    }
    // Every pod of a role asks the same: once per job and role.
    auto [memo, first] = never_fits.try_emplace({j, pod.task.role});
    if (first) memo->second = engine::TaskNeverFits(ctx, pod.task);
    engine::WaitStatus status = engine::WaitStatus::kUnschedulable;
    if (memo->second) {
      never[static_cast<size_t>(at)] = 1;
      reason = "can never fit in this cluster: " + *memo->second;
      status = engine::WaitStatus::kUnschedulableUnresolvable;
    }
    lp.failed_now = true;
    lp.text = reason;
    ctx.decisions.Add(engine::ActionKind::kBackoff, pod.task, std::move(reason), 0, status);
  }
  for (size_t i = 0; i < visited.size(); ++i) {
    const engine::JobIndex j = visited[i];
    const engine::JobState& js = st.Job(j);
    const int total = js.spec->NumTasks(js.target_workers);
    engine::JobTrace* trace = ctx.TraceOf(j);
    if (js.placed_tasks == total) {
      std::string outcome = fmt::format("started: all {} pods bound", total);
      if (trace != nullptr) trace->outcome = outcome;
      ctx.decisions.Start(j, js.target_workers, std::move(outcome));
      continue;
    }
    // The text names the last failure; it changes with a new failure or
    // pods bound, and only then is it worded and given again.
    const LastPod& lp = last[i];
    const engine::PendingPod* pod = lp.pod;
    const engine::WaitStatus status = never[i] ? engine::WaitStatus::kUnschedulableUnresolvable
                                               : engine::WaitStatus::kUnschedulable;
    engine::JobState::PodWaitText& memo = ctx.session.mutable_state().MutableJob(j).pod_wait_text;
    const int role = pod == nullptr ? -1 : static_cast<int>(pod->task.role);
    const int index = pod == nullptr ? -1 : pod->task.index;
    // A failure is known by its attempt: failed now, it is the next one.
    const int attempts = pod == nullptr ? 0 : pod->attempts + (lp.failed_now ? 1 : 0);
    const bool changed = memo.reason_seq != js.reason_seq || memo.placed != js.placed_tasks ||
                         memo.total != total || memo.since != js.phase_since || memo.role != role ||
                         memo.index != index || memo.attempts != attempts ||
                         memo.status != static_cast<uint8_t>(status);
    if (!changed && trace == nullptr) continue;
    if (changed) {
      memo.reason_seq = js.reason_seq;
      memo.placed = js.placed_tasks;
      memo.total = total;
      memo.since = js.phase_since;
      memo.role = role;
      memo.index = index;
      memo.attempts = attempts;
      memo.status = static_cast<uint8_t>(status);
      memo.text = fmt::format("waiting: {} of {} pods bound (no gang)", js.placed_tasks, total);
      if (pod != nullptr) {
        memo.text += "; ";
        memo.text += lp.failed_now ? lp.text : pod->last_failure;
      }
    }
    if (trace != nullptr) trace->outcome = memo.text;
    ctx.decisions.Wait(j, memo.text, status);
  }
}

}  // namespace dlsched::policy
