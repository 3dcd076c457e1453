// `dlsched sweep`: the grid's order and load scaling, then end to end
// through the built binary: a grid equals separate `simulate` runs byte for
// byte, threads change nothing, cells run one at a time and merged equal a
// whole sweep, and the Kubernetes Indexed Job is read by the real kubectl
// and its pods' command, run here per index, gives the same sweep.csv.
#include "dlsched/cli/sweep.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "dlsched/cli/test_util.h"
#include "dlsched/config/specs.h"
#include "dlsched/report/test_util.h"
#include "dlsched/sim/generate.h"
#include "dlsched/sim/simulator.h"
#include "k8s/apiserver.h"

namespace dlsched::cli {
namespace {

namespace fs = std::filesystem;

using report::testing::ReadFile;
using report::testing::WriteFile;
using testing::Ran;
using testing::Shell;
using testing::WithoutProvenance;

TEST(SweepGridTest, CellsGoProfileThenLoadThenSeed) {
  SweepGrid g{{"fifo", "kod2"}, {0.5, 1, 2}, {7, 9}};
  ASSERT_EQ(g.size(), 12u);
  // Cell 0 is fifo at load 0.5 with seed 7; seeds vary fastest.
  EXPECT_EQ(g.CellDir(g.At(0)), "cells/fifo/load-0.5/seed-7");
  EXPECT_EQ(g.CellDir(g.At(1)), "cells/fifo/load-0.5/seed-9");
  EXPECT_EQ(g.CellDir(g.At(2)), "cells/fifo/load-1/seed-7");
  EXPECT_EQ(g.CellDir(g.At(6)), "cells/kod2/load-0.5/seed-7");
  EXPECT_EQ(g.CellDir(g.At(11)), "cells/kod2/load-2/seed-9");
  const SweepGrid::Cell c = g.At(9);
  EXPECT_EQ(c.index, 9u);
  EXPECT_EQ(c.profile, 1u);
  EXPECT_EQ(c.load, 1u);
  EXPECT_EQ(c.seed, 1u);
  // A workload file: no seed axis, no seed directory.
  SweepGrid f{{"fifo", "kod2"}, {1, 2}, {}};
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f.CellDir(f.At(1)), "cells/fifo/load-2");
  EXPECT_EQ(f.CellDir(f.At(2)), "cells/kod2/load-1");
}

TEST(SweepGridTest, QuotaAxisGoesBetweenProfileAndLoad) {
  SweepGrid g{{"fifo", "kod2"}, {1, 2}, {}, QuotaAxis{"team-a", core::kGpu, {2, 8, 16}}};
  ASSERT_EQ(g.size(), 12u);
  // profile, then quota, then load: cell 1 is fifo at quota 2 and load 2.
  EXPECT_EQ(g.CellDir(g.At(0)), "cells/fifo/quota-2/load-1");
  EXPECT_EQ(g.CellDir(g.At(1)), "cells/fifo/quota-2/load-2");
  EXPECT_EQ(g.CellDir(g.At(2)), "cells/fifo/quota-8/load-1");
  EXPECT_EQ(g.CellDir(g.At(11)), "cells/kod2/quota-16/load-2");
  const SweepGrid::Cell c = g.At(9);  // kod2 (6 cells a profile), quota 8, load 2
  EXPECT_EQ(c.profile, 1u);
  EXPECT_EQ(c.quota, 1u);
  EXPECT_EQ(c.load, 1u);
  // A cpu quota names its directory as a quantity and counts cores.
  const QuotaAxis cpu{"team-a", core::kCpu, {500, 4000}};
  EXPECT_EQ(cpu.Text(0), "500m");
  EXPECT_EQ(cpu.Number(0), 0.5);
  EXPECT_EQ(cpu.Text(1), "4");
  EXPECT_EQ(cpu.Of(), "team-a cpu");
}

// The two queues of docs/queues.md's example: team-a (4 GPUs, lends all)
// and team-b (4, lends at most 2), cohort research, on one 16-GPU node;
// team-a's nominal GPUs are `a`.
std::string QueuesCluster(const std::string& a) {
  return "nodes:\n  - {name: node, resources: {cpu: \"64\", memory: 256Gi, nvidia.com/gpu: "
         "16}}\nqueues:\n  - {name: team-a, cohort: research, quota: {nvidia.com/gpu: " +
         a +
         ", cpu: 32}}\n  - {name: team-b, cohort: research, quota: {nvidia.com/gpu: {nominal: "
         "4, lendingLimit: 2}}}\n";
}

TEST(SweepGridTest, QuotaAxisIsCheckedAgainstTheCluster) {
  auto cluster = config::ParseCluster(QueuesCluster("4"), "c.yaml");
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  auto axis = ParseQuotaAxis("team-a=2,8", *cluster);
  ASSERT_TRUE(axis.has_value()) << axis.error().message;
  EXPECT_EQ(axis->resource, core::kGpu);
  EXPECT_EQ(axis->values, (std::vector<int64_t>{2, 8}));
  auto cpu = ParseQuotaAxis("team-a:cpu=500m,16", *cluster);
  ASSERT_TRUE(cpu.has_value()) << cpu.error().message;
  EXPECT_EQ(cpu->values, (std::vector<int64_t>{500, 16000}));
  // WithQuota changes that one line and nothing else.
  auto eight = WithQuota(*cluster, *axis, 1);
  ASSERT_TRUE(eight.has_value());
  EXPECT_EQ(eight->queues[0].Line(core::kGpu)->nominal, 8);
  EXPECT_EQ(eight->queues[0].Line(core::kCpu)->nominal, 32000);
  EXPECT_EQ(eight->queues[1], cluster->queues[1]);
  EXPECT_EQ(eight->nodes.size(), cluster->nodes.size());
  auto err = [&](const std::string& text) {
    auto a = ParseQuotaAxis(text, *cluster);
    return a ? std::string("ok") : a.error().message;
  };
  EXPECT_EQ(err("team-c=1"),
            "--quota: the cluster declares no queue 'team-c' (it has: team-a, "
            "team-b)");
  EXPECT_EQ(err("team-a:memory=1Gi"),
            "--quota: queue team-a has no memory quota to vary (its quota lists the resources "
            "it limits)");
  EXPECT_EQ(err("team-a=4,4.0"), "--quota: 4 is given twice");
  EXPECT_TRUE(err("team-a=4,x").starts_with("--quota: 'x' is not a valid quantity"))
      << err("team-a=4,x");
  EXPECT_EQ(err("4,8"),
            "--quota: expected QUEUE=V1,V2,... or QUEUE:RESOURCE=V1,V2,... (e.g. "
            "team-a=4,8,16), got '4,8'");
  // team-b keeps 2 of its GPUs and lends 2: its nominal may not go below 2.
  EXPECT_EQ(err("team-b=4,1"),
            "--quota 1: queue team-b's nvidia.com/gpu lendingLimit 2 is more than that nominal");
  auto bare = config::ParseCluster("nodes:\n  - {name: n, resources: {cpu: 1}}\n", "c.yaml");
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(ParseQuotaAxis("team-a=1", *bare).error().message,
            "--quota: the cluster declares no queues (docs/queues.md)");
}

TEST(SweepGridTest, LoadDividesSubmitTimesOnly) {
  config::WorkloadSpec w;
  w.jobs.resize(3);
  w.jobs[0].submit_time = 0;
  w.jobs[1].submit_time = 30;
  w.jobs[2].submit_time = 90;
  w.jobs[2].deadline = 100;
  const config::WorkloadSpec dense = ScaleArrivals(w, 2);
  EXPECT_EQ(dense.jobs[0].submit_time, 0);
  EXPECT_EQ(dense.jobs[1].submit_time, 15);
  EXPECT_EQ(dense.jobs[2].submit_time, 45);
  EXPECT_EQ(dense.jobs[2].deadline, 100);  // relative to submit: unchanged
  EXPECT_EQ(ScaleArrivals(w, 0.5).jobs[2].submit_time, 180);
}

TEST(SweepGridTest, LoadsAndSeedsAreChecked) {
  EXPECT_TRUE(CheckLoads(std::vector<double>{0.5, 1, 1.5}).has_value());
  EXPECT_EQ(CheckLoads(std::vector<double>{1, 0}).error().message,
            "--load: expected factors from 0.001 to 1e+06, got 0");
  EXPECT_FALSE(CheckLoads(std::vector<double>{-1}).has_value());
  EXPECT_EQ(CheckLoads(std::vector<double>{1, 2, 1}).error().message, "--load: 1 is given twice");
  EXPECT_EQ(CheckSeeds(std::vector<uint64_t>{1, 2, 1}).error().message,
            "--seeds: 1 is given twice");
}

// Every file under `dir`, by path relative to it.
std::map<std::string, std::string> Files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = ReadFile(e.path());
  }
  return out;
}

class SweepTest : public testing::CommandTest {
 protected:
  SweepTest() : CommandTest("sweep") {}

  // A generated workload (seed 3) and a cluster of 2 nodes x 8 GPUs, as
  // files: tmp/w.yaml, tmp/c.yaml.
  void WriteInputs() {
    const Ran r = Dlsched(
        fmt::format("generate --jobs 12 --seed 3 --mean-interarrival 40 --max-steps 20000 -o {} "
                    "--cluster-out {} --nodes 2 --gpus-per-node 8",
                    Path("w.yaml"), Path("c.yaml")));
    ASSERT_EQ(r.code, 0) << r.err;
  }

  // `file`'s workload with every submit time divided by `load`, written
  // to `out` (the definition of the load factor, done here by hand).
  void WriteScaled(const std::string& file, double load, const std::string& out) {
    auto w = sim::LoadWorkload(file);
    ASSERT_TRUE(w.has_value()) << w.error().message;
    for (auto& j : w->jobs) j.submit_time /= load;
    WriteFile(out, sim::WorkloadToYaml(*w));
  }
};

constexpr const char* kRunFiles[] = {"summary.json", "jobs.csv", "events.csv", "allocations.csv",
                                     "utilization.csv"};

// The issue's test: a 2 x 2 grid is four `simulate` runs of the
// load-scaled workload, byte for byte, every run file (simulate's
// summary.json records its provenance too; a cell's does not).
TEST_F(SweepTest, TwoByTwoGridEqualsFourSeparateRuns) {
  WriteInputs();
  const Ran r =
      Dlsched(fmt::format("sweep -c {} -w {} -p gang-binpack,kod2 --load 1,2 "
                          "--keep-runs -o {}",
                          Path("c.yaml"), Path("w.yaml"), Path("sweep")));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  for (const char* load : {"1", "2"}) {
    WriteScaled(Path("w.yaml"), std::stod(load), Path(fmt::format("w-{}.yaml", load)));
    for (const char* profile : {"gang-binpack", "kod2"}) {
      const fs::path run = tmp_ / "runs" / fmt::format("{}-{}", profile, load);
      const Ran s =
          Dlsched(fmt::format("simulate -c {} -w {} -p {} -q -o {}", Path("c.yaml"),
                              Path(fmt::format("w-{}.yaml", load)), profile, run.string()));
      ASSERT_EQ(s.code, 0) << s.err;
      const fs::path cell = tmp_ / "sweep" / "cells" / profile / fmt::format("load-{}", load);
      for (const char* f : kRunFiles) {
        EXPECT_EQ(ReadFile(cell / f), WithoutProvenance(ReadFile(run / f))) << cell / f;
        EXPECT_FALSE(ReadFile(run / f).empty()) << run / f;
      }
      EXPECT_NE(ReadFile(run / "summary.json").find("\"provenance\""), std::string::npos);
    }
  }
  // Denser arrivals show: the four cells are not all the same run.
  EXPECT_NE(ReadFile(tmp_ / "sweep/cells/kod2/load-1/jobs.csv"),
            ReadFile(tmp_ / "sweep/cells/kod2/load-2/jobs.csv"));
  // sweep.csv: a header and a row per cell, in cell order.
  const std::string csv = ReadFile(tmp_ / "sweep/sweep.csv");
  EXPECT_TRUE(csv.starts_with("cell,cells,profile,load,seed,status,total,completed,")) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5) << csv;
  EXPECT_NE(csv.find("\n0,4,gang-binpack,1,,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n3,4,kod2,2,,"), std::string::npos) << csv;
  // Each cell's cell.csv is the header and its row.
  EXPECT_EQ(ReadFile(tmp_ / "sweep/cells/kod2/load-1/cell.csv"),
            csv.substr(0, csv.find('\n') + 1) +
                csv.substr(csv.find("\n2,4,kod2,1,") + 1,
                           csv.find("\n3,4,") - csv.find("\n2,4,kod2,1,")));
  // The table on stdout has a row per cell.
  EXPECT_NE(r.out.find("kod2"), std::string::npos) << r.out;
}

// Seeds regenerate the workload: each cell is `dlsched generate --seed S`
// at that load, simulated.
TEST_F(SweepTest, SeedsAreGeneratedWorkloads) {
  WriteInputs();
  const Ran r = Dlsched(fmt::format(
      "sweep -c {} --jobs 10 --seeds 1,2 --mean-interarrival 40 --max-steps 20000 -p gang-binpack "
      "--load 1.5 -q -o {}",
      Path("c.yaml"), Path("sweep")));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  for (const char* seed : {"1", "2"}) {
    const std::string w = Path(fmt::format("g{}.yaml", seed));
    ASSERT_EQ(Dlsched(fmt::format("generate --jobs 10 --seed {} --mean-interarrival 40 "
                                  "--max-steps 20000 -o {}",
                                  seed, w))
                  .code,
              0);
    WriteScaled(w, 1.5, w + ".scaled.yaml");
    const fs::path run = tmp_ / "runs" / seed;
    ASSERT_EQ(Dlsched(fmt::format("simulate -c {} -w {}.scaled.yaml -p gang-binpack -q -o {}",
                                  Path("c.yaml"), w, run.string()))
                  .code,
              0);
    const fs::path cell = tmp_ / "sweep/cells/gang-binpack/load-1.5" / fmt::format("seed-{}", seed);
    EXPECT_EQ(ReadFile(cell / "summary.json"), WithoutProvenance(ReadFile(run / "summary.json")));
    // Without --keep-runs a cell keeps its summary (every job's numbers) only.
    EXPECT_EQ(Files(cell).size(), 2u);
    EXPECT_TRUE(fs::exists(cell / "cell.csv"));
  }
  const std::string csv = ReadFile(tmp_ / "sweep/sweep.csv");
  EXPECT_NE(csv.find("\n0,2,gang-binpack,1.5,1,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,2,gang-binpack,1.5,2,"), std::string::npos) << csv;
}

TEST_F(SweepTest, ThreadsDoNotChangeTheResults) {
  WriteInputs();
  const std::string grid = fmt::format(
      "sweep -c {} -w {} -p gang-binpack,kod2,fifo --load 0.5,1,2 "
      "--keep-runs -q",
      Path("c.yaml"), Path("w.yaml"));
  ASSERT_EQ(Dlsched(grid + " -j 1 -o " + Path("serial")).code, 0);
  ASSERT_EQ(Dlsched(grid + " -j 4 -o " + Path("parallel")).code, 0);
  const auto serial = Files(tmp_ / "serial");
  // sweep.csv and provenance.json (which records no --threads); per cell
  // cell.csv and the run files.
  EXPECT_EQ(serial.size(), 2u + 9 * 6);
  EXPECT_EQ(serial, Files(tmp_ / "parallel"));
}

// What an Indexed Job does: every cell on its own (in any order), then
// merged. The merge equals the whole sweep's sweep.csv, byte for byte.
TEST_F(SweepTest, CellsRunAloneMergeToTheWholeSweep) {
  WriteInputs();
  const std::string grid = fmt::format(
      "sweep -c {} --jobs 8 --seeds 4,5 --max-steps 20000 -p gang-binpack,kod2 "
      "--load 1,2 -q",
      Path("c.yaml"));
  ASSERT_EQ(Dlsched(grid + " -o " + Path("whole")).code, 0);
  for (int cell : {7, 0, 3, 1, 6, 2, 5}) {
    const Ran r = Dlsched(fmt::format("{} --cell {} -o {}", grid, cell, Path("cells")));
    ASSERT_EQ(r.code, 0) << r.err;
  }
  // Seven of eight: the merge says which is missing, and writes nothing.
  Ran m = Dlsched("sweep --merge " + Path("cells"));
  EXPECT_EQ(m.code, 2);
  EXPECT_EQ(m.err, "dlsched: --merge: " + Path("cells") +
                       "/cells: 1 of 8 cells have no cell.csv "
                       "yet: 4\n");
  EXPECT_FALSE(fs::exists(tmp_ / "cells/sweep.csv"));
  ASSERT_EQ(Dlsched(fmt::format("{} --cell 4 -o {}", grid, Path("cells"))).code, 0);
  // Each cell's files equal the whole sweep's. A cell run alone records no
  // provenance: the grid's is the whole sweep's provenance.json.
  auto whole = Files(tmp_ / "whole");
  const std::string sweep_csv = whole["sweep.csv"];
  whole.erase("sweep.csv");
  EXPECT_EQ(whole.erase("provenance.json"), 1u);
  EXPECT_EQ(Files(tmp_ / "cells"), whole);
  // The report merges them as it reads the directory.
  const Ran rep = Dlsched(fmt::format("report {} -o {}", Path("cells"), Path("r.html")));
  EXPECT_EQ(rep.code, 0) << rep.err;
  EXPECT_NE(ReadFile(tmp_ / "r.html").find("jct-vs-load"), std::string::npos);
  m = Dlsched("sweep --merge " + Path("cells"));
  ASSERT_EQ(m.code, 0) << m.err;
  EXPECT_EQ(ReadFile(tmp_ / "cells/sweep.csv"), sweep_csv);
  // A second cell run replaces only its own directory.
  ASSERT_EQ(Dlsched(fmt::format("{} --cell 4 -o {}", grid, Path("cells"))).code, 0);
  EXPECT_EQ(ReadFile(tmp_ / "cells/sweep.csv"), sweep_csv);
}

// --window measures every cell over it (each summary.json records it), and
// the Indexed Job's pods get it too.
TEST_F(SweepTest, WindowReachesEveryCellAndThePods) {
  WriteInputs();
  const std::string grid = fmt::format(
      "sweep -c {} -w {} -p gang-binpack,kod2 --load 1,2 -q --window 100:", Path("c.yaml"),
      Path("w.yaml"));
  ASSERT_EQ(Dlsched(grid + " -o " + Path("s")).code, 0);
  int cells = 0;
  for (const auto& e : fs::recursive_directory_iterator(tmp_ / "s")) {
    if (e.path().filename() != "summary.json") continue;
    const auto j = nlohmann::json::parse(ReadFile(e.path()));
    EXPECT_EQ(j["window"]["from"], 100) << e.path();
    EXPECT_TRUE(j["window"]["to"].is_null()) << e.path();
    ++cells;
  }
  EXPECT_EQ(cells, 4);
  const Ran job = Dlsched(grid + " -o " + Path("k") + " --emit-k8s-job");
  ASSERT_EQ(job.code, 0) << job.err;
  const YAML::Node y = YAML::Load(job.out);
  std::vector<std::string> args;
  for (const auto& a : y["spec"]["template"]["spec"]["containers"][0]["args"]) {
    args.push_back(a.as<std::string>());
  }
  const auto w = std::find(args.begin(), args.end(), "--window");
  ASSERT_NE(w, args.end());
  ASSERT_NE(w + 1, args.end());
  EXPECT_EQ(w[1], "100:");
}

// Runs kubectl against the test API server (discovery only: a client-side
// dry run sends nothing).
std::pair<int, std::string> Kubectl(const fs::path& dir, const std::string& kubeconfig,
                                    const std::string& args) {
  const std::string cmd =
      fmt::format("HOME='{}' timeout 60 kubectl --kubeconfig '{}' --cache-dir '{}/cache' {} 2>&1",
                  dir.string(), kubeconfig, dir.string(), args);
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST_F(SweepTest, IndexedJobPassesKubectlAndItsPodsGiveTheSweep) {
  WriteInputs();
  const std::string grid = fmt::format("sweep -c {} -w {} -p gang-binpack,kod2 --load 1,2 -q",
                                       Path("c.yaml"), Path("w.yaml"));
  const Ran e =
      Dlsched(fmt::format("{} -o {} --emit-k8s-job --k8s-pvc results --k8s-image "
                          "reg.example/dlsched:test --k8s-parallelism 3",
                          grid, Path("cluster")));
  ASSERT_EQ(e.code, 0) << e.err;
  WriteFile(tmp_ / "job.yaml", e.out);

  // kubectl reads it, maps batch/v1 Job through the API server's discovery
  // and prints the object it would create.
  if (::system("command -v kubectl >/dev/null 2>&1") != 0) GTEST_FAIL() << "kubectl not found";
  dlsched::testing::TestApiServer server;
  ASSERT_TRUE(server.Start().has_value());
  const std::string kubeconfig = Path("kubeconfig");
  server.WriteKubeconfig(kubeconfig);
  const auto [code, printed] =
      Kubectl(tmp_, kubeconfig, "create --dry-run=client -o json -f " + Path("job.yaml"));
  ASSERT_EQ(code, 0) << printed;
  const auto job = nlohmann::json::parse(printed.substr(printed.find('{')));
  EXPECT_EQ(job["apiVersion"], "batch/v1");
  EXPECT_EQ(job["kind"], "Job");
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["completions"], 4);
  EXPECT_EQ(job["spec"]["parallelism"], 3);
  EXPECT_EQ(job["spec"]["template"]["spec"]["restartPolicy"], "Never");
  EXPECT_TRUE(server.List("jobs").empty());  // a dry run
  // An invalid manifest fails the same command (kubectl does check).
  WriteFile(tmp_ / "bad.yaml", "apiVersion: batch/v1\nkind: Jobb\nmetadata: {name: x}\n");
  EXPECT_NE(
      Kubectl(tmp_, kubeconfig, "create --dry-run=client -o json -f " + Path("bad.yaml")).first, 0);

  // The YAML itself: one container running dlsched in the volume.
  const YAML::Node y = YAML::LoadFile(Path("job.yaml"));
  EXPECT_EQ(y["spec"]["completions"].as<int>(), 4);
  const YAML::Node pod = y["spec"]["template"]["spec"];
  ASSERT_EQ(pod["containers"].size(), 1u);
  const YAML::Node c = pod["containers"][0];
  EXPECT_EQ(c["image"].as<std::string>(), "reg.example/dlsched:test");
  EXPECT_EQ(c["command"][0].as<std::string>(), "dlsched");
  EXPECT_EQ(c["workingDir"].as<std::string>(), "/data");
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"].as<std::string>(), "/data");
  EXPECT_EQ(c["volumeMounts"][0]["name"].as<std::string>(),
            pod["volumes"][0]["name"].as<std::string>());
  EXPECT_EQ(pod["volumes"][0]["persistentVolumeClaim"]["claimName"].as<std::string>(), "results");
  EXPECT_EQ(c["env"][0]["name"].as<std::string>(), "JOB_COMPLETION_INDEX");
  std::vector<std::string> args;
  for (const auto& a : c["args"]) args.push_back(a.as<std::string>());
  auto cell = std::find(args.begin(), args.end(), "--cell");
  ASSERT_NE(cell, args.end());
  ASSERT_NE(cell + 1, args.end());
  EXPECT_EQ(cell[1], "$(JOB_COMPLETION_INDEX)");

  // Each index as Kubernetes would run it (the index substituted), then
  // merged: the same sweep.csv as the local run.
  for (int i = 0; i < 4; ++i) {
    std::string line = DLSCHED_BINARY;
    for (const auto& a : args) {
      line += " '" + (a == "$(JOB_COMPLETION_INDEX)" ? std::to_string(i) : a) + "'";
    }
    const Ran r = Shell(line, tmp_);
    ASSERT_EQ(r.code, 0) << line << "\n" << r.err;
  }
  ASSERT_EQ(Dlsched(grid + " -o " + Path("local")).code, 0);
  ASSERT_EQ(Dlsched("sweep --merge " + Path("cluster")).code, 0);
  EXPECT_EQ(ReadFile(tmp_ / "cluster/sweep.csv"), ReadFile(tmp_ / "local/sweep.csv"));
}

// Ctrl-C stops every cell after its current cycle: all cells are written,
// their status says partial, the exit code is 130 (as compare).
TEST_F(SweepTest, InterruptedSweepWritesPartialCells) {
  ASSERT_EQ(Dlsched(fmt::format("generate --jobs 1 --cluster-out {} --nodes 20 --gpus-per-node 8 "
                                "-o {}",
                                Path("c.yaml"), Path("unused.yaml")))
                .code,
            0);
  const std::string out = Path("o");
  const std::string c = Path("c.yaml");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string log = Path("log");
    std::freopen(log.c_str(), "w", stdout);
    std::freopen(log.c_str(), "a", stderr);
    execl(DLSCHED_BINARY, DLSCHED_BINARY, "sweep", "-c", c.c_str(), "--jobs", "20000",
          "--mean-interarrival", "0.2", "-p", "gang-binpack,fsched", "--load", "1,2", "-j", "1",
          "-o", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const std::string log = ReadFile(tmp_ / "log");
  ASSERT_TRUE(WIFEXITED(status)) << log;
  EXPECT_EQ(WEXITSTATUS(status), 130) << log;
  EXPECT_NE(log.find("dlsched: interrupted: the results are partial"), std::string::npos) << log;
  const std::string csv = ReadFile(fs::path(out) / "sweep.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5) << csv;
  EXPECT_NE(csv.find("\n0,4,gang-binpack,1,1,partial: "), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n3,4,fsched,2,1,partial: "), std::string::npos) << csv;
  EXPECT_NE(
      ReadFile(fs::path(out) / "cells/fsched/load-2/seed-1/summary.json").find("\"partial\": true"),
      std::string::npos);
}

// A CSV line without quoted cells, split at its commas.
std::vector<std::string> SplitCommas(std::string_view line) {
  std::vector<std::string> out;
  for (size_t at = 0;;) {
    const size_t comma = line.find(',', at);
    out.emplace_back(line.substr(at, comma - at));
    if (comma == std::string_view::npos) return out;
    at = comma + 1;
  }
}

// --quota: each cell is `simulate` on the cluster file with that nominal
// quota written in (the oracle: the file edited by hand), byte for byte;
// sweep.csv names the value and has each queue's figures, as the run's
// queues.csv has them; a cell run alone equals the whole sweep's.
TEST_F(SweepTest, QuotaAxisEqualsSimulateOnTheEditedCluster) {
  WriteFile(tmp_ / "c.yaml", QueuesCluster("4"));
  for (const char* v : {"2", "8"}) {
    WriteFile(tmp_ / fmt::format("c{}.yaml", v), QueuesCluster(v));
  }
  // Seven one-worker jobs at 0, each 100 s (docs/queues.md's example).
  std::string w = "jobs:\n";
  for (const auto& [name, queue, gpus] :
       std::vector<std::tuple<std::string, std::string, int>>{{"a1", "team-a", 5},
                                                              {"b1", "team-b", 2},
                                                              {"a2", "team-a", 2},
                                                              {"a3", "team-a", 7},
                                                              {"a4", "team-a", 1},
                                                              {"b2", "team-b", 1},
                                                              {"c1", "", 4}}) {
    w += fmt::format(
        "  - {{name: {}, {}arrival: 0, totalSteps: 100, throughput: {{table: {{1: 1}}}}, worker: "
        "{{replicas: 1, resources: {{cpu: 1, memory: 1Gi, nvidia.com/gpu: {}}}}}}}\n",
        name, queue.empty() ? "" : "queue: " + queue + ", ", gpus);
  }
  WriteFile(tmp_ / "w.yaml", w);
  const std::string grid =
      fmt::format("sweep -c {} -w {} -p fifo,queue-reclaim --quota team-a=2,8 --keep-runs -q",
                  Path("c.yaml"), Path("w.yaml"));
  const Ran r = Dlsched(grid + " -o " + Path("sweep"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::string csv = ReadFile(tmp_ / "sweep/sweep.csv");
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_TRUE(header.starts_with("cell,cells,profile,load,seed,quota,quota_of,status,")) << header;
  const std::vector<std::string> columns = SplitCommas(header);
  EXPECT_EQ(columns.back(), "ftf_max@team-b");
  size_t row_at = csv.find('\n') + 1;
  for (const char* profile : {"fifo", "queue-reclaim"}) {
    for (const char* v : {"2", "8"}) {
      const fs::path run = tmp_ / "runs" / fmt::format("{}-{}", profile, v);
      const Ran s = Dlsched(fmt::format("simulate -c {} -w {} -p {} -q -o {}",
                                        Path(fmt::format("c{}.yaml", v)), Path("w.yaml"), profile,
                                        run.string()));
      // simulate exits 1 when jobs are stuck (at 2 GPUs, below).
      ASSERT_EQ(s.code, std::string_view(v) == "2" ? 1 : 0) << s.err;
      const fs::path cell = tmp_ / "sweep/cells" / profile / fmt::format("quota-{}/load-1", v);
      for (const char* f : kRunFiles) {
        EXPECT_EQ(ReadFile(cell / f), WithoutProvenance(ReadFile(run / f))) << cell / f;
      }
      EXPECT_EQ(ReadFile(cell / "queues.csv"), ReadFile(run / "queues.csv")) << cell;
      // The row: the quota, then each queue's figures as queues.csv has them.
      const std::string row = csv.substr(row_at, csv.find('\n', row_at) - row_at);
      row_at += row.size() + 1;
      const std::vector<std::string> cells = SplitCommas(row);
      ASSERT_EQ(cells.size(), columns.size()) << row;
      std::map<std::string, std::string> at;
      for (size_t i = 0; i < columns.size(); ++i) at[columns[i]] = cells[i];
      EXPECT_EQ(at["profile"], profile);
      EXPECT_EQ(at["quota"], v);
      EXPECT_EQ(at["quota_of"], "team-a nvidia.com/gpu");
      const auto queues = nlohmann::json::parse(ReadFile(run / "summary.json"))["queues"];
      ASSERT_EQ(queues.size(), 2u);
      for (const auto& q : queues) {
        const std::string name = q["queue"];
        for (const char* fig : {"jct_mean", "gpu_hours", "borrowed_gpu_hours"}) {
          EXPECT_DOUBLE_EQ(std::stod(at[fmt::format("{}@{}", fig, name)]), q[fig].get<double>())
              << profile << " " << v << " " << fig << "@" << name;
        }
      }
    }
  }
  // team-a at 2 GPUs: its 5- and 7-GPU jobs can never fit (2 + the 2
  // team-b lends), so 2 are stuck; at 8 every job completes.
  EXPECT_NE(csv.find("\n0,4,fifo,1,,2,team-a nvidia.com/gpu,2 stuck"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,4,fifo,1,,8,team-a nvidia.com/gpu,all done"), std::string::npos) << csv;
  // One cell alone, then merged with the rest: the whole sweep's sweep.csv.
  for (int cell : {3, 0, 2, 1}) {
    ASSERT_EQ(Dlsched(fmt::format("{} --cell {} -o {}", grid, cell, Path("cells"))).code, 0);
  }
  EXPECT_EQ(Files(tmp_ / "cells/cells/queue-reclaim/quota-8"),
            Files(tmp_ / "sweep/cells/queue-reclaim/quota-8"));
  const Ran m = Dlsched("sweep --merge " + Path("cells"));
  ASSERT_EQ(m.code, 0) << m.err;
  EXPECT_EQ(ReadFile(tmp_ / "cells/sweep.csv"), csv);
  // The report draws against the quota, and each queue's figures.
  const Ran rep = Dlsched(fmt::format("report {} -o {}", Path("sweep"), Path("r.html")));
  ASSERT_EQ(rep.code, 0) << rep.err;
  const std::string html = ReadFile(tmp_ / "r.html");
  EXPECT_NE(html.find("JCT against team-a&#39;s nominal nvidia.com/gpu quota"), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"sweep-queues-jct_mean\""), std::string::npos);
}

// Bad input: one line naming the flag, exit 2, nothing written.
TEST_F(SweepTest, BadInputIsOneLineAndExitTwo) {
  WriteInputs();
  const std::string base =
      fmt::format("sweep -c {} -w {} -o {}", Path("c.yaml"), Path("w.yaml"), Path("out"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {base + " -p fifo --load 0", "--load: expected factors from 0.001 to 1e+06, got 0"},
      {base + " -p fifo --load 1,abc", "--load"},
      {base + " -p fifo --load 1,2,1", "--load: 1 is given twice"},
      {base + " -p nosuch --load 1", "nosuch"},
      {base + " -p fifo --load 1,2 --cell 2",
       "--cell: 2 is out of range: the grid has 2 cells (0 to 1)"},
      {base + " -p fifo --cell -1", "--cell: -1 is out of range"},
      {base + " --load 1", "--profiles: required"},
      {fmt::format("sweep -c {} -p fifo -o {}", Path("c.yaml"), Path("out")),
       "give the jobs with --workload FILE"},
      {base + " -p fifo --seeds 1,2", "--seeds"},
      {fmt::format("sweep -c {} --jobs 5 --seeds 1,1 -p fifo -o {}", Path("c.yaml"), Path("out")),
       "--seeds: 1 is given twice"},
      {"sweep --merge " + Path("nothing-here"), "--merge: "},
      {base + " -p fifo --quota team-a=4", "--quota: the cluster declares no queues"},
  };
  for (const auto& [args, expected] : cases) {
    const Ran r = Dlsched(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.err.starts_with("dlsched: ")) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(tmp_ / "out")) << args;
  }
}

}  // namespace
}  // namespace dlsched::cli
