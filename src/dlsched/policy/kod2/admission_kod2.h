#pragma once

#include <string>
#include <vector>

#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// KOD2's admission (docs/policies/kod2.md, steps 1-4 of the cycle). Pending
// jobs go heaviest first (the profile's JobOrder: weight = -key, starvation
// aging included); "running" jobs are those that hold resources and are not
// pending (frozen phases included), weighed by the same JobOrder without aging.
// For each pending job J in turn:
//
//   - step 2, when w(J) >= the heaviest running job's weight (or nothing
//     runs): place J's minimum gang (Sizer::StartWorkers) with the packer;
//     if it does not fit, ask the preemptor (KOD2 scale-in) to free room.
//     If J still cannot start, it waits, and so does every lighter job in
//     this cycle (the paper serves the heaviest job first) - unless J could
//     never start even on the empty cluster: then it is skipped with a
//     reason saying so, so that it cannot block the queue for ever;
//   - step 3, when J is lighter than some running job: J starts only if its
//     minimum gang fits in idle room; no preemption.
//
// The paper handles one J per event. Going on with the next heaviest job
// after J starts is the same as a sequence of events at the same instant:
// J now counts as running, so the next job takes step 2 only if it is as
// heavy as J, and step 3 otherwise.
class Kod2Admission final : public engine::Admission {
 public:
  void Admit(engine::CycleContext& ctx, const engine::Profile& profile) const override;
};

}  // namespace dlsched::policy
