#pragma once

// The resource scorers of kube-scheduler's NodeResourcesFit plugin
// (scoringStrategy LeastAllocated, MostAllocated, RequestedToCapacityRatio),
// with its integer arithmetic, so a profile scores nodes the way a real
// cluster would. Semantics checked against kubernetes/kubernetes master as
// of v1.34/v1.35 (pkg/scheduler/framework/plugins/noderesources:
// least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go,
// resource_allocation.go; plugins/helper/shape_score.go; argument rules from
// apis/config/validation/validation_pluginargs.go and apis/config/v1/defaults.go).
// The per-resource formulas have been unchanged since v1.24.
//
// What a node is scored on, per configured resource r (resource_allocation.go):
//   - cpu, memory: requested = node's non-zero requests + the task's non-zero
//     request, where each container that sets no cpu (memory) request counts
//     100m cpu (200Mi memory) and an explicit 0 stays 0
//     (core::RoleSpec::ScoringRequest; a role without containers counts a 0
//     as unset).
//   - any other resource is an extended resource: if the task does not ask
//     for it, it is left out of the score altogether (not scored as idle);
//     otherwise requested = node's requests + the task's request. (Kubernetes
//     scores ephemeral-storage like that too but without the skip; dlsched
//     does not model it.)
//   - a resource the node has none of (allocatable 0) is left out too.
// Scores are 0..100 (kube's MaxNodeScore).

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "dlsched/core/error.h"
#include "dlsched/core/resources.h"
#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

struct ResourceWeight {
  core::ResourceId id;
  int64_t weight;  // 1..100
};

// A point of a RequestedToCapacityRatio shape: utilization 0..100 and, as
// configured, score 0..10 (kube's MaxCustomPriorityScore). The scorer works
// on a copy with scores multiplied by 10 so they span 0..100.
struct ShapePoint {
  int64_t utilization;
  int64_t score;
};

// Multiplies every score by 10 (MaxNodeScore / MaxCustomPriorityScore).
std::vector<ShapePoint> ScaleShape(std::span<const ShapePoint> shape);

// The piecewise-linear function through `shape` (non-empty, utilization
// strictly increasing): flat at the first score below the first point and at
// the last score above the last point; in between, integer interpolation
// truncated toward zero (helper.BuildBrokenLinearFunction).
int64_t BrokenLinear(std::span<const ShapePoint> shape, int64_t utilization);

// The pure scoring functions. requested[i] and allocatable[i] belong to
// weights[i]; requested is what the node would hold with the task placed.
// An entry with allocatable 0 is skipped (neither its score nor its weight
// counts); if every entry is skipped the score is 0.
//
// LeastAllocated: mean of (alloc - req) * 100 / alloc per resource, 0 when
// req > alloc, weighted, both divisions truncating.
int64_t LeastAllocatedScore(std::span<const int64_t> requested,
                            std::span<const int64_t> allocatable,
                            std::span<const ResourceWeight> weights);
// MostAllocated: mean of min(req, alloc) * 100 / alloc, weighted, truncating.
int64_t MostAllocatedScore(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                           std::span<const ResourceWeight> weights);
// RequestedToCapacityRatio: per resource BrokenLinear(scaled_shape, util)
// with util = req * 100 / alloc (truncating), or 100 when req > alloc. Only
// resources whose shape score is > 0 enter the weighted mean, weights
// included (a kube quirk: with shape {0:10, 100:0} a full resource does not
// pull the mean down, it drops out). The mean is rounded half away from zero
// (Go's math.Round). `scaled_shape` is a ScaleShape() result (scores 0..100).
int64_t RequestedToCapacityRatioScore(std::span<const int64_t> requested,
                                      std::span<const int64_t> allocatable,
                                      std::span<const ResourceWeight> weights,
                                      std::span<const ShapePoint> scaled_shape);

// Fills requested[i] / allocatable[i] for weights[i] as kube-scheduler does
// for task `t` on node `n` (see the top of this file); entries left out of
// the score get allocatable 0. Both spans have weights.size() entries.
void NodeRequestedAndAllocatable(const engine::ClusterState& state, engine::TaskRef t,
                                 engine::NodeIndex n, std::span<const ResourceWeight> weights,
                                 std::span<int64_t> requested, std::span<int64_t> allocatable);

// Spread: prefers the node with the most room left (the Kubernetes default).
class LeastAllocated final : public engine::NodeScorer {
 public:
  // `weights`: distinct resources, weight 1..100
  // (as MakeLeastAllocated validates).
  explicit LeastAllocated(std::vector<ResourceWeight> weights);
  std::string_view Name() const override { return "LeastAllocated"; }
  int64_t Score(const engine::ClusterState& state, engine::TaskRef t,
                engine::NodeIndex n) const override;
  bool NodeLocal() const override { return true; }

 private:
  std::vector<ResourceWeight> weights_;
};

// Binpack: prefers the fullest node.
class MostAllocated final : public engine::NodeScorer {
 public:
  explicit MostAllocated(std::vector<ResourceWeight> weights);
  std::string_view Name() const override { return "MostAllocated"; }
  int64_t Score(const engine::ClusterState& state, engine::TaskRef t,
                engine::NodeIndex n) const override;
  bool NodeLocal() const override { return true; }

 private:
  std::vector<ResourceWeight> weights_;
};

// A user-given utilization -> score curve: {0:0, 100:10} binpacks,
// {0:10, 100:0} spreads.
class RequestedToCapacityRatio final : public engine::NodeScorer {
 public:
  // `shape` as configured (scores 0..10, validated by
  // MakeRequestedToCapacityRatio); it is scaled here.
  RequestedToCapacityRatio(std::vector<ResourceWeight> weights, std::span<const ShapePoint> shape);
  std::string_view Name() const override { return "RequestedToCapacityRatio"; }
  int64_t Score(const engine::ClusterState& state, engine::TaskRef t,
                engine::NodeIndex n) const override;
  bool NodeLocal() const override { return true; }

 private:
  std::vector<ResourceWeight> weights_;
  std::vector<ShapePoint> scaled_shape_;
};

// cpu weight 1, memory weight 1: kube's default when `resources` is absent
// or empty.
std::vector<ResourceWeight> DefaultResourceWeights();

// Factories from a profile's `args` (a map, possibly empty or undefined).
// `where` prefixes error messages, e.g. "p.yaml: scorers[0].args".
//
//   resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu, weight: 3}]
//     optional; default cpu 1, memory 1. weight an integer 1..100, default 1.
//     A name may appear once.
//   shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]
//     RequestedToCapacityRatio only, required and non-empty; utilization
//     0..100 strictly increasing, score 0..10.
core::Result<std::unique_ptr<engine::NodeScorer>> MakeLeastAllocated(const YAML::Node& args,
                                                                     const std::string& where);
core::Result<std::unique_ptr<engine::NodeScorer>> MakeMostAllocated(const YAML::Node& args,
                                                                    const std::string& where);
core::Result<std::unique_ptr<engine::NodeScorer>> MakeRequestedToCapacityRatio(
    const YAML::Node& args, const std::string& where);

}  // namespace dlsched::policy
