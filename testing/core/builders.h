#pragma once

// Clusters and jobs for tests, built in code (no YAML): nodes of given
// cpu, memory and GPUs, and jobs through a fluent JobBuilder or the
// shortcuts below it. Test-only code.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "dlsched/core/job.h"
#include "dlsched/core/node.h"
#include "dlsched/core/resources.h"

namespace dlsched::testing {

constexpr int64_t GiB(int64_t n) { return n << 30; }

// cpu in millicores, memory in bytes, GPUs.
core::Resources Res(int64_t milli_cpu, int64_t memory, int64_t gpus = 0);

// One node; cpu in millicores, memory in bytes.
core::NodeSpec Node(std::string name, int64_t milli_cpu, int64_t memory, int64_t gpus = 0);

// n identical nodes named <prefix>0, <prefix>1, ... of `cores` cpu,
// `mem_gib` GiB of memory and `gpus` GPUs.
core::ClusterSpec Nodes(int n, int64_t cores, int64_t mem_gib, int64_t gpus,
                        std::string_view prefix = "node-");

// A job, field by field; what is not said is JobSpec's default (no PS, no
// workers, no resources, no steps).
//   core::JobSpec j = JobBuilder("a").Submit(30).Workers(2, 1, 4)
//                         .WorkerResources(Res(1000, GiB(2), 1)).Steps(1000, {{1, 1.0}});
class JobBuilder {
 public:
  explicit JobBuilder(std::string name);

  JobBuilder& Submit(core::Time t);
  JobBuilder& Namespace(std::string name);
  JobBuilder& Priority(core::PriorityClass p);
  JobBuilder& MaxWait(double minutes);
  // `replicas` parameter servers, each requesting `each`.
  JobBuilder& Ps(int replicas, const core::Resources& each);
  // `replicas` workers, elastic in [min, max] (fixed: min = max = replicas).
  JobBuilder& Workers(int replicas);
  JobBuilder& Workers(int replicas, int min, int max);
  JobBuilder& WorkerResources(const core::Resources& each);
  // total steps and the throughput table (workers -> steps/s).
  JobBuilder& Steps(double total, std::map<int, double> table);
  // Runs `seconds` at its size (JobSpec::SetDuration, linear scaling).
  JobBuilder& Duration(core::Time seconds);
  JobBuilder& Delays(core::Time launch, core::Time checkpoint);
  JobBuilder& Deadline(std::optional<core::Time> seconds);

  const core::JobSpec& spec() const { return spec_; }
  core::JobSpec Build() const { return spec_; }
  operator core::JobSpec() const { return spec_; }  // NOLINT: a builder converts

 private:
  core::JobSpec spec_;
};

// `ps` parameter servers (1 core, 2 GiB) and `workers` workers of 1 core,
// 2 GiB and `gpus_per_worker` GPUs, elastic in [min, max]; 1000 steps at 1
// step/s (the table {1: 1}).
core::JobSpec Job(std::string name, double arrival, int ps, int workers, int min, int max,
                  int64_t gpus_per_worker = 1);

// No PS; workers of `milli_cpu` / `mem_gib` / 1 GPU, elastic in [min, max]
// starting with min, f(n) = n steps/s for n in [min, max].
core::JobSpec GpuJob(std::string name, double arrival, int min, int max, int64_t milli_cpu,
                     int64_t mem_gib, double steps);

// A trace job: `gpus` one-GPU workers (nothing else requested) that run
// `duration` seconds.
core::JobSpec TraceJob(std::string name, double submit, int gpus, double duration);

}  // namespace dlsched::testing
