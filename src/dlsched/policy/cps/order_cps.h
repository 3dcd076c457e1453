#pragma once

// Combined priority scheduling (CPS), docs/policies/cps-volcano-affinity.md:
// one number per job that mixes who submitted it (namespace weight), how
// important it is (priority class), how long it may wait (maxWaitMinutes) and
// how parallel it is (workers), so that neither user rank nor job size alone
// decides.
//
//   u = weight of the job's namespace, 1..10 (defaultUserPriority if unlisted)
//   b = priorityValues[priority class]           (default high 10, normal 5, low 1)
//   l = ceil(100 / L), L = maxWaitMinutes clamped: L < 1 -> 100,
//       L > 60 or no limit -> 1
//   e = u + b + l                                 (urgency)
//   m = the job's initial worker count (`replicas`)
//   m_norm, e_norm = min-max normalised over the jobs being ordered (0 when
//                    all equal)
//   V = k * (m_norm + e_norm); served by descending V.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "dlsched/core/error.h"
#include "dlsched/core/job.h"
#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

struct CpsParams {
  // Namespace -> user priority u, 1..10.
  std::map<std::string, int64_t, std::less<>> namespace_weights;
  int64_t default_user_priority = 5;
  // b per priority class, indexed by core::PriorityClass (low, normal, high).
  int64_t priority_values[3] = {1, 5, 10};
  double k = 1;
};

// The terms of one job's combined priority, for tests and `explain`-like
// output. u, b, l, e, m depend on the job alone; the normalised terms and V
// on the whole set.
struct CpsTerms {
  int64_t u = 0;
  int64_t b = 0;
  int64_t l = 0;
  int64_t e = 0;
  int64_t m = 0;
  double m_norm = 0;
  double e_norm = 0;
  double v = 0;
};

// l = ceil(100 / L) for L in [1, 60]; 100 below 1 minute; 1 above 60
// minutes or without a limit.
int64_t TimeConstraintPriority(std::optional<double> max_wait_minutes);

// CPS terms of every job in `jobs`, normalised over exactly that set.
std::vector<CpsTerms> CombinedPriorities(std::span<const core::JobSpec* const> jobs,
                                         const CpsParams& params);

// JobOrder: key = -V, so the highest combined priority goes first; ties by
// submit time, then job index (the engine's tie rule).
class CombinedPriorityOrder final : public engine::JobOrder {
 public:
  explicit CombinedPriorityOrder(CpsParams params) : params_(std::move(params)) {}
  void Keys(const engine::ClusterState& state, std::span<const engine::JobIndex> jobs,
            core::Time now, std::span<double> keys) const override;
  const CpsParams& params() const { return params_; }

 private:
  CpsParams params_;
};

// From a profile's `args` (`where` e.g. "p.yaml: order.args"):
//   k: 1                              number > 0
//   defaultUserPriority: 5            integer 1..10
//   namespaceWeights: {team-a: 9}     namespace -> integer 1..10
//   priorityValues: {high: 10, normal: 5, low: 1}   integers 0..1000000
core::Result<std::unique_ptr<engine::JobOrder>> MakeCombinedPriority(const YAML::Node& args,
                                                                     const std::string& where);

}  // namespace dlsched::policy
