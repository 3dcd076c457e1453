// `dlsched snapshot` writes only files that `simulate` runs: an answer of
// the operator that `simulate` would refuse (a job that could never finish,
// an unknown model, a job placed where there is no room) is refused, in
// one line, with nothing written.
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dlsched/cli/operator_command.h"
#include "dlsched/cli/test_util.h"
#include "dlsched/k8s/http_endpoints.h"

namespace dlsched::cli {
namespace {

namespace fs = std::filesystem;

class SnapshotTest : public testing::CommandTest {
 protected:
  SnapshotTest() : CommandTest("snapshot") {}

  // `dlsched snapshot` against an endpoint answering `cluster` and
  // `workload` as the operator's /snapshot does.
  testing::Ran Snapshot(const std::string& cluster, const std::string& workload) {
    k8s::HttpEndpoints server;
    const std::string body =
        nlohmann::json{{"start", 100}, {"cluster", cluster}, {"workload", workload}}.dump();
    EXPECT_TRUE(
        server.Start("127.0.0.1:0", {nullptr, nullptr, nullptr, [&] { return body; }}).has_value());
    auto r = Dlsched(fmt::format("snapshot --from 127.0.0.1:{} --timeout 10 --out '{}'",
                                 server.Port(), (tmp_ / "snap").string()));
    server.Stop();
    return r;
  }
};

constexpr char kCluster[] =
    "nodes:\n  - name: a\n    resources: {cpu: \"8\", nvidia.com/gpu: \"4\"}\n"
    "    reserved: {nvidia.com/gpu: \"3\"}\n";

std::string Job(const std::string& fields, int gpus = 1) {
  return fmt::format(
      "start: 100\njobs:\n  - name: j\n    arrival: 0\n    worker: {{replicas: 1, resources: "
      "{{nvidia.com/gpu: \"{}\"}}}}\n{}",
      gpus, fields);
}

constexpr char kRunning[] =
    "    totalSteps: 100\n    throughput: {table: {1: 1}}\n    running:\n      phase: Running\n"
    "      since: 50\n      firstStart: 50\n      lastLaunch: 0\n      nodes: {worker-0: a}\n";

TEST_F(SnapshotTest, WritesOnlyWhatSimulateRuns) {
  // A job placed on a's one free GPU: written, and simulate runs it.
  auto ok = Snapshot(kCluster, Job(kRunning));
  ASSERT_EQ(ok.code, 0) << ok.err;
  auto run =
      Dlsched(fmt::format("simulate -c '{0}/cluster.yaml' -w '{0}/workload.yaml' --out "
                          "'{1}' -q",
                          (tmp_ / "snap").string(), (tmp_ / "run").string()));
  EXPECT_EQ(run.code, 0) << run.err;
  fs::remove_all(tmp_ / "snap");

  const std::pair<std::string, std::string> refused[] = {
      // 1e15 steps at 1e-6 steps/s: 1e21 s.
      {Job("    totalSteps: 1e15\n    throughput: {table: {1: 1e-6}}\n"),
       "job 'j': totalSteps: 1e+15 steps at 1e-06 steps/s (1 workers) take 1e+21 s, more than "
       "the limit of 1e+09 s\n"},
      {Job("    totalSteps: 100\n    throughput: {model: no-such-model}\n"),
       "job 'j': throughput.model: unknown model 'no-such-model'"},
      // Two GPUs where one is free.
      {Job(kRunning, 2),
       "job 'j': running.nodes.worker-0: node 'a' has cpu=8, nvidia.com/gpu=1 free, not enough for "
       "nvidia.com/gpu=2\n"},
  };
  for (const auto& [workload, message] : refused) {
    SCOPED_TRACE(workload);
    auto r = Snapshot(kCluster, workload);
    EXPECT_EQ(r.code, 1) << r.err;
    const std::string where = (tmp_ / "snap" / "workload.yaml").string() + ": ";
    EXPECT_TRUE(r.err.starts_with("dlsched: " + where + message)) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(tmp_ / "snap"));
  }
}

}  // namespace
}  // namespace dlsched::cli
