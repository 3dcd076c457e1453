#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/sim/model_zoo.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::sim {

core::Status ResolveWorkload(config::WorkloadSpec& workload) {
  // config/ sorts jobs by arrival; messages name the job by its name, which
  // is unique, since its index in the file may differ.
  for (auto& job : workload.jobs) {
    auto& tp = job.throughput;
    if (tp.HasRates()) continue;
    const core::ThroughputProfile* model = FindModel(tp.model);
    if (model == nullptr) {
      return core::Errorf("{}: job '{}': throughput.model: unknown model '{}' (known: {})",
                          workload.source, job.name, tp.model, fmt::join(ModelNames(), ", "));
    }
    const std::string name = tp.model;
    const double across_switches = tp.switch_sensitivity;  // the zoo has none
    tp = *model;
    tp.model = name;
    tp.switch_sensitivity = across_switches;
  }
  return CheckRunnable(workload);
}

core::Result<config::WorkloadSpec> LoadWorkload(const std::string& path) {
  auto workload = config::LoadWorkload(path);
  if (!workload) return workload;
  DLSCHED_TRY(ResolveWorkload(*workload));
  return workload;
}

}  // namespace dlsched::sim
