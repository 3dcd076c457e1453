#include "dlsched/policy/sharing/scorer_fgd.h"

#include <algorithm>
#include <vector>

#include "dlsched/policy/framework/args.h"

namespace dlsched::policy {

sharing::Node SharingNodeOf(const engine::ClusterState& state, engine::NodeIndex n) {
  sharing::Node node;
  node.cpu_left = state.FreeOf(n, core::kCpu);
  node.memory_left = state.FreeOf(n, core::kMemory);
  for (const int16_t used : state.SharesOn(n)) {
    if (used > 0) node.gpu_left.push_back(static_cast<int>(core::kMilliPerGpu - used));
  }
  node.gpu_left.insert(node.gpu_left.end(), std::max(0, state.FreeGpuOf(n)),
                       static_cast<int>(core::kMilliPerGpu));
  return node;
}

std::vector<sharing::TaskClass> CensusWorkload(const engine::ClusterState& state) {
  std::vector<sharing::TaskCount> counts;
  for (const auto& [shape, count] : state.TaskCensus()) {
    sharing::Task task;
    task.cpu = shape.cpu;
    task.gpu_milli = static_cast<int>(shape.gpu_milli);
    task.num_gpu = static_cast<int>(shape.gpus);
    counts.push_back({task, count});
  }
  return sharing::TargetWorkload(std::move(counts));
}

int64_t FgdScorer::Score(const engine::ClusterState& state, engine::TaskRef t,
                         engine::NodeIndex n) const {
  // The census changes only as jobs are added (a state's jobs are never
  // taken out of it): one target workload per state and job count, kept
  // per thread (an engine may run on several).
  struct Kept {
    uint64_t state = 0;
    int jobs = -1;
    std::vector<sharing::TaskClass> workload;
  };
  thread_local Kept kept;
  if (kept.state != state.Id() || kept.jobs != state.NumJobs()) {
    kept = {state.Id(), state.NumJobs(), CensusWorkload(state)};
  }
  const std::vector<sharing::TaskClass>& workload = kept.workload;
  sharing::Node node = SharingNodeOf(state, n);
  const double before = sharing::Fragmentation(node.cpu_left, "", node.gpu_left, workload);
  const core::Resources& req = state.Request(t);
  node.cpu_left -= req[core::kCpu];
  if (const int64_t milli = req[core::kGpuMilli]; milli > 0) {
    // The device the engine takes: the one with the least room that holds
    // the share; its room is in the node's list as 1000 - held.
    const int device = state.TightestDevice(n, milli);
    const auto shares = state.SharesOn(n);
    const int room = device >= 0 && device < static_cast<int>(shares.size()) && shares[device] > 0
                         ? static_cast<int>(core::kMilliPerGpu - shares[device])
                         : static_cast<int>(core::kMilliPerGpu);
    auto it = std::find(node.gpu_left.begin(), node.gpu_left.end(), room);
    if (it != node.gpu_left.end()) *it -= static_cast<int>(milli);
  } else {
    for (int64_t g = req[core::kGpu]; g > 0; --g) {
      auto it = std::find(node.gpu_left.begin(), node.gpu_left.end(),
                          static_cast<int>(core::kMilliPerGpu));
      if (it == node.gpu_left.end()) break;
      *it = 0;
    }
  }
  const double after = sharing::Fragmentation(node.cpu_left, "", node.gpu_left, workload);
  return static_cast<int64_t>(sharing::FgdQuantise(after - before));
}

core::Result<std::unique_ptr<engine::NodeScorer>> MakeFgdScorer(const YAML::Node& args,
                                                                const std::string& where) {
  ArgReader reader(args, where);
  DLSCHED_TRY(reader.Finish());
  return std::make_unique<FgdScorer>();
}

}  // namespace dlsched::policy
