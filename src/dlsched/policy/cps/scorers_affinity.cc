#include "dlsched/policy/cps/scorers_affinity.h"

namespace dlsched::policy {
namespace {

struct Count {
  int placed = 0;   // slots of the range with a node
  int on_node = 0;  // of which on node n
};

// Counts the placed slots [begin, end) of the job and those on `n`,
// skipping `self` (the scored task's own slot).
Count CountSlots(const engine::JobState& js, int begin, int end, int self, engine::NodeIndex n) {
  Count c;
  for (int s = begin; s < end; ++s) {
    const engine::NodeIndex at = js.task_node[s];
    if (s == self || at == engine::kNoNode) continue;
    ++c.placed;
    c.on_node += at == n;
  }
  return c;
}

}  // namespace

int64_t PsWorkerAffinity::Score(const engine::ClusterState& state, engine::TaskRef t,
                                engine::NodeIndex n) const {
  const engine::JobState& js = state.Job(t.job);
  const int self = js.SlotOf(t.role, t.index);
  const int ps_end = js.NumPs();
  // A PS looks at the Chief and Worker slots, the others at the PS slots.
  const Count c = t.role == core::Role::kPS
                      ? CountSlots(js, ps_end, static_cast<int>(js.task_node.size()), self, n)
                      : CountSlots(js, 0, ps_end, self, n);
  return c.placed > 0 ? int64_t{100} * c.on_node / c.placed : 0;
}

int64_t PsAntiAffinity::Score(const engine::ClusterState& state, engine::TaskRef t,
                              engine::NodeIndex n) const {
  if (t.role != core::Role::kPS) return kNeutral;
  const engine::JobState& js = state.Job(t.job);
  const Count c = CountSlots(js, 0, js.NumPs(), js.SlotOf(t.role, t.index), n);
  return c.placed > 0 ? int64_t{100} * (c.placed - c.on_node) / c.placed : 100;
}

}  // namespace dlsched::policy
