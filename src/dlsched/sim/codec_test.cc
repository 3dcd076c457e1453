#include <string>

#include <gtest/gtest.h>

#include "dlsched/config/specs.h"
#include "dlsched/config/trace.h"
#include "dlsched/sim/generate.h"
#include "dlsched/sim/model_zoo.h"

// The two writers of a job (config::EncodeJob's sinks): the workload YAML
// (WorkloadToYaml, which convert, generate and the operator's snapshot
// write) and the native trace CSV (config::ToNativeCsv), byte for byte as
// `dlsched convert` wrote these inputs before they shared the encoder.

namespace dlsched::sim {
namespace {

// Every field a job can set, a Checkpointing job holding a worker, as
// the workload YAML writes it.
constexpr char kRichYaml[] = R"(start: 100
jobs:
  - name: "quoted name"
    arrival: 1.25
    worker: {replicas: 3, resources: {nvidia.com/gpu: "2"}}
    duration: 3600
    scaling: amdahl:0.9
  - name: m
    arrival: 2
    worker: {replicas: 1, resources: {nvidia.com/gpu: "1"}}
    totalSteps: 500
    throughput: {model: resnet50}
  - name: a-job
    namespace: team-a
    arrival: 5
    priority: high
    maxWaitMinutes: 2.5
    queue: q1
    ps: {replicas: 1, resources: {cpu: "2", memory: "4Gi"}}
    chief: {replicas: 1, containers: [{name: main, resources: {cpu: "1", memory: "0"}}], initContainers: [{name: init, resources: {cpu: "3"}}]}
    worker: {replicas: 2, minReplicas: 1, maxReplicas: 4, resources: {cpu: "500m", nvidia.com/gpu: "1"}, nodeSelector: {zone: "a b"}, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: gpu, operator: In, values: [v100, "true"]}]}]}}}, tolerations: [{key: k, operator: Equal, value: v, effect: NoSchedule}, {operator: Exists}]}
    totalSteps: 1000
    stepsDone: 10.5
    attainedGpuSeconds: 30
    launchGpuSeconds: 3
    level: 2
    levelSince: 4
    levelBaseGpuSeconds: 20
    ranSince: 6
    levelPlace: -3
    throughput: {table: {1: 10, 2: 19.5, 4: 30}, localitySensitivity: 0.25, placements: {2+2: 28, 4: 31}}
    launchDelay: 7
    checkpointDelay: 8
    deadline: 9000
    running:
      phase: Checkpointing
      since: 50
      firstStart: 20
      lastLaunch: 40
      admissionOrder: 3
      nodes: {ps-0: n1, chief-0: n1, worker-0: n2, worker-1: n3}
      held: {worker-2: n4}
)";

// Jobs the native format holds.
constexpr char kNativeYaml[] = R"(jobs:
  - name: p1
    arrival: 0
    ps: {replicas: 2, resources: {cpu: "4", memory: "8Gi"}}
    worker: {replicas: 2, minReplicas: 1, maxReplicas: 3, resources: {cpu: "2", memory: "1Gi", nvidia.com/gpu: "1"}}
    totalSteps: 2000
    throughput: {model: resnet50}
  - name: d1
    arrival: 3.5
    worker: {replicas: 4, resources: {nvidia.com/gpu: "1"}}
    duration: 120.5
    scaling: sqrt
  - name: d2
    arrival: 4
    worker: {replicas: 1, resources: {nvidia.com/gpu: "1"}}
    duration: 60
)";

constexpr char kNativeCsv[] =
    R"(name,submit,workers,min_workers,max_workers,gpus,cpu,memory,duration,scaling,ps,ps_cpu,ps_memory,steps,model
p1,0,2,1,3,1,2,1Gi,,,2,4,8Gi,2000,resnet50
d1,3.5,4,4,4,1,,,120.5,sqrt,,,,,
d2,4,1,1,1,1,,,60,linear,,,,,
)";

// A job setting every field the native format has no column for.
constexpr char kRefuse[] = R"(jobs:
  - name: r
    namespace: x
    arrival: 0
    priority: low
    maxWaitMinutes: 1
    queue: q
    worker: {replicas: 1, resources: {nvidia.com/gpu: 1}}
    duration: 60
    stepsDone: 0
    attainedGpuSeconds: 1
    launchGpuSeconds: 1
    level: 1
    levelSince: 1
    levelBaseGpuSeconds: 1
    ranSince: 1
    levelPlace: 1
    launchDelay: 1
    checkpointDelay: 1
    deadline: 100
)";

config::WorkloadSpec Parse(const std::string& text, const std::string& source) {
  auto w = config::ParseWorkload(text, source);
  EXPECT_TRUE(w.has_value()) << w.error().message;
  return w ? *w : config::WorkloadSpec{};
}

// Each was written from a workload file by convert before the writers
// shared the encoder; read back and written again, it is the same bytes.
TEST(CodecTest, WorkloadYamlIsWrittenAsBefore) {
  for (const char* yaml : {kRichYaml, kNativeYaml}) {
    EXPECT_EQ(WorkloadToYaml(Parse(yaml, "again.yaml")), yaml);
  }
}

TEST(CodecTest, NativeCsvIsWrittenAsBefore) {
  auto csv = config::ToNativeCsv(Parse(kNativeYaml, "native.yaml"), FindModel);
  ASSERT_TRUE(csv.has_value()) << csv.error().message;
  EXPECT_EQ(*csv, kNativeCsv);
}

TEST(CodecTest, NativeCsvRefusesWhatItCannotHold) {
  auto rich = config::ToNativeCsv(Parse(kRichYaml, "rich.yaml"), FindModel);
  ASSERT_FALSE(rich.has_value());
  EXPECT_EQ(
      rich.error().message,
      "rich.yaml: job 'a-job': it has Chief replicas; the native format holds workers and PS with "
      "gpus, cpu and memory, and a duration or steps and a model-zoo model (write YAML instead)");
  auto refuse = config::ToNativeCsv(Parse(kRefuse, "refuse.yaml"), FindModel);
  ASSERT_FALSE(refuse.has_value());
  EXPECT_EQ(refuse.error().message,
            "refuse.yaml: job 'r': it sets namespace, priority, maxWaitMinutes, "
            "attainedGpuSeconds, launchGpuSeconds, level, levelSince, levelBaseGpuSeconds, "
            "ranSince, levelPlace, launchDelay, checkpointDelay, deadline; the native format holds "
            "workers and PS with gpus, cpu and memory, and a duration or steps and a model-zoo "
            "model (write YAML instead)");
}

}  // namespace
}  // namespace dlsched::sim
