#include "core/builders.h"

namespace dlsched::testing {

core::Resources Res(int64_t milli_cpu, int64_t memory, int64_t gpus) {
  core::Resources r;
  r[core::kCpu] = milli_cpu;
  r[core::kMemory] = memory;
  r[core::kGpu] = gpus;
  return r;
}

core::NodeSpec Node(std::string name, int64_t milli_cpu, int64_t memory, int64_t gpus) {
  core::NodeSpec n;
  n.name = std::move(name);
  n.allocatable = Res(milli_cpu, memory, gpus);
  return n;
}

core::ClusterSpec Nodes(int n, int64_t cores, int64_t mem_gib, int64_t gpus,
                        std::string_view prefix) {
  core::ClusterSpec c;
  for (int i = 0; i < n; ++i) {
    c.nodes.push_back(
        Node(std::string(prefix) + std::to_string(i), cores * 1000, GiB(mem_gib), gpus));
  }
  return c;
}

JobBuilder::JobBuilder(std::string name) { spec_.name = std::move(name); }

JobBuilder& JobBuilder::Submit(core::Time t) {
  spec_.submit_time = t;
  return *this;
}

JobBuilder& JobBuilder::Namespace(std::string name) {
  spec_.namespace_name = std::move(name);
  return *this;
}

JobBuilder& JobBuilder::Priority(core::PriorityClass p) {
  spec_.priority = p;
  return *this;
}

JobBuilder& JobBuilder::MaxWait(double minutes) {
  spec_.max_wait_minutes = minutes;
  return *this;
}

JobBuilder& JobBuilder::Ps(int replicas, const core::Resources& each) {
  auto& p = spec_.role(core::Role::kPS);
  p.replicas = p.min_replicas = p.max_replicas = replicas;
  p.resources = each;
  return *this;
}

JobBuilder& JobBuilder::Workers(int replicas) { return Workers(replicas, replicas, replicas); }

JobBuilder& JobBuilder::Workers(int replicas, int min, int max) {
  auto& w = spec_.role(core::Role::kWorker);
  w.replicas = replicas;
  w.min_replicas = min;
  w.max_replicas = max;
  return *this;
}

JobBuilder& JobBuilder::WorkerResources(const core::Resources& each) {
  spec_.role(core::Role::kWorker).resources = each;
  return *this;
}

JobBuilder& JobBuilder::Steps(double total, std::map<int, double> table) {
  spec_.total_steps = total;
  spec_.throughput.steps_per_s = std::move(table);
  return *this;
}

JobBuilder& JobBuilder::Duration(core::Time seconds) {
  spec_.SetDuration(seconds, {});
  return *this;
}

JobBuilder& JobBuilder::Delays(core::Time launch, core::Time checkpoint) {
  spec_.launch_delay = launch;
  spec_.checkpoint_delay = checkpoint;
  return *this;
}

JobBuilder& JobBuilder::Deadline(std::optional<core::Time> seconds) {
  spec_.deadline = seconds;
  return *this;
}

core::JobSpec Job(std::string name, double arrival, int ps, int workers, int min, int max,
                  int64_t gpus_per_worker) {
  return JobBuilder(std::move(name))
      .Submit(arrival)
      .Ps(ps, Res(1000, GiB(2)))
      .Workers(workers, min, max)
      .WorkerResources(Res(1000, GiB(2), gpus_per_worker))
      .Steps(1000, {{1, 1.0}});
}

core::JobSpec GpuJob(std::string name, double arrival, int min, int max, int64_t milli_cpu,
                     int64_t mem_gib, double steps) {
  std::map<int, double> table;
  for (int n = min; n <= max; ++n) table[n] = n;
  return JobBuilder(std::move(name))
      .Submit(arrival)
      .Workers(min, min, max)
      .WorkerResources(Res(milli_cpu, GiB(mem_gib), 1))
      .Steps(steps, std::move(table));
}

core::JobSpec TraceJob(std::string name, double submit, int gpus, double duration) {
  return JobBuilder(std::move(name))
      .Submit(submit)
      .Workers(gpus)
      .WorkerResources(Res(0, 0, 1))
      .Duration(duration);
}

}  // namespace dlsched::testing
