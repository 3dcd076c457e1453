// deploy/crd.yaml agrees with the code: names, the status subresource, the
// printer columns, and the fields the decoder reads.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <yaml-cpp/yaml.h>

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

}  // namespace
}  // namespace dlsched::k8s
