// Decoding TrainingJobs: the TFJob replica shape, elastic workers,
// scheduling inputs, and pod templates read with kube-scheduler's request
// rules into the same RoleSpec a workload file gives the simulator.
#include "dlsched/k8s/trainingjob.h"

#include <gtest/gtest.h>

#include "dlsched/config/specs.h"
#include "dlsched/k8s/objects.h"

namespace dlsched::k8s {
namespace {

using nlohmann::json;

constexpr int64_t kMi = int64_t{1} << 20;
constexpr int64_t kGi = int64_t{1} << 30;

json Parse(const std::string& text) { return json::parse(text); }

std::string Error(const std::string& text) {
  auto tj = DecodeTrainingJob(Parse(text));
  EXPECT_FALSE(tj.has_value()) << text;
  return tj ? std::string() : tj.error().message;
}

TEST(TrainingJobTest, DecodesRolesSchedulingAndThroughput) {
  auto tj = DecodeTrainingJob(Parse(R"({
    "apiVersion": "dlsched.io/v1alpha1", "kind": "TrainingJob",
    "metadata": {"name": "mnist", "namespace": "team-a", "uid": "u-1", "resourceVersion": "42",
                 "generation": 3},
    "spec": {
      "replicaSpecs": {
        "PS": {"replicas": 1, "template": {"spec": {"containers": [
          {"name": "tf", "image": "tf:1", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]}}},
        "Worker": {"replicas": 2, "minReplicas": 1, "maxReplicas": 4, "restartPolicy": "Never",
          "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [
            {"name": "tf", "resources": {"limits": {"nvidia.com/gpu": 1},
                                         "requests": {"cpu": "4", "memory": "8Gi"}}}]}}}
      },
      "scheduling": {"priorityClass": "high", "maxWaitMinutes": 30, "queue": "research"},
      "totalSteps": 2000,
      "throughput": {"table": {"1": 4.4, "2": 7.9}, "localitySensitivity": 0.2,
                     "gpuTypes": {"Tesla-K80": {"1": 0.6, "2": 1.3}}},
      "launchDelay": 10, "checkpointDelay": 5
    }})"));
  ASSERT_TRUE(tj.has_value()) << tj.error().message;
  EXPECT_EQ(tj->namespace_name, "team-a");
  EXPECT_EQ(tj->uid, "u-1");
  EXPECT_EQ(tj->resource_version, "42");
  EXPECT_EQ(tj->generation, 3);
  const core::JobSpec& j = tj->job;
  EXPECT_EQ(j.name, "mnist");
  EXPECT_EQ(j.namespace_name, "team-a");
  EXPECT_EQ(j.role(core::Role::kPS).replicas, 1);
  EXPECT_EQ(j.role(core::Role::kPS).resources[core::kCpu], 1000);
  const core::RoleSpec& w = j.role(core::Role::kWorker);
  EXPECT_EQ(w.replicas, 2);
  EXPECT_EQ(w.min_replicas, 1);
  EXPECT_EQ(w.max_replicas, 4);
  // A GPU given only as a limit is requested at its limit.
  EXPECT_EQ(w.resources[core::kGpu], 1);
  EXPECT_EQ(w.resources[core::kCpu], 4000);
  EXPECT_EQ(w.resources[core::kMemory], 8 * kGi);
  EXPECT_EQ(j.role(core::Role::kChief).replicas, 0);
  EXPECT_EQ(j.priority, core::PriorityClass::kHigh);
  EXPECT_EQ(j.max_wait_minutes, 30);
  EXPECT_EQ(j.queue, "research");
  EXPECT_EQ(j.total_steps, 2000);
  EXPECT_DOUBLE_EQ(j.throughput.Rate(2), 7.9);
  EXPECT_DOUBLE_EQ(j.throughput.locality_sensitivity, 0.2);
  EXPECT_DOUBLE_EQ(j.throughput.RateOn("Tesla-K80", 2), 1.3);
  EXPECT_DOUBLE_EQ(j.throughput.RateOn("Tesla-V100", 2), 7.9);
  EXPECT_EQ(j.launch_delay, 10);
  EXPECT_EQ(j.checkpoint_delay, 5);
  EXPECT_EQ(tj->templates[2]["metadata"]["labels"]["app"], "x");  // kept to create pods from
}

// A TFJob ports by changing apiVersion and kind: tfReplicaSpecs is read as
// replicaSpecs, replicas default to 1, and fields the engine does not use
// (image, restartPolicy, runPolicy) are left for the pods.
TEST(TrainingJobTest, TfJobShapePortsUnchanged) {
  auto tj = DecodeTrainingJob(Parse(R"({
    "apiVersion": "dlsched.io/v1alpha1", "kind": "TrainingJob",
    "metadata": {"name": "dist-mnist"},
    "spec": {"runPolicy": {"cleanPodPolicy": "None"}, "tfReplicaSpecs": {
      "PS": {"replicas": 2, "restartPolicy": "Never",
             "template": {"spec": {"containers": [{"name": "tensorflow", "image": "m:1.0"}]}}},
      "Worker": {"restartPolicy": "Never",
             "template": {"spec": {"containers": [{"name": "tensorflow", "image": "m:1.0"}]}}}}}})"));
  ASSERT_TRUE(tj.has_value()) << tj.error().message;
  EXPECT_EQ(tj->namespace_name, "default");
  EXPECT_EQ(tj->job.role(core::Role::kPS).replicas, 2);
  EXPECT_EQ(tj->job.role(core::Role::kWorker).replicas, 1);
  // No requests: 0 to fit, kube's 100m / 200Mi per container to score.
  EXPECT_TRUE(tj->job.role(core::Role::kWorker).resources.IsZero());
  const core::Resources s = tj->job.role(core::Role::kWorker).ScoringRequest();
  EXPECT_EQ(s[core::kCpu], 100);
  EXPECT_EQ(s[core::kMemory], 200 * kMi);
}

// A PyTorchJob ports the same way: pytorchReplicaSpecs' Master runs as the
// job's chief (one replica), its Worker as the workers; elasticPolicy gives
// the workers' range and torchrun's rendezvous. Its pods' environment is
// Kubeflow's: for 1 master + 3 workers, WORLD_SIZE 4 and RANK 0 for the
// master, i + 1 for worker i; the master's address through the job's
// headless Service and its pytorchjob-port (29500 here, else 23456).
TEST(TrainingJobTest, PyTorchJobShapeAndItsPodsEnvironment) {
  auto tj = DecodeTrainingJob(Parse(R"({
    "metadata": {"name": "pt", "namespace": "ml"},
    "spec": {"pytorchReplicaSpecs": {
      "Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": {"containers": [
        {"name": "pytorch", "image": "p:1", "ports": [{"name": "pytorchjob-port", "containerPort": 29500}],
         "env": [{"name": "RANK", "value": "7"}, {"name": "LOGLEVEL", "value": "INFO"}]}]}}},
      "Worker": {"replicas": 3, "template": {"spec": {"containers": [{"name": "pytorch", "image": "p:1",
        "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}}})"));
  ASSERT_TRUE(tj.has_value()) << tj.error().message;
  EXPECT_EQ(tj->framework, Framework::kPyTorch);
  EXPECT_EQ(tj->ReplicaName(core::Role::kChief), "Master");
  EXPECT_EQ(tj->job.role(core::Role::kChief).replicas, 1);
  EXPECT_EQ(tj->job.role(core::Role::kWorker).replicas, 3);
  EXPECT_EQ(tj->job.role(core::Role::kWorker).resources[core::kGpu], 1);
  EXPECT_FALSE(tj->elastic.has_value());
  using Env = std::vector<std::pair<std::string, std::string>>;
  const std::string master = "pt-chief-0.pt.ml.svc";
  EXPECT_EQ(PodEnv(*tj, 3, core::Role::kChief, 0), (Env{{"PYTHONUNBUFFERED", "0"},
                                                        {"MASTER_ADDR", master},
                                                        {"MASTER_PORT", "29500"},
                                                        {"WORLD_SIZE", "4"},
                                                        {"RANK", "0"}}));
  EXPECT_EQ(PodEnv(*tj, 3, core::Role::kWorker, 2), (Env{{"PYTHONUNBUFFERED", "0"},
                                                         {"MASTER_ADDR", master},
                                                         {"MASTER_PORT", "29500"},
                                                         {"WORLD_SIZE", "4"},
                                                         {"RANK", "3"}}));
  // The pod: ours replace the template's RANK; its other variables stay.
  const json pod = MakePod(*tj, core::Role::kChief, 0, 3, "dlsched", "");
  json names = json::array();
  for (const json& e : pod["spec"]["containers"][0]["env"]) names.push_back(e["name"]);
  EXPECT_EQ(names, json({"LOGLEVEL", "PYTHONUNBUFFERED", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE",
                         "RANK"}));
  EXPECT_EQ(pod["spec"]["containers"][0]["env"].back()["value"], "0");
  EXPECT_EQ(pod["spec"]["subdomain"], "pt");
}

// Kubeflow's elastic echo example: no Master, elasticPolicy min 1, max 2
// (the Worker role's range), c10d on the first worker's pod at PyTorchJob's
// default port.
TEST(TrainingJobTest, ElasticPyTorchJobGetsTorchrunsRendezvous) {
  auto tj = DecodeTrainingJob(Parse(R"({
    "metadata": {"name": "echo"},
    "spec": {"elasticPolicy": {"rdzvBackend": "c10d", "minReplicas": 1, "maxReplicas": 2,
                               "maxRestarts": 100, "nProcPerNode": 4},
      "pytorchReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": {"containers": [
        {"name": "pytorch", "image": "e:1"}]}}}}}})"));
  ASSERT_TRUE(tj.has_value()) << tj.error().message;
  const core::RoleSpec& w = tj->job.role(core::Role::kWorker);
  EXPECT_EQ(w.min_replicas, 1);
  EXPECT_EQ(w.max_replicas, 2);
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(PodEnv(*tj, 2, core::Role::kWorker, 1),
            (Env{{"PYTHONUNBUFFERED", "0"},
                 {"PET_RDZV_ENDPOINT", "echo-worker-0.echo.default.svc:23456"},
                 {"PET_RDZV_BACKEND", "c10d"},
                 {"PET_NNODES", "1:2"},
                 {"PET_MAX_RESTARTS", "100"},
                 {"PET_NPROC_PER_NODE", "4"}}));
  const std::string head = R"({"metadata": {"name": "j", "namespace": "ns"}, "spec": )";
  const std::string tmpl = R"("template": {"spec": {"containers": [{"name": "c"}]}})";
  const std::string worker = R"("Worker": {"replicas": 2, )" + tmpl + "}";
  EXPECT_EQ(Error(head + R"({"pytorchReplicaSpecs": {"PS": {}, )" + worker + "}}}"),
            "TrainingJob ns/j: spec.pytorchReplicaSpecs.PS: unknown key (allowed: Master, "
            "Worker)");
  EXPECT_EQ(
      Error(head + R"({"pytorchReplicaSpecs": {"Master": {"replicas": 0}, )" + worker + "}}}"),
      "TrainingJob ns/j: spec.pytorchReplicaSpecs.Master.replicas: a PyTorchJob has "
      "exactly 1 Master replica");
  EXPECT_EQ(Error(head + R"({"elasticPolicy": {}, "replicaSpecs": {)" + worker + "}}}"),
            "TrainingJob ns/j: spec.elasticPolicy: only with pytorchReplicaSpecs (PyTorchJob's)");
  EXPECT_EQ(Error(head + R"({"elasticPolicy": {"rdzvBackend": "zk"}, "pytorchReplicaSpecs": {)" +
                  worker + "}}}"),
            "TrainingJob ns/j: spec.elasticPolicy.rdzvBackend: expected c10d, etcd or etcd-v2, "
            "got zk");
  EXPECT_EQ(Error(head + R"({"elasticPolicy": {"maxReplicas": 1}, "pytorchReplicaSpecs": {)" +
                  worker + "}}}"),
            "TrainingJob ns/j: spec.elasticPolicy.maxReplicas: 1 is less than the Worker "
            "replicas, 2");
  EXPECT_EQ(Error(head + R"({"elasticPolicy": {"minReplicas": 1}, "pytorchReplicaSpecs": {)" +
                  R"("Worker": {"replicas": 2, "minReplicas": 1, )" + tmpl + "}}}}"),
            "TrainingJob ns/j: spec.elasticPolicy.minReplicas: also given as "
            "spec.pytorchReplicaSpecs.Worker.minReplicas: give the range in one place");
}

// kube-scheduler's PodRequests: the containers' sum, at least each init
// container's request, plus the pod overhead; scoring's defaults per
// container that leaves cpu or memory out, an explicit 0 staying 0.
TEST(TrainingJobTest, PodTemplateRequestsAsKubeSchedulerComputesThem) {
  core::RoleSpec role;
  auto st = DecodePodTemplate(Parse(R"({"spec": {
      "initContainers": [{"name": "fetch", "resources": {"requests": {"cpu": "6", "memory": "1Gi"}}}],
      "containers": [
        {"name": "a", "resources": {"requests": {"cpu": "2", "memory": "0"}}},
        {"name": "b", "resources": {"requests": {"cpu": "1"}, "limits": {"memory": "3Gi"}}},
        {"name": "c"}],
      "overhead": {"cpu": "250m"}}})"),
                              "t", "template", role);
  ASSERT_TRUE(st) << st.error().message;
  // cpu: max(2 + 1, 6) + 0.25 overhead; memory: max(0 + 3Gi, 1Gi).
  EXPECT_EQ(role.resources[core::kCpu], 6250);
  EXPECT_EQ(role.resources[core::kMemory], 3 * kGi);
  ASSERT_EQ(role.containers.size(), 3u);
  EXPECT_TRUE(role.containers[0].sets_memory);  // explicit 0
  EXPECT_TRUE(role.containers[1].sets_memory);  // from its limit
  EXPECT_FALSE(role.containers[2].sets_cpu);
  // Scoring cpu: a 2 + b 1 + c 0.1 (default) = 3.1, less than the init
  // container's 6, which wins.
  const core::Resources s = role.ScoringRequest();
  EXPECT_EQ(s[core::kCpu], 6000);
  // memory: a 0 (explicit) + b 3Gi + c 200Mi, more than the init's 1Gi.
  EXPECT_EQ(s[core::kMemory], 3 * kGi + 200 * kMi);
}

// A pod template's nodeSelector, required node affinity and tolerations
// mean what a workload role's do: both go through the same parser.
TEST(TrainingJobTest, PlacementRulesMatchTheWorkloadFile) {
  core::RoleSpec from_template;
  auto st = DecodePodTemplate(Parse(R"({"spec": {
      "containers": [{"name": "tf"}],
      "nodeSelector": {"gpu-model": "v100"},
      "affinity": {
        "nodeAffinity": {
          "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1", "z2"]},
                                  {"key": "spot", "operator": "DoesNotExist"}]}]},
          "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}},
      "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "training",
                       "effect": "NoSchedule"}]}})"),
                              "t", "template", from_template);
  ASSERT_TRUE(st) << st.error().message;
  auto w = config::ParseWorkload(R"(
jobs:
  - name: j
    arrival: 0
    worker:
      replicas: 1
      resources: {}
      nodeSelector: {gpu-model: v100}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {key: zone, operator: In, values: [z1, z2]}
                  - {key: spot, operator: DoesNotExist}
      tolerations: [{key: dedicated, operator: Equal, value: training, effect: NoSchedule}]
    totalSteps: 1
    throughput: {table: {1: 1}}
)",
                                 "w.yaml");
  ASSERT_TRUE(w.has_value()) << w.error().message;
  const core::NodeConstraints& a = from_template.constraints;
  const core::NodeConstraints& b = w->jobs[0].role(core::Role::kWorker).constraints;
  EXPECT_EQ(a.node_selector, b.node_selector);
  ASSERT_EQ(a.required_terms.size(), 1u);
  ASSERT_EQ(b.required_terms.size(), 1u);
  ASSERT_EQ(a.required_terms[0].match_expressions.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a.required_terms[0].match_expressions[i].key,
              b.required_terms[0].match_expressions[i].key);
    EXPECT_EQ(a.required_terms[0].match_expressions[i].op,
              b.required_terms[0].match_expressions[i].op);
    EXPECT_EQ(a.required_terms[0].match_expressions[i].values,
              b.required_terms[0].match_expressions[i].values);
  }
  ASSERT_EQ(a.tolerations.size(), 1u);
  EXPECT_EQ(a.tolerations[0].value, "training");
  EXPECT_FALSE(a.tolerations[0].any_effect);
  // The labels a v100 node in z2 carries pass; z3 does not.
  EXPECT_TRUE(core::MatchesLabels(a, {{"gpu-model", "v100"}, {"zone", "z2"}}));
  EXPECT_FALSE(core::MatchesLabels(a, {{"gpu-model", "v100"}, {"zone", "z3"}}));
}

TEST(TrainingJobTest, ErrorsNameTheObjectAndTheField) {
  const std::string head = R"({"metadata": {"name": "j", "namespace": "ns"}, "spec": )";
  const std::string worker_tmpl = R"("template": {"spec": {"containers": [{"name": "c"}]}})";
  EXPECT_EQ(Error(head + R"({"replicaSpecs": {"Worker": {"replicas": 2, "minReplicas": 3, )" +
                  worker_tmpl + "}}}}"),
            "TrainingJob ns/j: spec.replicaSpecs.Worker.minReplicas: 3 is greater than maxReplicas "
            "2");
  EXPECT_EQ(Error(head + R"({"replicaSpecs": {"Chief": {"replicas": 2}, "Worker": {)" +
                  worker_tmpl + "}}}}"),
            "TrainingJob ns/j: spec.replicaSpecs.Chief.replicas: expected an integer in 0..1, "
            "got 2");
  EXPECT_EQ(Error(head + R"({"pytorchReplicaSpecs": {"Evaluator": {}}}})"),
            "TrainingJob ns/j: spec.pytorchReplicaSpecs.Evaluator: unknown key (allowed: Master, "
            "Worker)");
  EXPECT_EQ(Error(head + R"({"tfReplicaSpecs": {"Evaluator": {"replicas": 2}}}})"),
            "TrainingJob ns/j: spec.tfReplicaSpecs.Evaluator.replicas: expected an integer in "
            "0..1, got 2");
  EXPECT_EQ(
      Error(head + R"({"tfReplicaSpecs": {"Evaluator": {}, "Worker": {)" + worker_tmpl + "}}}}"),
      "TrainingJob ns/j: spec.tfReplicaSpecs.Evaluator.template: missing");
  EXPECT_EQ(Error(head + R"({"replicaSpecs": {}, "tfReplicaSpecs": {}}})"),
            "TrainingJob ns/j: spec: give exactly one of replicaSpecs, tfReplicaSpecs (the "
            "TFJob name) and pytorchReplicaSpecs (PyTorchJob's)");
  EXPECT_EQ(Error(head + R"({"replicaSpecs": {"Worker": {"template": {"spec": {"containers": [
      {"name": "c", "resources": {"requests": {"cpu": "1.2.3"}}}]}}}}}})"),
            "TrainingJob ns/j: spec.replicaSpecs.Worker.template.spec.containers[0].resources."
            "requests.cpu: '1.2.3' is not a valid quantity (expected a number with an optional "
            "suffix such as 500m, 2Gi, 1.5, 1e3)");
  EXPECT_EQ(
      Error(head + R"({"replicaSpecs": {"Worker": {"template": {"spec": {"containers": []}}}}}})"),
      "TrainingJob ns/j: spec.replicaSpecs.Worker.template.spec.containers: expected a "
      "non-empty list of containers");
  EXPECT_EQ(Error(head + R"({"replicaSpecs": {"Worker": {"template": {"spec": {"containers": [
      {"name": "c"}], "affinity": {"podAntiAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": []}}}}}}}})"),
            "TrainingJob ns/j: spec.replicaSpecs.Worker.template.spec.affinity.podAntiAffinity."
            "requiredDuringSchedulingIgnoredDuringExecution: required pod (anti-)affinity is not "
            "supported by dlsched (use the PsWorkerAffinity / PsAntiAffinity scorers)");
  EXPECT_EQ(Error(head + R"({"replicaSpecs": {"Worker": {"template": {"spec": {"containers": [
      {"name": "c"}], "tolerations": [{"operator": "Equal", "value": "x"}]}}}}}})"),
            "TrainingJob ns/j: spec.replicaSpecs.Worker.template.spec.tolerations[0].operator: a "
            "toleration without a key must use Exists");
  EXPECT_EQ(Error(head + R"({"replicaSpecs": {"Worker": {)" + worker_tmpl +
                  R"(}}, "scheduling": {"priorityClass": "urgent"}}})"),
            "TrainingJob ns/j: spec.scheduling.priorityClass: expected high, normal or low, got "
            "'urgent'");
  EXPECT_EQ(Error(head + R"({"replicaSpecs": {"Worker": {)" + worker_tmpl +
                  R"(}}, "throughput": {"table": {"zero": 1}}}})"),
            "TrainingJob ns/j: spec.throughput.table.zero: the key must be a worker count in "
            "1..100000");
  EXPECT_EQ(Error(head + R"({"replicaSpecs": {"Worker": {)" + worker_tmpl +
                  R"(}}, "throughput": {"gpuTypes": {"k80": {"zero": 1}}}}})"),
            "TrainingJob ns/j: spec.throughput.gpuTypes.k80.zero: the key must be a worker count "
            "in 1..100000");
  EXPECT_EQ(Error(head + R"({"replicaSpecs": {"Worker": {)" + worker_tmpl +
                  R"(}}, "throughput": {"gpuTypes": {"k80": []}}}})"),
            "TrainingJob ns/j: spec.throughput.gpuTypes.k80: expected a map of workers to "
            "steps/s, got a list");
  // The job as a whole keeps the limits of a workload file's job: its
  // request at maxReplicas (4,097 workers of 1 PiB) overflowed the sums
  // the engine keeps of it.
  EXPECT_EQ(Error(head + R"({"replicaSpecs": {"Worker": {"replicas": 1, "maxReplicas": 4097,
      "template": {"spec": {"containers": [{"name": "c", "resources": {"requests":
      {"memory": "1Pi"}}}]}}}}}})"),
            "TrainingJob ns/j: spec.replicaSpecs: the job's total memory at maxReplicas exceeds "
            "the limit of 4Ei");
  EXPECT_EQ(Error(head + R"({"replicaSpecs": {"Worker": {)" + worker_tmpl +
                  R"(}}, "scheduling": {"maxWaitMinutes": 1.5e7}}})"),
            "TrainingJob ns/j: spec.scheduling.maxWaitMinutes: expected a number in (0, 1e+07], "
            "got 15000000.0");
  // A name is escaped in the message, and checked.
  EXPECT_EQ(Error(R"({"metadata": {"name": "a\u0001b"}, "spec": {}})").substr(0, 41),
            "TrainingJob default/a\\x01b: metadata.name");
}

// Kubeflow's runPolicy: what dlsched honours is read (cleanPodPolicy with
// Kubeflow's default per kind, TTL, deadline, suspend, and schedulingPolicy
// onto the gang's minimum, the queue and a PriorityClass's name); the rest
// is refused naming the field.
// TFJob's Evaluator: read outside the gang (the job's roles and tasks are
// the PS, Chief and Worker ones), its pod made from its template with
// TF_CONFIG's task "evaluator" and the gang's cluster without it.
TEST(TrainingJobTest, EvaluatorIsReadOutsideTheGang) {
  auto tj = DecodeTrainingJob(Parse(R"({"metadata": {"name": "j", "namespace": "ns", "uid": "u"},
    "spec": {"tfReplicaSpecs": {
      "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "tf",
        "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}},
      "Evaluator": {"template": {"spec": {"containers": [{"name": "tf", "image": "eval:1"}]}}}}}})"));
  ASSERT_TRUE(tj.has_value()) << tj.error().message;
  EXPECT_EQ(tj->evaluators, 1);
  EXPECT_EQ(tj->job.NumTasks(2), 2);
  const json pod = MakeEvaluatorPod(*tj, 0, 2, "default-scheduler");
  EXPECT_EQ(pod["metadata"]["name"], "j-evaluator-0");
  EXPECT_EQ(pod["metadata"]["labels"][std::string(kRoleLabel)], "evaluator");
  EXPECT_EQ(pod["spec"]["schedulerName"], "default-scheduler");
  EXPECT_FALSE(pod["spec"].contains("nodeName"));
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"], "u");
  const json tf_config =
      json::parse(pod["spec"]["containers"][0]["env"][0]["value"].get<std::string>());
  EXPECT_EQ(tf_config["task"], json({{"type", "evaluator"}, {"index", 0}}));
  EXPECT_EQ(tf_config["cluster"],
            json({{"worker", {"j-worker-0.j.ns.svc:2222", "j-worker-1.j.ns.svc:2222"}}}));
  EXPECT_FALSE(PodTaskOf(pod).has_value());  // not a task of the engine
}

TEST(TrainingJobTest, RunPolicyIsReadOrRefusedNamingTheField) {
  const std::string head = R"({"metadata": {"name": "j", "namespace": "ns"}, "spec": )";
  const std::string tmpl = R"("template": {"spec": {"containers": [{"name": "c"}]}})";
  const std::string tf = R"("tfReplicaSpecs": {"PS": {"replicas": 1, )" + tmpl +
                         R"(}, "Worker": {"replicas": 4, )" + tmpl + "}}";
  auto with = [&](const std::string& run_policy) {
    return head + "{" + tf + R"(, "runPolicy": )" + run_policy + "}}";
  };
  auto tj = DecodeTrainingJob(Parse(with(R"({"cleanPodPolicy": "All",
      "ttlSecondsAfterFinished": 0, "activeDeadlineSeconds": 60, "suspend": true, "backoffLimit": 3,
      "schedulingPolicy": {"minAvailable": 3, "queue": "research", "priorityClass": "urgent"}})")));
  ASSERT_TRUE(tj.has_value()) << tj.error().message;
  const RunPolicy& rp = tj->run_policy;
  EXPECT_EQ(rp.clean_pod_policy, CleanPodPolicy::kAll);
  EXPECT_EQ(rp.ttl_seconds_after_finished, 0);
  EXPECT_EQ(rp.active_deadline_seconds, 60);
  EXPECT_TRUE(rp.suspend);
  EXPECT_EQ(tj->job.backoff_limit, 3);
  EXPECT_EQ(rp.priority_class, "urgent");
  EXPECT_EQ(tj->job.queue, "research");
  // minAvailable 3 of 1 PS + 4 workers: the gang holds the PS and 2 workers.
  EXPECT_EQ(tj->job.role(core::Role::kWorker).min_replicas, 2);
  EXPECT_EQ(tj->job.role(core::Role::kWorker).replicas, 4);

  // Kubeflow's defaults: Running for a TFJob, None for a PyTorchJob.
  tj = DecodeTrainingJob(Parse(head + "{" + tf + "}}"));
  ASSERT_TRUE(tj.has_value()) << tj.error().message;
  EXPECT_EQ(tj->run_policy.clean_pod_policy, CleanPodPolicy::kRunning);
  EXPECT_FALSE(tj->run_policy.suspend);
  tj = DecodeTrainingJob(
      Parse(head + R"({"pytorchReplicaSpecs": {"Worker": {"replicas": 2, )" + tmpl + "}}}}"));
  ASSERT_TRUE(tj.has_value()) << tj.error().message;
  EXPECT_EQ(tj->run_policy.clean_pod_policy, CleanPodPolicy::kNone);

  EXPECT_EQ(Error(with(R"({"backoffLimit": -1})")),
            "TrainingJob ns/j: spec.runPolicy.backoffLimit: expected an integer in 0..1000000, got "
            "-1");
  EXPECT_EQ(Error(with(R"({"schedulingPolicy": {"minResources": {"cpu": 1}}})")),
            "TrainingJob ns/j: spec.runPolicy.schedulingPolicy.minResources: not supported by "
            "dlsched (the gang's minimum is minAvailable's)");
  EXPECT_EQ(Error(with(R"({"schedulingPolicy": {"scheduleTimeoutSeconds": 5}})")).substr(0, 80),
            "TrainingJob ns/j: spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds: not su");
  EXPECT_EQ(Error(with(R"({"restartPolicy": "Never"})")),
            "TrainingJob ns/j: spec.runPolicy.restartPolicy: unknown key (allowed: "
            "cleanPodPolicy, ttlSecondsAfterFinished, activeDeadlineSeconds, suspend, "
            "backoffLimit, schedulingPolicy)");
  EXPECT_EQ(Error(with(R"({"cleanPodPolicy": "Some"})")),
            "TrainingJob ns/j: spec.runPolicy.cleanPodPolicy: expected All, Running or None, got "
            "'Some'");
  EXPECT_EQ(Error(with(R"({"activeDeadlineSeconds": 0})")),
            "TrainingJob ns/j: spec.runPolicy.activeDeadlineSeconds: expected an integer in "
            "1..2147483647, got 0");
  EXPECT_EQ(Error(with(R"({"suspend": "yes"})")),
            "TrainingJob ns/j: spec.runPolicy.suspend: expected true or false, got 'yes'");
  EXPECT_EQ(Error(with(R"({"schedulingPolicy": {"minAvailable": 1}})")),
            "TrainingJob ns/j: spec.runPolicy.schedulingPolicy.minAvailable: 1 is outside 2..5: "
            "dlsched's gang is every PS and Chief (1) and 1 to replicas (4) workers of "
            "spec.tfReplicaSpecs.Worker");
  EXPECT_EQ(
      Error(
          head + "{" + tf +
          R"(, "scheduling": {"queue": "a"}, "runPolicy": {"schedulingPolicy": {"queue": "b"}}}})"),
      "TrainingJob ns/j: spec.runPolicy.schedulingPolicy.queue: also given as "
      "spec.scheduling.queue: give it in one place");
}

}  // namespace
}  // namespace dlsched::k8s
