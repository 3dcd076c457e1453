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
namespace {

// One cycle of per-pod admission over the pod queue.
class PerPodPass {
 public:
  explicit PerPodPass(engine::CycleContext& ctx)
      : ctx_(ctx), st_(ctx.state()), room_(st_.RoomEpoch()) {}

  void Run() {
    if (!ChooseJobs()) return;
    for (const engine::PendingPod& pod : ctx_.pods) TryPod(pod);
    for (size_t i = 0; i < visited_.size(); ++i) Verdict(i);
  }

 private:
  // A parked pod (tried, and no room freed since: kube's unschedulable
  // pods) or one in backoff is not tried.
  bool Ready(const engine::PendingPod& pod) const {
    return !pod.Parked(room_) && pod.not_before <= ctx_.now;
  }

  // A job whose pods are all parked or backing off keeps its standing
  // verdict: nothing it says can have changed (bound pods lost and
  // restarts bring new pods, which are tried). So only the jobs with a pod
  // to try are visited, and all of them when `explain` traces a job (its
  // position counts every job in the queue). False when there are none.
  bool ChooseJobs() {
    const bool all = ctx_.trace_job >= 0;
    for (const engine::PendingPod& pod : ctx_.pods) {
      if (all || Ready(pod)) to_visit_.push_back(pod.task.job);
    }
    if (to_visit_.empty()) return false;
    std::sort(to_visit_.begin(), to_visit_.end());
    to_visit_.erase(std::unique(to_visit_.begin(), to_visit_.end()), to_visit_.end());
    position_.assign(to_visit_.size(), kToVisit);
    return true;
  }

  // The job's position in `visited_` (kToVisit until its first pod is
  // seen), or nullptr when it is not visited. Looking a pod's job up here
  // rather than in its JobState keeps the walk over a long queue of parked
  // pods within the queue.
  int32_t* Slot(engine::JobIndex j) {
    auto it = std::lower_bound(to_visit_.begin(), to_visit_.end(), j);
    return it == to_visit_.end() || *it != j ? nullptr : &position_[it - to_visit_.begin()];
  }

  void TryPod(const engine::PendingPod& pod) {
    const engine::JobIndex j = pod.task.job;
    int32_t* visit = Slot(j);
    if (visit == nullptr) return;
    int32_t& at = *visit;
    const engine::JobState& js = st_.Job(j);
    if (!js.IsPending() || js.NodeOf(pod.task.role, pod.task.index) != engine::kNoNode) return;
    if (at == kToVisit) {
      at = static_cast<int32_t>(visited_.size());
      ctx_.BeginTrace(j, at);
      visited_.push_back(j);
      last_.emplace_back();
      never_.push_back(0);
    }
    LastPod& lp = last_[static_cast<size_t>(at)];
    lp.pod = &pod;
    lp.failed_now = false;
    if (!Ready(pod)) {
      if (pod.unresolvable) never_[static_cast<size_t>(at)] = 1;
      return;
    }
    std::string reason;
    if (engine::PlaceTaskByScore(ctx_, pod.task, &reason)) {
      lp.pod = nullptr;
      return;
    }
    // Every pod of a role asks the same: once per job and role.
    auto [memo, first] = never_fits_.try_emplace({j, pod.task.role});
    if (first) memo->second = engine::TaskNeverFits(ctx_, pod.task);
    engine::WaitStatus status = engine::WaitStatus::kUnschedulable;
    if (memo->second) {
      never_[static_cast<size_t>(at)] = 1;
      reason = "can never fit in this cluster: " + *memo->second;
      status = engine::WaitStatus::kUnschedulableUnresolvable;
    }
    lp.failed_now = true;
    lp.text = reason;
    ctx_.decisions.Add(engine::ActionKind::kBackoff, pod.task, std::move(reason), 0, status);
  }

  // The visited job's start, or its wait: the text names the last failure;
  // it changes with a new failure or pods bound, and only then is it
  // worded and given again.
  void Verdict(size_t i) {
    const engine::JobIndex j = visited_[i];
    const engine::JobState& js = st_.Job(j);
    const int total = js.spec->NumTasks(js.target_workers);
    engine::JobTrace* trace = ctx_.TraceOf(j);
    if (js.placed_tasks == total) {
      std::string outcome = fmt::format("started: all {} pods bound", total);
      if (trace != nullptr) trace->outcome = outcome;
      ctx_.decisions.Start(j, js.target_workers, std::move(outcome));
      return;
    }
    const LastPod& lp = last_[i];
    const engine::PendingPod* pod = lp.pod;
    const engine::WaitStatus status = never_[i] ? engine::WaitStatus::kUnschedulableUnresolvable
                                                : engine::WaitStatus::kUnschedulable;
    engine::Memos::PodWaitText& memo = ctx_.memos.Job(j).pod_wait_text;
    const int role = pod == nullptr ? -1 : static_cast<int>(pod->task.role);
    const int index = pod == nullptr ? -1 : pod->task.index;
    // A failure is known by its attempt: failed now, it is the next one.
    const int attempts = pod == nullptr ? 0 : pod->attempts + (lp.failed_now ? 1 : 0);
    const bool changed = memo.reason_seq != js.reason_seq || memo.placed != js.placed_tasks ||
                         memo.total != total || memo.since != js.phase_since || memo.role != role ||
                         memo.index != index || memo.attempts != attempts ||
                         memo.status != static_cast<uint8_t>(status);
    if (!changed && trace == nullptr) return;
    if (changed) {
      memo = {js.reason_seq,
              js.placed_tasks,
              total,
              js.phase_since,
              role,
              index,
              attempts,
              static_cast<uint8_t>(status),
              fmt::format("waiting: {} of {} pods bound (no gang)", js.placed_tasks, total)};
      if (pod != nullptr) {
        memo.text += "; ";
        memo.text += lp.failed_now ? lp.text : pod->last_failure;
      }
    }
    if (trace != nullptr) trace->outcome = memo.text;
    ctx_.decisions.Wait(j, memo.text, status);
  }

  static constexpr int32_t kToVisit = -1;
  // The pod a job's wait text names: the last of its pods in queue order
  // that is not bound; `text` when it failed in this cycle.
  struct LastPod {
    const engine::PendingPod* pod = nullptr;
    bool failed_now = false;
    std::string text;
  };

  engine::CycleContext& ctx_;
  const engine::ClusterState& st_;
  const uint64_t room_;
  // The jobs to visit, ascending, and each one's position in `visited_`.
  std::vector<engine::JobIndex> to_visit_;
  std::vector<int32_t> position_;
  std::vector<engine::JobIndex> visited_;
  std::vector<LastPod> last_;
  // Some pod of the job can never be placed (its last failure said so).
  std::vector<uint8_t> never_;
  std::map<std::pair<engine::JobIndex, core::Role>, std::optional<std::string>> never_fits_;
};

}  // namespace

void PerPodAdmission::Admit(engine::CycleContext& ctx, const engine::Profile& /*profile*/) const {
  PerPodPass(ctx).Run();
}

}  // namespace dlsched::policy
