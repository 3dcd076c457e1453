// Leader election: the elector against the test API server, and two
// `dlsched operator` processes of which only one acts; killed, the other
// takes over and adopts what the first made.
#include "dlsched/k8s/leader.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <optional>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "k8s/apiserver.h"

namespace dlsched::k8s {
namespace {

using nlohmann::json;
using testing::ReadFile;
using testing::TestApiServer;
namespace fs = std::filesystem;

RestConfig ConfigOf(const TestApiServer& server) {
  RestConfig c;
  c.server = server.Url();
  c.timeout_seconds = 5;
  return c;
}

std::string Holder(const TestApiServer& server) {
  auto lease = server.Get("leases.coordination.k8s.io", "default", "dlsched");
  if (!lease) return "<none>";
  return (*lease)["spec"].value("holderIdentity", "");
}

TEST(LeaderElectorTest, OneHolderAtATimeAndAnExpiredLeaseIsTaken) {
  TestApiServer server;
  ASSERT_TRUE(server.Start().has_value());
  RestClient ca(ConfigOf(server)), cb(ConfigOf(server));
  LeaderOptions o;
  o.namespace_name = "default";
  o.lease_duration_seconds = 0.5;
  o.renew_deadline_seconds = 0.4;
  o.retry_period_seconds = 0.1;
  o.identity = "a";
  LeaderElector a(ca, o);
  o.identity = "b";
  LeaderElector b(cb, o);
  EXPECT_TRUE(a.TryAcquireOrRenew());   // creates the Lease
  EXPECT_FALSE(b.TryAcquireOrRenew());  // held, and b has just seen it
  EXPECT_TRUE(a.TryAcquireOrRenew());   // renews
  EXPECT_EQ(Holder(server), "a");
  const int transitions =
      (*server.Get("leases.coordination.k8s.io", "default", "dlsched"))["spec"].value(
          "leaseTransitions", -1);
  // a stops renewing; b sees the same record for longer than the lease
  // duration on its own clock, then takes it.
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_FALSE(b.TryAcquireOrRenew()) << "b first observes the record now";
  EXPECT_FALSE(a.IsLeader()) << "a's renew deadline passed";
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_TRUE(b.TryAcquireOrRenew());
  EXPECT_EQ(Holder(server), "b");
  const json spec = (*server.Get("leases.coordination.k8s.io", "default", "dlsched"))["spec"];
  EXPECT_EQ(spec.value("leaseTransitions", -1), transitions + 1);
  // Released, it is free at once.
  b.Release();
  EXPECT_EQ(Holder(server), "");
  EXPECT_TRUE(a.TryAcquireOrRenew());
}

// A `dlsched operator` process with its stderr in a file.
class Process {
 public:
  // `env`: variables set for it ("NAME=value"), besides the test's own.
  Process(const std::vector<std::string>& args, const std::string& log,
          const std::vector<std::string>& env = {}) {
    // Everything is made before fork: the child of a process with threads
    // (the test server's) may only call async-signal-safe functions, as a
    // lock another thread held (malloc's) stays held in it for ever.
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<std::string> vars = env;
    for (char** e = environ; *e != nullptr; ++e) vars.emplace_back(*e);
    std::vector<char*> envp;
    for (auto& v : vars) envp.push_back(v.data());
    envp.push_back(nullptr);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(fd);
  }
  ~Process() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  int Signal(int sig) {
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }
  // Sends `sig` and returns at once (SIGSTOP, SIGCONT).
  void Send(int sig) const { ::kill(pid_, sig); }
  // Its exit code (-signal if killed) once it exits within `seconds`, else
  // nullopt.
  std::optional<int> Wait(double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
  }

 private:
  pid_t pid_ = -1;
};

bool WaitFor(const std::function<bool()>& cond, double seconds = 30) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

json TrainingJobOf(const std::string& name) {
  return {{"apiVersion", "dlsched.io/v1alpha1"},
          {"kind", "TrainingJob"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"replicaSpecs",
             {{"Worker",
               {{"replicas", 1},
                {"template",
                 {{"spec",
                   {{"containers",
                     json::array(
                         {{{"name", "tf"},
                           {"image", "t"},
                           {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}}}}}}}}}}};
}

int MetricsPortOf(const std::string& log) {
  std::istringstream lines(ReadFile(log));
  for (std::string line; std::getline(lines, line);) {
    const json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.value("msg", "") == "dlsched operator starting") {
      return j.value("metricsPort", 0);
    }
  }
  return 0;
}

std::string Metrics(int port) {
  RestConfig c;
  c.server = fmt::format("http://127.0.0.1:{}", port);
  RestClient client(c);
  auto r = client.Request("GET", "/metrics");
  return r && r->status == 200 ? r->body : "";
}

// A test API server with the CRD, node-a (4 GPUs) and TrainingJob
// "first"; a scratch directory with its kubeconfig; and the command line of
// a `dlsched operator` replica named `id` against it (lease 2 s, renew
// deadline 1.5 s, retry 0.25 s).
struct TwoReplicas {
  explicit TwoReplicas(const std::string& name)
      : dir(fs::temp_directory_path() / fmt::format("dlsched-{}-{}", name, ::getpid())),
        kubeconfig((dir / "kubeconfig").string()) {}
  ~TwoReplicas() { fs::remove_all(dir); }
  // Starts the server with its objects (false on failure).
  bool Start() {
    if (!server.Start() ||
        !server.ApplyManifest(ReadFile(std::string(DLSCHED_SOURCE_DIR) + "/deploy/crd.yaml"))) {
      return false;
    }
    const json node = {
        {"metadata", {{"name", "node-a"}}},
        {"status", {{"allocatable", {{"cpu", "8"}, {"memory", "8Gi"}, {"nvidia.com/gpu", "4"}}}}}};
    if (!server.Create("nodes", "", node) ||
        !server.Create("trainingjobs.dlsched.io", "default", TrainingJobOf("first"))) {
      return false;
    }
    fs::create_directories(dir);
    server.WriteKubeconfig(kubeconfig);
    return true;
  }
  std::vector<std::string> Args(const std::string& id) const {
    return {DLSCHED_BINARY,
            "operator",
            "--kubeconfig",
            kubeconfig,
            "--identity",
            id,
            "--leader-elect-lease-duration",
            "2",
            "--leader-elect-renew-deadline",
            "1.5",
            "--leader-elect-retry-period",
            "0.25",
            "--resync",
            "0.2",
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--health-probe-bind-address",
            "0"};
  }
  std::string Log(const std::string& id) const { return (dir / (id + ".log")).string(); }
  // Whether pod `pod` of the default namespace is bound.
  bool Bound(const std::string& pod) {
    auto p = server.Get("pods", "default", pod);
    return p && !(*p)["spec"].value("nodeName", "").empty();
  }

  TestApiServer server;
  fs::path dir;
  std::string kubeconfig;
};

TEST(LeaderElectionTest, TwoOperatorsOnlyOneActsAndTheOtherTakesOverWhenItIsKilled) {
  TwoReplicas r("leader");
  ASSERT_TRUE(r.Start());
  TestApiServer& server = r.server;
  auto args = [&](const std::string& id) { return r.Args(id); };
  const std::string log_a = r.Log("a"), log_b = r.Log("b");
  // The replicas' own pods (the downward API's POD_NAME): b's still has the
  // leader label of a former leadership. Their namespace exists first, as in
  // a real cluster.
  ASSERT_TRUE(server.Create("namespaces", "", {{"metadata", {{"name", "dlsched-system"}}}}));
  for (const auto& [pod, label] : {std::pair{"op-a", false}, std::pair{"op-b", true}}) {
    json meta = {{"name", pod}, {"namespace", "dlsched-system"}};
    if (label) meta["labels"] = {{kLeaderLabel, "true"}};
    const json spec = {{"containers", json::array({{{"name", "operator"}, {"image", "dlsched"}}})}};
    ASSERT_TRUE(
        server.Create("pods", "dlsched-system", {{"metadata", meta}, {"spec", spec}}).has_value());
  }
  auto leader_label = [&](const std::string& pod) {
    auto p = server.Get("pods", "dlsched-system", pod);
    return p ? (*p)["metadata"].value("labels", json::object()).value(kLeaderLabel, "") : "?";
  };
  auto env = [](const std::string& pod) {
    return std::vector<std::string>{"POD_NAMESPACE=dlsched-system", "POD_NAME=" + pod};
  };
  auto a = std::make_unique<Process>(args("a"), log_a, env("op-a"));
  ASSERT_TRUE(WaitFor([&] { return r.Bound("first-worker-0"); })) << ReadFile(log_a);
  EXPECT_EQ(Holder(server), "a");
  // The leader labels its pod and takes the stale label off b's: the
  // Service (deploy/service.yaml selects the label) reaches a alone.
  ASSERT_TRUE(WaitFor([&] { return leader_label("op-a") == "true"; })) << ReadFile(log_a);
  EXPECT_EQ(leader_label("op-b"), "");
  EXPECT_NE(ReadFile(std::string(DLSCHED_SOURCE_DIR) + "/deploy/service.yaml")
                .find(std::string(kLeaderLabel) + ": \"true\""),
            std::string::npos);
  Process b(args("b"), log_b, env("op-b"));
  ASSERT_TRUE(WaitFor([&] { return MetricsPortOf(log_b) > 0; })) << ReadFile(log_b);
  // b stands by: it renews nothing and writes nothing.
  const auto counts = server.RequestCounts();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(Holder(server), "a");
  EXPECT_EQ(ReadFile(log_b).find("\"msg\":\"leading\""), std::string::npos) << ReadFile(log_b);
  EXPECT_NE(Metrics(MetricsPortOf(log_a)).find("dlsched_leader 1"), std::string::npos);
  EXPECT_NE(Metrics(MetricsPortOf(log_b)).find("dlsched_leader 0"), std::string::npos);
  EXPECT_EQ(server.RequestCounts()["POST pods"], counts.at("POST pods"));
  EXPECT_EQ(leader_label("op-b"), "") << "a standby does not label its pod";

  // a dies without releasing the lease; b takes over once it has seen the
  // lease unrenewed for its duration, adopts the running job (no second
  // pod for it) and schedules the next one.
  const auto killed = std::chrono::steady_clock::now();
  EXPECT_EQ(a->Signal(SIGKILL), -SIGKILL);
  ASSERT_TRUE(WaitFor([&] { return Holder(server) == "b"; })) << ReadFile(log_b);
  ASSERT_TRUE(WaitFor([&] { return leader_label("op-b") == "true"; })) << ReadFile(log_b);
  EXPECT_EQ(leader_label("op-a"), "") << "the former leader's label is taken off";
  const double takeover =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  ::testing::Test::RecordProperty("takeover_seconds", std::to_string(takeover));
  ASSERT_TRUE(
      server.Create("trainingjobs.dlsched.io", "default", TrainingJobOf("second")).has_value());
  ASSERT_TRUE(WaitFor([&] { return r.Bound("second-worker-0"); })) << ReadFile(log_b);
  EXPECT_EQ(server.RequestCounts()["POST pods"], 2) << "first's pod adopted, not recreated";
  auto first = server.Get("trainingjobs.dlsched.io", "default", "first");
  EXPECT_EQ((*first)["status"].value("phase", ""), "Running");
  // SIGTERM: b releases the lease and exits 0.
  EXPECT_EQ(b.Signal(SIGTERM), 0) << ReadFile(log_b);
  EXPECT_EQ(Holder(server), "");
}

// A leader stalled past its lease (SIGSTOP, as a long GC pause or a frozen
// VM would) while a job arrives: b takes the lease over and places that
// job. Another job arrives, and a resumes (SIGCONT) with both jobs' events
// waiting for it: it has not renewed within its renew deadline, so it
// withholds every write and exits. No write of a lands after b's first
// (a renewal a had in flight may arrive late, and is refused with 409).
TEST(LeaderElectionTest, AStalledLeaderWritesNothingAfterItsSuccessorBegins) {
  TwoReplicas r("stall");
  ASSERT_TRUE(r.Start());
  TestApiServer& server = r.server;
  auto args = [&](const std::string& id) { return r.Args(id); };
  const std::string log_a = r.Log("a"), log_b = r.Log("b");
  Process a(args("a"), log_a);
  ASSERT_TRUE(WaitFor([&] { return r.Bound("first-worker-0"); })) << ReadFile(log_a);
  Process b(args("b"), log_b);
  ASSERT_TRUE(WaitFor([&] { return MetricsPortOf(log_b) > 0; })) << ReadFile(log_b);
  a.Send(SIGSTOP);
  ASSERT_TRUE(
      server.Create("trainingjobs.dlsched.io", "default", TrainingJobOf("second")).has_value());
  ASSERT_TRUE(WaitFor([&] { return Holder(server) == "b" && r.Bound("second-worker-0"); }))
      << ReadFile(log_b);
  ASSERT_TRUE(
      server.Create("trainingjobs.dlsched.io", "default", TrainingJobOf("third")).has_value());
  a.Send(SIGCONT);
  EXPECT_EQ(a.Wait(30), std::optional<int>(1)) << ReadFile(log_a);
  EXPECT_NE(ReadFile(log_a).find("lost the leader lease"), std::string::npos) << ReadFile(log_a);
  ASSERT_TRUE(WaitFor([&] { return r.Bound("third-worker-0"); })) << ReadFile(log_b);
  // The writes in the order served: none of a's that landed after b's first.
  const std::vector<TestApiServer::Write> writes = server.Writes();
  auto by = [](const TestApiServer::Write& w, const std::string& id) {
    return w.user_agent.find("(operator " + id + ")") != std::string::npos;
  };
  size_t first_of_b = writes.size();
  for (size_t i = 0; i < writes.size() && first_of_b == writes.size(); ++i) {
    if (by(writes[i], "b")) first_of_b = i;
  }
  ASSERT_LT(first_of_b, writes.size());
  ASSERT_GT(first_of_b, 0u);
  EXPECT_TRUE(by(writes[0], "a")) << writes[0].user_agent;
  for (size_t i = first_of_b; i < writes.size(); ++i) {
    EXPECT_FALSE(by(writes[i], "a") && writes[i].status < 400)
        << "a wrote after b began: " << writes[i].method << " " << writes[i].path << " -> "
        << writes[i].status;
  }
  EXPECT_EQ(b.Signal(SIGTERM), 0) << ReadFile(log_b);
}

// `dlsched snapshot` against a running `dlsched operator` process: the
// files it writes hold the placed job, the waiting one and the foreign
// pod's request, and `dlsched compare` runs them.
TEST(SnapshotCommandTest, WritesTheLiveQueueThatCompareReplays) {
  TestApiServer server;
  ASSERT_TRUE(server.Start().has_value());
  ASSERT_TRUE(server.ApplyManifest(ReadFile(std::string(DLSCHED_SOURCE_DIR) + "/deploy/crd.yaml"))
                  .has_value());
  ASSERT_TRUE(
      server
          .Create("nodes", "",
                  {{"metadata", {{"name", "node-a"}, {"labels", {{"zone", "z1"}}}}},
                   {"status",
                    {{"allocatable", {{"cpu", "8"}, {"memory", "8Gi"}, {"nvidia.com/gpu", "4"}}}}}})
          .has_value());
  // A pod of another owner (kube-system), bound and running on node-a.
  const auto foreign_pod = [&](const std::string& name, const std::string& cpu) {
    return server.Create(
        "pods", "kube-system",
        {{"metadata", {{"name", name}, {"namespace", "kube-system"}}},
         {"spec",
          {{"nodeName", "node-a"},
           {"containers", json::array({{{"name", name},
                                        {"image", "i"},
                                        {"resources", {{"requests", {{"cpu", cpu}}}}}}})}}},
         {"status", {{"phase", "Running"}}}});
  };
  ASSERT_TRUE(foreign_pod("dns", "2").has_value());
  auto job = [](const std::string& name, int gpus, double steps) {
    json j = TrainingJobOf(name);
    j["spec"]["replicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"] = {
        {"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}};
    j["spec"]["totalSteps"] = steps;
    j["spec"]["throughput"] = {{"table", {{"1", 1.0}}}};
    return j;
  };
  ASSERT_TRUE(
      server.Create("trainingjobs.dlsched.io", "default", job("first", 1, 100)).has_value());
  const fs::path dir = fs::temp_directory_path() / fmt::format("dlsched-snapshot-{}", ::getpid());
  fs::create_directories(dir);
  const std::string kubeconfig = (dir / "kubeconfig").string();
  server.WriteKubeconfig(kubeconfig);
  const std::string log = (dir / "operator.log").string();
  Process op({DLSCHED_BINARY, "operator", "--kubeconfig", kubeconfig, "--leader-elect=false",
              "--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "0"},
             log);
  auto bound = [&](const std::string& pod) {
    auto p = server.Get("pods", "default", pod);
    return p && !(*p)["spec"].value("nodeName", "").empty();
  };
  ASSERT_TRUE(WaitFor([&] { return bound("first-worker-0"); })) << ReadFile(log);
  ASSERT_TRUE(server.Create("trainingjobs.dlsched.io", "default", job("big", 4, 50)).has_value());
  ASSERT_TRUE(WaitFor([&] {
    auto big = server.Get("trainingjobs.dlsched.io", "default", "big");
    return big && big->contains("status") && (*big)["status"].value("phase", "") == "Waiting";
  })) << ReadFile(log);

  auto run = [&](const std::string& args, const std::string& out) {
    const int status = std::system(
        fmt::format("{} {} > {} 2>&1", DLSCHED_BINARY, args, (dir / out).string()).c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  const std::string now = (dir / "now").string();
  ASSERT_EQ(run(fmt::format("snapshot --from 127.0.0.1:{} --out {}", MetricsPortOf(log), now),
                "snapshot.out"),
            0)
      << ReadFile((dir / "snapshot.out").string());
  const std::string cluster = ReadFile(now + "/cluster.yaml");
  const std::string workload = ReadFile(now + "/workload.yaml");
  EXPECT_NE(cluster.find("  - name: node-a\n"), std::string::npos) << cluster;
  EXPECT_NE(cluster.find("    reserved: {cpu: \"2\"}\n"), std::string::npos) << cluster;
  EXPECT_NE(cluster.find("    labels: {zone: z1}\n"), std::string::npos) << cluster;
  EXPECT_NE(workload.find("start: "), std::string::npos) << workload;
  const size_t first = workload.find("  - name: first\n");
  const size_t big = workload.find("  - name: big\n");
  ASSERT_NE(first, std::string::npos) << workload;
  ASSERT_NE(big, std::string::npos) << workload;
  EXPECT_LT(first, big) << "the engine's order";
  const size_t running = workload.find("    running:\n      phase: Running\n");
  EXPECT_GT(running, first);
  EXPECT_LT(running, big) << "first is placed, big waits";
  EXPECT_NE(workload.find("      nodes: {worker-0: node-a}\n"), std::string::npos) << workload;
  EXPECT_EQ(workload.find("running:", big), std::string::npos) << workload;
  EXPECT_NE(ReadFile((dir / "snapshot.out").string())
                .find("workload.yaml: 2 jobs (1 placed, 1 waiting), continuing at t="),
            std::string::npos)
      << ReadFile((dir / "snapshot.out").string());

  // The what-if: both jobs finish under two profiles.
  ASSERT_EQ(run(fmt::format("compare -c {0}/cluster.yaml -w {0}/workload.yaml -p gang-binpack,kod2 "
                            "--out {1}",
                            now, (dir / "whatif").string()),
                "compare.out"),
            0)
      << ReadFile((dir / "compare.out").string());
  // Pods of other owners asking for more than node-a has (cpu 2 + 20 of
  // 8): `reserved` is capped at what the workload's pods leave of the
  // node, so the snapshot still loads (a `reserved` over its node is
  // refused) and replays with no cpu left there.
  ASSERT_TRUE(foreign_pod("hog", "20").has_value());
  const std::string later = (dir / "later").string();
  ASSERT_TRUE(WaitFor([&] {
    return run(fmt::format("snapshot --from 127.0.0.1:{} --out {}", MetricsPortOf(log), later),
               "later.out") == 0 &&
           ReadFile(later + "/cluster.yaml").find("    reserved: {cpu: \"8\"}\n") !=
               std::string::npos;
  })) << ReadFile((dir / "later.out").string())
      << ReadFile(later + "/cluster.yaml");

  // No operator there: one line, exit 1, nothing written.
  EXPECT_EQ(run(fmt::format("snapshot --from 127.0.0.1:1 --timeout 2 --out {}/none", dir.string()),
                "none.out"),
            1);
  const std::string none = ReadFile((dir / "none.out").string());
  EXPECT_TRUE(none.starts_with("dlsched: --from 127.0.0.1:1: ")) << none;
  EXPECT_EQ(std::count(none.begin(), none.end(), '\n'), 1) << none;
  EXPECT_FALSE(fs::exists(dir / "none"));
  EXPECT_EQ(op.Signal(SIGTERM), 0) << ReadFile(log);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dlsched::k8s
