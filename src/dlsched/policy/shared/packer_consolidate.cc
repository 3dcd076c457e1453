#include "dlsched/policy/shared/packer_consolidate.h"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "dlsched/engine/placement.h"
#include "dlsched/policy/framework/args.h"
#include "dlsched/policy/shared/topology_scorers.h"

namespace dlsched::policy {
namespace {

// The schedulable nodes under one value of the key.
struct Domain {
  int64_t free_gpu = 0;
  std::vector<engine::NodeIndex> nodes;  // in index order
};

// Places every slot on the domain's best-scored node that fits it; false
// (and nothing placed) when one does not fit.
bool PlaceIn(engine::CycleContext& ctx, const Domain& d, std::span<const engine::TaskRef> slots) {
  const engine::Session::Mark mark = ctx.session.GetMark();
  for (const engine::TaskRef& t : slots) {
    engine::NodeIndex best = engine::kNoNode;
    double best_total = 0;
    for (engine::NodeIndex n : d.nodes) {
      if (!engine::Fits(ctx, t, n)) continue;
      const double total = engine::TotalScore(ctx, t, n);
      if (best == engine::kNoNode || total > best_total) {
        best = n;
        best_total = total;
      }
    }
    if (best == engine::kNoNode) {
      ctx.session.RollbackTo(mark);
      return false;
    }
    ctx.session.Assign(t, best);
  }
  return true;
}

}  // namespace

bool ConsolidatePacker::PlaceGang(engine::CycleContext& ctx, engine::JobIndex j, int workers,
                                  std::string* reason) const {
  const engine::ClusterState& st = ctx.state();
  if (st.Job(j).spec->throughput.locality_sensitivity < min_sensitivity_) {
    return task_by_task_.PlaceGang(ctx, j, workers, reason);
  }
  const engine::Session::Mark mark = ctx.session.GetMark();
  // 1. One node (this also runs the cluster-wide free-total check).
  if (single_.PlaceGang(ctx, j, workers, nullptr)) {
    TracePlacedSince(ctx, j, mark, "whole job on one node");
    return true;
  }
  if (!GangFitsInFreeTotal(st, j, workers, reason)) return false;
  std::vector<engine::TaskRef> slots;
  engine::GangSlots(st, j, workers, &slots);
  int64_t need_gpu = 0;
  for (const engine::TaskRef& t : slots) need_gpu += st.Request(t)[core::kGpu];

  // 2. One value of the key: best fit by free GPUs.
  std::map<std::string, Domain, std::less<>> by_value;
  for (engine::NodeIndex n = 0; n < st.NumNodes(); ++n) {
    if (!st.Schedulable(n)) continue;
    const core::Labels& labels = st.NodeSpecOf(n).labels;
    auto it = labels.find(key_);
    if (it == labels.end()) continue;
    Domain& d = by_value[it->second];
    d.free_gpu += st.FreeOf(n, core::kGpu);
    d.nodes.push_back(n);
  }
  std::vector<const Domain*> order;
  for (const auto& [value, d] : by_value) {
    if (d.free_gpu >= need_gpu) order.push_back(&d);
  }
  std::sort(order.begin(), order.end(), [](const Domain* a, const Domain* b) {
    if (a->free_gpu != b->free_gpu) return a->free_gpu < b->free_gpu;
    return a->nodes.front() < b->nodes.front();
  });
  for (const Domain* d : order) {
    if (PlaceIn(ctx, *d, slots)) {
      TracePlacedSince(ctx, j, mark, "whole job under one switch");
      return true;
    }
  }

  // 3. Anywhere, or wait.
  if (spread_otherwise_) return task_by_task_.PlaceGang(ctx, j, workers, reason);
  if (reason != nullptr) {
    *reason = fmt::format("no {} has room for the whole gang (consolidated placement)", key_);
  }
  return false;
}

core::Result<std::unique_ptr<engine::Packer>> MakeConsolidate(const YAML::Node& args,
                                                              const std::string& where) {
  ArgReader reader(args, where);
  DLSCHED_TRY_LET(key, TopologyKeyArg(reader));
  DLSCHED_TRY_LET(min, reader.Double("minLocalitySensitivity", 0, 0, 1));
  const YAML::Node otherwise = reader.Node("otherwise");
  bool spread = true;
  if (otherwise.IsDefined() && !otherwise.IsNull()) {
    if (!otherwise.IsScalar() || (otherwise.Scalar() != "spread" && otherwise.Scalar() != "wait")) {
      return reader.Expected("otherwise", "spread or wait", otherwise);
    }
    spread = otherwise.Scalar() == "spread";
  }
  DLSCHED_TRY(reader.Finish());
  return std::make_unique<ConsolidatePacker>(*key, *min, spread);
}

}  // namespace dlsched::policy
