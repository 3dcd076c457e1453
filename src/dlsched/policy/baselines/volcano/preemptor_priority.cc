#include "dlsched/policy/baselines/volcano/preemptor_priority.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace dlsched::policy {

using engine::JobIndex;
using engine::JobState;

bool PriorityEvictionPreemptor::TryWith(engine::CycleContext& ctx, engine::Session::Mark mark,
                                        std::span<const JobIndex> victims,
                                        std::span<const uint8_t> spared, JobIndex j, int workers,
                                        const engine::Packer& packer, std::string* reason) {
  ctx.session.RollbackTo(mark);
  for (size_t i = 0; i < victims.size(); ++i) {
    if (!spared[i]) ctx.session.EvictJob(victims[i]);
  }
  return packer.PlaceGang(ctx, j, workers, reason);
}

namespace {

// The running jobs (and RunningProtected ones unless `skip_frozen`) of
// lower priority than `prio` that hold something, other than `j`: lowest
// priority first; among equals the latest (re)started, which loses the
// least work; then the highest index. Phase lists are unordered, so this
// sort is what makes the choice deterministic.
std::vector<JobIndex> Candidates(const engine::ClusterState& st, JobIndex j,
                                 core::PriorityClass prio, bool skip_frozen) {
  std::vector<JobIndex> candidates;
  auto collect = [&](core::JobPhase phase) {
    for (JobIndex v : st.JobsInPhase(phase)) {
      const JobState& vs = st.Job(v);
      // placed_tasks > 0 also skips a job another preemption emptied earlier
      // in this cycle.
      if (v != j && vs.placed_tasks > 0 && vs.spec->priority < prio) candidates.push_back(v);
    }
  };
  collect(core::JobPhase::kRunning);
  if (!skip_frozen) collect(core::JobPhase::kRunningProtected);
  std::sort(candidates.begin(), candidates.end(), [&](JobIndex a, JobIndex b) {
    const JobState& ja = st.Job(a);
    const JobState& jb = st.Job(b);
    if (ja.spec->priority != jb.spec->priority) return ja.spec->priority < jb.spec->priority;
    if (ja.phase_since != jb.phase_since) return ja.phase_since > jb.phase_since;
    return a > b;
  });
  return candidates;
}

}  // namespace

// Gives back every earlier victim the gang does not need: a victim evicted
// first may have freed room on the wrong nodes. The last victim is needed
// by construction (the gang did not fit before it). `spared[i]`: victim i
// is given back. Leaves the session with the gang placed, or false.
bool PriorityEvictionPreemptor::SpareUnneeded(engine::CycleContext& ctx, engine::Session::Mark mark,
                                              std::span<const JobIndex> victims, JobIndex j,
                                              int workers, const engine::Packer& packer,
                                              std::vector<uint8_t>* spared, std::string* why) {
  spared->assign(victims.size(), 0);
  bool current = true;  // the session holds the placement for the current set
  for (size_t i = 0; i + 1 < victims.size(); ++i) {
    (*spared)[i] = 1;
    why->clear();
    current = TryWith(ctx, mark, victims, *spared, j, workers, packer, why);
    if (!current) (*spared)[i] = 0;
  }
  return current || TryWith(ctx, mark, victims, *spared, j, workers, packer, why);
}

bool PriorityEvictionPreemptor::Preempt(engine::CycleContext& ctx, JobIndex j, int workers,
                                        const engine::Packer& packer, std::string* reason) const {
  const engine::ClusterState& st = ctx.state();
  const core::JobSpec& spec = *st.Job(j).spec;
  const core::PriorityClass prio = spec.priority;

  // Nothing ranks below low: skip the scan of running jobs (this is called
  // for every waiting job that does not fit, every cycle).
  if (prio == core::PriorityClass::kLow) {
    if (reason != nullptr) *reason = "no running job of lower priority than low to preempt";
    return false;
  }
  const std::vector<JobIndex> candidates = Candidates(st, j, prio, skip_frozen_);
  if (candidates.empty()) {
    if (reason != nullptr) {
      *reason = fmt::format("no running job of lower priority than {} to preempt",
                            core::PriorityClassName(prio));
    }
    return false;
  }

  // Cheap test first: the gang must fit in what is free plus everything the
  // candidates hold, else no eviction can help.
  core::Resources room = st.TotalFree();
  for (JobIndex v : candidates) room += st.Held(v);
  const core::Resources need = spec.Demand(workers) - st.Held(j);
  if (!need.FitsIn(room)) {
    if (reason != nullptr) {
      *reason = fmt::format(
          "preempting all {} running job{} of lower priority would not free enough for the gang",
          candidates.size(), candidates.size() == 1 ? "" : "s");
    }
    return false;
  }

  // Greedy: evict one job at a time until the gang fits.
  const engine::Session::Mark mark = ctx.session.GetMark();
  std::vector<JobIndex> victims;
  std::string why;
  bool placed = false;
  for (JobIndex v : candidates) {
    ctx.session.EvictJob(v);
    victims.push_back(v);
    why.clear();
    if (packer.PlaceGang(ctx, j, workers, &why)) {
      placed = true;
      break;
    }
  }
  if (!placed) {
    ctx.session.RollbackTo(mark);
    if (reason != nullptr) {
      *reason =
          fmt::format("preempting all {} running job{} of lower priority would not make room: {}",
                      candidates.size(), candidates.size() == 1 ? "" : "s", why);
    }
    return false;
  }

  std::vector<uint8_t> spared;
  if (!SpareUnneeded(ctx, mark, victims, j, workers, packer, &spared, &why)) {
    // Only a non-deterministic packer could get here: the same session state
    // placed the gang before. Keep the contract: leave nothing behind.
    ctx.session.RollbackTo(mark);
    if (reason != nullptr) *reason = "preemption did not reproduce its placement: " + why;
    return false;
  }

  for (size_t i = 0; i < victims.size(); ++i) {
    if (spared[i]) continue;
    const core::JobSpec& vs = *st.Job(victims[i]).spec;
    ctx.AddAction(engine::ActionKind::kStop, victims[i],
                  fmt::format("preempted by {}: priority {} > {}", spec.name,
                              core::PriorityClassName(prio), core::PriorityClassName(vs.priority)),
                  0, j);
  }
  return true;
}

}  // namespace dlsched::policy
