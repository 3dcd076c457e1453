// The deadline unit (deadline.h): its three pieces, the arguments they
// take, and its registration. docs/writing-a-policy.md quotes this file.
#include "dlsched/policy/deadline/deadline.h"

#include "dlsched/core/limits.h"
#include "dlsched/policy/framework/args.h"
#include "dlsched/policy/framework/plugins.h"

namespace dlsched::policy {

void EarliestDeadlineOrder::Keys(const engine::ClusterState& state,
                                 std::span<const engine::JobIndex> jobs, core::Time /*now*/,
                                 std::span<double> keys) const {
  for (size_t i = 0; i < jobs.size(); ++i) {
    const core::JobSpec& spec = *state.Job(jobs[i]).spec;
    if (spec.deadline) {
      keys[i] = spec.submit_time + *spec.deadline;
    } else if (default_deadline_ > 0) {
      keys[i] = spec.submit_time + default_deadline_;
    } else {
      keys[i] = core::kNever;  // finite, after every deadline
    }
  }
}

int64_t KeepTogetherScorer::Score(const engine::ClusterState& state, engine::TaskRef t,
                                  engine::NodeIndex n) const {
  const engine::JobState& js = state.Job(t.job);
  const int self = js.SlotOf(t.role, t.index);
  int seen = 0;    // placed slots visited, t's own included
  int others = 0;  // of which not t's
  int here = 0;    // of which on n
  // Workers fill the lowest free slots: stop once every placed one is seen.
  for (int s = 0; s < static_cast<int>(js.task_node.size()) && seen < js.placed_tasks; ++s) {
    if (js.task_node[s] == engine::kNoNode) continue;
    ++seen;
    if (s == self) continue;
    ++others;
    here += js.task_node[s] == n;
  }
  return others == 0 ? 0 : int64_t{100} * here / others;
}

int DeadlineFitSizer::StartWorkers(const engine::ClusterState& state, engine::JobIndex j) const {
  const engine::JobState& js = state.Job(j);
  const core::JobSpec& spec = *js.spec;
  const core::RoleSpec& w = spec.role(core::Role::kWorker);
  if (!spec.deadline) return w.replicas;
  const double budget = *spec.deadline / headroom_ - spec.launch_delay;
  const double steps = spec.total_steps - js.steps_done;
  for (int n = w.min_replicas; n <= w.max_replicas; ++n) {
    const double rate = spec.throughput.Rate(n);
    if (rate > 0 && steps / rate <= budget) return n;
  }
  return w.replicas;
}

namespace {

// order: {name: EarliestDeadline, args: {defaultDeadline: SECONDS}}
core::Result<std::unique_ptr<engine::JobOrder>> MakeEarliestDeadline(const YAML::Node& args,
                                                                     const std::string& where) {
  ArgReader reader(args, where);
  DLSCHED_TRY_LET(default_deadline, reader.Double("defaultDeadline", 0, 0, core::kMaxTime));
  DLSCHED_TRY(reader.Finish());
  return std::make_unique<EarliestDeadlineOrder>(*default_deadline);
}

// sizer: {name: DeadlineFit, args: {headroom: FACTOR}}
core::Result<std::unique_ptr<engine::Sizer>> MakeDeadlineFit(const YAML::Node& args,
                                                             const std::string& where) {
  ArgReader reader(args, where);
  DLSCHED_TRY_LET(headroom, reader.Double("headroom", 1, 1, 100));
  DLSCHED_TRY(reader.Finish());
  return std::make_unique<DeadlineFitSizer>(*headroom);
}

void RegisterDeadline(PluginTable& t) {
  t.orders.emplace("EarliestDeadline", MakeEarliestDeadline);
  t.scorers.emplace("KeepTogether", NoArgs<engine::NodeScorer, KeepTogetherScorer>());
  t.sizers.emplace("DeadlineFit", MakeDeadlineFit);
}

}  // namespace

DLSCHED_REGISTER_UNIT(deadline, RegisterDeadline);

}  // namespace dlsched::policy
