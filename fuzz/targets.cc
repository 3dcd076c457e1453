#include "targets.h"

#include <string>
#include <vector>

#include "dlsched/config/specs.h"
#include "dlsched/core/quantity.h"
#include "dlsched/core/resources.h"
#include "dlsched/policy/registry.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::fuzz {
namespace {

// A broken property: the fuzzer keeps the input as a crash.
void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// Inputs whose simulation would be slow rather than wrong are parsed but not
// simulated, so the fuzzer spends its time on many inputs.
constexpr size_t kMaxSimulatedNodes = 2000;
constexpr size_t kMaxSimulatedJobs = 100;
constexpr int64_t kMaxSimulatedTasks = 2000;

// The companions of the input under test: a small cluster and a workload
// that exercise gangs, PS and Chief, elastic workers, deadlines, launch and
// checkpoint delays, priorities and the locality factor.
constexpr char kCluster[] = R"(nodes:
  - {name: g, count: 3, resources: {cpu: "16", memory: 64Gi, nvidia.com/gpu: 4}, labels: {zone: z1}}
  - {name: c, resources: {cpu: "32", memory: 128Gi}}
)";
constexpr char kWorkload[] = R"(jobs:
  - {name: a, arrival: 0, ps: {replicas: 1, resources: {cpu: "1", memory: 1Gi}},
     worker: {replicas: 2, resources: {cpu: "2", memory: 2Gi, nvidia.com/gpu: 1}},
     totalSteps: 200, throughput: {table: {1: 1, 2: 1.8}}, launchDelay: 5}
  - {name: b, arrival: 10, worker: {replicas: 4, minReplicas: 2, maxReplicas: 8,
     resources: {cpu: "1", memory: 1Gi, nvidia.com/gpu: 1}}, totalSteps: 500,
     throughput: {table: {2: 2, 4: 3.5, 8: 6}}, checkpointDelay: 3, launchDelay: 2}
  - {name: c, arrival: 10, priority: high, maxWaitMinutes: 5,
     worker: {replicas: 1, resources: {nvidia.com/gpu: 2}}, totalSteps: 100,
     throughput: {table: {1: 1}}, deadline: 400}
  - {name: d, arrival: 30, namespace: t2, ps: {replicas: 2, resources: {cpu: 500m}},
     chief: {replicas: 1, resources: {cpu: "1"}},
     worker: {replicas: 3, resources: {cpu: "1", nvidia.com/gpu: 1}}, totalSteps: 300,
     throughput: {table: {3: 2}, localitySensitivity: 0.3}}
  - {name: e, arrival: 31, priority: low, worker: {replicas: 6, minReplicas: 1, maxReplicas: 6,
     resources: {cpu: "1", memory: 1Gi, nvidia.com/gpu: 1}}, totalSteps: 1000,
     throughput: {table: {1: 1, 6: 5}}}
)";

const core::ClusterSpec& FixedCluster() {
  static const core::ClusterSpec cluster = *config::ParseCluster(kCluster, "fixed-cluster.yaml");
  return cluster;
}

const config::WorkloadSpec& FixedWorkload() {
  static const config::WorkloadSpec workload = [] {
    config::WorkloadSpec w = *config::ParseWorkload(kWorkload, "fixed-workload.yaml");
    Check(sim::ResolveWorkload(w).has_value());
    return w;
  }();
  return workload;
}

// Runs the workload on the cluster with the simulator's invariant checks
// on: any error here is a scheduling bug (the inputs were accepted).
void Run(const core::ClusterSpec& cluster, const config::WorkloadSpec& workload,
         const engine::Engine& engine) {
  sim::SimOptions options;
  options.check_invariants = true;
  auto result = sim::Simulate(cluster, workload, engine, options);
  Check(result.has_value());
  Check(result->run.jobs.size() == workload.jobs.size());
}

void RunBuiltin(const core::ClusterSpec& cluster, const config::WorkloadSpec& workload,
                const char* profile) {
  auto spec = policy::ResolveProfile(profile);
  Check(spec.has_value());
  auto built = policy::BuildProfile(*spec);
  Check(built.has_value());
  const engine::Engine engine(std::move(*built));
  Run(cluster, workload, engine);
}

std::string Text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace

void Quantity(const uint8_t* data, size_t size) {
  const std::string text = Text(data, size);
  auto q = core::Quantity::Parse(text);
  if (q) {
    // The canonical form parses back to the same value.
    auto again = core::Quantity::Parse(q->ToString());
    Check(again.has_value() && *again == *q);
    // Conversions either succeed or say why; a non-negative quantity never
    // becomes a negative amount.
    auto milli = q->MilliValue();
    auto value = q->Value();
    if (milli && !q->IsNegative()) Check(*milli >= 0);
    if (value && !q->IsNegative()) Check(*value >= 0);
  }
  for (core::ResourceId id : {core::kCpu, core::kMemory, core::kGpu}) {
    auto amount = core::ParseResourceAmount(id, text);
    if (amount) Check(*amount >= 0);
  }
}

void Cluster(const uint8_t* data, size_t size) {
  auto cluster = config::ParseCluster(Text(data, size), "fuzz-cluster.yaml");
  if (!cluster || cluster->nodes.size() > kMaxSimulatedNodes) return;
  for (const char* profile : {"gang-binpack", "k8s-default"}) {
    RunBuiltin(*cluster, FixedWorkload(), profile);
  }
}

void Workload(const uint8_t* data, size_t size) {
  auto workload = config::ParseWorkload(Text(data, size), "fuzz-workload.yaml");
  if (!workload) return;
  if (!sim::ResolveWorkload(*workload)) return;  // unknown model, cannot run at its minimum
  if (workload->jobs.size() > kMaxSimulatedJobs) return;
  int64_t tasks = 0;
  for (const auto& job : workload->jobs) {
    tasks += job.NumTasks(job.role(core::Role::kWorker).max_replicas);
  }
  if (tasks > kMaxSimulatedTasks) return;
  for (const char* profile : {"gang-binpack", "k8s-default", "kod2", "fsched"}) {
    RunBuiltin(FixedCluster(), *workload, profile);
  }
}

void Profile(const uint8_t* data, size_t size) {
  auto spec = config::ParseProfile(Text(data, size), "fuzz-profile.yaml");
  if (!spec) return;
  auto built = policy::BuildProfile(*spec);
  if (!built) return;
  const engine::Engine engine(std::move(*built));
  Run(FixedCluster(), FixedWorkload(), engine);
}

std::span<const NamedTarget> Targets() {
  static constexpr NamedTarget kTargets[] = {
      {"quantity", &Quantity},
      {"cluster", &Cluster},
      {"workload", &Workload},
      {"profile", &Profile},
  };
  return kTargets;
}

void WarmUp() {
  const auto run = [](Target target, std::string_view text) {
    target(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  };
  run(&Quantity, "1.5Gi");
  run(&Cluster, kCluster);
  run(&Workload, kWorkload);
  for (const auto& builtin : policy::BuiltinProfiles()) run(&Profile, builtin.yaml);
}

Target FindTarget(std::string_view name) {
  for (const auto& t : Targets()) {
    if (t.name == name) return t.run;
  }
  return nullptr;
}

}  // namespace dlsched::fuzz
