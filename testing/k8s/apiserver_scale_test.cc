// The test API server at scale (issue 28): what its cheaper paths must
// keep doing. Every watch is sent every change of its
// resource, in order, from per-resource logs; garbage collection by the
// owner index deletes an owner's dependants down a chain and nothing
// else, and follows ownerReferences changed by updates; an injected
// write latency delays writes and not reads; a connection is kept alive
// for any number of requests; the listen backlog is the system's.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dlsched/k8s/rest_client.h"
#include "k8s/apiserver.h"

namespace dlsched::testing {
namespace {

using nlohmann::json;

json Pod(const std::string& name, const json& owner = nullptr) {
  json pod = {{"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "i"}}})}}}};
  if (!owner.is_null()) pod["metadata"]["ownerReferences"] = json::array({owner});
  return pod;
}

json ConfigMap(const std::string& name, const json& labels = json::object(),
               const json& owner = nullptr) {
  json cm = {{"metadata", {{"name", name}, {"namespace", "default"}, {"labels", labels}}}};
  if (!owner.is_null()) cm["metadata"]["ownerReferences"] = json::array({owner});
  return cm;
}

// An ownerReference to `object` (a ConfigMap), blocking its deletion when
// `block`.
json OwnerRef(const json& object, bool block = false) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"name", object["metadata"]["name"]},
          {"uid", object["metadata"]["uid"]},
          {"blockOwnerDeletion", block}};
}

// Until `done` holds, at most 30 s (a hang guard, not a timing assertion).
bool Eventually(const std::function<bool()>& done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

class ApiServerScaleTest : public ::testing::Test {
 protected:
  explicit ApiServerScaleTest(TestApiServer::Options options = {}) : server_(options) {}
  void SetUp() override {
    ASSERT_TRUE(server_.Start().has_value());
    config_.server = server_.Url();
    config_.bearer_token = "test-token";
    config_.timeout_seconds = 30;
  }

  // A watch of `path` (a list path with its query) from version `from`,
  // on a thread of its own, collecting "TYPE name rv" until it has `n`.
  std::thread Watch(const std::string& path, int64_t from, size_t n,
                    std::vector<std::string>& seen) {
    return std::thread([this, path, from, n, &seen] {
      k8s::RestClient client(config_);
      const std::string sep = path.find('?') == std::string::npos ? "?" : "&";
      client.Stream(
          fmt::format("{}{}watch=1&resourceVersion={}&timeoutSeconds=60", path, sep, from),
          [&](std::string_view line) {
            const json e = json::parse(line);
            seen.push_back(fmt::format("{} {} {}", e["type"].get<std::string>(),
                                       e["object"]["metadata"].value("name", ""),
                                       e["object"]["metadata"].value("resourceVersion", "")));
            return seen.size() < n;
          });
    });
  }

  // ConfigMap `object` created; what the server made of it.
  json Made(const json& object) {
    auto made = server_.Create("configmaps", "default", object);
    EXPECT_TRUE(made.has_value());
    return made ? *made : json();
  }

  TestApiServer server_;
  k8s::RestConfig config_;
};

// Several watches of one resource and one of another (with a label
// selector): each is sent every change it matches, once, in the order
// made, with its resourceVersion; events made before a watch connected
// come from its resource's log, later ones as they happen.
TEST_F(ApiServerScaleTest, WatchFanOutDeliversEveryChangeToEveryWatcherInOrder) {
  const int64_t from = server_.ResourceVersion();
  std::vector<std::string> want_pods, want_cms;
  auto made = [](std::vector<std::string>& want, const std::string& type, const json& object) {
    want.push_back(fmt::format("{} {} {}", type, object["metadata"]["name"].get<std::string>(),
                               object["metadata"]["resourceVersion"].get<std::string>()));
  };
  // The events: pods created, relabelled and deleted, ConfigMaps in between
  // (one leaves the selector: DELETED for its watch).
  constexpr int kPods = 40;
  const size_t pod_events = kPods + kPods / 2 + kPods / 4;
  std::vector<std::vector<std::string>> seen(4);
  std::vector<std::string> seen_cms;
  std::vector<std::thread> watches;
  for (auto& s : seen) watches.push_back(Watch("/api/v1/pods", from, pod_events, s));
  watches.push_back(
      Watch("/api/v1/namespaces/default/configmaps?labelSelector=app%3Dx", from, 4, seen_cms));
  for (int i = 0; i < kPods; ++i) {
    auto pod = server_.Create("pods", "default", Pod(fmt::format("p{}", i)));
    ASSERT_TRUE(pod.has_value());
    made(want_pods, "ADDED", *pod);
    if (i % 10 == 0) {
      auto cm = server_.Create("configmaps", "default",
                               ConfigMap(fmt::format("c{}", i), {{"app", i < 20 ? "x" : "y"}}));
      ASSERT_TRUE(cm.has_value());
      if (i < 20) made(want_cms, "ADDED", *cm);
    }
  }
  for (int i = 0; i < kPods / 2; ++i) {
    json pod = *server_.Get("pods", "default", fmt::format("p{}", i));
    pod["metadata"]["labels"]["changed"] = "yes";
    auto updated = server_.Update("pods", "default", pod);
    ASSERT_TRUE(updated.has_value());
    made(want_pods, "MODIFIED", *updated);
  }
  json cm = *server_.Get("configmaps", "default", "c10");
  cm["metadata"]["labels"]["app"] = "z";  // leaves the selector
  auto moved = server_.Update("configmaps", "default", cm);
  ASSERT_TRUE(moved.has_value());
  made(want_cms, "DELETED", *moved);
  for (int i = 0; i < kPods / 4; ++i) {
    const std::string name = fmt::format("p{}", kPods - 1 - i);
    ASSERT_TRUE(server_.Delete("pods", "default", name).has_value());
  }
  // A deletion's event carries the version of the deletion itself.
  // (Deleted pods are unbound: they go at once, one version each.)
  const int64_t after_deletes = server_.ResourceVersion();
  for (int i = 0; i < kPods / 4; ++i) {
    want_pods.push_back(
        fmt::format("DELETED p{} {}", kPods - 1 - i, after_deletes - (kPods / 4 - 1) + i));
  }
  ASSERT_TRUE(server_.Delete("configmaps", "default", "c0").has_value());
  want_cms.push_back(fmt::format("DELETED c0 {}", server_.ResourceVersion()));
  for (auto& w : watches) w.join();
  for (const auto& s : seen) EXPECT_EQ(s, want_pods);
  EXPECT_EQ(seen_cms, want_cms);
}

class SmallHistoryTest : public ApiServerScaleTest {
 protected:
  static TestApiServer::Options Small() {
    TestApiServer::Options o;
    o.history = 20;
    return o;
  }
  SmallHistoryTest() : ApiServerScaleTest(Small()) {}
};

// A watch of a quiet resource is not sent 410 when other resources'
// events fall out of the kept history: it missed none of its own.
TEST_F(SmallHistoryTest, AQuietWatchOutlivesOtherResourcesEventsLeavingTheHistory) {
  const int64_t from = server_.ResourceVersion();
  std::vector<std::string> seen;
  std::thread watch = Watch("/api/v1/nodes", from, 1, seen);
  ASSERT_TRUE(Eventually([&] { return server_.RequestCounts()["WATCH nodes"] == 1; }));
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(server_.Create("configmaps", "default", ConfigMap(fmt::format("c{}", i))));
  }
  auto node = server_.Create("nodes", "", {{"metadata", {{"name", "n1"}}}});
  ASSERT_TRUE(node.has_value());
  watch.join();
  EXPECT_EQ(seen, std::vector<std::string>{fmt::format(
                      "ADDED n1 {}", (*node)["metadata"]["resourceVersion"].get<std::string>())});
}

// Deleting an owner deletes its dependants and theirs (background), keeps
// every other object, and follows ownerReferences as updates change them.
TEST_F(ApiServerScaleTest, GarbageCollectionByOwnerIndexFollowsChainsAndUpdates) {
  const json root = Made(ConfigMap("root"));
  const json mid = Made(ConfigMap("mid", json::object(), OwnerRef(root)));
  const json keep = Made(ConfigMap("keep"));
  Made(ConfigMap("kept-child", json::object(), OwnerRef(keep)));
  ASSERT_TRUE(server_.Create("pods", "default", Pod("leaf", OwnerRef(mid))).has_value());
  ASSERT_TRUE(server_.Create("pods", "default", Pod("bystander")).has_value());
  // "moved" is made root's, then keep's instead.
  const json moved = Made(ConfigMap("moved", json::object(), OwnerRef(root)));
  json changed = moved;
  changed["metadata"]["ownerReferences"] = json::array({OwnerRef(keep)});
  ASSERT_TRUE(server_.Update("configmaps", "default", changed).has_value());

  ASSERT_TRUE(server_.Delete("configmaps", "default", "root").has_value());
  EXPECT_FALSE(server_.Get("configmaps", "default", "mid").has_value());
  EXPECT_FALSE(server_.Get("pods", "default", "leaf").has_value());
  for (const char* name : {"keep", "kept-child", "moved"}) {
    EXPECT_TRUE(server_.Get("configmaps", "default", name).has_value()) << name;
  }
  EXPECT_TRUE(server_.Get("pods", "default", "bystander").has_value());

  ASSERT_TRUE(server_.Delete("configmaps", "default", "keep").has_value());
  EXPECT_FALSE(server_.Get("configmaps", "default", "kept-child").has_value());
  EXPECT_FALSE(server_.Get("configmaps", "default", "moved").has_value());
  EXPECT_TRUE(server_.Get("pods", "default", "bystander").has_value());
  EXPECT_EQ(server_.Count("configmaps"), 0u);
}

// Foreground deletion down a chain of blocking dependants: each owner
// stays (foregroundDeletion) until its blocking dependant is gone; a
// bound pod at the end waits for its kubelet, then the chain goes from the
// bottom up.
TEST_F(ApiServerScaleTest, ForegroundDeletionWaitsDownAChainOfBlockingDependants) {
  const json top = Made(ConfigMap("top"));
  const json middle = Made(ConfigMap("middle", json::object(), OwnerRef(top, true)));
  json leaf = Pod("leaf", OwnerRef(middle, true));
  leaf["spec"]["nodeName"] = "node-1";  // bound: deleted gracefully
  ASSERT_TRUE(server_.Create("pods", "default", leaf).has_value());
  ASSERT_TRUE(server_.Create("pods", "default", Pod("other")).has_value());
  k8s::RestClient client(config_);
  auto r = client.Request("DELETE", "/api/v1/namespaces/default/configmaps/top",
                          R"({"propagationPolicy":"Foreground"})");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  for (const char* name : {"top", "middle"}) {
    auto cm = server_.Get("configmaps", "default", name);
    ASSERT_TRUE(cm.has_value()) << name;
    EXPECT_EQ((*cm)["metadata"]["finalizers"], json::array({"foregroundDeletion"})) << name;
  }
  auto pod = server_.Get("pods", "default", "leaf");
  ASSERT_TRUE(pod.has_value());
  EXPECT_TRUE((*pod)["metadata"].contains("deletionTimestamp"));
  ASSERT_TRUE(server_.Delete("pods", "default", "leaf", 0).has_value());
  EXPECT_FALSE(server_.Get("configmaps", "default", "middle").has_value());
  EXPECT_FALSE(server_.Get("configmaps", "default", "top").has_value());
  EXPECT_TRUE(server_.Get("pods", "default", "other").has_value());
}

// An injected write latency: a write waits at least that long and is then
// applied; reads wait none (they are not counted as delayed).
TEST_F(ApiServerScaleTest, WriteLatencyDelaysWritesNotReads) {
  k8s::RestClient client(config_);
  server_.SetWriteLatency(0.2);
  const auto t0 = std::chrono::steady_clock::now();
  auto created =
      client.Request("POST", "/api/v1/namespaces/default/configmaps", ConfigMap("slow").dump());
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(created.has_value());
  EXPECT_EQ(created->status, 201);
  EXPECT_GE(took, 0.2);
  EXPECT_EQ(server_.DelayedWrites(), 1);
  auto got = client.Request("GET", "/api/v1/namespaces/default/configmaps/slow");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, 200);
  auto listed = client.Request("GET", "/api/v1/configmaps");
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(server_.DelayedWrites(), 1);
  auto deleted = client.Request("DELETE", "/api/v1/namespaces/default/configmaps/slow");
  ASSERT_TRUE(deleted.has_value());
  EXPECT_EQ(deleted->status, 200);
  EXPECT_EQ(server_.DelayedWrites(), 2);
  server_.SetWriteLatency(0);
  ASSERT_TRUE(
      client.Request("POST", "/api/v1/namespaces/default/configmaps", ConfigMap("fast").dump())
          .has_value());
  EXPECT_EQ(server_.DelayedWrites(), 2);
}

// One client's requests on one connection, however many (cpp-httplib's
// default closes it after 5).
TEST_F(ApiServerScaleTest, AConnectionIsKeptAliveForAnyNumberOfRequests) {
  const size_t before = server_.Connections();
  k8s::RestClient client(config_);
  for (int i = 0; i < 30; ++i) {
    auto r = client.Request("GET", "/api/v1/namespaces/default/configmaps");
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200);
  }
  EXPECT_EQ(server_.Connections(), before + 1);
}

// The listening socket's backlog (ss's Send-Q for a listener) is the
// system's largest, not cpp-httplib's 5.
TEST_F(ApiServerScaleTest, ListensWithTheSystemsBacklog) {
  const std::string port = server_.Url().substr(server_.Url().rfind(':') + 1);
  FILE* p = ::popen(fmt::format("ss -Hltn 'sport = :{}' 2>/dev/null", port).c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[512] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, p);
  ::pclose(p);
  if (n == 0) GTEST_SKIP() << "no ss here";
  // State Recv-Q Send-Q Local Peer
  char state[32] = {};
  long recv_q = 0, send_q = 0;
  ASSERT_EQ(std::sscanf(buf, "%31s %ld %ld", state, &recv_q, &send_q), 3) << buf;
  EXPECT_STREQ(state, "LISTEN");
  EXPECT_GT(send_q, 5) << buf;
}

}  // namespace
}  // namespace dlsched::testing
