// deploy/crd.yaml agrees with the code: names, the status subresource, the
// printer columns, and the fields the decoder reads.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include <yaml-cpp/yaml.h>

#include "dlsched/config/specs.h"
#include "dlsched/k8s/trainingjob.h"

namespace dlsched::k8s {
namespace {

TEST(CrdTest, ManifestMatchesTheDecoder) {
  const YAML::Node crd = YAML::LoadFile(std::string(DLSCHED_SOURCE_DIR) + "/deploy/crd.yaml");
  EXPECT_EQ(crd["kind"].as<std::string>(), "CustomResourceDefinition");
  const YAML::Node spec = crd["spec"];
  EXPECT_EQ(crd["metadata"]["name"].as<std::string>(),
            std::string(kPlural) + "." + std::string(kGroup));
  EXPECT_EQ(spec["group"].as<std::string>(), kGroup);
  EXPECT_EQ(spec["scope"].as<std::string>(), "Namespaced");
  EXPECT_EQ(spec["names"]["kind"].as<std::string>(), kKind);
  EXPECT_EQ(spec["names"]["plural"].as<std::string>(), kPlural);
  EXPECT_EQ(spec["names"]["shortNames"][0].as<std::string>(), "tj");
  ASSERT_EQ(spec["versions"].size(), 1u);
  const YAML::Node v = spec["versions"][0];
  EXPECT_EQ(v["name"].as<std::string>(), kVersion);
  EXPECT_TRUE(v["subresources"]["status"].IsMap());
  std::vector<std::string> columns;
  for (const auto& c : v["additionalPrinterColumns"])
    columns.push_back(c["name"].as<std::string>());
  EXPECT_EQ(columns, (std::vector<std::string>{"Phase", "Workers", "Reason", "Age"}));
  std::set<std::string> fields;
  for (const auto& p : v["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]) {
    fields.insert(p.first.as<std::string>());
  }
  EXPECT_EQ(fields,
            (std::set<std::string>{"replicaSpecs", "tfReplicaSpecs", "pytorchReplicaSpecs",
                                   "elasticPolicy", "scheduling", "totalSteps", "throughput",
                                   "launchDelay", "checkpointDelay", "runPolicy"}));
  const YAML::Node roles = v["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
                            ["replicaSpecs"]["properties"];
  EXPECT_EQ(roles["Chief"]["properties"]["replicas"]["maximum"].as<int>(), 1);
  EXPECT_EQ(roles["Worker"]["properties"]["replicas"]["minimum"].as<int>(), 1);
  EXPECT_TRUE(
      roles["Worker"]["properties"]["template"]["x-kubernetes-preserve-unknown-fields"].as<bool>());
  // runPolicy has a schema (no field kept unread): Kubeflow's fields dlsched
  // honours, and the ones it refuses with a rule naming them.
  const YAML::Node run_policy =
      v["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["runPolicy"];
  EXPECT_FALSE(run_policy["x-kubernetes-preserve-unknown-fields"].IsDefined());
  std::set<std::string> run_fields;
  for (const auto& p : run_policy["properties"]) run_fields.insert(p.first.as<std::string>());
  EXPECT_EQ(run_fields, (std::set<std::string>{"cleanPodPolicy", "ttlSecondsAfterFinished",
                                               "activeDeadlineSeconds", "suspend", "backoffLimit",
                                               "managedBy", "schedulingPolicy"}));
  EXPECT_EQ(run_policy["properties"]["cleanPodPolicy"]["enum"].size(), 3u);
  EXPECT_EQ(run_policy["x-kubernetes-validations"].size(), 1u);  // managedBy refused
  // PyTorchJob's: a Master of exactly one replica, and the Worker role.
  const YAML::Node pytorch = v["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
                              ["pytorchReplicaSpecs"]["properties"];
  EXPECT_EQ(pytorch["Master"]["properties"]["replicas"]["minimum"].as<int>(), 1);
  EXPECT_EQ(pytorch["Master"]["properties"]["replicas"]["maximum"].as<int>(), 1);
  EXPECT_TRUE(pytorch["Worker"]["properties"]["template"]["x-kubernetes-preserve-unknown-fields"]
                  .as<bool>());
  // Edits: CEL transition rules keep every field but runPolicy.suspend and
  // the Worker's elastic range as created (the operator refuses them too,
  // for servers that do not evaluate CEL).
  auto immutable = [](const YAML::Node& field) {
    for (const auto& r : field["x-kubernetes-validations"]) {
      if (r["rule"].as<std::string>() == "self == oldSelf") return true;
    }
    return false;
  };
  const YAML::Node props = v["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
  for (const char* field :
       {"scheduling", "totalSteps", "throughput", "launchDelay", "checkpointDelay"}) {
    EXPECT_TRUE(immutable(props[field])) << field;
  }
  for (const char* role : {"PS", "Chief"}) EXPECT_TRUE(immutable(roles[role])) << role;
  EXPECT_TRUE(immutable(pytorch["Master"]));
  EXPECT_TRUE(immutable(roles["Worker"]["properties"]["replicas"]));
  EXPECT_FALSE(roles["Worker"]["properties"]["minReplicas"]["x-kubernetes-validations"]);
  EXPECT_FALSE(roles["Worker"]["properties"]["maxReplicas"]["x-kubernetes-validations"]);
  EXPECT_FALSE(run_policy["properties"]["suspend"]["x-kubernetes-validations"]);
  for (const char* field : {"cleanPodPolicy", "ttlSecondsAfterFinished", "activeDeadlineSeconds",
                            "backoffLimit", "schedulingPolicy"}) {
    EXPECT_TRUE(immutable(run_policy["properties"][field])) << field;
  }
}

// The Queue and Cohort kinds: cluster-scoped, with a status subresource,
// the printer columns the operator's status fills, and exactly the fields
// of a cluster file's queue and cohort entries (plus a Queue's
// namespaces), each of which the operator decodes: a manifest of every
// field parses.
TEST(CrdTest, QueueAndCohortKindsMatchTheClusterFilesEntries) {
  std::map<std::string, YAML::Node> kinds;
  for (const YAML::Node& doc :
       YAML::LoadAllFromFile(std::string(DLSCHED_SOURCE_DIR) + "/deploy/crd.yaml")) {
    kinds[doc["spec"]["names"]["kind"].as<std::string>()] = doc;
  }
  ASSERT_EQ(kinds.size(), 3u);
  auto fields = [&](const std::string& kind) {
    std::set<std::string> out;
    const YAML::Node v = kinds.at(kind)["spec"]["versions"][0];
    for (const auto& p : v["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]) {
      out.insert(p.first.as<std::string>());
    }
    return out;
  };
  for (const char* kind : {"Queue", "Cohort"}) {
    const YAML::Node crd = kinds.at(kind);
    EXPECT_EQ(crd["spec"]["scope"].as<std::string>(), "Cluster") << kind;
    EXPECT_EQ(crd["spec"]["group"].as<std::string>(), kGroup);
    EXPECT_TRUE(crd["spec"]["versions"][0]["subresources"]["status"].IsMap()) << kind;
  }
  EXPECT_EQ(fields("Queue"),
            (std::set<std::string>{"cohort", "weight", "namespaces", "quota", "priority",
                                   "capability", "guarantee", "deserved", "preemption"}));
  EXPECT_EQ(fields("Cohort"), (std::set<std::string>{"parent", "weight", "quota"}));
  std::vector<std::string> columns;
  for (const auto& c : kinds.at("Queue")["spec"]["versions"][0]["additionalPrinterColumns"]) {
    columns.push_back(c["jsonPath"].as<std::string>());
  }
  EXPECT_EQ(columns, (std::vector<std::string>{
                         ".spec.cohort", ".status.nominalGPUs", ".status.usedGPUs",
                         ".status.borrowedGPUs", ".status.pendingJobs", ".status.admittedJobs",
                         ".status.conditions[0].status", ".metadata.creationTimestamp"}));
  // Every field given: the operator's decoder takes it.
  const YAML::Node spec = YAML::Load(
      "{cohort: lab, weight: 2, quota: {nvidia.com/gpu: {nominal: 4, borrowingLimit: 2, "
      "lendingLimit: 1}, cpu: 64}, priority: 1, capability: {nvidia.com/gpu: 8}, guarantee: "
      "{nvidia.com/gpu: 1}, deserved: {nvidia.com/gpu: 4}, preemption: {withinQueue: "
      "LowerPriority, reclaimWithinCohort: Any, borrowWithinCohort: LowerPriority, "
      "maxPriorityThreshold: normal}}");
  auto q = config::ParseQueueObject(spec, "team-a", "Queue team-a", "spec");
  ASSERT_TRUE(q.has_value()) << q.error().message;
  EXPECT_EQ(q->name, "team-a");
  EXPECT_EQ(q->cohort, "lab");
  ASSERT_NE(q->Line(core::kGpu), nullptr);
  EXPECT_EQ(q->Line(core::kGpu)->borrowing_limit, 2);
  auto c = config::ParseCohortObject(
      YAML::Load(
          "{parent: org, weight: 2, quota: {nvidia.com/gpu: {nominal: 2, lendingLimit: 1}}}"),
      "lab", "Cohort lab", "spec");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->parent, "org");
  // A name in spec is refused: the name is metadata.name.
  auto named = config::ParseQueueObject(YAML::Load("{name: x}"), "team-a", "Queue team-a", "spec");
  ASSERT_FALSE(named.has_value());
  EXPECT_EQ(named.error().message,
            "Queue team-a: spec.name: not a field here: the name is metadata.name");
}

}  // namespace
}  // namespace dlsched::k8s
