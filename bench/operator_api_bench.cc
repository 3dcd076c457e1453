// The operator on the API path (issue 25, "Speed on the API path"; issue
// 28, "the test harness at scale"): N nodes of 8 GPUs and 1,250
// TrainingJobs of 4 one-GPU workers (5,000 pods) submitted at once to the
// test API server (testing/k8s/), one operator (gang-binpack, pods bound
// through pods/binding) stepped until every pod is bound.
//
// The server runs in a child process (fork before any thread), so each
// side's CPU and peak RSS are its own: the operator's are this process's
// (its step loop, its informers' threads, its HTTP client), the server's
// (HTTP, schema validation of every write, watches) the child's. The jobs
// are created and deleted in the child's store directly (no HTTP request,
// not counted).
//
// BM_SubmitAndBind: one wave, no kubelet (the pods stay Pending once
// bound). Counters: bind_seconds (from the first job created to the last
// pod bound, as the operator's Stats count binds), submit_seconds
// (creating the 1,250 jobs in the store), pods_per_second, requests and
// writes per pod (TestApiServer::RequestCounts: every request the operator
// made, GETs and WATCHes included; writes are every verb but GET, LIST and
// WATCH), pod writes per pod (POST pods + POST pods/binding), per-job
// writes (status, Events, Services) per job, operator and server CPU
// seconds and peak RSS (MB). One iteration per size (each builds a fresh
// server). node_name:1 runs the operator with bind_with_node_name
// (spec.nodeName set at creation, no pods/binding: one write per pod).
// latency_ms (both benchmarks): every write over HTTP waits that long in
// the server before it is applied and answered
// (TestApiServer::SetWriteLatency), as a real server's etcd commit adds.
//
// BM_Waves: three waves of the same 1,250 jobs with the test kubelet
// running (in a child process of its own: its CPU and RSS are its own
// too): each wave's jobs are submitted, bound (wave<i>_pods_per_second),
// then deleted in the store (wave<i>_delete_seconds: the 1,250 deletes,
// garbage collection of their pods and Services included) and drained
// (wave<i>_drain_seconds: from the first delete until no pod is left, the
// kubelet deleting each pod the collector marked). writes_per_pod counts
// the operator's writes alone (by User-Agent), kubelet_writes_per_pod the
// kubelet's.
//
// BM_DeleteJobs: garbage collection alone, in this process: a server
// holding N nodes and what 1,250 placed jobs leave in the store (each
// job's 4 pods bound and its Service, owned by the job), the jobs deleted
// in the store (delete_seconds: the jobs, their Services, their pods
// marked for graceful deletion), then each pod deleted with grace 0 as the
// kubelet does (pods_seconds).
//
//   build/bench/operator_api_bench
//   build/bench/operator_api_bench --benchmark_filter=SubmitAndBind/nodes:5000/node_name:0/
//   build/bench/operator_api_bench --benchmark_filter='SubmitAndBind/.*/latency_ms:[125]/'
//   build/bench/operator_api_bench --benchmark_filter=Waves
#include <benchmark/benchmark.h>

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "dlsched/cli/inputs.h"
#include "dlsched/k8s/operator.h"
#include "k8s/apiserver.h"
#include "k8s/test_kubelet.h"

namespace {

using dlsched::testing::TestApiServer;
using nlohmann::json;

constexpr int kJobs = 1250;
constexpr int kWorkers = 4;
constexpr int kPods = kJobs * kWorkers;
constexpr int kWaves = 3;
constexpr const char* kKubeletAgent = "test-kubelet";

json Node(int i) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", "node-" + std::to_string(i)}}},
          {"status",
           {{"allocatable",
             {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}}}}}};
}

std::string JobName(int wave, int i) {
  return "job-" + std::to_string(wave) + "-" + std::to_string(i);
}

json Job(const std::string& name) {
  json worker = {{"spec",
                  {{"containers", json::array({{{"name", "tf"},
                                                {"image", "trainer:1"},
                                                {"resources",
                                                 {{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}},
                                                  {"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}}};
  return {{"apiVersion", "dlsched.io/v1alpha1"},
          {"kind", "TrainingJob"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"replicaSpecs", {{"Worker", {{"replicas", kWorkers}, {"template", worker}}}}},
            {"totalSteps", 1e6},
            {"throughput", {{"table", {{"4", 40.0}}}}}}}};
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// VmHWM (peak RSS) in MB; ResetPeak starts it again from the current RSS.
double PeakMb() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024;
  }
  return 0;
}
void ResetPeak() { std::ofstream("/proc/self/clear_refs") << "5"; }

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void WriteLine(int fd, const std::string& s) {
  const std::string line = s + "\n";
  if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) std::_Exit(3);
}
std::string ReadLine(int fd) {
  std::string s;
  char c = 0;
  while (read(fd, &c, 1) == 1 && c != '\n') s += c;
  return s;
}
// Whether a line (or the end) is waiting on `fd`.
bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

// A child process running `body(in, out)`: it reads its commands from `in`
// and answers on `out`. Forked before this process starts any thread.
struct Child {
  pid_t pid = -1;
  int to = -1;    // we write
  int from = -1;  // we read
  void Tell(const std::string& line) const { WriteLine(to, line); }
  std::string Hear() const { return ReadLine(from); }
  void Wait() {
    int status = 0;
    waitpid(pid, &status, 0);
    close(to);
    close(from);
  }
};
Child Spawn(const std::function<void(int in, int out)>& body) {
  int to_child[2], from_child[2];
  if (pipe(to_child) != 0 || pipe(from_child) != 0) throw std::runtime_error("pipe");
  const pid_t pid = fork();
  if (pid == 0) {
    close(to_child[1]);
    close(from_child[0]);
    body(to_child[0], from_child[1]);
    std::_Exit(0);
  }
  close(to_child[0]);
  close(from_child[1]);
  return {pid, to_child[1], from_child[0]};
}

// The server's child: a server with `nodes` nodes; it answers its URL, then
// commands: "latency <ms>" sets the write latency and answers "ok"; "jobs
// <wave>" creates the wave's jobs and answers "submitted <seconds>"; "delete
// <wave>" deletes them and answers "deleted <seconds> <seconds until no pod is
// left>"; "done" answers the server's numbers, as JSON, and ends.
[[noreturn]] void ServeChild(int nodes, int in, int out) {
  TestApiServer::Options options;
  // Keep every event: a watch that fell behind a short history would be
  // sent 410 and list again, which measures the history, not the operator.
  options.history = 1'000'000;
  TestApiServer server(options);
  std::ifstream crd(std::string(DLSCHED_SOURCE_DIR) + "/deploy/crd.yaml");
  std::stringstream text;
  text << crd.rdbuf();
  if (!server.Start() || !server.ApplyManifest(text.str())) std::_Exit(2);
  for (int i = 0; i < nodes; ++i) {
    if (!server.Create("nodes", "", Node(i))) std::_Exit(2);
  }
  WriteLine(out, server.Url());
  double cpu0 = -1;
  for (std::string line = ReadLine(in); !line.empty(); line = ReadLine(in)) {
    std::istringstream command(line);
    std::string verb;
    int wave = 0;
    command >> verb >> wave;
    if (cpu0 < 0) {
      cpu0 = CpuSeconds();
      ResetPeak();
    }
    if (verb == "latency") {
      server.SetWriteLatency(wave / 1000.0);
      WriteLine(out, "ok");
    } else if (verb == "jobs") {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kJobs; ++i) {
        if (!server.Create("trainingjobs.dlsched.io", "default", Job(JobName(wave, i)))) {
          std::_Exit(2);
        }
      }
      WriteLine(out, "submitted " + std::to_string(Since(t0)));
    } else if (verb == "delete") {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kJobs; ++i) {
        if (!server.Delete("trainingjobs.dlsched.io", "default", JobName(wave, i))) std::_Exit(2);
      }
      const double deleted = Since(t0);
      while (server.Count("pods") > 0) {
        if (Since(t0) > 600) std::_Exit(4);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      WriteLine(out, "deleted " + std::to_string(deleted) + " " + std::to_string(Since(t0)));
    } else if (verb == "done") {
      json r;
      r["cpu"] = CpuSeconds() - cpu0;
      r["peak_mb"] = PeakMb();
      int bound = 0;
      for (const json& pod : server.List("pods", "default")) {
        bound += pod["spec"].contains("nodeName") ? 1 : 0;
      }
      r["bound"] = bound;
      r["counts"] = server.RequestCounts();
      int64_t operator_writes = 0, kubelet_writes = 0;
      for (const TestApiServer::Write& w : server.Writes()) {
        ++(w.user_agent == kKubeletAgent ? kubelet_writes : operator_writes);
      }
      r["operator_writes"] = operator_writes;
      r["kubelet_writes"] = kubelet_writes;
      WriteLine(out, r.dump());
      break;
    } else {
      std::_Exit(2);
    }
  }
  server.Stop();
  std::_Exit(0);
}

// The kubelet's child: the test kubelet on its own thread against `url`;
// answers "ready" once its informers have listed, and its CPU seconds and
// peak RSS (JSON) on "done".
[[noreturn]] void KubeletChild(const std::string& url, int in, int out) {
  dlsched::k8s::RestConfig config;
  config.server = url;
  config.bearer_token = "test-token";
  config.user_agent = kKubeletAgent;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds();
  ResetPeak();
  dlsched::testing::TestKubelet kubelet(config, [t0] { return Since(t0); });
  kubelet.Start();
  WriteLine(out, "ready");
  if (ReadLine(in) != "done") std::_Exit(2);
  WriteLine(out, json({{"cpu", CpuSeconds() - cpu0}, {"peak_mb", PeakMb()}}).dump());
  kubelet.Stop();
  std::_Exit(0);
}

dlsched::k8s::RestConfig ClientConfig(const std::string& url) {
  dlsched::k8s::RestConfig config;
  config.server = url;
  config.bearer_token = "test-token";
  config.timeout_seconds = 30;
  return config;
}

// Steps `op` until `done` holds; throws after 10 minutes.
void StepUntil(dlsched::k8s::Operator& op, const std::function<bool()>& done, const Child& server,
               const char* what) {
  const auto t0 = std::chrono::steady_clock::now();
  while (!done()) {
    op.Step(0.01);
    if (Since(t0) > 600) {
      kill(server.pid, SIGKILL);
      throw std::runtime_error(std::string(what) + " not done in 10 minutes");
    }
  }
}

void BM_SubmitAndBind(benchmark::State& bm) {
  const int nodes = static_cast<int>(bm.range(0));
  const bool node_name = bm.range(1) != 0;
  const int latency_ms = static_cast<int>(bm.range(2));
  auto engine = dlsched::cli::LoadEngine("gang-binpack");
  if (!engine) throw std::runtime_error(engine.error().message);
  for (auto _ : bm) {
    Child child = Spawn([nodes](int in, int out) { ServeChild(nodes, in, out); });
    const std::string url = child.Hear();
    child.Tell("latency " + std::to_string(latency_ms));
    if (child.Hear() != "ok") throw std::runtime_error("latency not set");
    dlsched::k8s::OperatorOptions o;
    o.log = [](const std::string&) {};
    o.bind_with_node_name = node_name;
    json server;
    double bind_seconds = 0, submit_seconds = 0, cpu = 0, peak = 0;
    dlsched::k8s::OperatorStats stats;
    {
      dlsched::k8s::Operator op(ClientConfig(url), **engine, o);
      ResetPeak();
      const double cpu0 = CpuSeconds();
      if (!op.Start(120)) throw std::runtime_error("operator did not start");
      const auto t0 = std::chrono::steady_clock::now();
      child.Tell("jobs 0");
      StepUntil(
          op, [&] { return op.Stats().binds >= kPods; }, child, "binding");
      bind_seconds = Since(t0);
      // The job statuses and Events written after the last bind.
      const auto settle = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!op.Idle() && std::chrono::steady_clock::now() < settle) op.Step(0.01);
      stats = op.Stats();
      cpu = CpuSeconds() - cpu0;
      peak = PeakMb();
      const std::string submitted = child.Hear();
      submit_seconds = std::stod(submitted.substr(submitted.find(' ') + 1));
      child.Tell("done");
      server = json::parse(child.Hear());
    }
    child.Wait();
    if (server["bound"].get<int>() != kPods) throw std::runtime_error("not every pod bound");

    int64_t requests = 0, writes = 0, pod_writes = 0, job_writes = 0;
    for (const auto& [what, n] : server["counts"].items()) {
      const std::string verb = what.substr(0, what.find(' '));
      const int64_t count = n.get<int64_t>();
      requests += count;
      if (verb == "GET" || verb == "LIST" || verb == "WATCH") continue;
      writes += count;
      if (what == "POST pods" || what == "POST pods/binding") {
        pod_writes += count;
      } else {
        job_writes += count;
      }
      bm.counters[what] = static_cast<double>(count);
    }
    bm.SetIterationTime(bind_seconds);
    bm.counters["latency_ms"] = latency_ms;
    bm.counters["bind_seconds"] = bind_seconds;
    bm.counters["submit_seconds"] = submit_seconds;
    bm.counters["pods_per_second"] = kPods / bind_seconds;
    bm.counters["requests_per_pod"] = static_cast<double>(requests) / kPods;
    bm.counters["writes_per_pod"] = static_cast<double>(writes) / kPods;
    bm.counters["pod_writes_per_pod"] = static_cast<double>(pod_writes) / kPods;
    bm.counters["job_writes_per_job"] = static_cast<double>(job_writes) / kJobs;
    bm.counters["operator_api_calls"] = static_cast<double>(stats.api_calls);
    bm.counters["operator_cycles"] = static_cast<double>(stats.cycles);
    bm.counters["operator_cpu_s"] = cpu;
    bm.counters["operator_peak_mb"] = peak;
    bm.counters["server_cpu_s"] = server["cpu"].get<double>();
    bm.counters["server_peak_mb"] = server["peak_mb"].get<double>();
  }
}
BENCHMARK(BM_SubmitAndBind)
    ->ArgNames({"nodes", "node_name", "latency_ms"})
    ->Args({1000, 0, 0})
    ->Args({5000, 0, 0})
    ->Args({5000, 1, 0})
    ->Args({1000, 0, 1})
    ->Args({1000, 0, 2})
    ->Args({1000, 0, 5})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

void BM_Waves(benchmark::State& bm) {
  const int nodes = static_cast<int>(bm.range(0));
  const int latency_ms = static_cast<int>(bm.range(1));
  auto engine = dlsched::cli::LoadEngine("gang-binpack");
  if (!engine) throw std::runtime_error(engine.error().message);
  for (auto _ : bm) {
    Child server = Spawn([nodes](int in, int out) { ServeChild(nodes, in, out); });
    const std::string url = server.Hear();
    server.Tell("latency " + std::to_string(latency_ms));
    if (server.Hear() != "ok") throw std::runtime_error("latency not set");
    Child kubelet = Spawn([url](int in, int out) { KubeletChild(url, in, out); });
    if (kubelet.Hear() != "ready") throw std::runtime_error("kubelet did not start");
    dlsched::k8s::OperatorOptions o;
    o.log = [](const std::string&) {};
    json server_numbers, kubelet_numbers;
    double total_bind = 0, cpu = 0, peak = 0;
    {
      dlsched::k8s::Operator op(ClientConfig(url), **engine, o);
      ResetPeak();
      const double cpu0 = CpuSeconds();
      if (!op.Start(120)) throw std::runtime_error("operator did not start");
      for (int wave = 0; wave < kWaves; ++wave) {
        const std::string n = std::to_string(wave + 1);
        const auto t0 = std::chrono::steady_clock::now();
        server.Tell("jobs " + std::to_string(wave));
        StepUntil(
            op, [&] { return op.Stats().binds >= kPods * (wave + 1); }, server, "binding");
        const double bind = Since(t0);
        total_bind += bind;
        bm.counters["wave" + n + "_pods_per_second"] = kPods / bind;
        std::fprintf(stderr, "wave %d: bound at %.0f pods/s\n", wave + 1, kPods / bind);
        server.Hear();  // submitted
        const auto settle = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!op.Idle() && std::chrono::steady_clock::now() < settle) op.Step(0.01);
        server.Tell("delete " + std::to_string(wave));
        StepUntil(
            op, [&] { return Readable(server.from); }, server, "deletion");
        std::istringstream deleted(server.Hear());
        std::string word;
        double delete_seconds = 0, drain_seconds = 0;
        deleted >> word >> delete_seconds >> drain_seconds;
        bm.counters["wave" + n + "_delete_seconds"] = delete_seconds;
        bm.counters["wave" + n + "_drain_seconds"] = drain_seconds;
        // As it goes, for a wave that takes minutes.
        std::fprintf(stderr, "wave %d: jobs deleted in %.2f s, pods gone in %.2f s\n", wave + 1,
                     delete_seconds, drain_seconds);
      }
      cpu = CpuSeconds() - cpu0;
      peak = PeakMb();
      kubelet.Tell("done");
      kubelet_numbers = json::parse(kubelet.Hear());
      server.Tell("done");
      server_numbers = json::parse(server.Hear());
    }
    kubelet.Wait();
    server.Wait();
    const double pods = static_cast<double>(kPods) * kWaves;
    bm.SetIterationTime(total_bind);
    bm.counters["latency_ms"] = latency_ms;
    bm.counters["writes_per_pod"] = server_numbers["operator_writes"].get<double>() / pods;
    bm.counters["kubelet_writes_per_pod"] = server_numbers["kubelet_writes"].get<double>() / pods;
    bm.counters["operator_cpu_s"] = cpu;
    bm.counters["operator_peak_mb"] = peak;
    bm.counters["server_cpu_s"] = server_numbers["cpu"].get<double>();
    bm.counters["server_peak_mb"] = server_numbers["peak_mb"].get<double>();
    bm.counters["kubelet_cpu_s"] = kubelet_numbers["cpu"].get<double>();
    bm.counters["kubelet_peak_mb"] = kubelet_numbers["peak_mb"].get<double>();
  }
}
BENCHMARK(BM_Waves)
    ->ArgNames({"nodes", "latency_ms"})
    ->Args({1000, 0})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

void BM_DeleteJobs(benchmark::State& bm) {
  const int nodes = static_cast<int>(bm.range(0));
  std::ifstream crd(std::string(DLSCHED_SOURCE_DIR) + "/deploy/crd.yaml");
  std::stringstream text;
  text << crd.rdbuf();
  for (auto _ : bm) {
    TestApiServer::Options options;
    options.history = 1'000'000;
    TestApiServer server(options);
    if (!server.ApplyManifest(text.str())) throw std::runtime_error("no CRD");
    for (int i = 0; i < nodes; ++i) {
      if (!server.Create("nodes", "", Node(i))) throw std::runtime_error("node");
    }
    std::vector<std::string> pods;
    for (int i = 0; i < kJobs; ++i) {
      const std::string name = JobName(0, i);
      auto job = server.Create("trainingjobs.dlsched.io", "default", Job(name));
      if (!job) throw std::runtime_error(job.error().message);
      const json owner = {{"apiVersion", "dlsched.io/v1alpha1"},
                          {"kind", "TrainingJob"},
                          {"name", name},
                          {"uid", (*job)["metadata"]["uid"]},
                          {"controller", true},
                          {"blockOwnerDeletion", true}};
      for (int w = 0; w < kWorkers; ++w) {
        pods.push_back(name + "-worker-" + std::to_string(w));
        const json pod = {
            {"metadata",
             {{"name", pods.back()},
              {"namespace", "default"},
              {"ownerReferences", json::array({owner})}}},
            {"spec",
             {{"nodeName", "node-" + std::to_string((i * kWorkers + w) / 8 % nodes)},
              {"containers", json::array({{{"name", "tf"}, {"image", "trainer:1"}}})}}}};
        if (!server.Create("pods", "default", pod)) throw std::runtime_error("pod");
      }
      const json service = {
          {"metadata",
           {{"name", name}, {"namespace", "default"}, {"ownerReferences", json::array({owner})}}},
          {"spec", {{"clusterIP", "None"}, {"selector", {{"job", name}}}}}};
      if (!server.Create("services", "default", service)) throw std::runtime_error("service");
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kJobs; ++i) {
      if (!server.Delete("trainingjobs.dlsched.io", "default", JobName(0, i))) {
        throw std::runtime_error("delete");
      }
    }
    const double deleted = Since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    for (const std::string& pod : pods) {
      if (!server.Delete("pods", "default", pod, 0)) throw std::runtime_error("pod delete");
    }
    const double gone = Since(t1);
    if (server.Count("pods") != 0 || server.Count("services") != 0) {
      throw std::runtime_error("not every dependant collected");
    }
    bm.SetIterationTime(deleted + gone);
    bm.counters["delete_seconds"] = deleted;
    bm.counters["pods_seconds"] = gone;
  }
}
BENCHMARK(BM_DeleteJobs)
    ->ArgNames({"nodes"})
    ->Args({1000})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

}  // namespace
