// The operator end to end against the test API server (testing/k8s/) and
// the test kubelet: TrainingJobs become bound pods on the engine's nodes,
// then Completed; a ported Kubeflow TFJob runs unchanged but for kind and
// apiVersion; pod-template placement rules hold.
#include "dlsched/k8s/operator.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/files.h"
#include "dlsched/core/resources.h"
#include "dlsched/k8s/objects.h"
#include "k8s/apiserver.h"
#include "k8s/test_kubelet.h"
#include "policy/profiles.h"

namespace dlsched::k8s {
namespace {

using nlohmann::json;
using testing::NewEngine;
using testing::ReadFile;
using testing::TestApiServer;
using testing::TestKubelet;

json Node(const std::string& name, int gpus, json labels = json::object(),
          json taints = json::array()) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", {{"taints", taints}}},
          {"status",
           {{"allocatable",
             {{"cpu", "8"},
              {"memory", "32Gi"},
              {"nvidia.com/gpu", std::to_string(gpus)},
              {"pods", "110"}}}}}};
}

// A TrainingJob with `ps` parameter servers and `workers` one-GPU workers.
json Job(const std::string& name, int ps, int workers, double steps, json worker_spec = {}) {
  json worker_template = {
      {"spec",
       {{"containers", json::array({{{"name", "tf"},
                                     {"image", "trainer:1"},
                                     {"resources",
                                      {{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}},
                                       {"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}}};
  if (worker_spec.is_object()) worker_template["spec"].update(worker_spec);
  json spec = {
      {"replicaSpecs", {{"Worker", {{"replicas", workers}, {"template", worker_template}}}}},
      {"totalSteps", steps},
      {"throughput", {{"table", {{"1", 10.0}, {"2", 20.0}, {"4", 40.0}}}}}};
  if (ps > 0) {
    spec["replicaSpecs"]["PS"] = {
        {"replicas", ps},
        {"template",
         {{"spec",
           {{"containers",
             json::array(
                 {{{"name", "ps"},
                   {"image", "trainer:1"},
                   {"resources", {{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}}}}}})}}}}}};
  }
  return {{"apiVersion", "dlsched.io/v1alpha1"},
          {"kind", "TrainingJob"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", spec}};
}

// A server with the CRD, a kubelet and an operator on one clock that runs
// 100 simulated seconds per wall second.
class OperatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start().has_value());
    ASSERT_TRUE(
        server_.ApplyManifest(ReadFile(std::string(DLSCHED_SOURCE_DIR) + "/deploy/crd.yaml"))
            .has_value());
    config_.server = server_.Url();
    config_.bearer_token = "test-token";
    config_.timeout_seconds = 5;
  }
  void TearDown() override {
    if (op_) op_->Stop();
    if (kubelet_) kubelet_->Stop();
  }

  double Clock() const {
    return 100 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

  void StartOperator(const std::string& profile, bool bind_with_node_name = false) {
    engine_ = NewEngine(profile);
    OperatorOptions o;
    o.bind_with_node_name = bind_with_node_name;
    o.clock = [this] { return Clock(); };
    o.resync_seconds = 0.05;
    o.informer.backoff_initial_seconds = 0.05;
    o.informer.backoff_max_seconds = 0.2;
    o.log = [this](const std::string& line) { logs_.push_back(line); };
    o.on_plan = [this](double, const engine::Plan& plan) {
      for (const engine::Action& a : plan.actions) {
        if (a.kind == engine::ActionKind::kBind) {
          chosen_[PodName(op_->Job(a.task.job).name, a.task.role, a.task.index)] =
              op_->State().NodeName(a.node);
        }
        if (a.kind == engine::ActionKind::kStart) starts_.push_back(op_->Job(a.task.job).name);
      }
    };
    op_ = std::make_unique<Operator>(config_, *engine_, o);
    ASSERT_TRUE(op_->Start(10).has_value());
    kubelet_ = std::make_unique<TestKubelet>(config_, [this] { return Clock(); });
    kubelet_->Start();
  }

  // Steps the operator until `done` holds (or 30 s of wall time pass:
  // a hang guard, not a timing assertion).
  bool RunUntil(const std::function<bool()>& done) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < give_up) {
      op_->Step(0.01);
      if (done()) return true;
    }
    return false;
  }

  std::string Phase(const std::string& name) {
    auto tj = server_.Get("trainingjobs.dlsched.io", "default", name);
    if (!tj || !tj->contains("status")) return "";
    return (*tj)["status"].value("phase", "");
  }

  // Condition `type` of the job's status (null if absent).
  json Condition(const std::string& name, const std::string& type) {
    auto tj = server_.Get("trainingjobs.dlsched.io", "default", name);
    if (!tj) return nullptr;
    for (const json& c : (*tj)["status"].value("conditions", json::array())) {
      if (c.value("type", "") == type) return c;
    }
    return nullptr;
  }

  std::vector<json> PodsOf(const std::string& job) {
    std::vector<json> out;
    for (const json& pod : server_.List("pods", "default")) {
      if (pod["metadata"].value("labels", json::object()).value(std::string(kJobLabel), "") ==
          job) {
        out.push_back(pod);
      }
    }
    return out;
  }

  // One 4-GPU node and job `name` (`ps` PS, `workers` workers, steps
  // without end, checkpointDelay 5) running for 20 s under gang-binpack.
  void StartCheckpointingJob(const std::string& name, int ps, int workers) {
    ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
    json job = Job(name, ps, workers, 1e9);
    job["spec"]["checkpointDelay"] = 5;
    ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", job).has_value());
    StartOperator("gang-binpack");
    ASSERT_TRUE(RunUntil([&] { return Phase(name) == "Running" && Clock() > 20; }));
  }
  // Sets spec.runPolicy.suspend of job `name`.
  void SetSuspend(const std::string& name, bool suspend) {
    auto tj = server_.Get("trainingjobs.dlsched.io", "default", name);
    ASSERT_TRUE(tj.has_value()) << name;
    (*tj)["spec"]["runPolicy"]["suspend"] = suspend;
    ASSERT_TRUE(server_.Update("trainingjobs.dlsched.io", "default", *tj).has_value());
  }

  std::vector<std::string> EventReasons(const std::string& job) {
    std::vector<std::string> out;
    for (const json& e : server_.List("events", "default")) {
      if (e["involvedObject"].value("name", "") == job) out.push_back(e.value("reason", ""));
    }
    return out;
  }
  // Whether job `job` has an Event with reason `reason`.
  bool HasEvent(const std::string& job, const std::string& reason) {
    const auto reasons = EventReasons(job);
    return std::find(reasons.begin(), reasons.end(), reason) != reasons.end();
  }

  // One 4-GPU node, job `name` of one worker, the first pod create answered
  // `status`, and the operator started (gang-binpack).
  void StartWithOneJobWhosePodCreateGets(int status, const std::string& name) {
    ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
    server_.FailNext("POST pods", status);
    ASSERT_TRUE(
        server_.Create("trainingjobs.dlsched.io", "default", Job(name, 0, 1, 100)).has_value());
    StartOperator("gang-binpack");
  }

  TestApiServer server_;
  RestConfig config_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<Operator> op_;
  std::unique_ptr<TestKubelet> kubelet_;
  std::vector<std::string> logs_;
  std::map<std::string, std::string> chosen_;  // pod -> node the engine chose
  std::vector<std::string> starts_;
};

TEST_F(OperatorTest, TrainingJobBecomesBoundPodsThenCompleted) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-b", 4)).has_value());
  ASSERT_TRUE(
      server_.Create("trainingjobs.dlsched.io", "default", Job("mnist", 1, 2, 200)).has_value());
  StartOperator("gang-binpack");
  // 200 steps at 20 steps/s on two workers: 10 simulated seconds.
  // Completed, and the parameter server's pod, deleted then, gone.
  ASSERT_TRUE(RunUntil([&] {
    return Phase("mnist") == "Completed" && PodsOf("mnist").size() == 2;
  })) << Phase("mnist");

  // The workers' pods stay, Succeeded (their logs); the parameter server,
  // which never finishes on its own, was deleted at completion.
  const std::vector<json> pods = PodsOf("mnist");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(chosen_.size(), 3u);
  const auto tj = server_.Get("trainingjobs.dlsched.io", "default", "mnist");
  for (const json& pod : pods) {
    const std::string name = pod["metadata"]["name"];
    EXPECT_TRUE(name == "mnist-worker-0" || name == "mnist-worker-1") << name;
    EXPECT_EQ(pod["status"]["phase"], "Succeeded");
    // Bound where the engine chose, owned by the job, told its cluster.
    ASSERT_TRUE(chosen_.contains(name)) << name;
    EXPECT_EQ(pod["spec"]["nodeName"], chosen_[name]) << name;
    EXPECT_EQ(pod["spec"]["schedulerName"], "dlsched");
    EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"], (*tj)["metadata"]["uid"]);
    const json env = pod["spec"]["containers"][0]["env"];
    ASSERT_FALSE(env.empty());
    const json tf = json::parse(env.back()["value"].get<std::string>());
    EXPECT_EQ(tf["cluster"]["worker"].size(), 2u);
    EXPECT_EQ(tf["cluster"]["ps"][0], "mnist-ps-0.mnist.default.svc:2222");
  }
  // gang-binpack packs the three tasks (2 GPUs) onto one node.
  EXPECT_EQ(chosen_["mnist-worker-0"], chosen_["mnist-worker-1"]);
  EXPECT_EQ(server_.RequestCounts()["POST pods/binding"], 3);
  EXPECT_EQ(server_.RequestCounts()["POST pods"], 3);
  // Nothing the operator writes has a field a real server would drop.
  for (const auto& w : server_.Writes()) {
    EXPECT_TRUE(w.warnings.empty()) << w.method << " " << w.path << ": " << w.warnings[0];
  }
  EXPECT_TRUE(server_.Get("services", "default", "mnist").has_value());
  const auto reasons = EventReasons("mnist");
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "Scheduled"), reasons.end());
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "Completed"), reasons.end());
  EXPECT_EQ((*tj)["status"].value("workers", -1), 0) << (*tj)["status"].dump();
}

// A job that was preempted (pending, no pods) when the operator restarted
// keeps what the operator before it had written: its progress, attained
// service and, for las's starvation promotion, the service at its last
// promotion and when it first ran after it. They are in the snapshot
// (what the engine decides on) and written back unchanged.
TEST_F(OperatorTest, ARestartedOperatorKeepsAPendingJobsProgressAndService) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 1)).has_value());
  auto created = server_.Create("trainingjobs.dlsched.io", "default", Job("held", 0, 2, 200));
  ASSERT_TRUE(created.has_value());
  json with_status = *created;
  with_status["status"] = {{"phase", "Waiting"},
                           {"progress",
                            {{"steps", 50.0},
                             {"totalSteps", 200.0},
                             {"stepsPerSecond", 0.0},
                             {"attainedGpuSeconds", 100.0},
                             {"levelBaseGpuSeconds", 40.0},
                             {"ranSince", 5.0}}}};
  ASSERT_TRUE(server_.UpdateStatus("trainingjobs.dlsched.io", "default", with_status).has_value());
  StartOperator("las");
  // Two one-GPU workers on a one-GPU node: it waits.
  ASSERT_TRUE(RunUntil([&] {
    auto tj = server_.Get("trainingjobs.dlsched.io", "default", "held");
    return tj && (*tj)["status"].value("reason", "").starts_with("waiting");
  }));
  const OperatorSnapshot snap = op_->Snapshot();
  ASSERT_EQ(snap.workload.jobs.size(), 1u);
  const core::JobSpec& job = snap.workload.jobs[0];
  EXPECT_EQ(job.steps_done, 50);
  EXPECT_EQ(job.attained, 100);
  ASSERT_TRUE(job.policy_state.contains("levelBaseGpuSeconds"));
  EXPECT_EQ(job.policy_state.at("levelBaseGpuSeconds"), 40);
  ASSERT_TRUE(job.policy_state.contains("ranSince"));
  EXPECT_EQ(job.policy_state.at("ranSince"), 5);
  const json progress =
      (*server_.Get("trainingjobs.dlsched.io", "default", "held"))["status"]["progress"];
  EXPECT_EQ(progress.value("steps", -1.0), 50) << progress.dump();
  EXPECT_EQ(progress.value("attainedGpuSeconds", -1.0), 100) << progress.dump();
  EXPECT_EQ(progress.value("levelBaseGpuSeconds", -1.0), 40) << progress.dump();
  EXPECT_EQ(progress.value("ranSince", -1.0), 5) << progress.dump();
}

TEST_F(OperatorTest, PortedKubeflowTfJobRunsUnchangedButForKindAndApiVersion) {
  // Kubeflow's own dist-mnist example (data/kubeflow/, Apache-2.0).
  std::string manifest =
      ReadFile(std::string(DLSCHED_SOURCE_DIR) + "/data/kubeflow/tf_job_mnist.yaml");
  const std::string from_api = "apiVersion: \"kubeflow.org/v1\"";
  const std::string from_kind = "kind: \"TFJob\"";
  ASSERT_NE(manifest.find(from_api), std::string::npos);
  ASSERT_NE(manifest.find(from_kind), std::string::npos);
  manifest.replace(manifest.find(from_api), from_api.size(), "apiVersion: dlsched.io/v1alpha1");
  manifest.replace(manifest.find(from_kind), from_kind.size(), "kind: TrainingJob");
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 0)).has_value());
  ASSERT_TRUE(server_.ApplyManifest(manifest).has_value());
  StartOperator("gang-binpack");
  const std::string job = "dist-mnist-for-e2e-test";
  ASSERT_TRUE(RunUntil([&] { return Phase(job) == "Completed" && PodsOf(job).size() == 4; }))
      << Phase(job);
  const std::vector<json> pods = PodsOf(job);
  EXPECT_EQ(pods.size(), 4u);  // 4 workers Succeeded; the 2 PS deleted at completion
  EXPECT_EQ(server_.RequestCounts()["POST pods/binding"], 6);
  for (const json& pod : pods) {
    EXPECT_EQ(pod["spec"]["nodeName"], "node-a");
    EXPECT_EQ(pod["spec"]["containers"][0]["image"], "kubeflow/tf-dist-mnist-test:1.0");
  }
}

// Kubeflow's simple PyTorchJob example (data/kubeflow/, Apache-2.0): its
// Master runs as the job's chief (pod pytorch-simple-chief-0), and every
// pod gets the environment Kubeflow's controller gives it: MASTER_ADDR,
// MASTER_PORT 23456 (no pytorchjob-port given), WORLD_SIZE 2, RANK 0 for
// the master and 1 for the worker; no TF_CONFIG.
TEST_F(OperatorTest, PortedKubeflowPyTorchJobRunsWithItsEnvironment) {
  std::string manifest =
      ReadFile(std::string(DLSCHED_SOURCE_DIR) + "/data/kubeflow/pytorch_simple.yaml");
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"apiVersion: \"kubeflow.org/v1\"",
                                            "apiVersion: dlsched.io/v1alpha1"},
        {"kind: PyTorchJob", "kind: TrainingJob"},
        {"namespace: kubeflow", "namespace: default"}}) {
    ASSERT_NE(manifest.find(from), std::string::npos) << from;
    manifest.replace(manifest.find(from), from.size(), to);
  }
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 0)).has_value());
  ASSERT_TRUE(server_.ApplyManifest(manifest).has_value());
  StartOperator("gang-binpack");
  const std::string job = "pytorch-simple";
  ASSERT_TRUE(RunUntil([&] { return Phase(job) == "Completed"; })) << Phase(job);
  EXPECT_EQ(server_.RequestCounts()["POST pods/binding"], 2);
  std::map<std::string, std::map<std::string, std::string>> env_of;
  for (const json& pod : PodsOf(job)) {
    EXPECT_EQ(pod["spec"]["containers"][0]["image"],
              "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727");
    for (const json& e : pod["spec"]["containers"][0]["env"]) {
      env_of[pod["metadata"]["name"]][e["name"]] = e.value("value", "");
    }
  }
  const std::map<std::string, std::string> common = {
      {"PYTHONUNBUFFERED", "0"},
      {"MASTER_ADDR", "pytorch-simple-chief-0.pytorch-simple.default.svc"},
      {"MASTER_PORT", "23456"},
      {"WORLD_SIZE", "2"}};
  auto with_rank = [&](const char* rank) {
    auto env = common;
    env["RANK"] = rank;
    return env;
  };
  EXPECT_EQ(env_of["pytorch-simple-chief-0"], with_rank("0"));
  EXPECT_EQ(env_of["pytorch-simple-worker-0"], with_rank("1"));
}

// An elastic PyTorch job (no Master; elasticPolicy min 1, max 3) under
// kod2 on a node of 4 GPUs: it starts with its 1 worker and, in the same
// cycle, scales out into the idle room to its max, 3 workers; every worker
// pod carries torchrun's rendezvous on worker 0 and PET_NNODES 1:3, as a
// TF job's pods carry TF_CONFIG.
TEST_F(OperatorTest, ElasticPyTorchJobIsScaledOutByKod2) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  json job = Job("echo", 0, 1, 1e6);
  job["spec"]["pytorchReplicaSpecs"] = job["spec"]["replicaSpecs"];
  job["spec"].erase("replicaSpecs");
  job["spec"]["elasticPolicy"] = {{"rdzvBackend", "c10d"}, {"minReplicas", 1}, {"maxReplicas", 3}};
  ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", job).has_value());
  StartOperator("kod2");
  ASSERT_TRUE(RunUntil([&] { return PodsOf("echo").size() == 3; })) << Phase("echo");
  for (const json& pod : PodsOf("echo")) {
    std::map<std::string, std::string> env;
    for (const json& e : pod["spec"]["containers"][0]["env"]) env[e["name"]] = e.value("value", "");
    EXPECT_EQ(env["PET_RDZV_ENDPOINT"], "echo-worker-0.echo.default.svc:23456");
    EXPECT_EQ(env["PET_NNODES"], "1:3");
    EXPECT_EQ(env.count("TF_CONFIG"), 0u);
    EXPECT_EQ(env.count("RANK"), 0u) << "no Master: torchrun assigns ranks";
  }
}

TEST_F(OperatorTest, NodeSelectorAndTolerationsLandOnlyWhereAllowed) {
  // node-a is the emptiest but lacks the label; node-b is tainted; node-c
  // carries the label and the taint the job tolerates.
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 8)).has_value());
  ASSERT_TRUE(
      server_
          .Create("nodes", "",
                  Node("node-b", 8, {{"gpu-model", "v100"}},
                       json::array(
                           {{{"key", "dedicated"}, {"value", "other"}, {"effect", "NoSchedule"}}})))
          .has_value());
  ASSERT_TRUE(
      server_
          .Create(
              "nodes", "",
              Node("node-c", 4, {{"gpu-model", "v100"}},
                   json::array(
                       {{{"key", "dedicated"}, {"value", "training"}, {"effect", "NoSchedule"}}})))
          .has_value());
  const json placement = {{"nodeSelector", {{"gpu-model", "v100"}}},
                          {"tolerations", json::array({{{"key", "dedicated"},
                                                        {"operator", "Equal"},
                                                        {"value", "training"},
                                                        {"effect", "NoSchedule"}}})}};
  ASSERT_TRUE(
      server_.Create("trainingjobs.dlsched.io", "default", Job("picky", 0, 2, 100, placement))
          .has_value());
  StartOperator("k8s-default");
  ASSERT_TRUE(RunUntil([&] { return Phase("picky") == "Completed"; })) << Phase("picky");
  for (const json& pod : PodsOf("picky")) EXPECT_EQ(pod["spec"]["nodeName"], "node-c");
}

}  // namespace
}  // namespace dlsched::k8s

namespace dlsched::k8s {
namespace {

using testing::ApiFaults;

// Faults on every side: 10% of requests answered 500, 2% stalled then 504,
// every watch cut after a second, the first resume of each resource 410
// Gone, the first write of every object 409 Conflict. The operator (and the
// kubelet, which suffers the same) still brings every job to Completed,
// leaving exactly the workers' Succeeded pods: none lost, none left over.
TEST_F(OperatorTest, ConvergesUnderApiFaults) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-b", 4)).has_value());
  const std::vector<std::string> names = {"j1", "j2", "j3", "j4"};
  for (size_t i = 0; i < names.size(); ++i) {
    ASSERT_TRUE(server_
                    .Create("trainingjobs.dlsched.io", "default",
                            Job(names[i], i % 2 == 0 ? 1 : 0, 2 + static_cast<int>(i % 3), 300))
                    .has_value());
  }
  ApiFaults faults;
  faults.error_rate = 0.1;
  faults.timeout_rate = 0.02;
  faults.timeout_delay_seconds = 0.3;
  faults.watch_cut_seconds = 1;
  faults.gone_on_resume = true;
  faults.conflict_on_first_write = true;
  faults.seed = 7;
  server_.SetFaults(faults);
  StartOperator("gang-binpack");
  // Converged: every job Completed, and of its pods only its workers' are
  // left, Succeeded (the parameter servers' deleted, none lost, none extra).
  auto converged = [&] {
    for (size_t i = 0; i < names.size(); ++i) {
      if (Phase(names[i]) != "Completed") return false;
      std::set<std::string> left, want;
      for (const json& pod : PodsOf(names[i])) {
        if (pod["status"]["phase"] != "Succeeded") return false;
        left.insert(pod["metadata"]["name"]);
      }
      for (int w = 0; w < 2 + static_cast<int>(i % 3); ++w) {
        want.insert(fmt::format("{}-worker-{}", names[i], w));
      }
      if (left != want) return false;
    }
    return true;
  };
  ASSERT_TRUE(RunUntil(converged)) << Phase("j1") << Phase("j2") << Phase("j3") << Phase("j4");
  // The faults happened.
  const OperatorStats stats = op_->Stats();
  EXPECT_GT(stats.api_errors.count(500), 0u);
  EXPECT_GT(stats.conflicts_retried, 0);
  EXPECT_GE(op_->PodInformer().Stats().expired, 1);
  EXPECT_GE(op_->PodInformer().Stats().watches, 2);
}

}  // namespace
}  // namespace dlsched::k8s

namespace dlsched::k8s {
namespace {

// The end state of a run: each job's phase, conditions (type=status) and
// which of startTime, completionTime and observedGeneration it has, and its
// pods with their phase, by task (a pod's name may carry a suffix,
// NameNewPod; two pods of one task show as a duplicate).
struct EndState {
  std::map<std::string, std::string> jobs;
  std::map<std::string, std::string> pods;
  int64_t calls = 0;  // API requests of the first operator
  friend bool operator==(const EndState& a, const EndState& b) {
    return a.jobs == b.jobs && a.pods == b.pods;
  }
  friend void PrintTo(const EndState& s, std::ostream* os) {
    *os << "jobs:";
    for (const auto& [name, phase] : s.jobs) *os << " " << name << "=" << phase;
    *os << "; pods:";
    for (const auto& [name, phase] : s.pods) *os << " " << name << "=" << phase;
  }
};

// Three jobs on two 4-GPU nodes under gang-binpack (two wait for room). A
// first operator is "killed" after `crash_after` API requests (0: never):
// nothing it would send later reaches the server. A second one starts on
// what it left and runs until every job is Completed with only its
// workers' pods left (or 60 s pass).
EndState RunWithCrash(int64_t crash_after) {
  TestApiServer server;
  EXPECT_TRUE(server.Start().has_value());
  EXPECT_TRUE(server.ApplyManifest(ReadFile(std::string(DLSCHED_SOURCE_DIR) + "/deploy/crd.yaml"))
                  .has_value());
  EXPECT_TRUE(server.Create("nodes", "", Node("node-a", 4)).has_value());
  EXPECT_TRUE(server.Create("nodes", "", Node("node-b", 4)).has_value());
  const std::vector<std::pair<std::string, int>> jobs = {{"j1", 4}, {"j2", 3}, {"j3", 2}};
  for (const auto& [name, workers] : jobs) {
    EXPECT_TRUE(server.Create("trainingjobs.dlsched.io", "default", Job(name, 1, workers, 200))
                    .has_value());
  }
  RestConfig config;
  config.server = server.Url();
  config.timeout_seconds = 5;
  const auto t0 = std::chrono::steady_clock::now();
  auto clock = [t0] {
    return 100 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  TestKubelet kubelet(config, clock);
  kubelet.Start();
  auto engine = NewEngine("gang-binpack");
  auto converged = [&] {
    for (const auto& [name, workers] : jobs) {
      auto tj = server.Get("trainingjobs.dlsched.io", "default", name);
      if (!tj || !tj->contains("status") || (*tj)["status"].value("phase", "") != "Completed") {
        return false;
      }
      int left = 0;
      for (const json& pod : server.List("pods", "default")) {
        if (pod["metadata"]["labels"].value(std::string(kJobLabel), "") != name) continue;
        if (pod["status"]["phase"] != "Succeeded") return false;
        ++left;
      }
      if (left != workers) return false;
    }
    return true;
  };
  EndState end;
  auto run = [&](int64_t crash) {
    OperatorOptions o;
    o.clock = clock;
    o.resync_seconds = 0.05;
    o.crash_after_calls = crash;
    o.log = [](const std::string&) {};
    Operator op(config, *engine, o);
    EXPECT_TRUE(op.Start(10).has_value());
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < give_up && !converged()) {
      op.Step(0.01);
      if (crash > 0 && op.Stats().api_calls >= crash) break;
    }
    if (crash > 0 || end.calls == 0) end.calls = op.Stats().api_calls;
    op.Stop();
  };
  if (crash_after > 0) run(crash_after);
  run(0);
  EXPECT_TRUE(converged()) << "crash after " << crash_after;
  for (const auto& [name, workers] : jobs) {
    auto tj = server.Get("trainingjobs.dlsched.io", "default", name);
    if (!tj) {
      end.jobs[name] = "<gone>";
      continue;
    }
    const json& status = (*tj)["status"];
    std::string& out = end.jobs[name];
    out = status.value("phase", "");
    for (const json& c : status.value("conditions", json::array())) {
      out += fmt::format(" {}={}", c.value("type", ""), c.value("status", ""));
    }
    for (const char* key : {"startTime", "completionTime", "observedGeneration"}) {
      if (status.contains(key)) out += fmt::format(" {}", key);
    }
  }
  for (const json& pod : server.List("pods", "default")) {
    auto task = PodTaskOf(pod);
    const std::string key = task ? PodName(task->job, task->role, task->index) : "?";
    std::string& phase = end.pods[key];
    phase = phase.empty() ? pod["status"].value("phase", "") : "duplicate";
  }
  kubelet.Stop();
  return end;
}

// The operator killed at 20 seeded random points and at the last four (any API request of a
// run: between creating a pod and binding it, between binding and writing
// the status, in the middle of a completion) and restarted converges to
// the state of a run without a crash: every job Completed, the same pods
// left, no duplicate.
TEST(OperatorCrashTest, KilledAtRandomPointsAndRestartedConvergesToTheSameState) {
  const EndState reference = RunWithCrash(0);
  ASSERT_EQ(reference.jobs.size(), 3u);
  for (const auto& [name, phase] : reference.jobs) {
    EXPECT_EQ(phase,
              "Completed Created=True Running=False Succeeded=True startTime completionTime "
              "observedGeneration")
        << name;
  }
  ASSERT_EQ(reference.pods.size(), 9u);  // the workers of the three jobs
  ASSERT_GT(reference.calls, 20);
  // 20 seeded points, and the last requests of a run (a completion's
  // deletes and status writes).
  std::mt19937_64 rng(20261124);
  std::vector<int64_t> points;
  for (int run = 0; run < 20; ++run)
    points.push_back(1 + static_cast<int64_t>(rng() % reference.calls));
  for (int64_t back = 1; back <= 4; ++back) points.push_back(reference.calls - back);
  for (const int64_t crash_after : points) {
    const EndState got = RunWithCrash(crash_after);
    EXPECT_EQ(got, reference) << "crash after request " << crash_after << " of " << reference.calls;
  }
}

}  // namespace
}  // namespace dlsched::k8s

namespace dlsched::k8s {
namespace {

// A job the decoder refuses (required pod anti-affinity) and one that can
// never fit (8 GPUs in one pod, nodes of 4) each get told why, in their
// status and a Warning Event, and the job beside them runs to completion.
TEST_F(OperatorTest, InvalidAndNeverFittingJobsAreToldWhyAndDisturbNoOne) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  json invalid = Job("invalid", 0, 1, 100,
                     {{"affinity",
                       {{"podAntiAffinity",
                         {{"requiredDuringSchedulingIgnoredDuringExecution",
                           json::array({{{"topologyKey", "kubernetes.io/hostname"}}})}}}}}});
  json huge = Job("huge", 0, 1, 100);
  huge["spec"]["replicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"]["limits"]
      ["nvidia.com/gpu"] = "8";
  ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", invalid).has_value());
  ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", huge).has_value());
  ASSERT_TRUE(
      server_.Create("trainingjobs.dlsched.io", "default", Job("fine", 0, 2, 100)).has_value());
  StartOperator("gang-binpack");
  ASSERT_TRUE(RunUntil([&] {
    return Phase("fine") == "Completed" && HasEvent("huge", "Unschedulable");
  })) << Phase("fine");
  auto tj = server_.Get("trainingjobs.dlsched.io", "default", "invalid");
  EXPECT_EQ((*tj)["status"]["phase"], "Invalid");
  EXPECT_NE((*tj)["status"]["reason"].get<std::string>().find(
                "spec.replicaSpecs.Worker.template.spec.affinity.podAntiAffinity"),
            std::string::npos)
      << (*tj)["status"].dump();
  EXPECT_EQ((*tj)["status"]["conditions"][0]["type"], "Invalid");
  auto reasons = EventReasons("invalid");
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "InvalidSpec"), reasons.end());
  tj = server_.Get("trainingjobs.dlsched.io", "default", "huge");
  EXPECT_EQ((*tj)["status"]["phase"], "Waiting");
  EXPECT_NE((*tj)["status"]["reason"].get<std::string>().find("nvidia.com/gpu"), std::string::npos)
      << (*tj)["status"].dump();
  EXPECT_TRUE(PodsOf("invalid").empty());
  EXPECT_TRUE(PodsOf("huge").empty());
}

// A real GPU node advertises far more resource names than cpu, memory and
// nvidia.com/gpu. Here node-a (8 GPUs) lists a dozen and node-b (4 GPUs)
// the same plus 2 RDMA devices; a job whose workers each ask for one RDMA
// device runs both workers on node-b, though node-a is emptier, and a job
// asking for 3 waits, told which resource is short. Eight filler names
// interned first put the RDMA name past the inline ids whatever ran before.
TEST_F(OperatorTest, NodesListingManyResourceNamesServeJobsAskingForAnyOfThem) {
  for (int i = 0; i < core::kInlineResources; ++i) {
    ASSERT_TRUE(core::InternResource("example.com/filler-" + std::to_string(i)).has_value());
  }
  const json many = {{"ephemeral-storage", "100Gi"},  {"hugepages-1Gi", "0"},
                     {"hugepages-2Mi", "64Mi"},       {"example.com/fpga", "1"},
                     {"nvidia.com/mig-1g.10gb", "7"}, {"nvidia.com/mig-2g.20gb", "3"},
                     {"nvidia.com/mig-3g.40gb", "2"}, {"nvidia.com/mig-7g.80gb", "1"},
                     {"smarter-devices/fuse", "20"},  {"xilinx.com/fpga-xilinx_u250", "1"}};
  json a = Node("node-a", 8);
  json b = Node("node-b", 4);
  a["status"]["allocatable"].update(many);
  b["status"]["allocatable"].update(many);
  b["status"]["allocatable"]["rdma/hca_shared_devices_a"] = "2";
  ASSERT_TRUE(server_.Create("nodes", "", a).has_value());
  ASSERT_TRUE(server_.Create("nodes", "", b).has_value());
  auto rdma_job = [](const std::string& name, const std::string& per_worker) {
    json job = Job(name, 0, 2, 100);
    job["spec"]["replicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"]
       ["limits"]["rdma/hca_shared_devices_a"] = per_worker;
    return job;
  };
  ASSERT_TRUE(
      server_.Create("trainingjobs.dlsched.io", "default", rdma_job("rdma", "1")).has_value());
  ASSERT_TRUE(
      server_.Create("trainingjobs.dlsched.io", "default", rdma_job("greedy", "3")).has_value());
  StartOperator("gang-binpack");
  ASSERT_TRUE(RunUntil([&] {
    return Phase("rdma") == "Completed" && HasEvent("greedy", "Unschedulable");
  })) << Phase("rdma");
  EXPECT_GE(core::FindResource("rdma/hca_shared_devices_a"), core::kInlineResources);
  ASSERT_EQ(PodsOf("rdma").size(), 2u);
  for (const json& pod : PodsOf("rdma")) EXPECT_EQ(pod["spec"]["nodeName"], "node-b");
  auto tj = server_.Get("trainingjobs.dlsched.io", "default", "greedy");
  EXPECT_EQ((*tj)["status"]["phase"], "Waiting");
  EXPECT_NE((*tj)["status"]["reason"].get<std::string>().find("rdma/hca_shared_devices_a"),
            std::string::npos)
      << (*tj)["status"].dump();
  EXPECT_TRUE(PodsOf("greedy").empty());
}

// A Node beyond the limits every cluster keeps is left out, as one that
// does not decode, and the others run: 2^31 GPUs on one node used to reach
// the free-GPU index (its narrowing cast crashed at 2^31).
TEST_F(OperatorTest, NodesBeyondTheLimitsAreIgnored) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-huge", 1 << 30)).has_value());
  json huge = Node("node-huge-2", 4);
  huge["status"]["allocatable"]["nvidia.com/gpu"] = "2147483648";
  ASSERT_TRUE(server_.Create("nodes", "", huge).has_value());
  ASSERT_TRUE(
      server_.Create("trainingjobs.dlsched.io", "default", Job("fine", 0, 2, 100)).has_value());
  StartOperator("gang-binpack");
  ASSERT_TRUE(RunUntil([&] { return Phase("fine") == "Completed"; })) << Phase("fine");
  EXPECT_EQ(op_->State().FindNode("node-huge"), engine::kNoNode);
  EXPECT_EQ(op_->State().FindNode("node-huge-2"), engine::kNoNode);
  for (const auto& [pod, node] : chosen_) EXPECT_EQ(node, "node-a") << pod;
  int ignored = 0;
  for (const std::string& line : logs_) {
    if (line.find("\"node ignored\"") == std::string::npos) continue;
    ++ignored;
    EXPECT_NE(line.find("status.allocatable.nvidia.com/gpu: "), std::string::npos) << line;
    EXPECT_NE(line.find("GPUs on one node is more than the limit of 1024"), std::string::npos)
        << line;
  }
  EXPECT_GE(ignored, 2);
}

}  // namespace
}  // namespace dlsched::k8s

namespace dlsched::k8s {
namespace {

// --bind-with-node-name: pods are created on their node, no Binding.
TEST_F(OperatorTest, BindWithNodeNameCreatesPodsOnTheirNode) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  ASSERT_TRUE(
      server_.Create("trainingjobs.dlsched.io", "default", Job("direct", 1, 2, 100)).has_value());
  StartOperator("gang-binpack", /*bind_with_node_name=*/true);
  ASSERT_TRUE(RunUntil([&] { return Phase("direct") == "Completed"; })) << Phase("direct");
  EXPECT_EQ(server_.RequestCounts()["POST pods"], 3);
  EXPECT_EQ(server_.RequestCounts().count("POST pods/binding"), 0u);
  for (const json& pod : PodsOf("direct")) EXPECT_EQ(pod["spec"]["nodeName"], "node-a");
}

}  // namespace
}  // namespace dlsched::k8s

namespace dlsched::k8s {
namespace {

// One 500 on the create of a job's only pod: the bind fails and the job
// goes back to wait (Standby once it had started); a later cycle (a
// resync's at the latest) places it again with nothing else happening.
TEST_F(OperatorTest, ATransient500OnAPodCreateIsTriedAgainWithoutOtherNews) {
  StartWithOneJobWhosePodCreateGets(500, "once");
  ASSERT_TRUE(RunUntil([&] { return Phase("once") == "Completed"; })) << Phase("once");
  EXPECT_EQ(op_->Stats().api_errors.at(500), 1);
  EXPECT_EQ(server_.RequestCounts()["POST pods"], 2);
}

// Names valid for a TrainingJob but not for what the operator makes of
// them (the Service: a DNS-1035 label; pod hostnames: DNS-1123 labels of
// at most 63 characters) are refused up front with the field, once: no
// pod, no Service, no Scheduled event, no retry loop; the job beside them
// runs.
TEST_F(OperatorTest, NamesAServiceOrAHostnameCannotTakeAreRefusedUpFrontNotLooped) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  const std::string long_name(55, 'b');
  const std::vector<std::string> bad = {"bert.v2", "2bert", long_name};
  for (const std::string& name : bad) {
    ASSERT_TRUE(
        server_.Create("trainingjobs.dlsched.io", "default", Job(name, 0, 1, 100)).has_value());
  }
  ASSERT_TRUE(
      server_.Create("trainingjobs.dlsched.io", "default", Job("fine", 0, 1, 100)).has_value());
  StartOperator("gang-binpack");
  ASSERT_TRUE(RunUntil([&] {
    return Phase("fine") == "Completed" && Phase("bert.v2") == "Invalid" &&
           Phase("2bert") == "Invalid" && Phase(long_name) == "Invalid";
  })) << Phase("fine")
      << " " << Phase("bert.v2") << " " << Phase("2bert");
  // A few resyncs more: nothing is tried again.
  const auto counts = server_.RequestCounts();
  for (int i = 0; i < 20; ++i) op_->Step(0.01);
  EXPECT_EQ(server_.RequestCounts()["POST services"], counts.at("POST services"));
  EXPECT_EQ(server_.RequestCounts()["POST services"], 1);  // fine's
  EXPECT_EQ(server_.RequestCounts()["POST pods"], 1);      // fine's
  for (const std::string& name : bad) {
    auto tj = server_.Get("trainingjobs.dlsched.io", "default", name);
    const json condition = (*tj)["status"]["conditions"][0];
    EXPECT_EQ(condition["type"], "Invalid") << name;
    EXPECT_NE(condition["message"].get<std::string>().find("metadata.name"), std::string::npos)
        << condition.dump();
    const auto reasons = EventReasons(name);
    EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "InvalidSpec"), 1) << name;
    EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "Scheduled"), 0) << name;
    EXPECT_TRUE(PodsOf(name).empty()) << name;
  }
}

// A permanent refusal of a create (403 here) is not retried: the job
// fails with reason SpecRejected naming what was refused, and one
// Warning Event; a change of its spec tries it again, and it runs.
TEST_F(OperatorTest, APermanentRefusalFailsTheJobOnceAndASpecChangeTriesAgain) {
  StartWithOneJobWhosePodCreateGets(403, "denied");
  ASSERT_TRUE(RunUntil([&] { return Phase("denied") == "Failed"; })) << Phase("denied");
  for (int i = 0; i < 20; ++i) op_->Step(0.01);
  EXPECT_EQ(server_.RequestCounts()["POST pods"], 1);
  auto tj = server_.Get("trainingjobs.dlsched.io", "default", "denied");
  EXPECT_EQ(Condition("denied", "Failed")["status"], "True");
  EXPECT_EQ(Condition("denied", "Failed")["reason"], "SpecRejected");
  EXPECT_EQ(Condition("denied", "Running")["status"], "False");
  EXPECT_NE((*tj)["status"]["reason"].get<std::string>().find("denied-worker-0"), std::string::npos)
      << (*tj)["status"].dump();
  auto reasons = EventReasons("denied");
  EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "SpecRejected"), 1);
  // The spec changes (a new generation): tried again as a new job.
  (*tj)["spec"]["totalSteps"] = 50;
  ASSERT_TRUE(server_.Update("trainingjobs.dlsched.io", "default", *tj).has_value());
  ASSERT_TRUE(RunUntil([&] { return Phase("denied") == "Completed"; })) << Phase("denied");
  EXPECT_EQ(Condition("denied", "Failed")["status"], "False");
  EXPECT_EQ(Condition("denied", "Succeeded")["status"], "True");
}

}  // namespace
}  // namespace dlsched::k8s

namespace dlsched::k8s {
namespace {

// `job` with spec.runPolicy `policy`.
json WithRunPolicy(json job, json policy) {
  job["spec"]["runPolicy"] = std::move(policy);
  return job;
}

// Live (not finished) pods of job `name` on the server.
int LivePods(const std::vector<json>& pods) {
  int n = 0;
  for (const json& pod : pods) {
    const std::string phase = pod.value("status", json::object()).value("phase", "");
    n += phase != "Succeeded" && phase != "Failed";
  }
  return n;
}

// Conditions as the API conventions and Kubeflow have them: one per type,
// "True"/"False", Running False once Succeeded; observedGeneration,
// startTime and completionTime; and the real `kubectl wait
// --for=condition=Succeeded` returns once the job completes.
TEST_F(OperatorTest, ConditionsFollowApiConventionsAndKubectlWaitSeesSucceeded) {
  const std::filesystem::path home =
      std::filesystem::temp_directory_path() / fmt::format("dlsched-op-{}", ::getpid());
  std::filesystem::create_directories(home);
  const std::string kubeconfig = (home / "kubeconfig").string();
  server_.WriteKubeconfig(kubeconfig);
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  ASSERT_TRUE(
      server_.Create("trainingjobs.dlsched.io", "default", Job("mnist", 1, 2, 200)).has_value());
  StartOperator("gang-binpack");
  std::atomic<bool> waited = false;
  std::pair<int, std::string> wait;
  std::thread waiter([&] {
    wait = TestApiServer::Kubectl(kubeconfig, home.string(),
                                  "wait --for=condition=Succeeded tj/mnist --timeout=50s");
    waited = true;
  });
  const bool done = RunUntil([&] { return waited.load(); });
  waiter.join();
  ASSERT_TRUE(done);
  EXPECT_EQ(wait.first, 0) << wait.second;
  EXPECT_NE(wait.second.find("trainingjob.dlsched.io/mnist condition met"), std::string::npos)
      << wait.second;
  EXPECT_EQ(Phase("mnist"), "Completed");
  const auto tj = server_.Get("trainingjobs.dlsched.io", "default", "mnist");
  const json& status = (*tj)["status"];
  std::map<std::string, std::string> conditions;
  for (const json& c : status["conditions"]) {
    EXPECT_TRUE(conditions.emplace(c["type"], c["status"]).second) << "twice: " << c["type"];
    EXPECT_TRUE(c.contains("lastTransitionTime")) << c.dump();
    EXPECT_FALSE(c.value("reason", "").empty()) << c.dump();
  }
  EXPECT_EQ(conditions, (std::map<std::string, std::string>{
                            {"Created", "True"}, {"Running", "False"}, {"Succeeded", "True"}}));
  EXPECT_EQ(Condition("mnist", "Running")["reason"], "Succeeded");
  EXPECT_EQ(status["observedGeneration"], 1);
  ASSERT_TRUE(status.contains("startTime") && status.contains("completionTime")) << status.dump();
  EXPECT_LE(status["startTime"].get<std::string>(), status["completionTime"].get<std::string>());
  // kubectl get tj shows the phase column.
  const auto [code, out] = TestApiServer::Kubectl(kubeconfig, home.string(), "get tj");
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("mnist   Completed"), std::string::npos) << out;
  std::filesystem::remove_all(home);
}

// A condition's lastTransitionTime moves only when its status does; its
// reason and message change in place (lastUpdateTime).
TEST(ConditionTest, LastTransitionTimeChangesOnlyWithTheStatus) {
  json conditions = json::array({{{"type", "Running"},
                                  {"status", "True"},
                                  {"reason", "Running"},
                                  {"message", "running"},
                                  {"lastUpdateTime", "2020-01-01T00:00:00Z"},
                                  {"lastTransitionTime", "2020-01-01T00:00:00Z"}}});
  SetCondition(conditions, "Running", true, "Running", "running");
  EXPECT_EQ(conditions[0]["lastUpdateTime"], "2020-01-01T00:00:00Z");  // nothing changed
  SetCondition(conditions, "Running", true, "Running", "running with 4 workers");
  EXPECT_EQ(conditions[0]["lastTransitionTime"], "2020-01-01T00:00:00Z");
  EXPECT_NE(conditions[0]["lastUpdateTime"], "2020-01-01T00:00:00Z");
  EXPECT_EQ(conditions[0]["message"], "running with 4 workers");
  SetCondition(conditions, "Running", false, "Succeeded", "done");
  EXPECT_NE(conditions[0]["lastTransitionTime"], "2020-01-01T00:00:00Z");
  EXPECT_EQ(conditions[0]["status"], "False");
  SetCondition(conditions, "Succeeded", true, "Succeeded", "done");
  ASSERT_EQ(conditions.size(), 2u);
  EXPECT_TRUE(ConditionTrue(conditions, "Succeeded"));
  EXPECT_FALSE(ConditionTrue(conditions, "Running"));
}

// activeDeadlineSeconds counts from the job's start time: a job that
// cannot finish in it fails with reason DeadlineExceeded, its running pods
// deleted (cleanPodPolicy Running, TFJob's default).
TEST_F(OperatorTest, ActiveDeadlineFailsTheJobWithDeadlineExceeded) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  ASSERT_TRUE(server_
                  .Create("trainingjobs.dlsched.io", "default",
                          WithRunPolicy(Job("slow", 1, 2, 1e9), {{"activeDeadlineSeconds", 30}}))
                  .has_value());
  StartOperator("gang-binpack");
  ASSERT_TRUE(RunUntil([&] { return Phase("slow") == "Failed" && PodsOf("slow").empty(); }))
      << Phase("slow");
  EXPECT_GE(Clock(), 30);
  EXPECT_EQ(Condition("slow", "Failed")["status"], "True");
  EXPECT_EQ(Condition("slow", "Failed")["reason"], "DeadlineExceeded");
  EXPECT_EQ(Condition("slow", "Running")["status"], "False");
  auto tj = server_.Get("trainingjobs.dlsched.io", "default", "slow");
  EXPECT_NE((*tj)["status"]["reason"].get<std::string>().find("activeDeadlineSeconds (30 s)"),
            std::string::npos)
      << (*tj)["status"].dump();
  EXPECT_TRUE((*tj)["status"].contains("completionTime"));
}

// ttlSecondsAfterFinished: the finished TrainingJob is deleted that long
// after it finished, not before it finished.
TEST_F(OperatorTest, TtlAfterFinishedDeletesTheFinishedJob) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  ASSERT_TRUE(
      server_
          .Create("trainingjobs.dlsched.io", "default",
                  WithRunPolicy(Job("short", 0, 2, 200), {{"ttlSecondsAfterFinished", 200}}))
          .has_value());
  StartOperator("gang-binpack");
  ASSERT_TRUE(RunUntil([&] { return Phase("short") == "Completed"; })) << Phase("short");
  // Half the TTL after it was seen finished, it is still there ...
  const double half = Clock() + 100;
  ASSERT_TRUE(RunUntil([&] { return Clock() > half; }));
  EXPECT_TRUE(server_.Get("trainingjobs.dlsched.io", "default", "short").has_value());
  // ... and then it goes.
  ASSERT_TRUE(RunUntil(
      [&] { return !server_.Get("trainingjobs.dlsched.io", "default", "short").has_value(); }));
  EXPECT_EQ(server_.RequestCounts()["DELETE trainingjobs.dlsched.io"], 1);
}

// cleanPodPolicy at the finish: All deletes every pod of the job (the
// succeeded workers too), None leaves the parameter server running (it
// then counts on its node as another owner's pod), Running (TFJob's
// default, TrainingJobBecomesBoundPodsThenCompleted) deletes only it.
TEST_F(OperatorTest, CleanPodPolicyDecidesWhichPodsAFinishedJobKeeps) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-b", 4)).has_value());
  ASSERT_TRUE(server_
                  .Create("trainingjobs.dlsched.io", "default",
                          WithRunPolicy(Job("all", 1, 2, 200), {{"cleanPodPolicy", "All"}}))
                  .has_value());
  ASSERT_TRUE(server_
                  .Create("trainingjobs.dlsched.io", "default",
                          WithRunPolicy(Job("none", 1, 2, 200), {{"cleanPodPolicy", "None"}}))
                  .has_value());
  StartOperator("gang-binpack");
  ASSERT_TRUE(RunUntil([&] {
    return Phase("all") == "Completed" && Phase("none") == "Completed" && PodsOf("all").empty();
  })) << Phase("all")
      << " " << Phase("none");
  for (int i = 0; i < 20; ++i) op_->Step(0.01);
  const std::vector<json> kept = PodsOf("none");
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(LivePods(kept), 1);  // the parameter server, running on
  EXPECT_TRUE(PodsOf("all").empty());
  // Its request (1 cpu) still counts on its node, as another owner's pod.
  const engine::NodeIndex n =
      op_->State().FindNode(NodeNameOf(server_.Get("pods", "default", "none-ps-0").value()));
  ASSERT_NE(n, engine::kNoNode);
  EXPECT_EQ(op_->State().Requested(n)[core::kCpu], 1000);
}

// suspend: a running job checkpoints, its pods go, and no cycle places it
// while suspended; suspend false puts it back in the queue with the
// progress it had, and it runs again.
TEST_F(OperatorTest, SuspendCheckpointsReleasesThePodsAndResumesFromTheCheckpoint) {
  StartCheckpointingJob("long", 1, 2);
  auto tj = server_.Get("trainingjobs.dlsched.io", "default", "long");
  (*tj)["spec"]["runPolicy"] = {{"suspend", true}};
  ASSERT_TRUE(server_.Update("trainingjobs.dlsched.io", "default", *tj).has_value());
  ASSERT_TRUE(RunUntil([&] { return Phase("long") == "Suspended" && PodsOf("long").empty(); }))
      << Phase("long");
  EXPECT_EQ(Condition("long", "Suspended")["status"], "True");
  EXPECT_EQ(Condition("long", "Running")["status"], "False");
  EXPECT_EQ(Condition("long", "Running")["reason"], "Suspended");
  tj = server_.Get("trainingjobs.dlsched.io", "default", "long");
  const double steps = (*tj)["status"]["progress"]["steps"].get<double>();
  EXPECT_GT(steps, 0);
  EXPECT_FALSE((*tj)["status"].contains("startTime"));
  auto reasons = EventReasons("long");
  EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "Suspending"), 1);
  EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "Suspended"), 1);
  // Suspended: nothing of it is placed, however many cycles run.
  const int64_t posts = server_.RequestCounts()["POST pods"];
  const double until = Clock() + 100;
  ASSERT_TRUE(RunUntil([&] { return Clock() > until; }));
  EXPECT_EQ(server_.RequestCounts()["POST pods"], posts);
  EXPECT_EQ(Phase("long"), "Suspended");
  // Resumed: from its checkpoint's steps, not from 0.
  tj = server_.Get("trainingjobs.dlsched.io", "default", "long");
  (*tj)["spec"]["runPolicy"]["suspend"] = false;
  ASSERT_TRUE(server_.Update("trainingjobs.dlsched.io", "default", *tj).has_value());
  ASSERT_TRUE(RunUntil([&] { return Phase("long") == "Running"; })) << Phase("long");
  tj = server_.Get("trainingjobs.dlsched.io", "default", "long");
  EXPECT_GE((*tj)["status"]["progress"]["steps"].get<double>(), steps);
  EXPECT_EQ(Condition("long", "Suspended")["status"], "False");
  EXPECT_EQ(Condition("long", "Suspended")["reason"], "Resumed");
  EXPECT_EQ(Condition("long", "Running")["status"], "True");
  EXPECT_TRUE((*tj)["status"].contains("startTime"));
  EXPECT_EQ(PodsOf("long").size(), 3u);
}

// A job created suspended never gets a pod, and never enters a cycle.
TEST_F(OperatorTest, AJobCreatedSuspendedIsNeverPlaced) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  ASSERT_TRUE(server_
                  .Create("trainingjobs.dlsched.io", "default",
                          WithRunPolicy(Job("held", 0, 1, 100), {{"suspend", true}}))
                  .has_value());
  StartOperator("kod2");
  ASSERT_TRUE(RunUntil([&] { return Phase("held") == "Suspended" && Clock() > 100; }));
  EXPECT_EQ(server_.RequestCounts()["POST pods"], 0);
  EXPECT_TRUE(starts_.empty());
  EXPECT_EQ(Condition("held", "Suspended")["status"], "True");
}

// An edit of what a known job cannot change is refused (a condition and a
// Warning Event naming the field), not applied and not ignored silently:
// the job runs on as accepted; observedGeneration follows the edit.
TEST_F(OperatorTest, ASpecEditItCannotApplyIsRefusedWithAConditionAndAWarning) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  ASSERT_TRUE(
      server_.Create("trainingjobs.dlsched.io", "default", Job("fixed", 0, 1, 1e9)).has_value());
  StartOperator("gang-binpack");
  ASSERT_TRUE(RunUntil([&] { return Phase("fixed") == "Running"; }));
  auto tj = server_.Get("trainingjobs.dlsched.io", "default", "fixed");
  (*tj)["spec"]["scheduling"] = {{"queue", "other"}};
  (*tj)["spec"]["runPolicy"] = {{"activeDeadlineSeconds", 5}};
  ASSERT_TRUE(server_.Update("trainingjobs.dlsched.io", "default", *tj).has_value());
  ASSERT_TRUE(RunUntil([&] { return !Condition("fixed", "SpecChangeRefused").is_null(); }));
  const json c = Condition("fixed", "SpecChangeRefused");
  EXPECT_EQ(c["status"], "True");
  EXPECT_NE(c["message"].get<std::string>().find(
                "spec.runPolicy.activeDeadlineSeconds, spec.scheduling: changed after"),
            std::string::npos)
      << c.dump();
  auto reasons = EventReasons("fixed");
  EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "SpecChangeRefused"), 1);
  tj = server_.Get("trainingjobs.dlsched.io", "default", "fixed");
  EXPECT_EQ((*tj)["status"]["observedGeneration"], 2);
  // Not applied: neither the deadline nor the queue.
  const double until = Clock() + 50;
  ASSERT_TRUE(RunUntil([&] { return Clock() > until; }));
  EXPECT_EQ(Phase("fixed"), "Running");
  EXPECT_EQ(op_->Job(0).job.queue, "default");
}

// schedulingPolicy.priorityClass names a PriorityClass, read from the
// cluster: above the default pod priority (0) is high; one that does not
// exist makes the job Invalid, naming the field.
TEST_F(OperatorTest, SchedulingPolicyPriorityClassIsReadFromTheCluster) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  ASSERT_TRUE(server_
                  .Create("priorityclasses.scheduling.k8s.io", "",
                          {{"apiVersion", "scheduling.k8s.io/v1"},
                           {"kind", "PriorityClass"},
                           {"metadata", {{"name", "urgent"}}},
                           {"value", 100000}})
                  .has_value());
  ASSERT_TRUE(server_
                  .Create("trainingjobs.dlsched.io", "default",
                          WithRunPolicy(Job("vip", 0, 1, 100),
                                        {{"schedulingPolicy", {{"priorityClass", "urgent"}}}}))
                  .has_value());
  ASSERT_TRUE(server_
                  .Create("trainingjobs.dlsched.io", "default",
                          WithRunPolicy(Job("nobody", 0, 1, 100),
                                        {{"schedulingPolicy", {{"priorityClass", "missing"}}}}))
                  .has_value());
  StartOperator("gang-binpack");
  ASSERT_TRUE(RunUntil([&] { return Phase("vip") == "Completed" && Phase("nobody") == "Invalid"; }))
      << Phase("vip") << " " << Phase("nobody");
  EXPECT_EQ(op_->Job(0).name, "vip");
  EXPECT_EQ(op_->Job(0).job.priority, core::PriorityClass::kHigh);
  auto tj = server_.Get("trainingjobs.dlsched.io", "default", "nobody");
  EXPECT_EQ((*tj)["status"]["reason"],
            "TrainingJob default/nobody: spec.runPolicy.schedulingPolicy.priorityClass: "
            "PriorityClass 'missing' not found");
}

}  // namespace
}  // namespace dlsched::k8s

namespace dlsched::k8s {
namespace {

// The elastic range of a running job takes effect: maxReplicas lowered
// from 4 to 3 caps the scale-out KOD2 makes when room comes; a maxReplicas
// above the one the job was accepted with, or below the workers it runs
// with, is refused naming the field.
TEST_F(OperatorTest, AnElasticRangeEditTakesEffectOnARunningJob) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 2)).has_value());
  json job = Job("grow", 0, 1, 1e6);
  job["spec"]["pytorchReplicaSpecs"] = job["spec"]["replicaSpecs"];
  job["spec"].erase("replicaSpecs");
  job["spec"]["elasticPolicy"] = {{"minReplicas", 1}, {"maxReplicas", 4}};
  ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", job).has_value());
  StartOperator("kod2");
  ASSERT_TRUE(RunUntil([&] { return PodsOf("grow").size() == 2 && Phase("grow") == "Running"; }))
      << Phase("grow");
  auto edit = [&](int max) {
    auto tj = server_.Get("trainingjobs.dlsched.io", "default", "grow");
    (*tj)["spec"]["elasticPolicy"]["maxReplicas"] = max;
    ASSERT_TRUE(server_.Update("trainingjobs.dlsched.io", "default", *tj).has_value());
    const int64_t generation = (*tj)["metadata"]["generation"].get<int64_t>() + 1;
    ASSERT_TRUE(RunUntil([&] {
      auto now = server_.Get("trainingjobs.dlsched.io", "default", "grow");
      return (*now)["status"].value("observedGeneration", int64_t{0}) == generation;
    }));
  };
  edit(8);
  EXPECT_EQ(Condition("grow", "SpecChangeRefused")["status"], "True");
  EXPECT_EQ(Condition("grow", "SpecChangeRefused")["message"],
            "TrainingJob default/grow: spec.elasticPolicy.maxReplicas: 8 is above 4, the "
            "maxReplicas the job was accepted with: a running job's range can narrow or move "
            "within it (the change is not applied)");
  edit(1);
  EXPECT_NE(Condition("grow", "SpecChangeRefused")["message"].get<std::string>().find(
                "1 is below the 2 workers it runs with"),
            std::string::npos);
  edit(3);
  EXPECT_EQ(Condition("grow", "SpecChangeRefused")["status"], "False");
  EXPECT_EQ(op_->Job(0).job.role(core::Role::kWorker).max_replicas, 3);
  // Room for 6 more: it grows to 3 workers, not 4.
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-b", 4)).has_value());
  ASSERT_TRUE(RunUntil([&] { return op_->State().Job(0).placed_workers == 3; }));
  const double until = Clock() + 100;
  ASSERT_TRUE(RunUntil([&] { return Clock() > until; }));
  EXPECT_EQ(op_->State().Job(0).placed_workers, 3);
  auto reasons = EventReasons("grow");
  EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "RangeChanged"), 1);
}

// Restarting: a job that loses a pod (deleted by someone else) goes back
// to its checkpoint with Restarting True (through its relaunch, 10 s
// here), then Running again with Restarting False.
TEST_F(OperatorTest, ALostPodMakesTheJobRestartingUntilItRunsAgain) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  json job = Job("lossy", 0, 2, 1e9);
  job["spec"]["launchDelay"] = 10;
  ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", job).has_value());
  StartOperator("gang-binpack");
  ASSERT_TRUE(RunUntil([&] { return Phase("lossy") == "Running"; }));
  ASSERT_TRUE(server_.Delete("pods", "default", "lossy-worker-1").has_value());
  bool restarting = false;
  ASSERT_TRUE(RunUntil([&] {
    const json c = Condition("lossy", "Restarting");
    if (!c.is_null() && c["status"] == "True") {
      restarting = true;
      EXPECT_EQ(Condition("lossy", "Running")["status"], "False");
    }
    return restarting && Phase("lossy") == "Running";
  })) << Phase("lossy")
      << " " << server_.Get("trainingjobs.dlsched.io", "default", "lossy")->dump();
  EXPECT_EQ(Condition("lossy", "Restarting")["status"], "False");
  EXPECT_EQ(Condition("lossy", "Running")["status"], "True");
}

}  // namespace
}  // namespace dlsched::k8s

namespace dlsched::k8s {
namespace {

// A restarted operator goes on from status: a suspended job stays
// suspended with the same conditions (their times too) and progress, gets
// no pod, and resumes from that progress.
TEST_F(OperatorTest, ARestartedOperatorKeepsASuspendedJobsConditionsAndProgress) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  ASSERT_TRUE(
      server_.Create("trainingjobs.dlsched.io", "default", Job("nap", 0, 2, 1e9)).has_value());
  StartOperator("gang-binpack");
  ASSERT_TRUE(RunUntil([&] { return Phase("nap") == "Running" && Clock() > 20; }));
  auto tj = server_.Get("trainingjobs.dlsched.io", "default", "nap");
  (*tj)["spec"]["runPolicy"] = {{"suspend", true}};
  ASSERT_TRUE(server_.Update("trainingjobs.dlsched.io", "default", *tj).has_value());
  ASSERT_TRUE(RunUntil([&] { return Phase("nap") == "Suspended" && PodsOf("nap").empty(); }));
  for (int i = 0; i < 10; ++i) op_->Step(0.01);
  const json before = server_.Get("trainingjobs.dlsched.io", "default", "nap").value()["status"];
  op_->Stop();
  op_.reset();
  kubelet_->Stop();
  kubelet_.reset();
  StartOperator("gang-binpack");
  const double until = Clock() + 50;
  ASSERT_TRUE(RunUntil([&] { return Clock() > until; }));
  const json after = server_.Get("trainingjobs.dlsched.io", "default", "nap").value()["status"];
  EXPECT_EQ(after["conditions"], before["conditions"]);
  EXPECT_EQ(after["phase"], "Suspended");
  EXPECT_EQ(after["progress"]["steps"], before["progress"]["steps"]);
  EXPECT_TRUE(PodsOf("nap").empty());
  tj = server_.Get("trainingjobs.dlsched.io", "default", "nap");
  (*tj)["spec"]["runPolicy"]["suspend"] = false;
  ASSERT_TRUE(server_.Update("trainingjobs.dlsched.io", "default", *tj).has_value());
  ASSERT_TRUE(RunUntil([&] { return Phase("nap") == "Running"; })) << Phase("nap");
  tj = server_.Get("trainingjobs.dlsched.io", "default", "nap");
  EXPECT_GE((*tj)["status"]["progress"]["steps"].get<double>(),
            before["progress"]["steps"].get<double>());
  EXPECT_EQ(Condition("nap", "Suspended")["reason"], "Resumed");
}

}  // namespace
}  // namespace dlsched::k8s

namespace dlsched::k8s {
namespace {

// TFJob's Evaluator runs outside the gang: its pod is created when the job
// launches, left to the default scheduler (never bound by dlsched, so
// here, without kube-scheduler, it stays pending), the gang is placed and
// completes without it, and cleanPodPolicy Running deletes it at the end.
TEST_F(OperatorTest, AnEvaluatorRunsOutsideTheGang) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
  json job = Job("evaljob", 0, 2, 200);
  job["spec"]["replicaSpecs"]["Evaluator"] = {
      {"replicas", 1},
      {"template",
       {{"spec", {{"containers", json::array({{{"name", "tf"}, {"image", "e:1"}}})}}}}}};
  ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", job).has_value());
  StartOperator("gang-binpack");
  ASSERT_TRUE(
      RunUntil([&] { return server_.Get("pods", "default", "evaljob-evaluator-0").has_value(); }));
  const json evaluator = server_.Get("pods", "default", "evaljob-evaluator-0").value();
  EXPECT_EQ(evaluator["spec"]["schedulerName"], "default-scheduler");
  EXPECT_EQ(NodeNameOf(evaluator), "");
  ASSERT_TRUE(RunUntil([&] { return Phase("evaljob") == "Completed"; })) << Phase("evaljob");
  EXPECT_EQ(chosen_.size(), 2u);  // the engine placed the two workers only
  ASSERT_TRUE(
      RunUntil([&] { return !server_.Get("pods", "default", "evaljob-evaluator-0").has_value(); }));
  EXPECT_EQ(PodsOf("evaljob").size(), 2u);  // the workers' Succeeded pods
  EXPECT_EQ(server_.RequestCounts()["POST pods"], 3);
}

// Pod failures (issue: any Failed pod failed its job for good, evictions
// too). A pod's status set Failed as a kubelet would; the job restarts
// from its checkpoint or fails by its replica's restartPolicy and its
// runPolicy.backoffLimit.
class PodFailureTest : public OperatorTest {
 protected:
  // Job `name`, one worker of 1000 steps at 10 steps/s (10 simulated
  // seconds; 0.1 s of wall time), with the Worker's restartPolicy and
  // runPolicy given; started, and running, when this returns.
  void RunJob(const std::string& name, const std::string& policy, json run_policy = nullptr) {
    ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 4)).has_value());
    json tj = Job(name, 0, 1, 1000);
    if (!policy.empty()) tj["spec"]["replicaSpecs"]["Worker"]["restartPolicy"] = policy;
    if (!run_policy.is_null()) tj["spec"]["runPolicy"] = run_policy;
    ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", tj).has_value());
    StartOperator("gang-binpack");
    ASSERT_TRUE(WaitRunning(name, name + "-worker-0"));
  }
  // The job Running and pod `pod` Running.
  bool WaitRunning(const std::string& job, const std::string& pod) {
    return RunUntil([&] {
      auto p = server_.Get("pods", "default", pod);
      return Phase(job) == "Running" && p && PodPhase(*p) == "Running";
    });
  }
  // Pod `name` Failed with `status` (phase set here), as its kubelet would.
  void FailPod(const std::string& name, json status) {
    auto pod = server_.Get("pods", "default", name);
    ASSERT_TRUE(pod.has_value()) << name;
    status["phase"] = "Failed";
    (*pod)["status"].update(status);
    auto r = server_.UpdateStatus("pods", "default", *pod);
    ASSERT_TRUE(r.has_value()) << r.error().message;
  }
  // A container status as a kubelet writes it (what the schema requires).
  static json Exited(int code, const std::string& reason = "Error") {
    return {
        {"containerStatuses",
         json::array({{{"name", "tf"},
                       {"image", "trainer:1"},
                       {"imageID", ""},
                       {"ready", false},
                       {"restartCount", 0},
                       {"state", {{"terminated", {{"exitCode", code}, {"reason", reason}}}}}}})}};
  }
  json Status(const std::string& job) {
    auto tj = server_.Get("trainingjobs.dlsched.io", "default", job);
    return tj ? (*tj)["status"] : json();
  }
  // Pod name -> phase, of the job's pods.
  std::map<std::string, std::string> PodPhases(const std::string& job) {
    std::map<std::string, std::string> out;
    for (const json& pod : PodsOf(job)) out[pod["metadata"]["name"]] = PodPhase(pod);
    return out;
  }
};

// Evicted by the kubelet (reason Evicted): a disruption, so the job
// restarts from its checkpoint even under TFJob's default Never and
// completes; nothing is counted against a backoff limit. The evicted pod
// keeps its name (and its logs); the task's next pod is <name>-1, with the
// same hostname.
TEST_F(PodFailureTest, AnEvictedPodRestartsItsJobEvenUnderNever) {
  RunJob("evict", "");
  FailPod("evict-worker-0",
          {{"reason", "Evicted"}, {"message", "The node was low on resource: memory."}});
  ASSERT_TRUE(RunUntil([&] { return Phase("evict") == "Completed"; })) << Status("evict").dump();
  EXPECT_EQ(PodPhases("evict"),
            (std::map<std::string, std::string>{{"evict-worker-0", "Failed"},
                                                {"evict-worker-0-1", "Succeeded"}}));
  auto pod = server_.Get("pods", "default", "evict-worker-0-1");
  EXPECT_EQ((*pod)["spec"]["hostname"], "evict-worker-0");
  EXPECT_FALSE(Status("evict").contains("failures")) << Status("evict").dump();
  const auto reasons = EventReasons("evict");
  EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "Restarting"), 1);
  EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "Failed"), 0);
}

// A job's last checkpoint survives a suspension and an operator restart:
// suspended (its checkpoint C, the steps it had then), resumed, the
// operator restarted, then its pod evicted: it goes back to C, not to 0.
// Before, both the resumed job and the adopted one knew no checkpoint
// (`checkpointSteps` 0).
TEST_F(PodFailureTest, TheLastCheckpointSurvivesASuspensionAndARestart) {
  StartCheckpointingJob("ckpt", 0, 1);
  SetSuspend("ckpt", true);
  ASSERT_TRUE(RunUntil([&] { return Phase("ckpt") == "Suspended" && PodsOf("ckpt").empty(); }));
  const double c = Status("ckpt")["progress"]["steps"].get<double>();
  EXPECT_GT(c, 0);
  EXPECT_EQ(Status("ckpt")["progress"]["checkpointSteps"].get<double>(), c);
  SetSuspend("ckpt", false);
  ASSERT_TRUE(RunUntil([&] { return Phase("ckpt") == "Running"; }));
  EXPECT_EQ(Status("ckpt")["progress"]["checkpointSteps"].get<double>(), c)
      << Status("ckpt").dump();
  // A new operator adopts it running, with its checkpoint.
  op_->Stop();
  op_.reset();
  kubelet_->Stop();
  kubelet_.reset();
  StartOperator("gang-binpack");
  std::string pod;
  ASSERT_TRUE(RunUntil([&] {
    for (const auto& [name, phase] : PodPhases("ckpt")) {
      if (phase == "Running") pod = name;
    }
    return Phase("ckpt") == "Running" && !pod.empty();
  }));
  for (int i = 0; i < 10; ++i) op_->Step(0.01);
  EXPECT_EQ(Status("ckpt")["progress"]["checkpointSteps"].get<double>(), c)
      << Status("ckpt").dump();
  EXPECT_GE(Status("ckpt")["progress"]["steps"].get<double>(), c);
  FailPod(pod, {{"reason", "Evicted"}, {"message", "The node was low on resource: memory."}});
  ASSERT_TRUE(RunUntil([&] {
    const auto reasons = EventReasons("ckpt");
    return std::count(reasons.begin(), reasons.end(), "Restarting") == 1;
  }));
  EXPECT_GE(Status("ckpt")["progress"]["steps"].get<double>(), c) << Status("ckpt").dump();
}

// Exit code 1 under Never: the job fails, its reason naming the pod, the
// exit code and the policy; the pod stays (its logs).
TEST_F(PodFailureTest, AFailedPodFailsItsJobUnderNever) {
  RunJob("never", "Never");
  FailPod("never-worker-0", Exited(1));
  ASSERT_TRUE(RunUntil([&] { return Phase("never") == "Failed"; })) << Status("never").dump();
  EXPECT_EQ(Status("never")["reason"],
            "pod never-worker-0 failed with exit code 1 (Error); restartPolicy Never");
  EXPECT_EQ(PodPhases("never"), (std::map<std::string, std::string>{{"never-worker-0", "Failed"}}));
}

// OnFailure with backoffLimit 2: the first two failures (exit 1) restart
// the job (status.failures 1, then 2; pods -1, then -2, the first deleted
// then: one earlier pod per task stays); the third fails it.
TEST_F(PodFailureTest, OnFailureRestartsUntilTheBackoffLimit) {
  RunJob("flaky", "OnFailure", {{"backoffLimit", 2}});
  FailPod("flaky-worker-0", Exited(1));
  ASSERT_TRUE(WaitRunning("flaky", "flaky-worker-0-1")) << Status("flaky").dump();
  EXPECT_EQ(Status("flaky").value("failures", 0), 1);
  FailPod("flaky-worker-0-1", Exited(1));
  ASSERT_TRUE(WaitRunning("flaky", "flaky-worker-0-2")) << Status("flaky").dump();
  EXPECT_EQ(Status("flaky").value("failures", 0), 2);
  FailPod("flaky-worker-0-2", Exited(1));
  ASSERT_TRUE(RunUntil([&] {
    return Phase("flaky") == "Failed" && !server_.Get("pods", "default", "flaky-worker-0");
  })) << Status("flaky").dump();
  EXPECT_EQ(Status("flaky")["reason"],
            "pod flaky-worker-0-2 failed with exit code 1 (Error); backoffLimit 2 reached");
  EXPECT_EQ(PodPhases("flaky"),
            (std::map<std::string, std::string>{{"flaky-worker-0-1", "Failed"},
                                                {"flaky-worker-0-2", "Failed"}}));
}

// ExitCode: 137 (OOMKilled's SIGKILL) is retryable, the job runs on and
// completes.
TEST_F(PodFailureTest, ExitCodeRestartsARetryableCode) {
  RunJob("oom", "ExitCode");
  FailPod("oom-worker-0", Exited(137, "OOMKilled"));
  ASSERT_TRUE(RunUntil([&] { return Phase("oom") == "Completed"; })) << Status("oom").dump();
  EXPECT_EQ(Status("oom").value("failures", 0), 1);
  EXPECT_EQ(PodPhases("oom"), (std::map<std::string, std::string>{
                                  {"oom-worker-0", "Failed"}, {"oom-worker-0-1", "Succeeded"}}));
}

// A failover (or a restart) keeps what the operator before it knew: the
// queue's order (FIFO by submission, here against name order), the jobs'
// waiting ages, the running job's progress (carried on at its rate since
// its status was written) and the reasons. On the real clock: one 1-GPU
// node, "run" (10 steps/s) runs, "wait-z" then "wait-a" wait.
TEST(OperatorFailoverTest, TheNextOperatorKeepsQueueOrderAgesProgressAndReasons) {
  TestApiServer server;
  ASSERT_TRUE(server.Start().has_value());
  ASSERT_TRUE(server.ApplyManifest(ReadFile(std::string(DLSCHED_SOURCE_DIR) + "/deploy/crd.yaml"))
                  .has_value());
  ASSERT_TRUE(server.Create("nodes", "", Node("node-a", 1)).has_value());
  for (const char* name : {"run", "wait-z", "wait-a"}) {
    ASSERT_TRUE(
        server.Create("trainingjobs.dlsched.io", "default", Job(name, 0, 1, 100000)).has_value());
  }
  RestConfig config;
  config.server = server.Url();
  config.timeout_seconds = 5;
  const auto t0 = std::chrono::steady_clock::now();
  TestKubelet kubelet(config, [t0] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  kubelet.Start();
  auto engine = NewEngine("gang-binpack");
  OperatorOptions o;
  o.resync_seconds = 0.05;
  o.log = [](const std::string&) {};
  struct Seen {
    std::vector<std::string> order;  // unfinished jobs, FIFO: submission, then index
    std::map<std::string, double> age, steps;
    std::map<std::string, std::string> reason;
  };
  auto seen = [](Operator& op) {
    Seen out;
    std::vector<engine::JobIndex> jobs;
    for (engine::JobIndex j = 0; j < op.State().NumJobs(); ++j) jobs.push_back(j);
    std::sort(jobs.begin(), jobs.end(), [&](engine::JobIndex a, engine::JobIndex b) {
      return std::tie(op.State().Job(a).spec->submit_time, a) <
             std::tie(op.State().Job(b).spec->submit_time, b);
    });
    for (engine::JobIndex j : jobs) {
      const std::string name = op.Job(j).name;
      out.order.push_back(name);
      out.age[name] = op.Now() - op.State().Job(j).spec->submit_time;
      out.reason[name] = op.Lifecycle().History(j).reason;
    }
    for (const core::JobSpec& spec : op.Snapshot().workload.jobs)
      out.steps[spec.name] = spec.steps_done;
    return out;
  };
  Seen before;
  std::chrono::steady_clock::time_point handover;
  {
    Operator first(config, *engine, o);
    ASSERT_TRUE(first.Start(10).has_value());
    // Two seconds of running: ages and progress a restart would lose.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < until) first.Step(0.01);
    before = seen(first);
    handover = std::chrono::steady_clock::now();
    first.Stop();
  }
  ASSERT_EQ(before.order, (std::vector<std::string>{"run", "wait-z", "wait-a"}));
  ASSERT_GT(before.steps["run"], 10);
  ASSERT_GT(before.age["wait-a"], 1.5);
  ASSERT_NE(before.reason["wait-a"], "");
  Operator second(config, *engine, o);
  ASSERT_TRUE(second.Start(10).has_value());
  const Seen after = seen(second);
  const double gap =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - handover).count();
  EXPECT_EQ(after.order, before.order);
  EXPECT_EQ(after.reason, before.reason);
  for (const std::string& name : before.order) {
    // Exact but for the moments between the clock readings (and the
    // test's own steps): well within a second, where a reset loses 2 s.
    EXPECT_NEAR(after.age.at(name), before.age.at(name) + gap, 0.5) << name;
  }
  EXPECT_NEAR(after.steps.at("run"), before.steps.at("run") + 10 * gap, 5) << "10 steps/s";
  kubelet.Stop();
}

// A node becomes unreachable (the node lifecycle controller's taints,
// its kubelet gone): its pods tolerate it for 300 s (Kubernetes' default
// toleration), then the operator evicts them; the evicted pod stays
// Terminating (no kubelet confirms it), and the task's next pod, named
// <pod>-1, runs on the other node without waiting for it.
TEST_F(PodFailureTest, AnUnreachableNodesPodsStay300SecondsThenARenamedReplacementRuns) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-b", 4)).has_value());
  RunJob("far", "");
  const json pod = *server_.Get("pods", "default", "far-worker-0");
  const std::string node = pod["spec"]["nodeName"];
  const double tainted = Clock();
  ASSERT_TRUE(kubelet_->SetUnreachable(node, true).has_value());
  // 200 s on: still running where it was.
  ASSERT_TRUE(RunUntil([&] { return Clock() >= tainted + 200; }));
  EXPECT_EQ(Phase("far"), "Running");
  EXPECT_FALSE(
      server_.Get("pods", "default", "far-worker-0")->at("metadata").contains("deletionTimestamp"));
  // Then evicted (not before 300 s), and replaced elsewhere.
  double evicted = -1;
  ASSERT_TRUE(RunUntil([&] {
    if (evicted < 0 && Phase("far") != "Running") evicted = Clock();
    auto next = server_.Get("pods", "default", "far-worker-0-1");
    return next && PodPhase(*next) == "Running" && Phase("far") == "Running";
  })) << Status("far").dump();
  EXPECT_GE(evicted, tainted + 300);
  EXPECT_NE(server_.Get("pods", "default", "far-worker-0-1")->at("spec").value("nodeName", ""),
            node);
  const json old = *server_.Get("pods", "default", "far-worker-0");
  EXPECT_TRUE(old["metadata"].contains("deletionTimestamp"));  // Terminating, still there
  // One Restarting Event, naming the taint and its 300 s.
  std::vector<std::string> restarting;
  for (const json& e : server_.List("events", "default")) {
    if (e["involvedObject"].value("name", "") == "far" && e.value("reason", "") == "Restarting") {
      restarting.push_back(e.value("message", ""));
    }
  }
  ASSERT_EQ(restarting.size(), 1u);
  EXPECT_NE(restarting[0].find("by taint node.kubernetes.io/unreachable:NoExecute after 300 s"),
            std::string::npos)
      << restarting[0];
}

// An eviction storm: 10 jobs of a PS and 2 workers (30 pods) on 5 nodes,
// 3 of their pods (10%) evicted at once. Each hit job restarts (evictions
// are not counted as failures), every job completes, and each task ends
// with one Succeeded pod: no pod lost, none twice.
TEST_F(PodFailureTest, AnEvictionStormIsRiddenOut) {
  for (int n = 0; n < 5; ++n) {
    ASSERT_TRUE(server_.Create("nodes", "", Node(fmt::format("node-{}", n), 4)).has_value());
  }
  std::vector<std::string> jobs;
  for (int i = 0; i < 10; ++i) {
    jobs.push_back(fmt::format("storm-{}", i));
    ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", Job(jobs.back(), 1, 2, 4000))
                    .has_value());
  }
  StartOperator("gang-binpack");
  ASSERT_TRUE(RunUntil([&] {
    return std::all_of(jobs.begin(), jobs.end(), [&](const std::string& j) {
      auto p = server_.Get("pods", "default", j + "-worker-1");
      return Phase(j) == "Running" && p && PodPhase(*p) == "Running";
    });
  }));
  const std::vector<std::string> hit = {"storm-1-worker-0", "storm-4-ps-0", "storm-8-worker-1"};
  for (const std::string& name : hit) {
    FailPod(name, {{"reason", "Evicted"}, {"message", "The node was low on resource: memory."}});
  }
  ASSERT_TRUE(RunUntil([&] {
    return std::all_of(jobs.begin(), jobs.end(),
                       [&](const std::string& j) { return Phase(j) == "Completed"; });
  }));
  for (const std::string& j : jobs) {
    const bool was_hit = j == "storm-1" || j == "storm-4" || j == "storm-8";
    EXPECT_FALSE(Status(j).contains("failures")) << j;
    const auto reasons = EventReasons(j);
    EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "Restarting"), was_hit ? 1 : 0) << j;
    // Per task: its Succeeded pod; an evicted one stays Failed beside it.
    std::map<std::string, std::vector<std::string>> by_task;
    for (const json& pod : PodsOf(j)) {
      auto task = PodTaskOf(pod);
      ASSERT_TRUE(task.has_value());
      by_task[PodName(task->job, task->role, task->index)].push_back(PodPhase(pod));
    }
    for (const std::string& w : {j + "-worker-0", j + "-worker-1"}) {
      auto phases = by_task[w];
      std::sort(phases.begin(), phases.end());
      const bool evicted = std::find(hit.begin(), hit.end(), w) != hit.end();
      const std::vector<std::string> want = evicted
                                                ? std::vector<std::string>{"Failed", "Succeeded"}
                                                : std::vector<std::string>{"Succeeded"};
      EXPECT_EQ(phases, want) << w;
    }
  }
}

// Teams' queues on a cluster, worked by hand on one 8-GPU node
// (gang-binpack, one-GPU workers, jobs that never finish):
// - Queue team-a (2 GPUs) is namespace default's default queue: a (2
//   workers, naming no queue) runs in it, b (2) waits on its quota
//   (status.reason, a Pending Event; Pending 1 on the Queue);
// - team-a raised to 4: b starts (Used GPUs 4);
// - lowered to 2, under its usage: a and b run on with the same pods, and
//   c (1 worker, naming team-a) waits; the Queue shows 2 GPUs borrowed
//   (held above its nominal quota);
// - d names team-z, which no Queue declares: it waits, told so
//   (QueueNotFound), until a Queue team-z of 1 GPU is created;
// - team-z edited to a quota that does not parse: refused (condition
//   Active True, reason SpecRefused), the 1 GPU stays in effect;
// - team-a deleted: a and b keep their pods, c waits for a queue of that
//   name.
TEST_F(OperatorTest, AQueueCreatedChangedAndDeletedWhileJobsRun) {
  const std::string queues = "queues.dlsched.io";
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 8)).has_value());
  auto queue = [](const std::string& name, json spec) {
    return json{{"apiVersion", "dlsched.io/v1alpha1"},
                {"kind", "Queue"},
                {"metadata", {{"name", name}}},
                {"spec", std::move(spec)}};
  };
  ASSERT_TRUE(server_
                  .Create(queues, "",
                          queue("team-a", {{"quota", {{"nvidia.com/gpu", 2}}},
                                           {"namespaces", json::array({"default"})}}))
                  .has_value());
  StartOperator("gang-binpack");
  auto status = [&](const std::string& q) {
    auto o = server_.Get(queues, "", q);
    return o ? o->value("status", json::object()) : json::object();
  };
  auto job_status = [&](const std::string& name) {
    auto tj = server_.Get("trainingjobs.dlsched.io", "default", name);
    return tj ? tj->value("status", json::object()) : json::object();
  };
  auto reason = [&](const std::string& name) { return job_status(name).value("reason", ""); };
  auto set_quota = [&](const std::string& q, const json& gpus) {
    auto o = server_.Get(queues, "", q);
    ASSERT_TRUE(o.has_value());
    (*o)["spec"]["quota"]["nvidia.com/gpu"] = gpus;
    ASSERT_TRUE(server_.Update(queues, "", *o).has_value());
  };
  ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", Job("a", 0, 2, 1e9)));
  ASSERT_TRUE(RunUntil([&] {
    return Phase("a") == "Running" && status("team-a").value("usedGPUs", -1) == 2 &&
           status("team-a").value("admittedJobs", -1) == 1;
  }));
  EXPECT_EQ(job_status("a").value("queue", ""), "team-a");
  EXPECT_EQ(status("team-a").value("nominalGPUs", -1), 2);
  ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", Job("b", 0, 2, 1e9)));
  ASSERT_TRUE(RunUntil([&] {
    return reason("b").find("queue team-a's quota") != std::string::npos &&
           status("team-a").value("pendingJobs", -1) == 1 && HasEvent("b", "Pending");
  })) << reason("b");

  set_quota("team-a", 4);
  ASSERT_TRUE(RunUntil([&] {
    return Phase("b") == "Running" && status("team-a").value("usedGPUs", -1) == 4 &&
           status("team-a").value("pendingJobs", -1) == 0;
  }));
  std::set<std::string> uids;
  for (const std::string name : {"a", "b"}) {
    for (const json& pod : PodsOf(name)) uids.insert(pod["metadata"].value("uid", ""));
  }
  ASSERT_EQ(uids.size(), 4u);

  set_quota("team-a", 2);
  json c = Job("c", 0, 1, 1e9);
  c["spec"]["scheduling"] = {{"queue", "team-a"}};
  ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", c));
  ASSERT_TRUE(RunUntil([&] {
    return reason("c").find("queue team-a's quota") != std::string::npos &&
           status("team-a").value("borrowedGPUs", -1) == 2;
  })) << reason("c")
      << status("team-a").dump();

  json d = Job("d", 0, 1, 1e9);
  d["spec"]["scheduling"] = {{"queue", "team-z"}};
  ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", d));
  ASSERT_TRUE(RunUntil([&] {
    return reason("d") == "no Queue named team-z: the job waits until one is created" &&
           HasEvent("d", "QueueNotFound");
  })) << reason("d");
  ASSERT_TRUE(server_.Create(queues, "", queue("team-z", {{"quota", {{"nvidia.com/gpu", 1}}}})));
  ASSERT_TRUE(RunUntil([&] { return Phase("d") == "Running"; }));

  set_quota("team-z", "lots");
  ASSERT_TRUE(RunUntil([&] {
    const json conds = status("team-z").value("conditions", json::array());
    return !conds.empty() && conds[0].value("reason", "") == "SpecRefused";
  })) << status("team-z").dump();
  const json refused = status("team-z")["conditions"][0];
  EXPECT_EQ(refused.value("status", ""), "True");
  EXPECT_NE(refused.value("message", "").find("Queue team-z: spec.quota.nvidia.com/gpu"),
            std::string::npos)
      << refused.dump();
  EXPECT_EQ(status("team-z").value("nominalGPUs", -1), 1);

  ASSERT_TRUE(server_.Delete(queues, "", "team-a").has_value());
  ASSERT_TRUE(RunUntil([&] {
    return reason("c") == "no Queue named team-a: the job waits until one is created";
  })) << reason("c");
  for (int i = 0; i < 20; ++i) op_->Step(0.01);
  std::set<std::string> still;
  for (const std::string name : {"a", "b"}) {
    EXPECT_EQ(Phase(name), "Running") << name;
    for (const json& pod : PodsOf(name)) still.insert(pod["metadata"].value("uid", ""));
  }
  EXPECT_EQ(still, uids);
  EXPECT_TRUE(PodsOf("c").empty());
  EXPECT_EQ(Phase("d"), "Running");
}

// A Queue whose spec does not parse, created so: not in effect (condition
// Active False, InvalidSpec naming the field), and a job naming it waits as
// for a queue that does not exist. Parents of Cohorts forming a cycle are
// refused as a whole, naming the cohort.
TEST_F(OperatorTest, AQueueThatDoesNotParseIsNotInEffectAndSaysWhy) {
  ASSERT_TRUE(server_.Create("nodes", "", Node("node-a", 8)).has_value());
  ASSERT_TRUE(
      server_
          .Create(
              "queues.dlsched.io", "",
              {{"apiVersion", "dlsched.io/v1alpha1"},
               {"kind", "Queue"},
               {"metadata", {{"name", "bad"}}},
               {"spec", {{"quota", {{"nvidia.com/gpu", {{"nominal", 2}, {"lendingLimit", 1}}}}}}}})
          .has_value());
  for (const auto& [name, parent] : {std::pair{"x", "y"}, {"y", "x"}}) {
    ASSERT_TRUE(server_
                    .Create("cohorts.dlsched.io", "",
                            {{"apiVersion", "dlsched.io/v1alpha1"},
                             {"kind", "Cohort"},
                             {"metadata", {{"name", name}}},
                             {"spec", {{"parent", parent}}}})
                    .has_value());
  }
  StartOperator("gang-binpack");
  json j = Job("j", 0, 1, 1e9);
  j["spec"]["scheduling"] = {{"queue", "bad"}};
  ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", j));
  auto condition = [&] {
    auto o = server_.Get("queues.dlsched.io", "", "bad");
    const json conds =
        o ? o->value("status", json::object()).value("conditions", json::array()) : json::array();
    return conds.empty() ? json::object() : conds[0];
  };
  ASSERT_TRUE(RunUntil([&] {
    auto tj = server_.Get("trainingjobs.dlsched.io", "default", "j");
    return condition().value("reason", "") == "InvalidSpec" && tj &&
           tj->value("status", json::object()).value("reason", "") ==
               "no Queue named bad: the job waits until one is created";
  })) << condition().dump();
  EXPECT_EQ(condition().value("status", ""), "False");
  EXPECT_EQ(
      condition().value("message", ""),
      "Queue bad: spec.quota.nvidia.com/gpu.lendingLimit: only allowed for a queue with a cohort");
  bool cycle = false;
  for (const std::string& line : logs_) {
    cycle = cycle || line.find("Cohort x.parent: the cohorts' parents form a cycle: x -> y -> x") !=
                         std::string::npos;
  }
  EXPECT_TRUE(cycle);
  EXPECT_TRUE(PodsOf("j").empty());
}

// Shared GPUs on a cluster: node-a (2 GPUs) advertises dlsched.io/gpu-milli
// and holds another owner's pod of 700 on device 0 (its annotation says
// so). A job of 2 workers of 500 each: device 0 has 300 left, so worker 0
// opens device 1 and worker 1 joins it (500 + 500). Each pod carries the
// device as the dlsched.io/gpu-device annotation, set on the Binding; a
// restarted operator reads the devices back: the shares are where they
// were, device 0 at 700 and device 1 full.
TEST_F(OperatorTest, SharedGpuPodsCarryTheirDeviceAcrossARestart) {
  json node = Node("node-a", 2);
  node["status"]["allocatable"]["dlsched.io/gpu-milli"] = "2000";
  ASSERT_TRUE(server_.Create("nodes", "", node).has_value());
  const json other = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "notebook"},
        {"namespace", "default"},
        {"annotations", {{"dlsched.io/gpu-device", "0"}}}}},
      {"spec",
       {{"nodeName", "node-a"},
        {"containers",
         json::array({{{"name", "nb"},
                       {"image", "nb:1"},
                       {"resources", {{"limits", {{"dlsched.io/gpu-milli", "700"}}}}}}})}}}};
  ASSERT_TRUE(server_.Create("pods", "default", other).has_value());
  json job = Job("halves", 0, 2, 1e9);
  auto& limits = job["spec"]["replicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
                    ["resources"]["limits"];
  limits = {{"dlsched.io/gpu-milli", "500"}};
  ASSERT_TRUE(server_.Create("trainingjobs.dlsched.io", "default", job).has_value());
  StartOperator("gang-binpack");
  ASSERT_TRUE(RunUntil([&] { return Phase("halves") == "Running"; })) << Phase("halves");
  ASSERT_EQ(PodsOf("halves").size(), 2u);
  for (const json& pod : PodsOf("halves")) {
    EXPECT_EQ(pod["spec"]["nodeName"], "node-a");
    EXPECT_EQ(pod["metadata"]["annotations"].value("dlsched.io/gpu-device", ""), "1")
        << pod["metadata"].dump();
  }
  auto shares = [&] {
    const engine::ClusterState& st = op_->State();
    const auto s = st.SharesOn(st.FindNode("node-a"));
    return std::vector<int>(s.begin(), s.end());
  };
  EXPECT_EQ(shares(), (std::vector<int>{700, 1000}));
  op_->Stop();
  op_.reset();
  kubelet_->Stop();
  kubelet_.reset();
  StartOperator("gang-binpack");
  for (int i = 0; i < 20; ++i) op_->Step(0.01);
  EXPECT_EQ(Phase("halves"), "Running");
  EXPECT_EQ(shares(), (std::vector<int>{700, 1000}));
  const engine::ClusterState& st = op_->State();
  engine::JobIndex j = -1;
  for (engine::JobIndex k = 0; k < st.NumJobs(); ++k) {
    if (!st.Job(k).removed && op_->Job(k).name == "halves") j = k;
  }
  ASSERT_GE(j, 0);
  EXPECT_EQ(st.DeviceOf(engine::TaskRef{j, core::Role::kWorker, 0}), 1);
  EXPECT_EQ(st.DeviceOf(engine::TaskRef{j, core::Role::kWorker, 1}), 1);
}

}  // namespace
}  // namespace dlsched::k8s
