#pragma once

#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "dlsched/core/error.h"
#include "dlsched/core/resources.h"
#include "dlsched/engine/extension_points.h"
#include "dlsched/policy/kod2/packer_fewest_nodes.h"

namespace dlsched::policy {

// KOD2 scale-out (docs/policies/kod2.md). A job starts with its minReplicas
// workers; after admission, idle room goes to running jobs as extra
// workers, heaviest job first (the profile's JobOrder), each grown one
// worker at a time up to maxReplicas before the next job is considered.
//
// Who grows: jobs in phase Running (not the frozen phases: a
// RunningProtected job keeps its allocation, as F-scheduling's freeze rule
// asks) and jobs started in this cycle (step 5 of the KOD2 cycle runs after
// steps 2-3 have started them; their kStart action then carries the grown
// size). A job scaled in during this cycle is not grown again in the same
// cycle: it would only move workers around.
//
// Where a worker goes: nodes already holding the job's tasks first - the
// node(s) of its PS first, then its other nodes by ascending index (our
// choice: workers near their PS and siblings) - then the other nodes most
// idle first (MostIdleNodes: most free GPUs, then cpu, then memory, then
// index). A node takes as many workers as fit before the next one is tried.
// A job that gained workers gets one kResize ("scaled out 2 workers into
// idle room"), relaunching when `restart_on_resize`.
//
// Heterogeneity-aware (`aware`): a worker on a GPU of type A is worth its
// throughput on A. A worker is added only where it raises the job's speed
// (ClusterState::PlacedRate with the worker, against without: a gang runs
// at its slowest type's rate, so a worker on a slower type than the job's
// can slow it down, and a worker beyond the job's table adds nothing); the
// idle nodes are tried the job's fastest types first (RateOn at one more
// worker), most idle first within a type. A node where a worker adds
// nothing is passed over, and so are the other idle nodes of its type.
class Kod2ScaleOut final : public engine::Sizer {
 public:
  explicit Kod2ScaleOut(bool restart_on_resize, bool aware = false)
      : restart_on_resize_(restart_on_resize), aware_(aware) {}
  int StartWorkers(const engine::ClusterState& state, engine::JobIndex j) const override {
    return state.Job(j).spec->role(core::Role::kWorker).min_replicas;
  }
  bool ReadsVerdicts() const override { return true; }
  void Resize(engine::CycleContext& ctx, const engine::Packer& packer) const override;
  bool restart_on_resize() const { return restart_on_resize_; }
  bool aware() const { return aware_; }

 private:
  bool restart_on_resize_;
  bool aware_;
  MostIdleNodes idle_;
};

// Args: restartOnResize (bool, default false), heterogeneity (aware or
// agnostic, default agnostic).
core::Result<std::unique_ptr<engine::Sizer>> MakeKod2ScaleOut(const YAML::Node& args,
                                                              const std::string& where);

}  // namespace dlsched::policy
