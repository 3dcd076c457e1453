#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dlsched/config/specs.h"
#include "dlsched/core/resources.h"

namespace dlsched::config {
namespace {

using core::Role;

// A valid job; tests replace one line to break it.
std::string Job(const std::string& extra = "", const std::string& worker =
                                                   "{replicas: 2, resources: {cpu: \"4\", "
                                                   "memory: 8Gi, nvidia.com/gpu: 1}}") {
  return "  - name: j\n"
         "    arrival: 0\n"
         "    worker: " +
         worker +
         "\n"
         "    totalSteps: 100\n"
         "    throughput: {model: resnet50}\n" +
         extra;
}

std::string WorkloadError(const std::string& text) {
  auto w = ParseWorkload(text, "workload.yaml");
  EXPECT_FALSE(w.has_value()) << "parsed: " << text;
  return w ? std::string() : w.error().message;
}

std::string JobError(const std::string& extra) { return WorkloadError("jobs:\n" + Job(extra)); }

std::string WorkerError(const std::string& worker) {
  return WorkloadError("jobs:\n" + Job("", worker));
}

TEST(ParseWorkloadTest, ParsesAllFields) {
  auto w = ParseWorkload(R"(
jobs:
  - name: resnet-1
    namespace: team-a
    arrival: 12.5
    priority: high
    maxWaitMinutes: 30
    queue: gpu-queue
    ps:     {replicas: 2, resources: {cpu: "2", memory: 4Gi}}
    worker: {replicas: 2, minReplicas: 1, maxReplicas: 4, resources: {cpu: 4, memory: 8Gi, nvidia.com/gpu: 1}}
    chief:  {replicas: 1, resources: {cpu: 1}}
    totalSteps: 2000
    throughput: {table: {1: 4.4, 2: 7.9, 4: 9.45}, localitySensitivity: 0.3, switchSensitivity: 0.4}
    launchDelay: 10
    checkpointDelay: 5
    deadline: 3600
)",
                         "workload.yaml");
  ASSERT_TRUE(w.has_value()) << w.error().message;
  EXPECT_EQ(w->source, "workload.yaml");
  ASSERT_EQ(w->jobs.size(), 1u);
  const core::JobSpec& j = w->jobs[0];
  EXPECT_EQ(j.name, "resnet-1");
  EXPECT_EQ(j.namespace_name, "team-a");
  EXPECT_DOUBLE_EQ(j.submit_time, 12.5);
  EXPECT_EQ(j.priority, core::PriorityClass::kHigh);
  ASSERT_TRUE(j.max_wait_minutes.has_value());
  EXPECT_DOUBLE_EQ(*j.max_wait_minutes, 30);
  EXPECT_EQ(j.queue, "gpu-queue");

  const auto& ps = j.role(Role::kPS);
  EXPECT_EQ(ps.replicas, 2);
  EXPECT_EQ(ps.min_replicas, 2);
  EXPECT_EQ(ps.max_replicas, 2);
  EXPECT_EQ(ps.resources[core::kCpu], 2000);
  EXPECT_EQ(ps.resources[core::kMemory], int64_t{4} << 30);

  const auto& worker = j.role(Role::kWorker);
  EXPECT_EQ(worker.replicas, 2);
  EXPECT_EQ(worker.min_replicas, 1);
  EXPECT_EQ(worker.max_replicas, 4);
  EXPECT_EQ(worker.resources[core::kCpu], 4000);  // a YAML number works as a quantity
  EXPECT_EQ(worker.resources[core::kGpu], 1);

  const auto& chief = j.role(Role::kChief);
  EXPECT_EQ(chief.replicas, 1);
  EXPECT_EQ(chief.min_replicas, 1);
  EXPECT_EQ(chief.max_replicas, 1);

  EXPECT_DOUBLE_EQ(j.total_steps, 2000);
  EXPECT_EQ(j.throughput.model, "");
  ASSERT_EQ(j.throughput.steps_per_s.size(), 3u);
  EXPECT_DOUBLE_EQ(j.throughput.steps_per_s.at(4), 9.45);
  EXPECT_DOUBLE_EQ(j.throughput.locality_sensitivity, 0.3);
  EXPECT_DOUBLE_EQ(j.throughput.switch_sensitivity, 0.4);
  EXPECT_DOUBLE_EQ(j.launch_delay, 10);
  EXPECT_DOUBLE_EQ(j.checkpoint_delay, 5);
  ASSERT_TRUE(j.deadline.has_value());
  EXPECT_DOUBLE_EQ(*j.deadline, 3600);
  // Demand of the gang: 2 PS + 1 chief + 1 worker.
  EXPECT_EQ(j.MinDemand()[core::kCpu], 2 * 2000 + 1000 + 4000);
}

TEST(ParseWorkloadTest, Defaults) {
  auto w = ParseWorkload("jobs:\n" + Job(), "workload.yaml");
  ASSERT_TRUE(w.has_value()) << w.error().message;
  const core::JobSpec& j = w->jobs[0];
  EXPECT_EQ(j.namespace_name, "default");
  EXPECT_EQ(j.priority, core::PriorityClass::kNormal);
  EXPECT_FALSE(j.max_wait_minutes.has_value());
  EXPECT_EQ(j.queue, "default");
  EXPECT_EQ(j.role(Role::kPS).replicas, 0);
  EXPECT_EQ(j.role(Role::kChief).replicas, 0);
  EXPECT_EQ(j.role(Role::kWorker).min_replicas, 2);  // defaults to replicas
  EXPECT_EQ(j.role(Role::kWorker).max_replicas, 2);
  EXPECT_EQ(j.throughput.model, "resnet50");
  EXPECT_TRUE(j.throughput.steps_per_s.empty());  // resolved later by sim/
  EXPECT_DOUBLE_EQ(j.throughput.locality_sensitivity, 0);
  EXPECT_DOUBLE_EQ(j.launch_delay, 0);
  EXPECT_DOUBLE_EQ(j.checkpoint_delay, 0);
  EXPECT_FALSE(j.deadline.has_value());
}

TEST(ParseWorkloadTest, SortsByArrivalKeepingFileOrder) {
  auto job = [](const char* name, const char* arrival) {
    return std::string("  - {name: ") + name + ", arrival: " + arrival +
           ", totalSteps: 1, throughput: {model: m}, worker: {replicas: 1, resources: {cpu: 1}}}\n";
  };
  auto w = ParseWorkload(
      "jobs:\n" + job("c", "20") + job("a", "0") + job("d", "20") + job("b", "5") + job("e", "0"),
      "workload.yaml");
  ASSERT_TRUE(w.has_value()) << w.error().message;
  std::string order;
  for (const auto& j : w->jobs) order += j.name;
  EXPECT_EQ(order, "aebcd");
}

TEST(ParseWorkloadTest, ReplicaRangeErrors) {
  const std::string res = ", resources: {cpu: 1}}";
  EXPECT_EQ(WorkerError("{replicas: 2, minReplicas: 4, maxReplicas: 2" + res),
            "workload.yaml: jobs[0].worker.minReplicas: 4 is greater than maxReplicas 2");
  EXPECT_EQ(WorkerError("{replicas: 5, minReplicas: 4, maxReplicas: 2" + res),
            "workload.yaml: jobs[0].worker.minReplicas: 4 is greater than maxReplicas 2");
  EXPECT_EQ(WorkerError("{replicas: 2, minReplicas: 3" + res),
            "workload.yaml: jobs[0].worker.minReplicas: 3 is greater than replicas 2");
  EXPECT_EQ(WorkerError("{replicas: 3, maxReplicas: 2" + res),
            "workload.yaml: jobs[0].worker.replicas: 3 is greater than maxReplicas 2");
  EXPECT_EQ(
      WorkerError("{replicas: 0" + res),
      "workload.yaml: jobs[0].worker.replicas: expected an integer between 1 and 100000, got '0'");
  EXPECT_EQ(WorkerError("{replicas: 2, minReplicas: 0" + res),
            "workload.yaml: jobs[0].worker.minReplicas: expected an integer between 1 and 100000, "
            "got '0'");
  EXPECT_EQ(WorkerError("{replicas: 1.5" + res),
            "workload.yaml: jobs[0].worker.replicas: expected an integer between 1 and 100000, got "
            "'1.5'");
  EXPECT_EQ(WorkerError("{replicas: 99999999999" + res),
            "workload.yaml: jobs[0].worker.replicas: expected an integer between 1 and 100000, got "
            "'99999999999'");
  EXPECT_EQ(WorkerError("{resources: {cpu: 1}}"),
            "workload.yaml: jobs[0].worker.replicas: missing, expected an integer >= 1");
  EXPECT_EQ(WorkerError("{replicas: 1}"),
            "workload.yaml: jobs[0].worker.resources: missing, expected a map of resource name to "
            "quantity");
  EXPECT_EQ(JobError("    chief: {replicas: 2, resources: {cpu: 1}}\n"),
            "workload.yaml: jobs[0].chief.replicas: expected 0 or 1, got '2'");
  EXPECT_EQ(
      JobError("    ps: {replicas: -1, resources: {cpu: 1}}\n"),
      "workload.yaml: jobs[0].ps.replicas: expected an integer between 0 and 100000, got '-1'");
  EXPECT_EQ(JobError("    ps: {replicas: 1, minReplicas: 1, resources: {cpu: 1}}\n"),
            "workload.yaml: jobs[0].ps.minReplicas: unknown key (allowed: replicas, resources, "
            "containers, initContainers, nodeSelector, affinity, tolerations, restartPolicy); "
            "did you mean 'replicas'?");
}

TEST(ParseWorkloadTest, PsWithoutReplicasNeedsNoResources) {
  auto w = ParseWorkload("jobs:\n" + Job("    ps: {replicas: 0}\n"), "workload.yaml");
  ASSERT_TRUE(w.has_value()) << w.error().message;
  EXPECT_EQ(w->jobs[0].role(Role::kPS).replicas, 0);
}

TEST(ParseWorkloadTest, FieldTypeErrors) {
  // Replace the valid totalSteps by appending a second job that is wrong.
  auto job2 = [](const std::string& line) {
    return "jobs:\n" + Job() + "  - name: k\n    arrival: 0\n    worker: {replicas: 1, " +
           "resources: {cpu: 1}}\n    throughput: {model: m}\n" + line;
  };
  EXPECT_EQ(
      WorkloadError(job2("    totalSteps: abc\n")),
      "workload.yaml: jobs[1].totalSteps: expected a number in (0, 1000000000000000], got 'abc'");
  EXPECT_EQ(
      WorkloadError(job2("    totalSteps: 0\n")),
      "workload.yaml: jobs[1].totalSteps: expected a number in (0, 1000000000000000], got '0'");
  EXPECT_EQ(
      WorkloadError(job2("")),
      "workload.yaml: jobs[1].totalSteps: missing, expected a number in (0, 1000000000000000] "
      "(or give the job's duration in seconds)");
  EXPECT_EQ(
      WorkloadError(job2("    totalSteps: .nan\n")),
      "workload.yaml: jobs[1].totalSteps: expected a number in (0, 1000000000000000], got '.nan'");
  // Block scalars are shown on one line.
  EXPECT_EQ(WorkloadError(job2("    totalSteps: |\n      12\n      34\n")),
            "workload.yaml: jobs[1].totalSteps: expected a number in (0, 1000000000000000], got "
            "'12\\x0a34\\x0a'");
  EXPECT_EQ(WorkloadError(job2("    totalSteps: " + std::string(70, '9') + "x\n")),
            "workload.yaml: jobs[1].totalSteps: expected a number in (0, 1000000000000000], got '" +
                std::string(60, '9') + "...'");
  EXPECT_EQ(JobError("    launchDelay: -1\n"),
            "workload.yaml: jobs[0].launchDelay: expected a number in [0, 1000000000], got '-1'");
  EXPECT_EQ(JobError("    deadline: 0\n"),
            "workload.yaml: jobs[0].deadline: expected a number in (0, 1000000000], got '0'");
  EXPECT_EQ(
      JobError("    maxWaitMinutes: [1]\n"),
      "workload.yaml: jobs[0].maxWaitMinutes: expected a number in (0, 10000000], got a list");
  EXPECT_EQ(JobError("    priority: urgent\n"),
            "workload.yaml: jobs[0].priority: expected one of high, normal, low, got 'urgent'");
  EXPECT_EQ(JobError("    namespace: \"\"\n"),
            "workload.yaml: jobs[0].namespace: a name must not be empty");
}

TEST(ParseWorkloadTest, RestartPolicyBackoffLimitAndFailures) {
  auto w =
      ParseWorkload("jobs:\n" + Job("    backoffLimit: 3\n"
                                    "    failures:\n"
                                    "      - {after: 600, task: worker-1, exitCode: 137}\n"
                                    "      - {after: 900, task: worker-0, evicted: true}\n"
                                    "      - {after: 950, task: worker-0}\n",
                                    "{replicas: 2, restartPolicy: ExitCode, resources: {cpu: 1}}"),
                    "workload.yaml");
  ASSERT_TRUE(w.has_value()) << w.error().message;
  const core::JobSpec& j = w->jobs[0];
  EXPECT_EQ(j.role(Role::kWorker).restart_policy, core::RestartPolicy::kExitCode);
  EXPECT_EQ(j.role(Role::kPS).restart_policy, core::RestartPolicy::kNever);  // the default
  EXPECT_EQ(j.backoff_limit, 3);
  ASSERT_EQ(j.failures.size(), 3u);
  EXPECT_DOUBLE_EQ(j.failures[0].after, 600);
  EXPECT_EQ(j.failures[0].role, Role::kWorker);
  EXPECT_EQ(j.failures[0].index, 1);
  EXPECT_EQ(j.failures[0].failure.exit_code, 137);
  EXPECT_FALSE(j.failures[0].failure.disruption);
  EXPECT_TRUE(j.failures[1].failure.disruption);
  EXPECT_FALSE(j.failures[1].failure.exit_code.has_value());
  EXPECT_FALSE(j.failures[2].failure.disruption);
  EXPECT_FALSE(j.failures[2].failure.exit_code.has_value());

  EXPECT_EQ(WorkerError("{replicas: 1, restartPolicy: never, resources: {cpu: 1}}"),
            "workload.yaml: jobs[0].worker.restartPolicy: expected one of Never, OnFailure, "
            "Always, ExitCode, got 'never'");
  EXPECT_EQ(
      JobError("    backoffLimit: -1\n"),
      "workload.yaml: jobs[0].backoffLimit: expected an integer between 0 and 1000000, got '-1'");
  EXPECT_EQ(JobError("    failures: {after: 1}\n"),
            "workload.yaml: jobs[0].failures: expected a list of failures {after: seconds after "
            "arrival, task: worker-<i>, exitCode: N or evicted: true}, got a map");
  EXPECT_EQ(JobError("    failures: [{after: 1, task: worker-2}]\n"),
            "workload.yaml: jobs[0].failures[0].task: the job has at most 2 worker tasks "
            "(maxReplicas)");
  EXPECT_EQ(JobError("    failures: [{task: worker-0}]\n"),
            "workload.yaml: jobs[0].failures[0].after: missing, expected seconds after the job's "
            "arrival");
  EXPECT_EQ(JobError("    failures: [{after: 1, task: worker-0, exitCode: 0}]\n"),
            "workload.yaml: jobs[0].failures[0].exitCode: expected an integer between 1 and 255, "
            "got '0'");
  EXPECT_EQ(JobError("    failures: [{after: 1, task: worker-0, exitCode: 1, evicted: true}]\n"),
            "workload.yaml: jobs[0].failures[0]: give exitCode or evicted: true, not both");
}

TEST(ParseWorkloadTest, MissingRequiredFields) {
  EXPECT_EQ(WorkloadError("jobs:\n  - {arrival: 0}\n"),
            "workload.yaml: jobs[0].name: missing, expected a non-empty string");
  EXPECT_EQ(WorkloadError("jobs:\n  - {name: a}\n"),
            "workload.yaml: jobs[0].arrival: missing, expected a number in [0, 1000000000]");
  EXPECT_EQ(WorkloadError("jobs:\n  - {name: a, arrival: 0, totalSteps: 1}\n"),
            "workload.yaml: jobs[0].worker: missing, expected a map with replicas and resources");
  EXPECT_EQ(WorkloadError("jobs:\n  - {name: a, arrival: 0, totalSteps: 1, worker: {replicas: 1, "
                          "resources: {cpu: 1}}}\n"),
            "workload.yaml: jobs[0].throughput: missing, expected {model: <name>} or {table: "
            "{<workers>: <steps/s>}}");
  EXPECT_EQ(WorkloadError("jobs: []\n"),
            "workload.yaml: jobs: expected a non-empty list of jobs, got a list");
  EXPECT_EQ(WorkloadError("jobs:\n"),
            "workload.yaml: jobs: missing, expected a non-empty list of jobs");
  EXPECT_EQ(WorkloadError("- a\n- b\n"), "workload.yaml: expected a map with 'jobs', got a list");
}

TEST(ParseWorkloadTest, UnknownKeyListsAllowedKeys) {
  EXPECT_EQ(JobError("    totalStep: 5\n"),
            "workload.yaml: jobs[0].totalStep: unknown key (allowed: name, namespace, arrival, "
            "priority, maxWaitMinutes, queue, ps, worker, chief, totalSteps, stepsDone, "
            "attainedGpuSeconds, "
            "level, levelSince, levelPlace, levelBaseGpuSeconds, ranSince, gavelWindow, "
            "gavelCounted, gavelSeconds0, gavelSeconds1, gavelSeconds2, gavelSeconds3, "
            "gavelSeconds4, gavelSeconds5, gavelSeconds6, gavelSeconds7, "
            "throughput, duration, scaling, launchDelay, checkpointDelay, deadline, running, "
            "launchGpuSeconds, backoffLimit, failures); did you mean 'totalSteps'?");
}

TEST(ParseWorkloadTest, DuplicateJobName) {
  EXPECT_EQ(WorkloadError("jobs:\n" + Job() + Job()),
            "workload.yaml: jobs[1].name: job name 'j' is already used by jobs[0]");
}

TEST(ParseWorkloadTest, BadQuantityNamesTheField) {
  auto reason = [](core::ResourceId id, const char* text) {
    auto r = core::ParseResourceAmount(id, text);
    EXPECT_FALSE(r.has_value());
    return r ? std::string() : r.error().message;
  };
  // The reason comes from core; config adds the file and field path.
  std::string bad = WorkerError("{replicas: 1, resources: {cpu: 1.2.3}}");
  EXPECT_EQ(bad, "workload.yaml: jobs[0].worker.resources.cpu: " + reason(core::kCpu, "1.2.3"));
  EXPECT_NE(bad.find("'1.2.3'"), std::string::npos) << bad;
  std::string negative = WorkerError("{replicas: 1, resources: {memory: -4Gi}}");
  EXPECT_EQ(negative,
            "workload.yaml: jobs[0].worker.resources.memory: " + reason(core::kMemory, "-4Gi"));
  EXPECT_NE(negative.find("negative"), std::string::npos) << negative;
  EXPECT_EQ(WorkerError("{replicas: 1, resources: {cpu: }}"),
            "workload.yaml: jobs[0].worker.resources.cpu: expected a quantity, got nothing");
}

// A share of one GPU: 1..999 thousandths, without whole GPUs; the role's
// field named (its containers' sum for a role given by containers).
TEST(ParseWorkloadTest, GpuShares) {
  auto w = ParseWorkload(
      "jobs:\n" + Job("", "{replicas: 2, resources: {cpu: \"1\", dlsched.io/gpu-milli: 250}}"),
      "workload.yaml");
  ASSERT_TRUE(w.has_value()) << w.error().message;
  EXPECT_EQ(w->jobs[0].role(Role::kWorker).resources[core::kGpuMilli], 250);
  EXPECT_EQ(w->jobs[0].role(Role::kWorker).resources[core::kGpu], 0);
  EXPECT_EQ(WorkerError("{replicas: 1, resources: {dlsched.io/gpu-milli: 1000}}"),
            "workload.yaml: jobs[0].worker.resources: dlsched.io/gpu-milli 1000 is a whole GPU "
            "or more; a share is 1..999 thousandths of one device (ask for whole GPUs as "
            "nvidia.com/gpu)");
  EXPECT_EQ(
      WorkerError("{replicas: 1, resources: {nvidia.com/gpu: 1, dlsched.io/gpu-milli: 500}}"),
      "workload.yaml: jobs[0].worker.resources: dlsched.io/gpu-milli 500 with nvidia.com/gpu 1: "
      "a task asks for whole GPUs or a share of one, not both");
  // Two containers of 600 each ask for 1200 of one device.
  EXPECT_EQ(WorkerError("{replicas: 1, containers: [{name: a, resources: {dlsched.io/gpu-milli: "
                        "600}}, {name: b, resources: {dlsched.io/gpu-milli: 600}}]}"),
            "workload.yaml: jobs[0].worker.containers: dlsched.io/gpu-milli 1200 is a whole GPU "
            "or more; a share is 1..999 thousandths of one device (ask for whole GPUs as "
            "nvidia.com/gpu)");
}

TEST(ParseWorkloadTest, ThroughputErrors) {
  auto tp = [](const std::string& t) {
    return WorkloadError(
        "jobs:\n  - {name: a, arrival: 0, totalSteps: 1, worker: {replicas: 1, "
        "resources: {cpu: 1}}, throughput: " +
        t + "}\n");
  };
  EXPECT_EQ(tp("{model: resnet50, table: {1: 1}}"),
            "workload.yaml: jobs[0].throughput: give either 'model' or 'table', not both");
  EXPECT_EQ(tp("{localitySensitivity: 0.5}"),
            "workload.yaml: jobs[0].throughput: expected 'model' (a model-zoo name) or 'table'");
  EXPECT_EQ(tp("{model: resnet50, localitySensitivity: 0.5}"),
            "workload.yaml: jobs[0].throughput.localitySensitivity: only allowed with 'table' (a "
            "model brings its own)");
  EXPECT_EQ(tp("{table: {0: 1.5}}"),
            "workload.yaml: jobs[0].throughput.table.0: expected a worker count (an integer "
            "between 1 and 100000) as key, got '0'");
  EXPECT_EQ(tp("{table: {1: -2}}"),
            "workload.yaml: jobs[0].throughput.table.1: expected a number in [0, 1000000000000], "
            "got '-2'");
  EXPECT_EQ(tp("{table: {1: 0, 2: 0}}"),
            "workload.yaml: jobs[0].throughput.table: expected at least one rate > 0");
  EXPECT_EQ(tp("{table: {}}"),
            "workload.yaml: jobs[0].throughput.table: expected a non-empty map of worker count to "
            "steps/s, got a map");
  EXPECT_EQ(tp("{table: {1: 1, 01: 2}}"),
            "workload.yaml: jobs[0].throughput.table.01: duplicate worker count 1");
  EXPECT_EQ(tp("{table: {1: 1}, localitySensitivity: 1.5}"),
            "workload.yaml: jobs[0].throughput.localitySensitivity: expected a number in [0, 1], "
            "got '1.5'");
  EXPECT_EQ(tp("{modle: resnet50}"),
            "workload.yaml: jobs[0].throughput.modle: unknown key (allowed: model, table, "
            "localitySensitivity, switchSensitivity, placements, gpuTypes); did you mean "
            "'model'?");
  EXPECT_EQ(tp("{model: resnet50, switchSensitivity: -0.5}"),
            "workload.yaml: jobs[0].throughput.switchSensitivity: expected a number in [0, 1], "
            "got '-0.5'");
  EXPECT_EQ(tp("{model: resnet50, placements: {4: 1}}"),
            "workload.yaml: jobs[0].throughput.placements: only allowed with 'table' (a model "
            "brings its own)");
  for (const char* key : {"4+0", "4+", "x", "2 + 2", "100000+1"}) {
    EXPECT_EQ(tp(fmt::format("{{table: {{4: 1}}, placements: {{'{}': 1}}}}", key)),
              fmt::format("workload.yaml: jobs[0].throughput.placements.{}: expected a placement "
                          "as key: workers per node (integers >= 1, 100000 in all at most) "
                          "joined by '+', e.g. 4+2, got '{}'",
                          key, key));
  }
  EXPECT_EQ(tp("{table: {4: 1}, placements: {2+2: 0}}"),
            "workload.yaml: jobs[0].throughput.placements.2+2: expected a number in [1e-06, "
            "1000000000000], got '0'");
  EXPECT_EQ(tp("{table: {4: 1}, placements: {3+1: 1, 1+3: 2}}"),
            "workload.yaml: jobs[0].throughput.placements.1+3: the same placement as another key");
}

// A placement's key is its workers per node in any order, kept most first.
TEST(ParseWorkloadTest, ThroughputPlacements) {
  auto w = ParseWorkload(
      "jobs:\n  - {name: a, arrival: 0, totalSteps: 1, worker: {replicas: 4, resources: {cpu: "
      "1}}, throughput: {table: {4: 2}, placements: {4: 2, 1+3: 0.5, 2+2: 1}}}\n",
      "workload.yaml");
  ASSERT_TRUE(w) << w.error().message;
  const auto& p = w->jobs[0].throughput.placements;
  EXPECT_EQ(p, (std::map<std::vector<int>, double>{{{4}, 2}, {{3, 1}, 0.5}, {{2, 2}, 1}}));
}

// A table per GPU type beside the job's own: `RateOn` reads the type's,
// and a type not listed falls back to the table (interpolated between 1
// and 4 workers: 1 + (3 - 1) / 3 * (4 - 1) = 3 at 3 workers).
TEST(ParseWorkloadTest, ThroughputPerGpuType) {
  auto w = ParseWorkload(
      "jobs:\n  - {name: a, arrival: 0, totalSteps: 1, worker: {replicas: 4, resources: {cpu: "
      "1}}, throughput: {table: {1: 1, 4: 4}, gpuTypes: {v100: {1: 4.4, 4: 9.5}, k80: {1: 0.6, "
      "4: 2.4}}}}\n",
      "workload.yaml");
  ASSERT_TRUE(w) << w.error().message;
  const core::ThroughputProfile& tp = w->jobs[0].throughput;
  ASSERT_EQ(tp.GpuTypes().size(), 2u);
  EXPECT_EQ(tp.RateOn("v100", 4), 9.5);
  EXPECT_EQ(tp.RateOn("k80", 1), 0.6);
  EXPECT_EQ(tp.RateOn("k80", 8), 2.4);  // flat above the largest size
  EXPECT_EQ(tp.RateOn("p100", 3), 3.0);
  EXPECT_EQ(tp.RateOn("", 4), 4.0);

  auto tpe = [](const std::string& t) {
    return WorkloadError(
        "jobs:\n  - {name: a, arrival: 0, totalSteps: 1, worker: {replicas: 1, "
        "resources: {cpu: 1}}, throughput: " +
        t + "}\n");
  };
  EXPECT_EQ(tpe("{model: resnet50, gpuTypes: {v100: {1: 1}}}"),
            "workload.yaml: jobs[0].throughput.gpuTypes: only allowed with 'table' (a model "
            "brings its own)");
  EXPECT_EQ(tpe("{table: {1: 1}, gpuTypes: {}}"),
            "workload.yaml: jobs[0].throughput.gpuTypes: expected a map of GPU type to a table "
            "of worker count to steps/s, got a map");
  EXPECT_EQ(tpe("{table: {1: 1}, gpuTypes: {v100: {}}}"),
            "workload.yaml: jobs[0].throughput.gpuTypes.v100: expected a non-empty map of worker "
            "count to steps/s, got a map");
  EXPECT_EQ(tpe("{table: {1: 1}, gpuTypes: {v100: {0: 1}}}"),
            "workload.yaml: jobs[0].throughput.gpuTypes.v100.0: expected a worker count (an "
            "integer between 1 and 100000) as key, got '0'");
  EXPECT_EQ(tpe("{table: {1: 1}, gpuTypes: {v100: [1]}}"),
            "workload.yaml: jobs[0].throughput.gpuTypes.v100: expected a non-empty map of worker "
            "count to steps/s, got a list");
  // A type where the job cannot run at all: every rate 0.
  auto zero = ParseWorkload(
      "jobs:\n  - {name: a, arrival: 0, totalSteps: 1, worker: {replicas: 1, resources: {cpu: "
      "1}}, throughput: {table: {1: 1}, gpuTypes: {k80: {1: 0}}}}\n",
      "workload.yaml");
  ASSERT_TRUE(zero) << zero.error().message;
  EXPECT_EQ(zero->jobs[0].throughput.RateOn("k80", 1), 0.0);
}

TEST(ParseWorkloadTest, SyntaxErrorHasLineAndColumn) {
  EXPECT_EQ(WorkloadError("jobs:\n  - name: a\n    arrival: [0\n"),
            "workload.yaml:4:1: end of sequence flow not found");
  // Bad indentation: line 3 is indented less than the job's keys.
  EXPECT_EQ(WorkloadError("jobs:\n  - name: a\n   arrival: 0\n"),
            "workload.yaml:3:4: end of sequence not found");
}

}  // namespace
}  // namespace dlsched::config

namespace dlsched::config {
namespace {

// A role may list containers, as a pod does: its request is their sum, and
// kube-scheduler's scoring counts 100m cpu / 200Mi memory for each container
// that leaves the key out, but an explicit 0 as 0.
//   trainer:  cpu 4, memory 8Gi, gpu 1   -> scoring cpu 4000m, memory 8Gi
//   sidecar:  memory 100Mi (no cpu)      -> scoring cpu 100m,  memory 100Mi
//   idle:     cpu 0 (explicit), no memory -> scoring cpu 0,    memory 200Mi
// request: cpu 4000m, memory 8Gi + 100Mi, gpu 1
// scoring: cpu 4100m, memory 8Gi + 300Mi, gpu 1
TEST(ParseWorkloadTest, ContainersSumAndCountDefaultsPerContainer) {
  auto w = ParseWorkload(R"(
jobs:
  - name: j
    arrival: 0
    totalSteps: 10
    throughput: {table: {1: 1}}
    worker:
      replicas: 1
      containers:
        - {name: trainer, resources: {cpu: "4", memory: 8Gi, nvidia.com/gpu: 1}}
        - {name: sidecar, resources: {memory: 100Mi}}
        - {name: idle, resources: {cpu: 0}}
)",
                         "w.yaml");
  ASSERT_TRUE(w.has_value()) << w.error().message;
  const core::RoleSpec& worker = w->jobs[0].role(Role::kWorker);
  constexpr int64_t kMi = int64_t{1} << 20;
  ASSERT_EQ(worker.containers.size(), 3u);
  EXPECT_EQ(worker.resources[core::kCpu], 4000);
  EXPECT_EQ(worker.resources[core::kMemory], 8192 * kMi + 100 * kMi);
  EXPECT_EQ(worker.resources[core::kGpu], 1);
  const core::Resources scoring = worker.ScoringRequest();
  EXPECT_EQ(scoring[core::kCpu], 4100);
  EXPECT_EQ(scoring[core::kMemory], 8192 * kMi + 300 * kMi);
  EXPECT_EQ(scoring[core::kGpu], 1);
}

// Without containers a role keeps its plain form: a 0 (or missing) cpu or
// memory counts as unset.
TEST(ParseWorkloadTest, RoleWithoutContainersKeepsThePlainForm) {
  auto w = ParseWorkload(
      "jobs:\n  - {name: j, arrival: 0, totalSteps: 1, throughput: {table: {1: 1}}, worker: "
      "{replicas: 1, resources: {cpu: 0, nvidia.com/gpu: 1}}}\n",
      "w.yaml");
  ASSERT_TRUE(w.has_value()) << w.error().message;
  const core::RoleSpec& worker = w->jobs[0].role(Role::kWorker);
  EXPECT_TRUE(worker.containers.empty());
  EXPECT_EQ(worker.ScoringRequest()[core::kCpu], 100);
  EXPECT_EQ(worker.ScoringRequest()[core::kMemory], 200 << 20);
}

TEST(ParseWorkloadTest, ContainerErrors) {
  EXPECT_EQ(WorkerError("{replicas: 1, resources: {cpu: 1}, containers: [{name: a}]}"),
            "workload.yaml: jobs[0].worker: give either 'resources' or 'containers', not both");
  EXPECT_EQ(WorkerError("{replicas: 1, containers: []}"),
            "workload.yaml: jobs[0].worker.containers: expected a non-empty list of containers "
            "({name, resources}), got a list");
  EXPECT_EQ(WorkerError("{replicas: 1, containers: [{resources: {cpu: 1}}]}"),
            "workload.yaml: jobs[0].worker.containers[0].name: missing, expected a container name");
  EXPECT_EQ(WorkerError("{replicas: 1, containers: [{name: a}, {name: a}]}"),
            "workload.yaml: jobs[0].worker.containers[1].name: container name 'a' is already "
            "used by jobs[0].worker.containers[0]");
  EXPECT_EQ(WorkerError("{replicas: 1, containers: [{name: a, image: x}]}"),
            "workload.yaml: jobs[0].worker.containers[0].image: unknown key (allowed: name, "
            "resources)");
  EXPECT_EQ(WorkerError("{replicas: 1, containers: [{name: a, resources: {memory: 1Pi}}, "
                        "{name: b, resources: {memory: 1}}]}"),
            "workload.yaml: jobs[0].worker.containers[1].resources: the containers' total memory "
            "is more than the limit of 1Pi");
}

}  // namespace
}  // namespace dlsched::config

namespace dlsched::config {
namespace {

// A role's nodeSelector, required node affinity and tolerations, written as
// in a pod spec.
TEST(ParseWorkloadTest, NodeConstraints) {
  auto w = ParseWorkload(R"(
jobs:
  - name: j
    arrival: 0
    totalSteps: 10
    throughput: {table: {1: 1}}
    worker:
      replicas: 1
      resources: {nvidia.com/gpu: 1}
      nodeSelector: {gpu-model: v100}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {key: zone, operator: In, values: [z1, z2]}
                  - {key: spot, operator: DoesNotExist}
              - matchExpressions:
                  - {key: gpus, operator: Gt, values: ["4"]}
      tolerations:
        - {key: dedicated, operator: Equal, value: ml, effect: NoSchedule}
        - {operator: Exists}
)",
                         "w.yaml");
  ASSERT_TRUE(w.has_value()) << w.error().message;
  const core::NodeConstraints& c = w->jobs[0].role(Role::kWorker).constraints;
  EXPECT_EQ(c.node_selector.at("gpu-model"), "v100");
  ASSERT_EQ(c.required_terms.size(), 2u);
  ASSERT_EQ(c.required_terms[0].match_expressions.size(), 2u);
  EXPECT_EQ(c.required_terms[0].match_expressions[0].values,
            (std::vector<std::string>{"z1", "z2"}));
  EXPECT_EQ(c.required_terms[0].match_expressions[1].op,
            core::NodeSelectorRequirement::Op::kDoesNotExist);
  ASSERT_EQ(c.tolerations.size(), 2u);
  EXPECT_FALSE(c.tolerations[0].any_effect);
  EXPECT_TRUE(c.tolerations[1].any_effect);
  EXPECT_TRUE(c.tolerations[1].key.empty());
}

TEST(ParseWorkloadTest, NodeConstraintErrors) {
  const std::string res = ", resources: {cpu: 1}";
  auto affinity = [&](const std::string& expr) {
    return WorkerError(
        "{replicas: 1" + res +
        ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        "{nodeSelectorTerms: [{matchExpressions: [" +
        expr + "]}]}}}}");
  };
  const std::string prefix =
      "workload.yaml: jobs[0].worker.affinity.nodeAffinity."
      "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].";
  EXPECT_EQ(affinity("{key: zone, operator: In}"), prefix + "values: In needs at least one value");
  EXPECT_EQ(affinity("{key: zone, operator: Exists, values: [a]}"),
            prefix + "values: Exists takes no values");
  EXPECT_EQ(affinity("{key: n, operator: Gt, values: [a]}"),
            prefix + "values: Gt takes exactly one integer value");
  EXPECT_EQ(affinity("{key: zone, operator: Near, values: [a]}"),
            prefix + "operator: expected In, NotIn, Exists, DoesNotExist, Gt or Lt, got 'Near'");
  EXPECT_EQ(
      WorkerError("{replicas: 1" + res +
                  ", affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
                  "[]}}}"),
      "workload.yaml: jobs[0].worker.affinity.nodeAffinity."
      "preferredDuringSchedulingIgnoredDuringExecution: unknown key (allowed: "
      "requiredDuringSchedulingIgnoredDuringExecution)");
  EXPECT_EQ(WorkerError("{replicas: 1" + res + ", tolerations: [{value: x}]}"),
            "workload.yaml: jobs[0].worker.tolerations[0].operator: a toleration without a key "
            "must use Exists");
  EXPECT_EQ(
      WorkerError("{replicas: 1" + res + ", tolerations: [{key: a, operator: Exists, value: x}]}"),
      "workload.yaml: jobs[0].worker.tolerations[0].value: a toleration with operator "
      "Exists takes no value");
  EXPECT_EQ(WorkerError("{replicas: 1" + res +
                        ", tolerations: [{key: a, operator: Exists, tolerationSeconds: 5}]}"),
            "workload.yaml: jobs[0].worker.tolerations[0].tolerationSeconds: only with effect "
            "NoExecute");
  EXPECT_EQ(WorkerError("{replicas: 1" + res +
                        ", tolerations: [{key: a, operator: Exists, effect: NoExecute, "
                        "tolerationSeconds: 1.5}]}"),
            "workload.yaml: jobs[0].worker.tolerations[0].tolerationSeconds: expected an integer "
            "between -1000000000 and 1000000000, got '1.5'");
  EXPECT_EQ(WorkerError("{replicas: 1" + res + ", nodeSelector: {zone: [a]}}"),
            "workload.yaml: jobs[0].worker.nodeSelector.zone: expected a label value, got a list");
}

TEST(ParseWorkloadTest, TolerationSeconds) {
  auto w = ParseWorkload("jobs:\n" + Job("",
                                         "{replicas: 1, resources: {cpu: 1}, tolerations: "
                                         "[{key: node.kubernetes.io/unreachable, operator: "
                                         "Exists, effect: NoExecute, tolerationSeconds: 30}, "
                                         "{key: b, operator: Exists, effect: NoExecute, "
                                         "tolerationSeconds: -4}, {key: c, operator: Exists}]}"),
                         "workload.yaml");
  ASSERT_TRUE(w.has_value()) << w.error().message;
  const auto& t = w->jobs[0].role(Role::kWorker).constraints.tolerations;
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].seconds, 30);
  EXPECT_EQ(t[1].seconds, -4);
  EXPECT_FALSE(t[2].seconds.has_value());
}

}  // namespace
}  // namespace dlsched::config

namespace dlsched::config {
namespace {

// A job given by its duration: 300 s at 4 workers is 300 steps at 1 step/s;
// sqrt scaling gives sqrt(2/4) steps/s at minReplicas 2.
TEST(ParseWorkloadTest, DurationInsteadOfStepsAndThroughput) {
  auto w = ParseWorkload(R"(
jobs:
  - name: d
    arrival: 0
    worker: {replicas: 4, minReplicas: 2, maxReplicas: 8, resources: {nvidia.com/gpu: 1}}
    duration: 300
    scaling: sqrt
)",
                         "workload.yaml");
  ASSERT_TRUE(w) << w.error().message;
  const core::JobSpec& j = w->jobs[0];
  EXPECT_EQ(*j.duration, 300);
  EXPECT_EQ(j.total_steps, 300);
  EXPECT_DOUBLE_EQ(j.throughput.Rate(4), 1);
  EXPECT_DOUBLE_EQ(j.throughput.Rate(2), std::sqrt(0.5));
  EXPECT_DOUBLE_EQ(j.throughput.Rate(8), std::sqrt(2.0));

  const std::string base =
      "jobs:\n  - name: d\n    arrival: 0\n    worker: {replicas: 1, resources: {cpu: 1}}\n";
  auto err = [&](const std::string& extra) {
    auto r = ParseWorkload(base + extra, "workload.yaml");
    return r ? std::string() : r.error().message;
  };
  EXPECT_EQ(err("    duration: 10\n    totalSteps: 5\n"),
            "workload.yaml: jobs[0].totalSteps: give either duration (seconds at the job's size) "
            "or totalSteps and throughput, not both");
  EXPECT_EQ(err("    duration: 0\n"),
            "workload.yaml: jobs[0].duration: expected a number in (0, 1000000000], got '0'");
  EXPECT_EQ(err("    duration: 10\n    scaling: cubic\n"),
            "workload.yaml: jobs[0].scaling: expected linear, sqrt, none or amdahl:<parallel "
            "fraction in (0, 1]>, got 'cubic'");
  EXPECT_EQ(err("    totalSteps: 10\n    throughput: {model: resnet50}\n    scaling: sqrt\n"),
            "workload.yaml: jobs[0].scaling: applies only to a job given by its duration");
}

}  // namespace
}  // namespace dlsched::config
