#include "dlsched/policy/shared/gpu_types.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "dlsched/engine/placement.h"

namespace dlsched::policy {

using engine::JobIndex;
using engine::JobState;
using engine::NodeIndex;

GpuTypes GpuTypes::Of(const engine::ClusterState& st) {
  std::map<std::string, std::pair<double, std::vector<NodeIndex>>, std::less<>> by_name;
  for (NodeIndex n = 0; n < st.NumNodes(); ++n) {
    if (!st.Present(n) || !st.Schedulable(n)) continue;
    const int64_t gpus = st.Allocatable(n)[core::kGpu];
    if (gpus <= 0) continue;
    auto& [capacity, nodes] = by_name[std::string(st.GpuType(n))];
    capacity += static_cast<double>(gpus);
    nodes.push_back(n);
  }
  GpuTypes t;
  for (auto& [name, entry] : by_name) {
    t.names.push_back(name);
    t.capacity.push_back(entry.first);
    t.nodes.push_back(std::move(entry.second));
  }
  return t;
}

int GpuTypes::IndexOf(std::string_view name) const {
  const auto it = std::lower_bound(names.begin(), names.end(), name);
  return it != names.end() && *it == name ? static_cast<int>(it - names.begin()) : -1;
}

std::string GpuTypes::Name(int w) const {
  if (w < 0) return "no GPU type";
  const std::string& name = names[static_cast<size_t>(w)];
  return name.empty() ? std::string("untyped GPUs") : name;
}

namespace {

// Calls f(node) for each placed task of job `j` with GPUs until f says stop.
template <typename F>
void ForEachGpuTaskNode(const engine::ClusterState& st, JobIndex j, F f) {
  const JobState& js = st.Job(j);
  for (size_t slot = 0; slot < js.task_node.size(); ++slot) {
    const NodeIndex n = js.task_node[slot];
    if (n == engine::kNoNode) continue;
    if (st.Request(js.TaskAt(j, static_cast<int>(slot)))[core::kGpu] > 0 && !f(n)) return;
  }
}

}  // namespace

int JobGpuType(const engine::ClusterState& st, const GpuTypes& types, JobIndex j) {
  int type = -1;
  ForEachGpuTaskNode(st, j, [&](NodeIndex n) {
    type = types.IndexOf(st.GpuType(n));
    return false;
  });
  return type;
}

bool OnOneGpuType(const engine::ClusterState& st, JobIndex j) {
  bool one = true;
  NodeIndex first = engine::kNoNode;
  ForEachGpuTaskNode(st, j, [&](NodeIndex n) {
    if (first == engine::kNoNode) first = n;
    one = st.GpuType(n) == st.GpuType(first);
    return one;
  });
  return one;
}

namespace {

// The tasks in `gpu_slots` on `nodes`: all on one node if one takes them,
// else each on the roomiest node that takes it. All or nothing.
bool PlaceGpuTasks(engine::CycleContext& ctx, std::span<const engine::TaskRef> gpu_slots,
                   std::span<const NodeIndex> nodes) {
  const engine::ClusterState& st = ctx.state();
  engine::Session& session = ctx.session;
  const engine::Session::Mark mark = session.GetMark();
  int64_t gpus = 0;
  for (const engine::TaskRef& t : gpu_slots) gpus += st.Request(t)[core::kGpu];
  std::vector<NodeIndex> by_free(nodes.begin(), nodes.end());
  std::stable_sort(by_free.begin(), by_free.end(), [&](NodeIndex a, NodeIndex b) {
    return st.FreeOf(a, core::kGpu) < st.FreeOf(b, core::kGpu);
  });
  for (NodeIndex n : by_free) {
    if (st.FreeOf(n, core::kGpu) < gpus) continue;
    bool all = true;
    for (const engine::TaskRef& t : gpu_slots) {
      if (!engine::Fits(ctx, t, n)) {
        all = false;
        break;
      }
      session.Assign(t, n);
    }
    if (all) return true;
    session.RollbackTo(mark);
  }
  for (const engine::TaskRef& t : gpu_slots) {
    NodeIndex best = engine::kNoNode;
    for (NodeIndex n : nodes) {
      if (!engine::Fits(ctx, t, n)) continue;
      if (best == engine::kNoNode || st.FreeOf(n, core::kGpu) > st.FreeOf(best, core::kGpu)) {
        best = n;
      }
    }
    if (best == engine::kNoNode) {
      session.RollbackTo(mark);
      return false;
    }
    session.Assign(t, best);
  }
  return true;
}

}  // namespace

bool PlaceGangOnNodes(engine::CycleContext& ctx, JobIndex j, int workers,
                      std::span<const NodeIndex> nodes, std::string_view where, std::string* why) {
  const engine::ClusterState& st = ctx.state();
  std::vector<engine::TaskRef> slots;
  engine::GangSlots(st, j, workers, &slots);
  std::vector<engine::TaskRef> gpu_slots;
  std::vector<engine::TaskRef> other_slots;
  for (const engine::TaskRef& t : slots) {
    (st.Request(t)[core::kGpu] > 0 ? gpu_slots : other_slots).push_back(t);
  }
  engine::Session& session = ctx.session;
  const engine::Session::Mark mark = session.GetMark();
  auto fail = [&](const engine::TaskRef& t, std::string_view on) {
    session.RollbackTo(mark);
    *why = !st.QuotaAdmits(t.job, st.Request(t))
               ? std::string("its queue has no quota left for it")
               : fmt::format("its {} does not fit the free room of {}", core::RoleName(t.role), on);
    return false;
  };
  if (!gpu_slots.empty() && !PlaceGpuTasks(ctx, gpu_slots, nodes)) {
    return fail(gpu_slots.front(), where);
  }
  for (const engine::TaskRef& t : other_slots) {
    NodeIndex at = engine::kNoNode;
    for (NodeIndex n : st.Job(j).task_node) {
      if (n != engine::kNoNode && engine::Fits(ctx, t, n)) {
        at = n;
        break;
      }
    }
    if (at != engine::kNoNode) {
      session.Assign(t, at);
    } else if (std::string reason; !engine::PlaceTaskByScore(ctx, t, &reason)) {
      return fail(t, "any node");
    }
  }
  return true;
}

}  // namespace dlsched::policy
