#include "dlsched/policy/kod2/order_kod2.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "dlsched/policy/framework/args.h"

namespace dlsched::policy {
namespace {

using engine::ClusterState;
using engine::JobIndex;

// Schedulable nodes, counted from the free-GPU index (every schedulable
// node sits in exactly one bucket): O(GPUs per node), not O(nodes).
int SchedulableNodes(const ClusterState& state) {
  size_t n = 0;
  for (int g = 0; g <= state.MaxGpuPerNode(); ++g) n += state.NodesWithFreeGpu(g).size();
  return static_cast<int>(n);
}

bool Aged(const ClusterState& state, JobIndex j, core::Time now, core::Time limit) {
  if (limit <= 0) return false;
  const engine::JobState& js = state.Job(j);
  // A job placed earlier in this cycle is no longer waiting.
  return js.IsPending() && js.placed_tasks == 0 && now - js.spec->submit_time > limit;
}

}  // namespace

double Kod2WeightOrder::Exponent(const ClusterState& state, JobIndex j) const {
  const core::JobSpec& spec = *state.Job(j).spec;
  const core::Resources need = spec.MinDemand();
  const core::Resources& capacity = state.Capacity();
  double shares = 0;
  for (core::ResourceId r : options_.resources) {
    if (capacity[r] <= 0 || need[r] <= 0) continue;
    shares += static_cast<double>(need[r]) / static_cast<double>(capacity[r]);
  }
  if (options_.scale == Kod2Scale::kNode) shares *= SchedulableNodes(state);
  if (shares <= 0) return 0;  // requests nothing: neutral weight 0.5 (see the header)
  return options_.kappa * spec.role(core::Role::kWorker).min_replicas / shares;
}

double Kod2WeightOrder::Weight(const ClusterState& state, JobIndex j) const {
  return 1.0 / (1.0 + std::exp(-Exponent(state, j)));
}

void Kod2WeightOrder::Keys(const ClusterState& state, std::span<const JobIndex> jobs,
                           core::Time now, std::span<double> keys) const {
  double highest = -1;
  bool any_aged = false;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const double w = Weight(state, jobs[i]);
    highest = std::max(highest, w);
    keys[i] = -w;
    any_aged = any_aged || Aged(state, jobs[i], now, options_.starve_limit);
  }
  if (!any_aged) return;
  // Every starving job gets the same raised weight, so the engine's tie rule
  // (earlier submit first) keeps them in FIFO order among themselves.
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (Aged(state, jobs[i], now, options_.starve_limit)) keys[i] = -(highest + kKod2StarveBump);
  }
}

bool Kod2WeightOrder::IsStarving(const ClusterState& state, JobIndex j, core::Time now) const {
  return Aged(state, j, now, options_.starve_limit);
}

core::Result<std::unique_ptr<engine::JobOrder>> MakeKod2Weight(const YAML::Node& args,
                                                               const std::string& where) {
  ArgReader reader(args, where);
  Kod2WeightOptions o;
  DLSCHED_TRY_LET(kappa, reader.Double("kappa", o.kappa, 0, 1e9));
  if (*kappa <= 0) {
    return core::Errorf("{}: expected a number > 0, got '{:g}'", reader.Path("kappa"), *kappa);
  }
  o.kappa = *kappa;
  DLSCHED_TRY_LET(limit, reader.Double("starveLimit", o.starve_limit, 0, 1e12));
  o.starve_limit = *limit;
  const YAML::Node scale = reader.Node("scale");
  if (scale.IsDefined() && !scale.IsNull()) {
    const std::string s = scale.IsScalar() ? scale.Scalar() : "";
    if (s == "node") {
      o.scale = Kod2Scale::kNode;
    } else if (s == "cluster") {
      o.scale = Kod2Scale::kCluster;
    } else {
      return reader.Expected("scale", "node or cluster", scale);
    }
  }
  const YAML::Node resources = reader.Node("resources");
  if (resources.IsDefined() && !resources.IsNull()) {
    const std::string path = reader.Path("resources");
    if (!resources.IsSequence() || resources.size() == 0) {
      return core::Errorf("{}: expected a non-empty list of resource names such as [cpu, memory]",
                          path);
    }
    o.resources.clear();
    for (size_t i = 0; i < resources.size(); ++i) {
      const std::string item_path = fmt::format("{}[{}]", path, i);
      const YAML::Node& item = resources[i];
      if (!item.IsScalar() || item.Scalar().empty()) {
        return core::Errorf("{}: expected a resource name such as cpu or nvidia.com/gpu",
                            item_path);
      }
      auto id = core::InternResource(item.Scalar());
      if (!id) return core::Errorf("{}: {}", item_path, id.error().message);
      if (std::find(o.resources.begin(), o.resources.end(), *id) != o.resources.end()) {
        return core::Errorf("{}: '{}' is listed twice", item_path, item.Scalar());
      }
      o.resources.push_back(*id);
    }
  }
  DLSCHED_TRY(reader.Finish());
  return std::make_unique<Kod2WeightOrder>(std::move(o));
}

void ActiveJobs(const ClusterState& state, std::vector<JobIndex>* out) {
  out->clear();
  if (state.NumJobs() == 0) return;  // no per-phase index yet
  using core::JobPhase;
  for (JobPhase p : {JobPhase::kLaunching, JobPhase::kRunningProtected, JobPhase::kRunning,
                     JobPhase::kCheckpointing, JobPhase::kStopping, JobPhase::kStandby}) {
    for (JobIndex j : state.JobsInPhase(p)) {
      if (state.Job(j).IsActive()) out->push_back(j);
    }
  }
  std::sort(out->begin(), out->end());
}

bool Outranks(const ClusterState& state, JobIndex a, double wa, JobIndex b, double wb) {
  if (wa != wb) return wa > wb;
  const core::Time sa = state.Job(a).spec->submit_time;
  const core::Time sb = state.Job(b).spec->submit_time;
  if (sa != sb) return sa < sb;
  return a < b;
}

std::string Workers(int n) { return fmt::format("{} worker{}", n, n == 1 ? "" : "s"); }

std::string FormatWeight(double w) { return fmt::format("{:.4g}", w); }

}  // namespace dlsched::policy
