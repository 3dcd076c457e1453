// The test API server kept honest: the real kubectl drives it (create,
// apply, get -o json, get with the CRD's printer columns, get -w, patch,
// delete with garbage collection), and the semantics the operator relies on
// are checked over HTTP: watch from a resourceVersion, bookmarks, 410 Gone,
// 409 Conflict, status and binding subresources, graceful deletion, faults.
// The informer is tested against it too: relist on 410, resume after a cut.
#include "k8s/apiserver.h"

#include <gtest/gtest.h>
#include <httplib.h>
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
#include "k8s/test_kubelet.h"

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

// The Queue kind as a platform team drives it with kubectl: the example
// applied (cluster-scoped, no namespace), the status written by a JSON
// patch on the status subresource as the operator writes it, and the
// printer columns filled from it.
TEST_F(ApiServerTest, KubectlAppliesQueuesAndShowsTheirStatusColumns) {
  CreateCrd();
  auto [code, out] = Kubectl("apply -f " + Source("deploy/examples/queues.yaml"));
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("queue.dlsched.io/vision created"), std::string::npos) << out;
  EXPECT_NE(out.find("cohort.dlsched.io/research created"), std::string::npos) << out;
  const std::string patch =
      R"([{"op":"add","path":"/status","value":{"nominalGPUs":8,"usedGPUs":10,"borrowedGPUs":2,)"
      R"("pendingJobs":3,"admittedJobs":4,"conditions":[{"type":"Active","status":"True",)"
      R"("reason":"Ready","message":"ok","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}])";
  std::tie(code, out) =
      Kubectl("patch queue vision --subresource=status --type=json -p '" + patch + "'");
  ASSERT_EQ(code, 0) << out;
  std::tie(code, out) = Kubectl("get queues");
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("NAME     COHORT     NOMINAL GPUS   USED GPUS   BORROWED GPUS   PENDING   "
                     "ADMITTED   ACTIVE"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("vision   research   8              10          2               3         "
                     "4          True"),
            std::string::npos)
      << out;
  // The spec is not the status's to change, nor the status the spec's.
  std::tie(code, out) = Kubectl("get dq vision -o jsonpath='{.spec.quota.nvidia\\.com/gpu}'");
  EXPECT_EQ(out, "8") << out;
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

// Objects are checked against Kubernetes' own OpenAPI definitions (and a
// custom resource against its CRD's schema), on create, update, the status
// subresource and the Binding: 422 Invalid with details.causes naming the
// field, as field.ErrorList gives them. Unknown fields are dropped with a
// Warning (the default fieldValidation, Warn), or refused 400 when the
// request says Strict (as kubectl does).
TEST_F(ApiServerTest, ObjectsAreCheckedAgainstKubernetesSchemasAnd422NamesTheField) {
  CreateCrd();
  k8s::RestClient client(config_);
  const std::string pods = "/api/v1/namespaces/default/pods";
  auto cause = [](const k8s::Response& r) {
    const json body = json::parse(r.body);
    EXPECT_EQ(body["reason"], "Invalid") << r.body;
    const json causes = body.value("details", json::object()).value("causes", json::array());
    return causes.empty() ? json::object() : causes[0];
  };
  json pod = Pod("p");
  pod["spec"]["containers"][0].erase("name");
  auto r = client.Request("POST", pods, pod.dump());
  ASSERT_EQ(r->status, 422) << r->body;
  EXPECT_EQ(cause(*r)["field"], "spec.containers[0].name");
  EXPECT_EQ(cause(*r)["reason"], "FieldValueRequired");
  EXPECT_NE(json::parse(r->body)["message"].get<std::string>().find(
                "Pod \"p\" is invalid: spec.containers[0].name: Required value"),
            std::string::npos)
      << r->body;
  pod = Pod("p");
  pod["spec"]["containers"][0]["ports"] = json::array({{{"containerPort", "eighty"}}});
  r = client.Request("POST", pods, pod.dump());
  ASSERT_EQ(r->status, 422) << r->body;
  EXPECT_EQ(cause(*r)["field"], "spec.containers[0].ports[0].containerPort");
  EXPECT_EQ(json::parse(r->body)["details"]["causes"].size(), 1u) << r->body;
  EXPECT_FALSE(server_.Get("pods", "default", "p").has_value());
  // Unknown fields: dropped with a warning, or refused when Strict.
  pod = Pod("p");
  pod["spec"]["colour"] = "blue";
  httplib::Client http(server_.Url());
  auto res = http.Post(pods, pod.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201) << res->body;
  EXPECT_EQ(res->get_header_value("Warning"), R"(299 - "unknown field \"spec.colour\"")");
  EXPECT_FALSE((*server_.Get("pods", "default", "p"))["spec"].contains("colour"));
  pod["metadata"]["name"] = "q";
  res = http.Post(pods + "?fieldValidation=Strict", pod.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find(R"(strict decoding error: unknown field \"spec.colour\")"),
            std::string::npos)
      << res->body;
  // The status subresource and an update are checked too.
  json stored = *server_.Get("pods", "default", "p");
  stored["status"]["phase"] = 3;
  r = client.Request("PUT", pods + "/p/status", stored.dump());
  ASSERT_EQ(r->status, 422) << r->body;
  EXPECT_EQ(cause(*r)["field"], "status.phase");
  stored = *server_.Get("pods", "default", "p");
  stored["metadata"]["labels"] = {{"a", 1}};
  r = client.Request("PUT", pods + "/p", stored.dump());
  ASSERT_EQ(r->status, 422) << r->body;
  EXPECT_EQ(cause(*r)["field"], "metadata.labels.a");
  // The Binding: its target is required.
  r = client.Request(
      "POST", pods + "/p/binding",
      json({{"apiVersion", "v1"}, {"kind", "Binding"}, {"metadata", {{"name", "p"}}}}).dump());
  ASSERT_EQ(r->status, 422) << r->body;
  EXPECT_EQ(cause(*r)["field"], "target");
  // A TrainingJob, against the CRD's openAPIV3Schema.
  const json tj = {{"apiVersion", "dlsched.io/v1alpha1"},
                   {"kind", "TrainingJob"},
                   {"metadata", {{"name", "x"}}},
                   {"spec", {{"totalSteps", "many"}}}};
  r = client.Request("POST", "/apis/dlsched.io/v1alpha1/namespaces/default/trainingjobs",
                     tj.dump());
  ASSERT_EQ(r->status, 422) << r->body;
  EXPECT_EQ(cause(*r)["field"], "spec.totalSteps");
  json bad = tj;
  bad["spec"] = {{"totalSteps", 10},
                 {"replicaSpecs", {{"Worker", {{"replicas", 1}, {"restartPolicy", "Sometimes"}}}}}};
  r = client.Request("POST", "/apis/dlsched.io/v1alpha1/namespaces/default/trainingjobs",
                     bad.dump());
  ASSERT_EQ(r->status, 422) << r->body;
  EXPECT_EQ(cause(*r)["field"], "spec.replicaSpecs.Worker.restartPolicy");
  EXPECT_EQ(cause(*r)["reason"], "FieldValueNotSupported");
  // kubectl asks Strict: an unknown field in a manifest is refused.
  const std::string manifest = (dir_ / "pod.json").string();
  pod["metadata"]["name"] = "k";
  std::ofstream(manifest) << pod.dump();
  auto [code, out] = Kubectl("create -f " + manifest);
  EXPECT_NE(code, 0) << out;
  EXPECT_NE(out.find("unknown field \"spec.colour\""), std::string::npos) << out;
}

// Every kind's name follows its rule: a DNS-1123 subdomain (a config map,
// a node, a TrainingJob), a DNS-1123 label (a namespace); generateName
// gives a name of five more characters.
TEST_F(ApiServerTest, EveryKindsNameFollowsItsRuleAndGenerateNameMakesOne) {
  CreateCrd();
  k8s::RestClient client(config_);
  auto field = [&](const std::string& path, const json& object) {
    auto r = client.Request("POST", path, object.dump());
    EXPECT_EQ(r->status, 422) << r->body;
    return json::parse(r->body)["details"]["causes"][0].value("field", "");
  };
  EXPECT_EQ(field("/api/v1/namespaces/default/configmaps", {{"metadata", {{"name", "Bad_Name"}}}}),
            "metadata.name");
  EXPECT_EQ(field("/api/v1/namespaces", {{"metadata", {{"name", "a.b"}}}}), "metadata.name");
  EXPECT_EQ(field("/api/v1/nodes", {{"metadata", {{"name", "-node"}}}}), "metadata.name");
  EXPECT_EQ(field("/apis/dlsched.io/v1alpha1/namespaces/default/trainingjobs",
                  {{"apiVersion", "dlsched.io/v1alpha1"},
                   {"kind", "TrainingJob"},
                   {"metadata", {{"name", "MNIST"}}},
                   {"spec", {{"totalSteps", 1}}}}),
            "metadata.name");
  auto r = client.Request("POST", "/api/v1/namespaces/default/configmaps",
                          json({{"metadata", {{"generateName", "cm-"}}}}).dump());
  ASSERT_EQ(r->status, 201) << r->body;
  const std::string name = json::parse(r->body)["metadata"]["name"];
  EXPECT_EQ(name.size(), 8u);
  EXPECT_EQ(name.substr(0, 3), "cm-");
}

// A new pod gets what a real server defaults (SetDefaults_Pod and the
// Priority, ServiceAccount and DefaultTolerationSeconds admission plugins).
TEST_F(ApiServerTest, PodsAreDefaultedAsARealServerDoes) {
  json pod = Pod("p");
  pod["spec"]["containers"].push_back({{"name", "pinned"}, {"image", "busybox:1.36"}});
  const std::string manifest = (dir_ / "pod.json").string();
  std::ofstream(manifest) << pod.dump();
  auto [code, out] = Kubectl("create -f " + manifest);
  ASSERT_EQ(code, 0) << out;
  std::tie(code, out) = Kubectl("get pod p -o json");
  ASSERT_EQ(code, 0) << out;
  const json spec = json::parse(out)["spec"];
  EXPECT_EQ(spec["restartPolicy"], "Always");
  EXPECT_EQ(spec["dnsPolicy"], "ClusterFirst");
  EXPECT_EQ(spec["terminationGracePeriodSeconds"], 30);
  EXPECT_EQ(spec["schedulerName"], "default-scheduler");
  EXPECT_EQ(spec["enableServiceLinks"], true);
  EXPECT_EQ(spec["priority"], 0);
  EXPECT_EQ(spec["serviceAccountName"], "default");
  EXPECT_EQ(spec["tolerations"].size(), 2u);
  EXPECT_EQ(spec["containers"][0]["imagePullPolicy"], "Always");  // no tag: latest
  EXPECT_EQ(spec["containers"][1]["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(spec["containers"][0]["terminationMessagePath"], "/dev/termination-log");
  EXPECT_EQ(spec["containers"][0]["terminationMessagePolicy"], "File");
}

// Lists page with limit and continue (kubectl's --chunk-size), with
// remainingItemCount; a continue token from before the kept history is 410
// Expired.
TEST_F(ApiServerTest, ListsArePagedWithLimitAndContinue) {
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    ASSERT_TRUE(server_.Create("pods", "default", Pod(name)).has_value());
  }
  auto [code, out] = Kubectl("get pods --chunk-size=2 -o name");
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(out, "pod/a\npod/b\npod/c\npod/d\npod/e\n");
  EXPECT_GE(server_.RequestCounts()["LIST pods"], 3);
  k8s::RestClient client(config_);
  auto r = client.Request("GET", "/api/v1/namespaces/default/pods?limit=2");
  ASSERT_EQ(r->status, 200);
  json page = json::parse(r->body);
  ASSERT_EQ(page["items"].size(), 2u);
  EXPECT_EQ(page["metadata"]["remainingItemCount"], 3);
  const std::string token = page["metadata"]["continue"];
  httplib::Params params{{"limit", "2"}, {"continue", token}};
  httplib::Client http(server_.Url());
  auto res = http.Get("/api/v1/namespaces/default/pods", params, httplib::Headers{});
  ASSERT_TRUE(res);
  page = json::parse(res->body);
  ASSERT_EQ(page["items"].size(), 2u);
  EXPECT_EQ(page["items"][0]["metadata"]["name"], "c");
  EXPECT_EQ(page["metadata"]["remainingItemCount"], 1);
  server_.Compact();
  res = http.Get("/api/v1/namespaces/default/pods", params, httplib::Headers{});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 410);
  EXPECT_EQ(json::parse(res->body)["reason"], "Expired");
}

// Set-based label selectors besides equality ones.
TEST_F(ApiServerTest, SetBasedLabelSelectors) {
  for (const char* app : {"a", "b", "c", ""}) {
    json pod = Pod(std::string("p") + app);
    if (*app != '\0') pod["metadata"]["labels"] = {{"app", app}};
    ASSERT_TRUE(server_.Create("pods", "default", pod).has_value());
  }
  auto names = [&](const std::string& selector) {
    auto [code, out] = Kubectl("get pods -o name -l '" + selector + "'");
    EXPECT_EQ(code, 0) << out;
    return out;
  };
  EXPECT_EQ(names("app in (a,b)"), "pod/pa\npod/pb\n");
  EXPECT_EQ(names("app notin (a)"), "pod/p\npod/pb\npod/pc\n");
  EXPECT_EQ(names("!app"), "pod/p\n");
  EXPECT_EQ(names("app"), "pod/pa\npod/pb\npod/pc\n");
  EXPECT_EQ(names("app in (a,c),app!=c"), "pod/pa\n");
}

// Namespaces: a create into one that does not exist is 404, into one being
// deleted 403; deleting one deletes its objects, then it. The option
// auto_create_namespaces creates them instead.
TEST_F(ApiServerTest, NamespacesMustExistAndTheirDeletionEmptiesThem) {
  k8s::RestClient client(config_);
  json pod = Pod("p");
  pod["metadata"]["namespace"] = "team";
  auto r = client.Request("POST", "/api/v1/namespaces/team/pods", pod.dump());
  ASSERT_EQ(r->status, 404) << r->body;
  EXPECT_EQ(json::parse(r->body)["message"], "namespaces \"team\" not found");
  // (kubectl's `create namespace` speaks protobuf, which this server does
  // not: a manifest goes as JSON.)
  const std::string manifest = (dir_ / "ns.json").string();
  std::ofstream(manifest) << R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}})";
  auto [code, out] = Kubectl("create -f " + manifest);
  ASSERT_EQ(code, 0) << out;
  ASSERT_TRUE(server_.Create("pods", "team", pod).has_value());
  // A config map a finalizer holds keeps the namespace Terminating.
  ASSERT_TRUE(server_
                  .Create("configmaps", "team",
                          {{"metadata", {{"name", "held"}, {"finalizers", {"example.com/hold"}}}}})
                  .has_value());
  std::tie(code, out) = Kubectl("delete namespace team --wait=false");
  ASSERT_EQ(code, 0) << out;
  EXPECT_FALSE(server_.Get("pods", "team", "p").has_value());
  auto ns = server_.Get("namespaces", "", "team");
  ASSERT_TRUE(ns.has_value());
  EXPECT_EQ((*ns)["status"]["phase"], "Terminating");
  r = client.Request("POST", "/api/v1/namespaces/team/pods", pod.dump());
  ASSERT_EQ(r->status, 403) << r->body;
  const json body = json::parse(r->body);
  EXPECT_EQ(body["reason"], "Forbidden");
  EXPECT_EQ(body["message"],
            "pods \"p\" is forbidden: unable to create new content in namespace team because it "
            "is being terminated");
  EXPECT_EQ(body["details"]["causes"][0]["reason"], "NamespaceTerminating");
  json held = *server_.Get("configmaps", "team", "held");
  held["metadata"].erase("finalizers");
  ASSERT_TRUE(server_.Update("configmaps", "team", held).has_value());
  EXPECT_FALSE(server_.Get("configmaps", "team", "held").has_value());
  EXPECT_FALSE(server_.Get("namespaces", "", "team").has_value());

  TestApiServer::Options o;
  o.auto_create_namespaces = true;
  TestApiServer lax(o);
  pod["metadata"]["namespace"] = "elsewhere";
  ASSERT_TRUE(lax.Create("pods", "elsewhere", pod).has_value());
  EXPECT_TRUE(lax.Get("namespaces", "", "elsewhere").has_value());
}

// Garbage collection as the real collector: orphan (dependants keep
// running, without the ownerReference), foreground (the owner stays, with
// the foregroundDeletion finalizer, until its blocking dependants are
// gone), and a dangling owner (an object created owned by a uid that does
// not exist is collected).
TEST_F(ApiServerTest, GarbageCollectionOrphanForegroundAndDanglingOwners) {
  auto owner = [&](const std::string& name) {
    auto cm = server_.Create("configmaps", "default", {{"metadata", {{"name", name}}}});
    EXPECT_TRUE(cm.has_value());
    return (*cm)["metadata"]["uid"].get<std::string>();
  };
  auto owned = [&](const std::string& name, const std::string& uid) {
    json pod = Pod(name);
    pod["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "v1"},
                                                       {"kind", "ConfigMap"},
                                                       {"name", "owner"},
                                                       {"uid", uid},
                                                       {"blockOwnerDeletion", true}}});
    pod["spec"]["nodeName"] = "node-1";  // bound: deleted gracefully
    EXPECT_TRUE(server_.Create("pods", "default", pod).has_value());
  };
  owned("orphan", owner("o1"));
  auto [code, out] = Kubectl("delete configmap o1 --cascade=orphan");
  ASSERT_EQ(code, 0) << out;
  EXPECT_FALSE(server_.Get("configmaps", "default", "o1").has_value());
  auto pod = server_.Get("pods", "default", "orphan");
  ASSERT_TRUE(pod.has_value());
  EXPECT_TRUE((*pod)["metadata"]["ownerReferences"].empty());
  EXPECT_FALSE((*pod)["metadata"].contains("deletionTimestamp"));

  owned("blocking", owner("o2"));
  std::tie(code, out) = Kubectl("delete configmap o2 --cascade=foreground --wait=false");
  ASSERT_EQ(code, 0) << out;
  auto cm = server_.Get("configmaps", "default", "o2");
  ASSERT_TRUE(cm.has_value()) << "kept while a blocking dependant is there";
  EXPECT_TRUE((*cm)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ((*cm)["metadata"]["finalizers"], json::array({"foregroundDeletion"}));
  pod = server_.Get("pods", "default", "blocking");
  ASSERT_TRUE(pod.has_value());
  EXPECT_TRUE((*pod)["metadata"].contains("deletionTimestamp"));
  ASSERT_TRUE(server_.Delete("pods", "default", "blocking", 0).has_value());
  EXPECT_FALSE(server_.Get("configmaps", "default", "o2").has_value());

  // Dangling: collected (a bound pod gracefully, so it is Terminating).
  owned("dangling", "00000000-0000-4000-8000-000000000000");
  pod = server_.Get("pods", "default", "dangling");
  ASSERT_TRUE(pod.has_value());
  EXPECT_TRUE((*pod)["metadata"].contains("deletionTimestamp"));
}

// OwnerReferencesPermissionEnforcement: blockOwnerDeletion needs the right
// to update the owner's finalizers, which the option gives by token.
TEST_F(ApiServerTest, BlockOwnerDeletionNeedsTheOwnersFinalizersWhenEnforced) {
  TestApiServer::Options o;
  o.owner_references_permission_enforcement = true;
  o.finalizers_tokens = {"test-token"};
  TestApiServer strict(o);
  ASSERT_TRUE(strict.Start().has_value());
  auto cm = strict.Create("configmaps", "default", {{"metadata", {{"name", "owner"}}}});
  ASSERT_TRUE(cm.has_value());
  json pod = Pod("p", (*cm)["metadata"]["uid"].get<std::string>());
  pod["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = true;
  k8s::RestConfig config;
  config.server = strict.Url();
  k8s::RestClient anonymous(config);
  auto r = anonymous.Request("POST", "/api/v1/namespaces/default/pods", pod.dump());
  ASSERT_EQ(r->status, 403) << r->body;
  EXPECT_NE(r->body.find("cannot set blockOwnerDeletion if an ownerReference refers to a "
                         "resource you can't set finalizers on"),
            std::string::npos)
      << r->body;
  config.bearer_token = "test-token";
  k8s::RestClient allowed(config);
  r = allowed.Request("POST", "/api/v1/namespaces/default/pods", pod.dump());
  EXPECT_EQ(r->status, 201) << r->body;
}

// An unreachable node (the test kubelet's SetUnreachable): Ready Unknown
// and the unreachable taints, as the node lifecycle controller sets them;
// its pods keep their phase, and one deleted stays Terminating until it is
// force-deleted or the node is back.
TEST_F(ApiServerTest, PodsOfAnUnreachableNodeStayTerminatingUntilForcedOrBack) {
  CreateCrd();
  ASSERT_TRUE(server_.Create("nodes", "", {{"metadata", {{"name", "node-1"}}}}).has_value());
  for (const char* name : {"forced", "waits"}) {
    json pod = Pod(name);
    pod["spec"]["nodeName"] = "node-1";
    ASSERT_TRUE(server_.Create("pods", "default", pod).has_value());
  }
  TestKubelet kubelet(config_, [] { return 0.0; });
  kubelet.Start(false);
  auto phase = [&](const std::string& name) {
    auto p = server_.Get("pods", "default", name);
    return p ? (*p)["status"].value("phase", "") : "gone";
  };
  // Ticks until `done` holds (the kubelet sees the server through watches).
  auto tick_until = [&](const std::function<bool()>& done) {
    for (int i = 0; i < 2000 && !done(); ++i) {
      kubelet.Tick();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return done();
  };
  ASSERT_TRUE(
      tick_until([&] { return phase("forced") == "Running" && phase("waits") == "Running"; }));
  ASSERT_TRUE(kubelet.SetUnreachable("node-1", true).has_value());
  const json node = *server_.Get("nodes", "", "node-1");
  ASSERT_EQ(node["spec"]["taints"].size(), 2u);
  EXPECT_EQ(node["spec"]["taints"][0]["key"], "node.kubernetes.io/unreachable");
  EXPECT_EQ(node["spec"]["taints"][0]["effect"], "NoSchedule");
  EXPECT_EQ(node["spec"]["taints"][1]["effect"], "NoExecute");
  EXPECT_TRUE(node["spec"]["taints"][1].contains("timeAdded"));
  EXPECT_EQ(node["status"]["conditions"][0]["type"], "Ready");
  EXPECT_EQ(node["status"]["conditions"][0]["status"], "Unknown");
  auto [code, out] = Kubectl("delete pod forced waits --wait=false");
  ASSERT_EQ(code, 0) << out;
  // Ticks pass and nothing of the node's pods changes.
  for (int i = 0; i < 20; ++i) kubelet.Tick();
  EXPECT_EQ(phase("forced"), "Running");
  EXPECT_EQ(phase("waits"), "Running");
  EXPECT_TRUE((*server_.Get("pods", "default", "waits"))["metadata"].contains("deletionTimestamp"));
  std::tie(code, out) = Kubectl("delete pod forced --grace-period=0 --force");
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(phase("forced"), "gone");
  EXPECT_EQ(phase("waits"), "Running");
  ASSERT_TRUE(kubelet.SetUnreachable("node-1", false).has_value());
  EXPECT_EQ((*server_.Get("nodes", "", "node-1"))["status"]["conditions"][0]["status"], "True");
  EXPECT_TRUE(tick_until([&] { return phase("waits") == "gone"; }));
  kubelet.Stop();
}

}  // namespace
}  // namespace dlsched::testing
