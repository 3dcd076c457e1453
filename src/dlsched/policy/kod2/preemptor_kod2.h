#pragma once

#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "dlsched/core/error.h"
#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// KOD2 scale-in (docs/policies/kod2.md): frees room for job J by shrinking
// lighter running jobs, never below their minReplicas.
//
// Victims: jobs in phase Running (frozen phases - Launching,
// RunningProtected, Checkpointing, Stopping, Standby - are left alone, as
// F-scheduling's freeze rule asks, and jobs started in this cycle are not
// running yet) that hold more than minReplicas workers and rank below J in
// the queue's total order: lighter than J, or as heavy and submitted later
// (an equally heavy job submitted earlier is skipped, as the paper says).
// Weights come from the profile's JobOrder (weight = -key); J's weight is
// the one admission ordered it by in this cycle (CycleState::PendingKey,
// starvation aging included), a victim's is its plain weight (running jobs
// are not aged).
//
// Victims are visited lightest first (ties: the later submitted first). For
// each, its workers are removed one at a time, node by node: nodes without
// the victim's PS first, in ascending node index, the node(s) holding a PS
// last (the workers there talk to their PS locally, so they are worth the
// most); on one node the highest worker slot goes first. After each removal
// J's gang is tried with the profile's packer: our generalisation of the
// paper's "one node has room for J's minimum" to "J's minimum gang is
// placeable with the freed room". On success the removals and J's placement
// stay in the session and each victim gets one kResize action ("scaled in 2
// workers of job-7 for job-9"), relaunching when `restart_on_resize`. On
// failure the session is rolled back to where it was and the plan is not
// touched.
class Kod2ScaleIn final : public engine::Preemptor {
 public:
  explicit Kod2ScaleIn(bool restart_on_resize) : restart_on_resize_(restart_on_resize) {}
  bool Preempt(engine::CycleContext& ctx, engine::JobIndex j, int workers,
               const engine::Packer& packer, std::string* reason) const override;
  bool restart_on_resize() const { return restart_on_resize_; }

 private:
  bool restart_on_resize_;
};

// Args: restartOnResize (bool, default false).
core::Result<std::unique_ptr<engine::Preemptor>> MakeKod2ScaleIn(const YAML::Node& args,
                                                                 const std::string& where);

}  // namespace dlsched::policy
