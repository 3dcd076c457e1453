// deploy/ as a kustomize base and its overlays, rendered by the real
// `kubectl kustomize`: the base gives the CRD, the RBAC and the Deployment;
// the overlays change the namespace (with every reference to it), the image
// and the profile and nothing else.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace dlsched::k8s {
namespace {

bool HaveKubectl() { return std::system("command -v kubectl >/dev/null 2>&1") == 0; }

// The objects `kubectl kustomize deploy/<dir>` renders, by "Kind/name".
std::map<std::string, YAML::Node> Render(const std::string& dir) {
  const std::string cmd = "timeout 60 kubectl kustomize '" + std::string(DLSCHED_SOURCE_DIR) +
                          "/deploy/" + dir + "' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  const int status = ::pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd << "\n" << out;
  std::map<std::string, YAML::Node> objects;
  for (const YAML::Node& doc : YAML::LoadAll(out)) {
    objects[doc["kind"].as<std::string>() + "/" + doc["metadata"]["name"].as<std::string>()] = doc;
  }
  return objects;
}

YAML::Node Container(const std::map<std::string, YAML::Node>& objects) {
  const auto it = objects.find("Deployment/dlsched-operator");
  if (it == objects.end()) return YAML::Node();
  return it->second["spec"]["template"]["spec"]["containers"][0];
}

std::vector<std::string> Args(const std::map<std::string, YAML::Node>& objects) {
  return Container(objects)["args"].as<std::vector<std::string>>();
}

TEST(DeployTest, KustomizeBaseRendersCrdRbacDeploymentAndService) {
  if (!HaveKubectl()) GTEST_SKIP() << "kubectl is not installed: `kubectl kustomize` not checked";
  const auto objects = Render("");
  std::set<std::string> names;
  for (const auto& [name, doc] : objects) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{
                       "ClusterRole/dlsched-operator", "ClusterRoleBinding/dlsched-operator",
                       "CustomResourceDefinition/cohorts.dlsched.io",
                       "CustomResourceDefinition/queues.dlsched.io",
                       "CustomResourceDefinition/trainingjobs.dlsched.io",
                       "Deployment/dlsched-operator", "Namespace/dlsched-system",
                       "Role/dlsched-leader-election", "RoleBinding/dlsched-leader-election",
                       "Service/dlsched-operator", "ServiceAccount/dlsched"}));
  EXPECT_EQ(Render("base").size(), objects.size());
  EXPECT_EQ(Container(objects)["image"].as<std::string>(), "dlsched:0.1.0");
  // Least privilege: exactly these verbs, finalizers' update included (the
  // OwnerReferencesPermissionEnforcement admission plugin asks for it when
  // the operator creates pods owned by a TrainingJob with blockOwnerDeletion).
  std::set<std::string> granted;
  for (const YAML::Node& rule : objects.at("ClusterRole/dlsched-operator")["rules"]) {
    for (const auto& resource : rule["resources"]) {
      for (const auto& verb : rule["verbs"]) {
        granted.insert(resource.as<std::string>() + ":" + verb.as<std::string>());
      }
    }
  }
  EXPECT_EQ(granted, (std::set<std::string>{"events:create",
                                            "nodes:get",
                                            "nodes:list",
                                            "nodes:watch",
                                            "pods/binding:create",
                                            "pods:create",
                                            "pods:delete",
                                            "pods:get",
                                            "pods:list",
                                            "pods:watch",
                                            "services:create",
                                            "trainingjobs/finalizers:update",
                                            "trainingjobs/status:get",
                                            "trainingjobs/status:update",
                                            "trainingjobs:delete",
                                            "trainingjobs:get",
                                            "trainingjobs:list",
                                            "trainingjobs:watch",
                                            "priorityclasses:get",
                                            "queues:get",
                                            "queues:list",
                                            "queues:watch",
                                            "cohorts:get",
                                            "cohorts:list",
                                            "cohorts:watch",
                                            "queues/status:patch"}));
  // In its own namespace: the Lease, and the leader's label on its pod.
  std::set<std::string> own;
  for (const YAML::Node& rule : objects.at("Role/dlsched-leader-election")["rules"]) {
    for (const auto& resource : rule["resources"]) {
      for (const auto& verb : rule["verbs"]) {
        own.insert(resource.as<std::string>() + ":" + verb.as<std::string>());
      }
    }
  }
  EXPECT_EQ(own,
            (std::set<std::string>{"leases:create", "leases:get", "leases:update", "pods:patch"}));
  // The Service reaches the leader alone (the label only it carries).
  const YAML::Node selector = objects.at("Service/dlsched-operator")["spec"]["selector"];
  EXPECT_EQ(selector["dlsched.io/leader"].as<std::string>(), "true");
}

TEST(DeployTest, OverlaysChangeNamespaceImageAndProfile) {
  if (!HaveKubectl()) GTEST_SKIP() << "kubectl is not installed: `kubectl kustomize` not checked";
  const auto base = Render("");
  const auto ns = Render("overlays/namespace");
  EXPECT_EQ(ns.count("Namespace/ml-scheduling"), 1u);
  EXPECT_EQ(ns.count("Namespace/dlsched-system"), 0u);
  for (const char* name :
       {"ServiceAccount/dlsched", "Deployment/dlsched-operator", "Role/dlsched-leader-election",
        "RoleBinding/dlsched-leader-election", "Service/dlsched-operator"}) {
    EXPECT_EQ(ns.at(name)["metadata"]["namespace"].as<std::string>(), "ml-scheduling") << name;
  }
  for (const char* name :
       {"ClusterRoleBinding/dlsched-operator", "RoleBinding/dlsched-leader-election"}) {
    EXPECT_EQ(ns.at(name)["subjects"][0]["namespace"].as<std::string>(), "ml-scheduling") << name;
  }
  // The Lease follows the pod's namespace: no argument names the old one.
  for (const std::string& arg : Args(ns)) EXPECT_EQ(arg.find("dlsched-system"), std::string::npos);

  const auto image = Render("overlays/image");
  EXPECT_EQ(Container(image)["image"].as<std::string>(), "registry.example.com/ml/dlsched:0.1.0");
  EXPECT_EQ(Args(image), Args(base));

  const auto profile = Render("overlays/profile");
  std::vector<std::string> expected = Args(base);
  for (std::string& arg : expected) {
    if (arg.starts_with("--profile=")) arg = "--profile=kod2";
  }
  EXPECT_NE(expected, Args(base));  // the base has a --profile to replace
  EXPECT_EQ(Args(profile), expected);
  EXPECT_EQ(Container(profile)["image"].as<std::string>(), "dlsched:0.1.0");
}

}  // namespace
}  // namespace dlsched::k8s
