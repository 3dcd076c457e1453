#include "dlsched/policy/shared/resource_scorers.h"

#include <array>
#include <cassert>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "dlsched/engine/cluster_state.h"
#include "dlsched/policy/framework/args.h"

namespace dlsched::policy {
namespace {

constexpr int64_t kMaxNodeScore = 100;
constexpr int64_t kMaxCustomPriorityScore = 10;
constexpr int64_t kMaxUtilization = 100;
constexpr int64_t kMaxWeight = 100;

// part * 100 / whole, truncating, for 0 <= part <= whole, whole > 0. The
// 128-bit product keeps it exact for any int64 amount (memory in bytes times
// 100 is far from overflowing, but it costs nothing to be sure).
int64_t Percent(int64_t part, int64_t whole) {
  return static_cast<int64_t>(static_cast<__int128>(part) * kMaxNodeScore / whole);
}

int64_t LeastRequested(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return Percent(capacity - requested, capacity);
}

int64_t MostRequested(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  // Above capacity only through the 100m/200Mi defaults; kube clamps.
  if (requested > capacity) requested = capacity;
  return Percent(requested, capacity);
}

// Weighted mean with truncating division over the resources the node has.
template <typename PerResource>
int64_t TruncatedWeightedMean(std::span<const int64_t> requested,
                              std::span<const int64_t> allocatable,
                              std::span<const ResourceWeight> weights, PerResource score) {
  assert(requested.size() == weights.size() && allocatable.size() == weights.size());
  int64_t sum = 0;
  int64_t weight_sum = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (allocatable[i] == 0) continue;
    sum += score(requested[i], allocatable[i]) * weights[i].weight;
    weight_sum += weights[i].weight;
  }
  return weight_sum == 0 ? 0 : sum / weight_sum;
}

// Score() does not allocate for up to core::kInlineResources weighted
// resources (the defaults weigh 2); a longer list uses the heap.
template <typename Fn>
int64_t ScoreOnNode(const engine::ClusterState& state, engine::TaskRef t, engine::NodeIndex n,
                    std::span<const ResourceWeight> weights, Fn fn) {
  const size_t k = weights.size();
  auto run = [&](int64_t* buffer) {
    std::span<int64_t> requested(buffer, k);
    std::span<int64_t> allocatable(buffer + k, k);
    NodeRequestedAndAllocatable(state, t, n, weights, requested, allocatable);
    return fn(std::span<const int64_t>(requested), std::span<const int64_t>(allocatable));
  };
  if (k <= core::kInlineResources) {
    std::array<int64_t, 2 * core::kInlineResources> fixed;  // every entry written before read
    return run(fixed.data());
  }
  std::vector<int64_t> heap(2 * k);
  return run(heap.data());
}

std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  return fmt::format("'{}'", node.Scalar());
}

bool Given(const YAML::Node& node) { return node.IsDefined() && !node.IsNull(); }

core::Result<std::vector<ResourceWeight>> ParseResources(const YAML::Node& list,
                                                         const std::string& path) {
  if (!Given(list)) return DefaultResourceWeights();
  if (!list.IsSequence()) {
    return core::Errorf("{}: expected a list of {{name, weight}}, got {}", path, Describe(list));
  }
  // An empty list gets the defaults too (defaults.go does the same).
  if (list.size() == 0) return DefaultResourceWeights();
  std::vector<ResourceWeight> out;
  std::vector<size_t> index_of;  // list position of out[i], for duplicate messages
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string item_path = fmt::format("{}[{}]", path, i);
    if (!item.IsMap()) {
      return core::Errorf("{}: expected a map with name and weight, got {}", item_path,
                          Describe(item));
    }
    ArgReader r(item, item_path);
    const YAML::Node name_node = r.Node("name");
    auto weight = r.Int("weight", 1, 1, kMaxWeight);
    DLSCHED_TRY(r.Finish());
    DLSCHED_TRY(weight);
    const std::string name_path = r.Path("name");
    if (!Given(name_node)) {
      return core::Errorf("{}: missing, expected a resource name such as cpu or nvidia.com/gpu",
                          name_path);
    }
    if (!name_node.IsScalar() || name_node.Scalar().empty()) {
      return core::Errorf("{}: expected a resource name, got {}", name_path, Describe(name_node));
    }
    auto id = core::InternResource(name_node.Scalar());
    if (!id) return core::Errorf("{}: {}", name_path, id.error().message);
    for (size_t j = 0; j < out.size(); ++j) {
      if (out[j].id == *id) {
        return core::Errorf("{}: '{}' is listed twice (also resources[{}])", name_path,
                            name_node.Scalar(), index_of[j]);
      }
    }
    out.push_back(ResourceWeight{*id, *weight});
    index_of.push_back(i);
  }
  return out;
}

core::Result<std::vector<ShapePoint>> ParseShape(const YAML::Node& list, const std::string& path) {
  if (!Given(list)) {
    return core::Errorf("{}: missing, expected a list of {{utilization, score}} points", path);
  }
  if (!list.IsSequence()) {
    return core::Errorf("{}: expected a list of {{utilization, score}} points, got {}", path,
                        Describe(list));
  }
  if (list.size() == 0) return core::Errorf("{}: expected at least one point, got none", path);
  std::vector<ShapePoint> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string item_path = fmt::format("{}[{}]", path, i);
    if (!item.IsMap()) {
      return core::Errorf("{}: expected a map with utilization and score, got {}", item_path,
                          Describe(item));
    }
    ArgReader r(item, item_path);
    const YAML::Node u = r.Node("utilization");
    const YAML::Node s = r.Node("score");
    DLSCHED_TRY(r.Finish());
    if (!Given(u)) {
      return core::Errorf("{}: missing, expected an integer in 0..{}", r.Path("utilization"),
                          kMaxUtilization);
    }
    if (!Given(s)) {
      return core::Errorf("{}: missing, expected an integer in 0..{}", r.Path("score"),
                          kMaxCustomPriorityScore);
    }
    DLSCHED_TRY_LET(utilization, r.Int("utilization", 0, 0, kMaxUtilization));
    DLSCHED_TRY_LET(score, r.Int("score", 0, 0, kMaxCustomPriorityScore));
    if (!out.empty() && *utilization <= out.back().utilization) {
      return core::Errorf("{}: {} is not greater than the previous point's {}",
                          r.Path("utilization"), *utilization, out.back().utilization);
    }
    out.push_back(ShapePoint{*utilization, *score});
  }
  return out;
}

struct ScorerArgs {
  std::vector<ResourceWeight> weights;
  std::vector<ShapePoint> shape;
};

core::Result<ScorerArgs> ParseScorerArgs(const YAML::Node& args, const std::string& where,
                                         bool with_shape) {
  ArgReader r(args, where);
  const YAML::Node resources = r.Node("resources");
  YAML::Node shape;
  if (with_shape) shape = r.Node("shape");
  // Unknown keys first: a typo ("shapes:") explains a "missing" better.
  DLSCHED_TRY(r.Finish());
  ScorerArgs out;
  DLSCHED_TRY_LET(weights, ParseResources(resources, r.Path("resources")));
  out.weights = std::move(*weights);
  if (with_shape) {
    DLSCHED_TRY_LET(points, ParseShape(shape, r.Path("shape")));
    out.shape = std::move(*points);
  }
  return out;
}

}  // namespace

std::vector<ShapePoint> ScaleShape(std::span<const ShapePoint> shape) {
  std::vector<ShapePoint> out(shape.begin(), shape.end());
  for (auto& p : out) p.score *= kMaxNodeScore / kMaxCustomPriorityScore;
  return out;
}

int64_t BrokenLinear(std::span<const ShapePoint> shape, int64_t utilization) {
  assert(!shape.empty());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (utilization > shape[i].utilization) continue;
    if (i == 0) return shape[0].score;
    const ShapePoint& a = shape[i - 1];
    const ShapePoint& b = shape[i];
    // C++ and Go both truncate toward zero, so a falling segment rounds up.
    return a.score +
           (b.score - a.score) * (utilization - a.utilization) / (b.utilization - a.utilization);
  }
  return shape.back().score;
}

int64_t LeastAllocatedScore(std::span<const int64_t> requested,
                            std::span<const int64_t> allocatable,
                            std::span<const ResourceWeight> weights) {
  return TruncatedWeightedMean(requested, allocatable, weights, LeastRequested);
}

int64_t MostAllocatedScore(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                           std::span<const ResourceWeight> weights) {
  return TruncatedWeightedMean(requested, allocatable, weights, MostRequested);
}

int64_t RequestedToCapacityRatioScore(std::span<const int64_t> requested,
                                      std::span<const int64_t> allocatable,
                                      std::span<const ResourceWeight> weights,
                                      std::span<const ShapePoint> scaled_shape) {
  assert(requested.size() == weights.size() && allocatable.size() == weights.size());
  int64_t sum = 0;
  int64_t weight_sum = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    const int64_t capacity = allocatable[i];
    if (capacity == 0) continue;
    const int64_t utilization =
        requested[i] > capacity ? kMaxUtilization : Percent(requested[i], capacity);
    const int64_t score = BrokenLinear(scaled_shape, utilization);
    // Only positive scores count, weight included (the kube quirk).
    if (score > 0) {
      sum += score * weights[i].weight;
      weight_sum += weights[i].weight;
    }
  }
  if (weight_sum == 0) return 0;
  // std::llround rounds half away from zero, as Go's math.Round does.
  return std::llround(static_cast<double>(sum) / static_cast<double>(weight_sum));
}

void NodeRequestedAndAllocatable(const engine::ClusterState& state, engine::TaskRef t,
                                 engine::NodeIndex n, std::span<const ResourceWeight> weights,
                                 std::span<int64_t> requested, std::span<int64_t> allocatable) {
  const core::Resources& task = state.Request(t);
  const core::Resources& alloc = state.Allocatable(n);
  for (size_t i = 0; i < weights.size(); ++i) {
    const core::ResourceId id = weights[i].id;
    requested[i] = 0;
    allocatable[i] = 0;
    if (id == core::kCpu || id == core::kMemory) {
      // The non-zero view, on the node and for the task alike.
      requested[i] = state.NonZeroRequested(n)[id] + state.ScoringRequest(t)[id];
      allocatable[i] = alloc[id];
    } else if (task[id] != 0) {
      // An extended resource the task does not ask for stays out (0, 0).
      requested[i] = state.Requested(n)[id] + task[id];
      allocatable[i] = alloc[id];
    }
    if (allocatable[i] == 0) requested[i] = 0;
  }
}

std::vector<ResourceWeight> DefaultResourceWeights() {
  return {ResourceWeight{core::kCpu, 1}, ResourceWeight{core::kMemory, 1}};
}

LeastAllocated::LeastAllocated(std::vector<ResourceWeight> weights)
    : weights_(std::move(weights)) {}

int64_t LeastAllocated::Score(const engine::ClusterState& state, engine::TaskRef t,
                              engine::NodeIndex n) const {
  return ScoreOnNode(state, t, n, weights_, [&](auto requested, auto allocatable) {
    return LeastAllocatedScore(requested, allocatable, weights_);
  });
}

MostAllocated::MostAllocated(std::vector<ResourceWeight> weights) : weights_(std::move(weights)) {}

int64_t MostAllocated::Score(const engine::ClusterState& state, engine::TaskRef t,
                             engine::NodeIndex n) const {
  return ScoreOnNode(state, t, n, weights_, [&](auto requested, auto allocatable) {
    return MostAllocatedScore(requested, allocatable, weights_);
  });
}

RequestedToCapacityRatio::RequestedToCapacityRatio(std::vector<ResourceWeight> weights,
                                                   std::span<const ShapePoint> shape)
    : weights_(std::move(weights)), scaled_shape_(ScaleShape(shape)) {
  assert(!scaled_shape_.empty());
}

int64_t RequestedToCapacityRatio::Score(const engine::ClusterState& state, engine::TaskRef t,
                                        engine::NodeIndex n) const {
  return ScoreOnNode(state, t, n, weights_, [&](auto requested, auto allocatable) {
    return RequestedToCapacityRatioScore(requested, allocatable, weights_, scaled_shape_);
  });
}

core::Result<std::unique_ptr<engine::NodeScorer>> MakeLeastAllocated(const YAML::Node& args,
                                                                     const std::string& where) {
  DLSCHED_TRY_LET(parsed, ParseScorerArgs(args, where, /*with_shape=*/false));
  return std::make_unique<LeastAllocated>(std::move(parsed->weights));
}

core::Result<std::unique_ptr<engine::NodeScorer>> MakeMostAllocated(const YAML::Node& args,
                                                                    const std::string& where) {
  DLSCHED_TRY_LET(parsed, ParseScorerArgs(args, where, /*with_shape=*/false));
  return std::make_unique<MostAllocated>(std::move(parsed->weights));
}

core::Result<std::unique_ptr<engine::NodeScorer>> MakeRequestedToCapacityRatio(
    const YAML::Node& args, const std::string& where) {
  DLSCHED_TRY_LET(parsed, ParseScorerArgs(args, where, /*with_shape=*/true));
  return std::make_unique<RequestedToCapacityRatio>(std::move(parsed->weights), parsed->shape);
}

}  // namespace dlsched::policy
