// The test API server kept honest: the real kubectl drives it (create,
// apply, get -o json, get with the CRD's printer columns, get -w, patch,
// delete with garbage collection), and the semantics the operator relies on
// are checked over HTTP: watch from a resourceVersion, bookmarks, 410 Gone,
// 409 Conflict, status and binding subresources, graceful deletion, faults.
// The informer is tested against it too: relist on 410, resume after a cut.
#include "k8s/apiserver.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "dlsched/k8s/informer.h"
#include "dlsched/k8s/rest_client.h"

namespace dlsched::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string Source(const std::string& rel) { return std::string(DLSCHED_SOURCE_DIR) + "/" + rel; }

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start().has_value());
    dir_ =
        fs::temp_directory_path() / fmt::format("dlsched-apiserver-{}-{}", ::getpid(), counter_++);
    fs::create_directories(dir_);
    kubeconfig_ = (dir_ / "kubeconfig").string();
    server_.WriteKubeconfig(kubeconfig_);
    config_.server = server_.Url();
    config_.timeout_seconds = 5;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs kubectl with a fresh cache; returns its exit status and output
  // (stdout and stderr).
  std::pair<int, std::string> Kubectl(const std::string& args) {
    return TestApiServer::Kubectl(kubeconfig_, dir_.string(), args);
  }

  void CreateCrd() { ASSERT_EQ(Kubectl("create -f " + Source("deploy/crd.yaml")).first, 0); }

  static inline int counter_ = 0;
  TestApiServer server_;
  fs::path dir_;
  std::string kubeconfig_;
  k8s::RestConfig config_;
};

json Pod(const std::string& name, const std::string& owner_uid = "") {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "i"}}})}}}};
  if (!owner_uid.empty()) {
    pod["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "dlsched.io/v1alpha1"},
                                                       {"kind", "TrainingJob"},
                                                       {"name", "mnist"},
                                                       {"uid", owner_uid},
                                                       {"controller", true}}});
  }
  return pod;
}

TEST_F(ApiServerTest, KubectlCreatesAppliesGetsPatchesAndDeletes) {
  auto [code, out] = Kubectl("create -f " + Source("deploy/crd.yaml"));
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(
      out.find("customresourcedefinition.apiextensions.k8s.io/trainingjobs.dlsched.io created"),
      std::string::npos)
      << out;
  std::tie(code, out) = Kubectl("api-resources --api-group=dlsched.io");
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("trainingjobs"), std::string::npos) << out;
  EXPECT_NE(out.find(" tj "), std::string::npos) << out;

  const std::string manifest = Source("deploy/examples/mnist.yaml");
  std::tie(code, out) = Kubectl("apply -f " + manifest);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("trainingjob.dlsched.io/mnist created"), std::string::npos) << out;
  std::tie(code, out) = Kubectl("apply -f " + manifest);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("trainingjob.dlsched.io/mnist unchanged"), std::string::npos) << out;

  std::tie(code, out) = Kubectl("get tj mnist -o json");
  ASSERT_EQ(code, 0) << out;
  const json tj = json::parse(out);
  EXPECT_EQ(tj["spec"]["totalSteps"], 2000);
  EXPECT_EQ(tj["metadata"]["generation"], 1);

  // Printer columns from the CRD, filled from the status subresource.
  auto stored = server_.Get("trainingjobs.dlsched.io", "default", "mnist");
  ASSERT_TRUE(stored.has_value());
  (*stored)["status"] = {{"phase", "Waiting"}, {"workers", 0}, {"reason", "0/3 nodes fit"}};
  ASSERT_TRUE(server_.UpdateStatus("trainingjobs.dlsched.io", "default", *stored).has_value());
  std::tie(code, out) = Kubectl("get tj");
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("NAME    PHASE     WORKERS   REASON"), std::string::npos) << out;
  EXPECT_NE(out.find("mnist   Waiting   0         0/3 nodes fit"), std::string::npos) << out;

  std::tie(code, out) =
      Kubectl("patch tj mnist --type merge -p '{\"spec\":{\"totalSteps\":3000}}'");
  ASSERT_EQ(code, 0) << out;
  std::tie(code, out) =
      Kubectl("get tj mnist -o jsonpath='{.spec.totalSteps} {.metadata.generation}'");
  EXPECT_EQ(out, "3000 2");

  // Deleting the job takes the pods it owns (background cascading delete),
  // not the others.
  const std::string uid =
      (*server_.Get("trainingjobs.dlsched.io", "default", "mnist"))["metadata"]["uid"];
  ASSERT_TRUE(server_.Create("pods", "default", Pod("owned", uid)).has_value());
  ASSERT_TRUE(server_.Create("pods", "default", Pod("other")).has_value());
  std::tie(code, out) = Kubectl("delete tj mnist");
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("trainingjob.dlsched.io \"mnist\" deleted"), std::string::npos) << out;
  EXPECT_FALSE(server_.Get("trainingjobs.dlsched.io", "default", "mnist").has_value());
  EXPECT_FALSE(server_.Get("pods", "default", "owned").has_value());
  EXPECT_TRUE(server_.Get("pods", "default", "other").has_value());
  std::tie(code, out) = Kubectl("get tj");
  EXPECT_NE(out.find("No resources found in default namespace."), std::string::npos) << out;
}

TEST_F(ApiServerTest, KubectlWatchSeesAChangeMadeAfterItStarted) {
  CreateCrd();
  ASSERT_EQ(Kubectl("apply -f " + Source("deploy/examples/mnist.yaml")).first, 0);
  std::string out;
  std::thread watcher([&] { out = Kubectl("get tj -w --request-timeout=4s").second; });
  // Change the job once kubectl's watch is open.
  while (server_.RequestCounts()["WATCH trainingjobs.dlsched.io"] == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto tj = server_.Get("trainingjobs.dlsched.io", "default", "mnist");
  (*tj)["status"] = {{"phase", "Running"}, {"workers", 2}};
  ASSERT_TRUE(server_.UpdateStatus("trainingjobs.dlsched.io", "default", *tj).has_value());
  watcher.join();
  std::istringstream lines(out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("mnist")) rows.push_back(line);
  }
  ASSERT_EQ(rows.size(), 2u) << out;
  EXPECT_EQ(rows[1].find("mnist   Running   2"), 0u) << out;
}

TEST_F(ApiServerTest, WatchFromAVersionDeliversLaterEventsInOrderWithBookmarks) {
  ASSERT_TRUE(server_.Create("pods", "default", Pod("a")).has_value());
  const int64_t from = server_.ResourceVersion();
  ASSERT_TRUE(server_.Create("pods", "default", Pod("b")).has_value());
  ASSERT_TRUE(server_.Delete("pods", "default", "a").has_value());
  k8s::RestClient client(config_);
  std::vector<std::string> seen;
  auto status =
      client.Stream(fmt::format("/api/v1/namespaces/default/pods?watch=1&resourceVersion={}"
                                "&allowWatchBookmarks=true&timeoutSeconds=30",
                                from),
                    [&](std::string_view line) {
                      const json e = json::parse(line);
                      seen.push_back(e["type"].get<std::string>() + " " +
                                     e["object"]["metadata"].value("name", ""));
                      return e["type"] != "BOOKMARK";
                    });
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED b", "DELETED a", "BOOKMARK "}));
}

TEST_F(ApiServerTest, ExpiredVersionIsGoneForWatches) {
  ASSERT_TRUE(server_.Create("pods", "default", Pod("a")).has_value());
  const int64_t old = server_.ResourceVersion();
  ASSERT_TRUE(server_.Create("pods", "default", Pod("b")).has_value());
  server_.Compact();
  k8s::RestClient client(config_);
  json event;
  auto status = client.Stream(fmt::format("/api/v1/pods?watch=1&resourceVersion={}", old - 1),
                              [&](std::string_view line) {
                                event = json::parse(line);
                                return false;
                              });
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(event["type"], "ERROR");
  EXPECT_EQ(event["object"]["code"], 410);
  EXPECT_EQ(event["object"]["reason"], "Expired");
}

TEST_F(ApiServerTest, StaleWriteConflictsAndStatusIsItsOwnSubresource) {
  CreateCrd();
  k8s::RestClient client(config_);
  const std::string jobs = "/apis/dlsched.io/v1alpha1/namespaces/default/trainingjobs";
  json tj = {{"apiVersion", "dlsched.io/v1alpha1"},
             {"kind", "TrainingJob"},
             {"metadata", {{"name", "x"}}},
             {"spec", {{"totalSteps", 1}}},
             {"status", {{"phase", "ignored at create"}}}};
  auto r = client.Request("POST", jobs, tj.dump());
  ASSERT_EQ(r->status, 201);
  const json created = json::parse(r->body);
  EXPECT_FALSE(created.contains("status"));
  EXPECT_EQ(client.Request("POST", jobs, tj.dump())->status, 409);  // AlreadyExists
  // A status write changes only the status; a main write keeps it.
  json with_status = created;
  with_status["status"] = {{"phase", "Running"}};
  with_status["spec"]["totalSteps"] = 99;
  r = client.Request("PUT", jobs + "/x/status", with_status.dump());
  ASSERT_EQ(r->status, 200);
  json after = json::parse(r->body);
  EXPECT_EQ(after["status"]["phase"], "Running");
  EXPECT_EQ(after["spec"]["totalSteps"], 1);
  // A write from the version before is stale: 409 Conflict.
  r = client.Request("PUT", jobs + "/x", with_status.dump());
  ASSERT_EQ(r->status, 409);
  EXPECT_EQ(json::parse(r->body)["reason"], "Conflict");
  after["spec"]["totalSteps"] = 5;
  after["status"] = {{"phase", "not through the main resource"}};
  r = client.Request("PUT", jobs + "/x", after.dump());
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["status"]["phase"], "Running");
  EXPECT_EQ(json::parse(r->body)["metadata"]["generation"], 2);
}

// Names a real server refuses for the kinds the operator creates: a
// Service's name not a DNS-1035 label, a Pod's hostname not a DNS-1123
// label: 422 Invalid, details.causes naming the field; nothing stored. A
// one-shot injected answer (a 429 with Retry-After) comes once.
TEST_F(ApiServerTest, NamesARealServerRefusesAre422WithTheirFieldAndInjectedAnswersComeOnce) {
  k8s::RestClient client(config_);
  const json service = {{"apiVersion", "v1"},
                        {"kind", "Service"},
                        {"metadata", {{"name", "2bert"}}},
                        {"spec", {{"clusterIP", "None"}}}};
  auto r = client.Request("POST", "/api/v1/namespaces/default/services", service.dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 422);
  json body = json::parse(r->body);
  EXPECT_EQ(body["reason"], "Invalid");
  EXPECT_EQ(body["details"]["kind"], "Service");
  EXPECT_EQ(body["details"]["causes"][0]["field"], "metadata.name");
  EXPECT_EQ(body["details"]["causes"][0]["reason"], "FieldValueInvalid");
  EXPECT_FALSE(server_.Get("services", "default", "2bert").has_value());
  json pod = Pod("bert.v2-worker-0");
  pod["spec"]["hostname"] = "bert.v2-worker-0";
  pod["spec"]["subdomain"] = "bert.v2";
  r = client.Request("POST", "/api/v1/namespaces/default/pods", pod.dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 422);
  body = json::parse(r->body);
  ASSERT_EQ(body["details"]["causes"].size(), 2u) << body.dump();
  EXPECT_EQ(body["details"]["causes"][0]["field"], "spec.hostname");
  EXPECT_EQ(body["details"]["causes"][1]["field"], "spec.subdomain");
  // The pod's own name may have dots (a DNS-1123 subdomain).
  r = client.Request("POST", "/api/v1/namespaces/default/pods", Pod("bert.v2-worker-0").dump());
  EXPECT_EQ(r->status, 201);
  server_.FailNext("POST services", 429, 1, 7);
  json fine = service;
  fine["metadata"]["name"] = "bert";
  r = client.Request("POST", "/api/v1/namespaces/default/services", fine.dump());
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(r->retry_after_seconds, 7);
  r = client.Request("POST", "/api/v1/namespaces/default/services", fine.dump());
  EXPECT_EQ(r->status, 201);
}

TEST_F(ApiServerTest, BindingOnceThenConflictAndGracefulDeletion) {
  ASSERT_TRUE(server_.Create("pods", "default", Pod("p")).has_value());
  k8s::RestClient client(config_);
  auto bind = [&](const std::string& node) {
    const json b = {{"apiVersion", "v1"},
                    {"kind", "Binding"},
                    {"metadata", {{"name", "p"}}},
                    {"target", {{"kind", "Node"}, {"name", node}}}};
    return client.Request("POST", "/api/v1/namespaces/default/pods/p/binding", b.dump())->status;
  };
  EXPECT_EQ(bind("node-1"), 201);
  EXPECT_EQ(bind("node-2"), 409);
  EXPECT_EQ((*server_.Get("pods", "default", "p"))["spec"]["nodeName"], "node-1");
  // A bound pod is deleted gracefully: marked, kept until a grace-0 delete.
  auto r = client.Request("DELETE", "/api/v1/namespaces/default/pods/p");
  ASSERT_EQ(r->status, 200);
  auto pod = server_.Get("pods", "default", "p");
  ASSERT_TRUE(pod.has_value());
  EXPECT_TRUE((*pod)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ((*pod)["metadata"]["deletionGracePeriodSeconds"], 30);
  r = client.Request("DELETE", "/api/v1/namespaces/default/pods/p",
                     R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})");
  ASSERT_EQ(r->status, 200);
  EXPECT_FALSE(server_.Get("pods", "default", "p").has_value());
}

TEST_F(ApiServerTest, FaultsAreInjectedAsConfigured) {
  ASSERT_TRUE(server_.Create("pods", "default", Pod("p")).has_value());
  k8s::RestClient client(config_);
  ApiFaults f;
  f.error_rate = 1;
  server_.SetFaults(f);
  EXPECT_EQ(client.Request("GET", "/api/v1/namespaces/default/pods/p")->status, 500);
  EXPECT_EQ(client.Request("GET", "/api/v1")->status, 200) << "discovery is spared";
  f = {};
  f.conflict_on_first_write = true;
  server_.SetFaults(f);
  json pod = *server_.Get("pods", "default", "p");
  pod["metadata"]["labels"] = {{"a", "b"}};
  EXPECT_EQ(client.Request("PUT", "/api/v1/namespaces/default/pods/p", pod.dump())->status, 409);
  EXPECT_EQ(client.Request("PUT", "/api/v1/namespaces/default/pods/p", pod.dump())->status, 200);
  f = {};
  f.watch_cut_seconds = 0.2;
  server_.SetFaults(f);
  auto status = client.Stream("/api/v1/pods?watch=1", [](std::string_view) { return true; });
  EXPECT_TRUE(status.has_value()) << "the server ends the watch";
}

// The informer relists after a 410 and reports what went meanwhile as
// deleted; after a cut watch it resumes without relisting.
TEST_F(ApiServerTest, InformerRelistsOnGoneAndResumesAfterACut) {
  ApiFaults f;
  f.watch_cut_seconds = 0.3;
  server_.SetFaults(f);
  ASSERT_TRUE(server_.Create("pods", "default", Pod("a")).has_value());
  std::mutex mu;
  std::vector<std::string> events;
  k8s::InformerHandlers h;
  h.on_add = [&](const json& o) {
    std::lock_guard lock(mu);
    events.push_back("add " + o["metadata"]["name"].get<std::string>());
  };
  h.on_delete = [&](const json& o) {
    std::lock_guard lock(mu);
    events.push_back("delete " + o["metadata"]["name"].get<std::string>());
  };
  k8s::InformerOptions o;
  o.backoff_initial_seconds = 0.05;
  k8s::Informer informer(config_, "/api/v1/pods", h, o);
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10));
  auto wait_for = [&](size_t n) {
    for (int i = 0; i < 1000; ++i) {
      {
        std::lock_guard lock(mu);
        if (events.size() >= n) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  ASSERT_TRUE(wait_for(1));
  // Cut watches resume from the last version: a pod added later is seen.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  ASSERT_TRUE(server_.Create("pods", "default", Pod("b")).has_value());
  ASSERT_TRUE(wait_for(2));
  EXPECT_EQ(informer.Stats().lists, 1);
  // The connection drops, a pod goes meanwhile, and the version the
  // informer resumes from is too old: it relists and reports the pod gone.
  f.watch_cut_seconds = 0;
  f.gone_on_resume = true;
  server_.SetFaults(f);
  server_.DropWatches();
  ASSERT_TRUE(server_.Delete("pods", "default", "a").has_value());
  ASSERT_TRUE(wait_for(3));
  informer.Stop();
  EXPECT_EQ(events, (std::vector<std::string>{"add a", "add b", "delete a"}));
  EXPECT_EQ(informer.Stats().lists, 2);
  EXPECT_EQ(informer.Stats().expired, 1);
}

}  // namespace
}  // namespace dlsched::testing
