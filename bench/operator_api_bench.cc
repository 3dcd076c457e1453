// The operator on the API path (issue 25, "Speed on the API path"): N nodes
// of 8 GPUs and 1,250 TrainingJobs of 4 one-GPU workers (5,000 pods)
// submitted at once to the test API server (testing/k8s/), one operator
// (gang-binpack, pods bound through pods/binding) stepped until every pod
// is bound. No kubelet: the pods stay Pending once bound.
//
// The server runs in a child process (fork before any thread), so each
// side's CPU and peak RSS are its own: the operator's are this process's
// (its step loop, its informers' threads, its HTTP client), the server's
// (HTTP, schema validation of every write, watches) the child's. The jobs
// are created in the child's store directly (no HTTP request, not counted).
//
// Counters: bind_seconds (from the first job created to the last pod
// bound, as the operator's Stats count binds), submit_seconds (creating the
// 1,250 jobs in the store), pods_per_second, requests and writes per pod
// (TestApiServer::RequestCounts: every request the operator made, GETs and
// WATCHes included; writes are every verb but GET, LIST and WATCH), pod
// writes per pod (POST pods + POST pods/binding), per-job writes (status,
// Events, Services) per job, operator and server CPU seconds and peak RSS
// (MB). One iteration per size (each builds a fresh server). node_name:1
// runs the operator with bind_with_node_name (spec.nodeName set at
// creation, no pods/binding: one write per pod).
//
//   build/bench/operator_api_bench
//   build/bench/operator_api_bench --benchmark_filter='nodes:5000/node_name:0'
#include <benchmark/benchmark.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "dlsched/cli/inputs.h"
#include "dlsched/k8s/operator.h"
#include "k8s/apiserver.h"

namespace {

using dlsched::testing::TestApiServer;
using nlohmann::json;

constexpr int kJobs = 1250;
constexpr int kWorkers = 4;

json Node(int i) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", "node-" + std::to_string(i)}}},
          {"status",
           {{"allocatable",
             {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}}}}}};
}

json Job(int i) {
  json worker = {{"spec",
                  {{"containers", json::array({{{"name", "tf"},
                                                {"image", "trainer:1"},
                                                {"resources",
                                                 {{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}},
                                                  {"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}}};
  return {{"apiVersion", "dlsched.io/v1alpha1"},
          {"kind", "TrainingJob"},
          {"metadata", {{"name", "job-" + std::to_string(i)}, {"namespace", "default"}}},
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

// The child: a server with `nodes` nodes; on "go" it creates the jobs and
// answers "submitted <seconds>"; on "done" the server's numbers, as JSON.
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
  if (ReadLine(in) != "go") std::_Exit(2);
  const double cpu0 = CpuSeconds();
  ResetPeak();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kJobs; ++i) {
    if (!server.Create("trainingjobs.dlsched.io", "default", Job(i))) std::_Exit(2);
  }
  WriteLine(out,
            "submitted " +
                std::to_string(
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
  if (ReadLine(in) != "done") std::_Exit(2);
  json r;
  r["cpu"] = CpuSeconds() - cpu0;
  r["peak_mb"] = PeakMb();
  int bound = 0;
  for (const json& pod : server.List("pods", "default")) {
    bound += pod["spec"].contains("nodeName") ? 1 : 0;
  }
  r["bound"] = bound;
  r["counts"] = server.RequestCounts();
  WriteLine(out, r.dump());
  server.Stop();
  std::_Exit(0);
}

void BM_SubmitAndBind(benchmark::State& bm) {
  const int nodes = static_cast<int>(bm.range(0));
  const bool node_name = bm.range(1) != 0;
  const int pods = kJobs * kWorkers;
  auto engine = dlsched::cli::LoadEngine("gang-binpack");
  if (!engine) throw std::runtime_error(engine.error().message);
  for (auto _ : bm) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) throw std::runtime_error("pipe");
    const pid_t pid = fork();
    if (pid == 0) ServeChild(nodes, to_child[0], from_child[1]);
    close(to_child[0]);
    close(from_child[1]);
    dlsched::k8s::RestConfig config;
    config.server = ReadLine(from_child[0]);
    config.bearer_token = "test-token";
    config.timeout_seconds = 30;
    dlsched::k8s::OperatorOptions o;
    o.log = [](const std::string&) {};
    o.bind_with_node_name = node_name;
    json server;
    double bind_seconds = 0, submit_seconds = 0, cpu = 0, peak = 0;
    dlsched::k8s::OperatorStats stats;
    {
      dlsched::k8s::Operator op(config, **engine, o);
      ResetPeak();
      const double cpu0 = CpuSeconds();
      if (!op.Start(120)) throw std::runtime_error("operator did not start");
      const auto t0 = std::chrono::steady_clock::now();
      WriteLine(to_child[1], "go");
      while (op.Stats().binds < pods) {
        op.Step(0.01);
        if (std::chrono::steady_clock::now() - t0 > std::chrono::minutes(10)) {
          kill(pid, SIGKILL);
          throw std::runtime_error("pods not bound in 10 minutes");
        }
      }
      bind_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      // The job statuses and Events written after the last bind.
      const auto settle = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!op.Idle() && std::chrono::steady_clock::now() < settle) op.Step(0.01);
      stats = op.Stats();
      cpu = CpuSeconds() - cpu0;
      peak = PeakMb();
      const std::string submitted = ReadLine(from_child[0]);
      submit_seconds = std::stod(submitted.substr(submitted.find(' ') + 1));
      WriteLine(to_child[1], "done");
      server = json::parse(ReadLine(from_child[0]));
    }
    int status = 0;
    waitpid(pid, &status, 0);
    close(to_child[1]);
    close(from_child[0]);
    if (server["bound"].get<int>() != pods) throw std::runtime_error("not every pod bound");

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
    bm.counters["bind_seconds"] = bind_seconds;
    bm.counters["submit_seconds"] = submit_seconds;
    bm.counters["pods_per_second"] = pods / bind_seconds;
    bm.counters["requests_per_pod"] = static_cast<double>(requests) / pods;
    bm.counters["writes_per_pod"] = static_cast<double>(writes) / pods;
    bm.counters["pod_writes_per_pod"] = static_cast<double>(pod_writes) / pods;
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
    ->ArgNames({"nodes", "node_name"})
    ->Args({1000, 0})
    ->Args({5000, 0})
    ->Args({5000, 1})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

}  // namespace
