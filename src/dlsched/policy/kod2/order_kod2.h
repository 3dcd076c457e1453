#pragma once

#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "dlsched/core/error.h"
#include "dlsched/core/resources.h"
#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// What a job's resource share is measured against.
enum class Kod2Scale {
  // The paper: share_r = minimum request of r / cluster capacity of r. The
  // shares shrink as the cluster grows, so a fixed kappa saturates the
  // sigmoid on large clusters (every weight rounds to 1 and the order
  // degenerates to FIFO).
  kCluster,
  // share_r * N, N = schedulable nodes: the request in units of an average
  // node's r. Scale-free: the same job gets the same weight on 3 nodes or
  // 3000 nodes of the same kind, so one kappa fits every cluster.
  kNode,
};

struct Kod2WeightOptions {
  double kappa = 0.5;
  Kod2Scale scale = Kod2Scale::kNode;
  // Seconds a pending job may wait (since its submit time) before it is
  // raised above every waiting job. 0 disables aging.
  core::Time starve_limit = 600;
  // Resources whose shares are summed.
  std::vector<core::ResourceId> resources = {core::kCpu, core::kMemory, core::kGpu};
};

// KOD2's job weight (docs/policies/kod2.md):
//   w' = kappa * minWorkers / sum_r share_r,   w = 1 / (1 + exp(-w'))
// over the job's minimum gang (PS + Chief + minReplicas workers): jobs that
// train with many workers on few resources come first. Key = -w (heavier
// first); ties by submit time, then job index (the engine's rule).
//
// A job that requests none of the configured resources (sum of shares 0)
// gets w' = 0, w = 0.5: lighter than any job that requests something
// (whose w' > 0), so it never preempts anyone and is never protected from
// preemption; it takes nothing, so it fits wherever room is left.
//
// Starvation aging: a pending job that holds nothing and has waited more
// than starve_limit seconds since its submit time gets w = (highest weight
// among the jobs being ordered) + 1e-9: above every waiting job. Several
// starving jobs get the same raised weight and so keep FIFO order among
// themselves (the submit-time tie rule). Running jobs are never aged, so
// the same call over running jobs gives their plain weights.
class Kod2WeightOrder final : public engine::JobOrder {
 public:
  explicit Kod2WeightOrder(Kod2WeightOptions options) : options_(std::move(options)) {}

  void Keys(const engine::ClusterState& state, std::span<const engine::JobIndex> jobs,
            core::Time now, std::span<double> keys) const override;
  bool IsStarving(const engine::ClusterState& state, engine::JobIndex j,
                  core::Time now) const override;

  // w' and w of job `j` without aging.
  double Exponent(const engine::ClusterState& state, engine::JobIndex j) const;
  double Weight(const engine::ClusterState& state, engine::JobIndex j) const;

  const Kod2WeightOptions& options() const { return options_; }

 private:
  Kod2WeightOptions options_;
};

// How much a starving job is raised above the highest weight.
inline constexpr double kKod2StarveBump = 1e-9;

// Builds Kod2WeightOrder from a profile's `args`:
//   kappa: 0.5             (number > 0)
//   scale: node            (node | cluster)
//   starveLimit: 600       (seconds >= 0; 0 disables aging)
//   resources: [cpu, memory, nvidia.com/gpu]   (names, each once, at least one)
core::Result<std::unique_ptr<engine::JobOrder>> MakeKod2Weight(const YAML::Node& args,
                                                               const std::string& where);

// Shared by the KOD2 admission, preemptor and sizer.

// Jobs that hold resources and are not pending (JobState::IsActive), by
// ascending index: KOD2's "running" set (frozen phases included).
void ActiveJobs(const engine::ClusterState& state, std::vector<engine::JobIndex>* out);

// True when job `a` with weight `wa` goes before job `b` with weight `wb`
// in the total order of the queue: heavier first, then earlier submit, then
// lower index.
bool Outranks(const engine::ClusterState& state, engine::JobIndex a, double wa, engine::JobIndex b,
              double wb);

// "1 worker", "3 workers".
std::string Workers(int n);

// A weight for reasons: "0.731" (enough digits to tell close weights apart).
std::string FormatWeight(double w);

}  // namespace dlsched::policy
