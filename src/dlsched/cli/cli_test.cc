// End-to-end tests of the dlsched binary: exit codes, the error line for a
// broken file, and the files a run writes.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/files.h"

namespace {

struct CmdResult {
  int code = -1;
  std::string out;  // stdout and stderr
};

// `binary` (the built dlsched by default) run in the source directory.
CmdResult Dlsched(const std::string& args, const std::string& binary = DLSCHED_BINARY) {
  const std::string cmd =
      std::string("cd ") + DLSCHED_SOURCE_DIR + " && " + binary + " " + args + " 2>&1";
  CmdResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

using dlsched::testing::ReadFile;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = std::filesystem::temp_directory_path() /
           ("dlsched-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(out_);
  }
  void TearDown() override { std::filesystem::remove_all(out_); }
  std::filesystem::path out_;
};

TEST_F(CliTest, SimulateExampleSucceedsAndWritesResults) {
  const CmdResult r = Dlsched(
      "simulate --cluster examples/cluster-3node.yaml --workload "
      "examples/workload-small.yaml --profile gang-binpack --out " +
      out_.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("JCT mean"), std::string::npos) << r.out;
  ASSERT_TRUE(std::filesystem::exists(out_ / "summary.json"));
  const std::string csv = ReadFile(out_ / "jobs.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')).find("admission_seq") != std::string::npos, true);
  // Seven jobs plus the header.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 8) << csv;
  EXPECT_TRUE(std::filesystem::exists(out_ / "utilization.csv"));
}

TEST_F(CliTest, DeadlockedRunExitsOne) {
  const CmdResult r = Dlsched(
      "simulate -c examples/cluster-2x3gpu.yaml -w examples/workload-deadlock.yaml -p "
      "k8s-default -q -o " +
      out_.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("2 stuck"), std::string::npos) << r.out;
  const std::string csv = ReadFile(out_ / "jobs.csv");
  EXPECT_NE(csv.find("3 of 4 pods bound"), std::string::npos) << csv;
}

TEST_F(CliTest, ValidateReportsTheBrokenFieldAndExitsTwo) {
  const CmdResult ok = Dlsched(
      "validate examples/cluster-3node.yaml examples/workload-small.yaml "
      "examples/profiles/gang-binpack.yaml");
  EXPECT_EQ(ok.code, 0) << ok.out;
  const CmdResult bad = Dlsched("validate examples/broken-workload.yaml");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.out,
            "dlsched: examples/broken-workload.yaml: jobs[1].worker.minReplicas: 4 is greater "
            "than maxReplicas 2\n");
}

// Traces: a CSV is told by its header's columns (a native trace is read
// as one, not parsed as YAML), FORMAT:FILE names the format, and
// tiresias: a cluster shape too. A bad row is one line naming it.
TEST_F(CliTest, ValidateChecksTraces) {
  const CmdResult ok = Dlsched(
      "validate data/tiresias/60_job.csv tiresias:data/tiresias/n32g4.csv "
      "data/tiresias/n256g8.csv pollux:data/pollux/workloads/workload-1.csv");
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_EQ(ok.out,
            "data/tiresias/60_job.csv: ok (tiresias trace with 60 jobs)\n"
            "tiresias:data/tiresias/n32g4.csv: ok (Tiresias cluster shape with 32 nodes)\n"
            "data/tiresias/n256g8.csv: ok (Tiresias cluster shape with 256 nodes)\n"
            "pollux:data/pollux/workloads/workload-1.csv: ok (pollux trace with 160 jobs)\n");
  const std::filesystem::path native = out_ / "w.csv";
  std::filesystem::create_directories(out_);
  {
    std::ofstream f(native);
    f << "name,submit,workers,min_workers,max_workers,gpus,cpu,memory,duration,scaling\n"
         "a,0,2,2,2,1,,,100,linear\n";
  }
  const CmdResult native_ok = Dlsched("validate " + native.string());
  EXPECT_EQ(native_ok.out, native.string() + ": ok (native trace with 1 job)\n");
  {
    std::ofstream f(native, std::ios::app);
    f << "b,0,2,3,2,1,,,100,linear\n";
  }
  const CmdResult bad = Dlsched("validate " + native.string());
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(std::count(bad.out.begin(), bad.out.end(), '\n'), 1) << bad.out;
  EXPECT_NE(bad.out.find(native.string() + ":3: "), std::string::npos) << bad.out;
}

TEST_F(CliTest, BadInputsExitTwoWithOneLine) {
  const CmdResult unknown_profile =
      Dlsched("simulate -c examples/cluster-3node.yaml -w examples/workload-small.yaml -p nope");
  EXPECT_EQ(unknown_profile.code, 2);
  EXPECT_NE(unknown_profile.out.find("'nope' is neither a built-in profile"), std::string::npos)
      << unknown_profile.out;
  const CmdResult missing = Dlsched("simulate -c examples/does-not-exist.yaml -w x.yaml");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.out.find("examples/does-not-exist.yaml: cannot read file"), std::string::npos)
      << missing.out;
  const CmdResult no_args = Dlsched("simulate");
  EXPECT_EQ(no_args.code, 2) << no_args.out;
  const CmdResult no_cmd = Dlsched("");
  EXPECT_EQ(no_cmd.code, 2) << no_cmd.out;
  EXPECT_FALSE(std::filesystem::exists(out_));
}

TEST_F(CliTest, HelpExitsZeroAndTeaches) {
  const CmdResult r = Dlsched("simulate --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--profile"), std::string::npos) << r.out;
  const CmdResult top = Dlsched("--help");
  EXPECT_EQ(top.code, 0);
  EXPECT_NE(top.out.find("Exit codes"), std::string::npos) << top.out;
}

TEST_F(CliTest, ExplainShowsScoresAndTheChosenNode) {
  const CmdResult text = Dlsched(
      "explain -c examples/cluster-2x3gpu.yaml -w examples/workload-deadlock.yaml -p "
      "gang-binpack --job job-b");
  EXPECT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("RequestedToCapacityRatio="), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("<- chosen"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("waiting:"), std::string::npos) << text.out;
  const CmdResult json = Dlsched(
      "explain -c examples/cluster-2x3gpu.yaml -w examples/workload-deadlock.yaml -p "
      "gang-binpack --job job-b --format json");
  EXPECT_EQ(json.code, 0) << json.out;
  EXPECT_NE(json.out.find("\"candidates\""), std::string::npos) << json.out;
  const CmdResult nojob = Dlsched(
      "explain -c examples/cluster-2x3gpu.yaml -w examples/workload-deadlock.yaml --job zzz");
  EXPECT_EQ(nojob.code, 2);
}

// A job's whole timeline first; then its cycles, identical consecutive
// ones as one group; each node's reason when no node fits a task. On the
// KOD2 seed workload under k8s-default (3 nodes of 10 cores, 32 GiB),
// resnet50-2 binds its PS at 60 s and no worker (2 cores each; the nodes
// have 0, 0 and 1 free); cycles 3 to 7 (90 to 210 s) see its pods parked
// or backing off; at 210.5 s five workers bind and the sixth fits nowhere:
// node-b lacks memory (8Gi asked, 6Gi free), the others cpu.
TEST_F(CliTest, ExplainPrintsTheTimelineAndCollapsesRepeatedCycles) {
  const std::string run =
      "explain -c examples/cluster-3node.yaml -w examples/workload-kod2-seed.yaml -p k8s-default "
      "--job resnet50-2";
  const CmdResult r = Dlsched(run);
  ASSERT_EQ(r.code, 0) << r.out;
  const size_t timeline = r.out.find("timeline:\n");
  const size_t cycles = r.out.find("cycles:\n");
  ASSERT_NE(timeline, std::string::npos) << r.out;
  ASSERT_LT(timeline, cycles);
  const std::string rows = r.out.substr(timeline, cycles - timeline);
  EXPECT_NE(rows.find("        60.0 s  submitted\n"
                      "        60.0 s  waiting: 1 of 7 pods bound (no gang); 0/3 nodes fit Worker: "
                      "3 insufficient cpu\n"),
            std::string::npos)
      << rows;
  EXPECT_NE(rows.find("       995.9 s  started (6 workers): all 7 pods bound on node-a (2) "
                      "node-b (3) node-c (2)\n"),
            std::string::npos)
      << rows;
  EXPECT_NE(rows.find("      1368.6 s  completed (0 workers)\n"), std::string::npos) << rows;
  EXPECT_NE(r.out.find("\ncycles 3-7 at 90.0-210.0s (5 identical cycles) (position 1 in the "
                       "queue): waiting: 1 of 7 pods bound"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  Worker[5] -> (none)  (0/3 nodes fit Worker: 2 insufficient cpu, 1 "
                       "insufficient memory)\n"
                       "      node-a               insufficient cpu (needs 2, 1 free)\n"
                       "      node-b               insufficient memory (needs 8Gi, 6Gi free)\n"),
            std::string::npos)
      << r.out;
  const CmdResult json = Dlsched(run + " --format json");
  ASSERT_EQ(json.code, 0) << json.out;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["timeline"][0]["event"], "submitted");
  EXPECT_EQ(j["timeline"].back()["event"], "completed");
  bool grouped = false;
  for (const auto& c : j["cycles"]) grouped = grouped || (c["cycle"] == 3 && c["repeated"] == 5);
  EXPECT_TRUE(grouped) << json.out;
}

// `models`: each model's table, then its table on each GPU type, indented
// (resnet50's rates from the model zoo: Gavel's measurements).
TEST_F(CliTest, ModelsListsEachModelsTablePerGpuType) {
  const CmdResult r = Dlsched("models");
  ASSERT_EQ(r.code, 0) << r.out;
  const size_t at = r.out.find("resnet50         locality 0.00  steps/s by workers: 1:4.395");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string after = r.out.substr(at);
  std::vector<std::string> lines;
  for (size_t pos = 0; lines.size() < 4 && pos < after.size();) {
    const size_t nl = after.find('\n', pos);
    lines.push_back(after.substr(pos, nl - pos));
    pos = nl + 1;
  }
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_TRUE(lines[1].starts_with("  on k80 ")) << lines[1];
  EXPECT_TRUE(lines[1].ends_with("steps/s by workers: 1:0.619 2:1.264 4:2.412 8:4.569"))
      << lines[1];
  EXPECT_TRUE(lines[2].starts_with("  on p100 ")) << lines[2];
  EXPECT_TRUE(lines[3].starts_with("  on v100 ")) << lines[3];
  EXPECT_TRUE(lines[3].ends_with("steps/s by workers: 1:4.395 2:7.922 4:9.452 8:17.3")) << lines[3];
}

TEST_F(CliTest, ProfilesListsBuiltins) {
  const CmdResult r = Dlsched("profiles");
  EXPECT_EQ(r.code, 0);
  for (const char* name : {"k8s-default", "gang-binpack", "static-n", "las", "pollux-tiresias"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  }
}

}  // namespace

namespace {

TEST_F(CliTest, CompareRunsEveryProfileAndWritesATable) {
  const CmdResult r = Dlsched(
      "compare -c examples/cluster-2x3gpu.yaml -w examples/workload-deadlock.yaml -p "
      "k8s-default,gang-binpack -o " +
      out_.string());
  // Stuck jobs under one profile are a result of the comparison, not an error.
  EXPECT_EQ(r.code, 0) << r.out;
  // The status column; JCT and slowdown of the deadlocked profile count
  // its jobs at the run's end, as lower bounds.
  EXPECT_NE(r.out.find("k8s-default   2 stuck (deadlocked)   0/2     >=0.0"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("gang-binpack              all done   2/2     317.4"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("marked >= count the jobs that did not complete"), std::string::npos);
  const std::string csv = ReadFile(out_ / "compare.csv");
  EXPECT_EQ(
      csv.substr(0, csv.find('\n')),
      "profile,status,total,completed,failed,stuck,unfinished,jct_censored,jct_mean,jct_p50,"
      "jct_p95,jct_p99,makespan,mean_queueing,mean_launching,mean_running,slowdown_mean,"
      "slowdown_p95,slowdown_variance,jain_index,ftf_mean,ftf_max,gpu_allocated,gpu_effective,"
      "cpu_allocated,cpu_effective,preemptions,scale_events,reallocations,lost_gpu_hours,"
      "cycles,end_time");
  EXPECT_NE(csv.find("\nk8s-default,2 stuck (deadlocked),2,0,0,2,0,2,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\ngang-binpack,all done,2,2,0,0,0,0,317.393144,"), std::string::npos) << csv;
  // compare.json: the same rows as objects.
  const auto json = nlohmann::json::parse(ReadFile(out_ / "compare.json"));
  ASSERT_EQ(json["profiles"].size(), 2u);
  EXPECT_EQ(json["profiles"][0]["status"], "2 stuck (deadlocked)");
  EXPECT_EQ(json["profiles"][1]["profile"], "gang-binpack");
  EXPECT_EQ(json["profiles"][1]["jct_mean"], 317.393144);
  EXPECT_EQ(json["profiles"][1]["jct_censored"], 0);
  EXPECT_TRUE(std::filesystem::exists(out_ / "k8s-default" / "jobs.csv"));
  const CmdResult bad = Dlsched(
      "compare -c examples/cluster-2x3gpu.yaml -w examples/workload-deadlock.yaml -p "
      "gang-binpack,nope -o " +
      out_.string());
  EXPECT_EQ(bad.code, 2) << bad.out;
}

}  // namespace

namespace {

// Two profiles with one name (here the same built-in twice) never write to
// the same directory: the second gets "<name>-2", in the table too.
TEST_F(CliTest, CompareKeepsProfilesWithOneNameApart) {
  const CmdResult r = Dlsched(
      "compare -c examples/cluster-2x3gpu.yaml -w examples/workload-deadlock.yaml -p "
      "gang-binpack,gang-binpack -o " +
      out_.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(out_ / "gang-binpack" / "jobs.csv"));
  EXPECT_TRUE(std::filesystem::exists(out_ / "gang-binpack-2" / "jobs.csv"));
  const std::string csv = ReadFile(out_ / "compare.csv");
  EXPECT_NE(csv.find("\ngang-binpack,all done,2,2,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\ngang-binpack-2,all done,2,2,"), std::string::npos) << csv;
}

// Variants of one profile side by side: NAME:PATH=VALUE in the list, named
// after the override; --set applies to every profile; a bad override is
// one line naming it.
TEST_F(CliTest, CompareRunsVariantsOfAProfile) {
  const CmdResult r = Dlsched(
      "compare -c examples/cluster-kod2-elastic.yaml -w examples/workload-kod2-elastic.yaml -p "
      "kod2,kod2:order.args.kappa=8:protectFactor=1 -o " +
      out_.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(out_ / "kod2" / "events.csv"));
  EXPECT_TRUE(std::filesystem::exists(out_ / "kod2-kappa-8-protectFactor-1" / "jobs.csv"));
  const std::string kappa = ReadFile(out_ / "kod2-kappa-8-protectFactor-1" / "summary.json");
  EXPECT_NE(kappa.find("\"profile\": \"kod2-kappa-8-protectFactor-1\""), std::string::npos);
  // kappa 8 saturates both KOD2 weights (the sigmoid of 8 x ...), as the
  // reasons say; the default's are 0.8107 and 0.6608.
  EXPECT_NE(ReadFile(out_ / "kod2-kappa-8-protectFactor-1" / "jobs.csv").find("weight 1 >= 1"),
            std::string::npos);
  EXPECT_NE(ReadFile(out_ / "kod2" / "jobs.csv").find("weight 0.8107 >= 0.6608"),
            std::string::npos);
  const CmdResult bad = Dlsched(
      "compare -c examples/cluster-kod2-elastic.yaml -w examples/workload-kod2-elastic.yaml -p "
      "kod2 --set order.args.kappa=-1 -o " +
      out_.string());
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("kod2 with --set order.args.kappa=-1: order.args.kappa:"),
            std::string::npos)
      << bad.out;
  const CmdResult malformed = Dlsched(
      "simulate -c examples/cluster-kod2-elastic.yaml -w examples/workload-kod2-elastic.yaml -p "
      "kod2 --set kappa -o " +
      out_.string());
  EXPECT_EQ(malformed.code, 2);
  EXPECT_EQ(malformed.out,
            "dlsched: --set: 'kappa': expected PATH=VALUE, e.g. order.args.kappa=2\n");
}

// `profiles --show` prints every profile `--profile` takes, static-<n>
// included; `--version` names the version.
TEST_F(CliTest, ShowsStaticProfilesAndTheVersion) {
  CmdResult r = Dlsched("profiles --show static-3");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("name: static-3\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("slotGpus: 3}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("one slot of 3 GPUs per job"), std::string::npos) << r.out;
  std::filesystem::create_directories(out_);
  std::ofstream(out_ / "static-3.yaml") << r.out;
  r = Dlsched("validate " + (out_ / "static-3.yaml").string());
  EXPECT_EQ(r.code, 0) << r.out;
  r = Dlsched("profiles --show static-0");
  EXPECT_EQ(r.code, 2);
  r = Dlsched("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "dlsched 0.1.0\n");
}

// dlsched hands `operator` and `snapshot` to dlsched-k8s beside it (the
// build with the Kubernetes client), which answers here: no operator at
// that address. Without dlsched-k8s the error says what is missing.
TEST_F(CliTest, OperatorAndSnapshotRunInDlschedK8s) {
  const std::string args =
      "snapshot --from 127.0.0.1:1 --timeout 1 --out " + (out_ / "snap").string();
  CmdResult r = Dlsched(args);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("--from 127.0.0.1:1: GET http://127.0.0.1:1/snapshot"), std::string::npos)
      << r.out;
  const std::filesystem::path alone = out_ / "alone";
  std::filesystem::create_directories(alone);
  std::filesystem::copy_file(DLSCHED_BINARY, alone / "dlsched");
  r = Dlsched(args, (alone / "dlsched").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out,
            "dlsched: snapshot needs dlsched-k8s (the build with the Kubernetes client) beside "
            "dlsched or in ../lib/dlsched/; build it with the dlsched target\n");
  EXPECT_FALSE(std::filesystem::exists(out_ / "snap"));
}

// A kubeconfig's exec credential plugin runs before the operator starts: one
// that fails is a kubeconfig error (exit 2), one line naming the file and
// the field, with the plugin's first line of stderr and its installHint.
TEST_F(CliTest, OperatorStopsAtAFailingExecCredentialPlugin) {
  std::filesystem::create_directories(out_);
  const std::string plugin = (out_ / "login.sh").string();
  std::ofstream(plugin) << "#!/bin/sh\necho 'not logged in' >&2\necho more >&2\nexit 7\n";
  std::filesystem::permissions(plugin, std::filesystem::perms::owner_all);
  const std::string kubeconfig = (out_ / "config").string();
  std::ofstream(kubeconfig)
      << "apiVersion: v1\nkind: Config\ncurrent-context: x\ncontexts:\n- name: x\n  context: "
         "{cluster: x, user: me}\nclusters:\n- name: x\n  cluster: {server: "
         "\"http://127.0.0.1:1\"}\nusers:\n- name: me\n  user:\n    exec:\n      apiVersion: "
         "client.authentication.k8s.io/v1beta1\n      command: ./login.sh\n      installHint: "
         "run login first\n";
  const CmdResult r = Dlsched("operator --kubeconfig " + kubeconfig +
                              " --leader-elect=false --metrics-bind-address 0 "
                              "--health-probe-bind-address 0");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out, "dlsched: " + kubeconfig + ": users[me].user.exec: '" + plugin +
                       "' exited with status 7: not logged in; run login first\n");
}

// Results replace an earlier run's directory as a whole, and a directory
// with the user's own files in it is refused before the run.
TEST_F(CliTest, OutputDirectoryIsReplacedAsAWholeOrRefused) {
  const std::string run =
      "simulate -q -c examples/cluster-2x3gpu.yaml -w examples/workload-deadlock.yaml -p "
      "gang-binpack -o " +
      out_.string();
  std::filesystem::create_directories(out_);
  std::ofstream(out_ / "compare.csv") << "from an earlier compare\n";
  EXPECT_EQ(Dlsched(run).code, 0);
  EXPECT_FALSE(std::filesystem::exists(out_ / "compare.csv"));
  EXPECT_TRUE(std::filesystem::exists(out_ / "jobs.csv"));
  std::ofstream(out_ / "notes.txt") << "mine\n";
  const CmdResult refused = Dlsched(run);
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.out.find("holds 'notes.txt', which dlsched did not write"), std::string::npos)
      << refused.out;
  EXPECT_EQ(ReadFile(out_ / "notes.txt"), "mine\n");
}

}  // namespace

namespace {

// A trace runs like a workload: the Tiresias 60-job trace on the Tiresias
// 32 x 4-GPU spec completes all 60 jobs; convert writes the native format
// and YAML, and both replay to the same jobs.csv as the trace itself.
TEST_F(CliTest, TraceSimulateAndConvertAgree) {
  const std::string common =
      "--cluster tiresias:data/tiresias/n32g4.csv --profile gang-binpack --quiet ";
  CmdResult r = Dlsched("simulate " + common + "--trace tiresias:data/tiresias/60_job.csv --out " +
                        (out_ / "trace").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("results:"), std::string::npos) << r.out;
  std::filesystem::create_directories(out_);
  const std::string native = (out_ / "60.csv").string();
  const std::string yaml = (out_ / "60.yaml").string();
  r = Dlsched("convert --trace tiresias:data/tiresias/60_job.csv --out " + native);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("wrote 60 jobs"), std::string::npos) << r.out;
  r = Dlsched("convert --trace native:" + native + " --out " + yaml);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(ReadFile(yaml).find("duration: 164"), std::string::npos);
  r = Dlsched("simulate " + common + "--trace native:" + native + " --out " +
              (out_ / "native").string());
  ASSERT_EQ(r.code, 0) << r.out;
  r = Dlsched("simulate " + common + "--workload " + yaml + " --out " + (out_ / "yaml").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string jobs = ReadFile(out_ / "trace" / "jobs.csv");
  EXPECT_EQ(std::count(jobs.begin(), jobs.end(), '\n'), 61);
  EXPECT_EQ(ReadFile(out_ / "native" / "jobs.csv"), jobs);
  EXPECT_EQ(ReadFile(out_ / "yaml" / "jobs.csv"), jobs);
}

// A Pollux job alone on Pollux's testbed: 30 s restart delay, then the
// 910 s Pollux's simulator counts for cifar10 at 6 GPUs and batch 2048
// (897.298 s in its model, each epoch rounded to whole seconds;
// testing/pollux/workload-1-isolated.csv, seconds_sim 940 with the
// restart). The YAML it converts to runs the same. Under pollux-tiresias it
// starts at the round of 120, not at 107, and ends 953 s after its
// submission, as in Pollux's simulator (jct_isolated_sim).
TEST_F(CliTest, PolluxTraceRunsAsPolluxsModel) {
  std::filesystem::create_directories(out_);
  const std::string w = (out_ / "one.csv").string();
  std::ofstream(w) << "name,time,application,num_replicas,batch_size\n"
                      "cifar10-0,107,cifar10,6,2048\n";
  const std::string common = "-q -c tiresias:examples/tiresias-n16g4.csv ";
  const std::string traces = " --pollux-traces data/pollux/traces";
  CmdResult r =
      Dlsched("simulate " + common + "-t pollux:" + w + traces + " -o " + (out_ / "o").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string jobs = ReadFile(out_ / "o" / "jobs.csv");
  // name,namespace,queue,submit,first_start,completion,jct,queueing,launching,running,...
  EXPECT_NE(jobs.find("\ncifar10-0,default,,107,107,1047,940,0,30,910,"), std::string::npos)
      << jobs;
  r = Dlsched("simulate " + common + "-t pollux:" + w + traces + " -p pollux-tiresias -o " +
              (out_ / "p").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string rounds = ReadFile(out_ / "p" / "jobs.csv");
  EXPECT_NE(rounds.find("\ncifar10-0,default,,107,120,1060,953,13,30,910,"), std::string::npos)
      << rounds;

  const std::string yaml = (out_ / "one.yaml").string();
  r = Dlsched("convert -t pollux:" + w + traces + " --out " + yaml);
  ASSERT_EQ(r.code, 0) << r.out;
  r = Dlsched("simulate " + common + "-w " + yaml + " -o " + (out_ / "y").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(ReadFile(out_ / "y" / "jobs.csv"), jobs);

  r = Dlsched("convert -t pollux:" + w + traces + " --out " + (out_ / "one-native.csv").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("job 'cifar10-0': its throughput 'pollux:cifar10' is a table, not a "
                       "model-zoo model"),
            std::string::npos)
      << r.out;
  r = Dlsched("simulate " + common + "-t pollux:" + w + traces + " --scaling sqrt");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out,
            "dlsched: --scaling: does not apply to pollux traces (their speed at each size is "
            "Pollux's model)\n");
  // Without --pollux-traces, the measurements are looked for beside the
  // workload's directory.
  r = Dlsched("simulate " + common + "-t pollux:" + w);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("give their directory with --pollux-traces DIR"), std::string::npos)
      << r.out;
  r = Dlsched("simulate " + common + "-t pollux:data/pollux/workloads/workload-1.csv -o " +
              (out_ / "w1").string());
  EXPECT_EQ(r.code, 0) << r.out;
}

TEST_F(CliTest, TraceErrorsAreOneLineAndExitTwo) {
  std::filesystem::create_directories(out_);
  const std::string bad = (out_ / "bad.csv").string();
  std::ofstream(bad) << "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                        "0,1,0,606,vgg19,164,30\n1,two,30,133,vgg11,147,23\n";
  CmdResult r = Dlsched("simulate -c tiresias:data/tiresias/n1g4.csv -t tiresias:" + bad + " -o " +
                        (out_ / "o").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out,
            "dlsched: " + bad + ":3: num_gpu: expected an integer in [1, 100000], got 'two'\n");
  EXPECT_FALSE(std::filesystem::exists(out_ / "o"));

  r = Dlsched("simulate -q -c tiresias:data/tiresias/n1g4.csv -t tiresias:" + bad +
              " --skip-bad-rows -o " + (out_ / "o").string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("dlsched: " + bad + ": skipped 1 bad rows of 2 (the first: " + bad +
                       ":3: num_gpu: expected an integer in [1, 100000], got 'two')"),
            std::string::npos)
      << r.out;

  r = Dlsched("simulate -c tiresias:data/tiresias/n1g4.csv -t tiresias:" + bad +
              " -w examples/workload-small.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("excludes"), std::string::npos) << r.out;
  r = Dlsched("simulate -c tiresias:data/tiresias/n1g4.csv");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "dlsched: give the jobs with --workload FILE or --trace FORMAT:FILE\n");
  r = Dlsched("simulate -c tiresias:data/tiresias/n1g4.csv -t tiresias:" + bad + " --vc abc");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "dlsched: --vc: applies to philly traces only\n");
  r = Dlsched("simulate -c tiresias:data/tiresias/n1g4.csv -t native:" + bad + " --elastic 0.5:2");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out,
            "dlsched: --elastic: does not apply to native traces (each row states its "
            "min_workers and max_workers)\n");
  r = Dlsched("simulate -c tiresias:data/tiresias/n1g4.csv -t native:" + bad + " --scaling sqrt");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out,
            "dlsched: --scaling: does not apply to native traces (each row states its own "
            "scaling)\n");
  r = Dlsched("convert -t tiresias:data/tiresias/60_job.csv --scaling cubic");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out,
            "dlsched: --scaling: expected linear, sqrt, none or amdahl:<parallel fraction in (0, "
            "1]>, got 'cubic'\n");
  r = Dlsched("convert -w examples/workload-small.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("workload-small.yaml: job 'resnet-1': it sets namespace, launchDelay, "
                       "checkpointDelay; the native format holds workers and PS"),
            std::string::npos)
      << r.out;
}

// A generated workload (PS, model-zoo models, elastic workers) converted to
// the native format runs the same as its YAML; `generate` writes the same
// native file itself for an --out ending in .csv.
TEST_F(CliTest, GeneratedWorkloadRunsTheSameFromTheNativeFormat) {
  std::filesystem::create_directories(out_);
  const std::string w = (out_ / "w.yaml").string();
  const std::string c = (out_ / "c.yaml").string();
  const std::string csv = (out_ / "w.csv").string();
  CmdResult r = Dlsched("generate --jobs 300 --seed 5 --mean-interarrival 20 --out " + w +
                        " --nodes 8 --cluster-out " + c);
  ASSERT_EQ(r.code, 0) << r.out;
  r = Dlsched("convert -w " + w + " -o " + csv);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string native = ReadFile(csv);
  EXPECT_EQ(native.substr(0, native.find('\n')),
            "name,submit,workers,min_workers,max_workers,gpus,cpu,memory,duration,scaling,ps,"
            "ps_cpu,ps_memory,steps,model");
  EXPECT_EQ(std::count(native.begin(), native.end(), '\n'), 301);
  r = Dlsched("generate --jobs 300 --seed 5 --mean-interarrival 20 --out " +
              (out_ / "g.csv").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(ReadFile(out_ / "g.csv"), native);
  for (const char* profile : {"gang-binpack", "kod2"}) {
    const std::string a = (out_ / (std::string("yaml-") + profile)).string();
    const std::string b = (out_ / (std::string("native-") + profile)).string();
    r = Dlsched("simulate -q -c " + c + " -w " + w + " -p " + profile + " -o " + a);
    ASSERT_EQ(r.code, 0) << r.out;
    r = Dlsched("simulate -q -c " + c + " -t native:" + csv + " -p " + profile + " -o " + b);
    ASSERT_EQ(r.code, 0) << r.out;
    const std::string jobs = ReadFile(std::filesystem::path(a) / "jobs.csv");
    EXPECT_EQ(std::count(jobs.begin(), jobs.end(), '\n'), 301) << profile;
    EXPECT_EQ(ReadFile(std::filesystem::path(b) / "jobs.csv"), jobs) << profile;
  }
}

// --launch-delay and --checkpoint-delay replace every job's own, on a
// workload file as on a trace: the reclaim example's costs worked by hand
// in sim/queues_test.cc (train's launch waits 5 s for sweep's checkpoint;
// sweep loses 150 GPU-seconds, eval none). A generated sweep refuses them.
TEST_F(CliTest, DelayFlagsReplaceEveryJobsDelays) {
  CmdResult r = Dlsched(
      "simulate -q -c examples/cluster-reclaim.yaml -w examples/workload-reclaim.yaml "
      "-p queue-reclaim --launch-delay 10 --checkpoint-delay 5 -o " +
      out_.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string jobs = ReadFile(out_ / "jobs.csv");
  EXPECT_NE(jobs.find("\nsweep,default,research,0,0,573.333333,573.333333,0,"), std::string::npos)
      << jobs;
  // gpus, max_nodes, max_switches (no switch labels), lost_gpu_seconds
  EXPECT_NE(jobs.find(",6,1,0,150,"), std::string::npos) << jobs;
  EXPECT_NE(jobs.find("\ntrain,default,prod,100,100,215,115,0,15,100,"), std::string::npos) << jobs;
  const std::string queues = ReadFile(out_ / "queues.csv");
  EXPECT_NE(queues.find("\nprod,lab,4,1,1,115,115,0,"), std::string::npos) << queues;
  EXPECT_NE(queues.find(",0,1,0,1,15,15,,\n"), std::string::npos) << queues;
  r = Dlsched(
      "sweep -c examples/cluster-reclaim.yaml --jobs 5 -p fifo --load 1 "
      "--checkpoint-delay 5 -o " +
      (out_ / "s").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out,
            "dlsched: --checkpoint-delay: applies to the jobs of --workload or --trace, not to "
            "generated ones (--jobs)\n");
}

// compare on a cluster with queues: a per-queue table, printed and as
// queues.csv beside compare.csv; with --alone, finish-time fairness (the
// reclaim example, worked in sim/queues_test.cc: without reclaim prod's
// train waits for a borrower until 250, JCT 250 against 100 alone).
TEST_F(CliTest, CompareWritesAQueueTableBesideCompareCsv) {
  const CmdResult r = Dlsched(
      "compare -c examples/cluster-reclaim.yaml -w examples/workload-reclaim.yaml --alone -p "
      "queue-reclaim,queue-reclaim:preemptor=None -o " +
      out_.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("FTF mean"), std::string::npos) << r.out;
  const std::string csv = ReadFile(out_ / "queues.csv");
  EXPECT_TRUE(csv.starts_with("profile,queue,cohort,nominal_gpus,jobs,")) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5) << csv;
  EXPECT_NE(csv.find("\nqueue-reclaim,prod,lab,4,1,1,100,100,0,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nqueue-reclaim-preemptor-None,prod,lab,4,1,1,250,250,150,"),
            std::string::npos)
      << csv;
  EXPECT_TRUE(csv.ends_with(",2.5,2.5\n")) << csv;  // FTF mean and max
}

// `validate` tells a workload from its first key and then parses the whole
// file: a syntax error further down is reported as before.
TEST_F(CliTest, ValidateReportsSyntaxErrorsPastTheFirstKeys) {
  std::filesystem::create_directories(out_);
  const std::string bad = (out_ / "bad.yaml").string();
  std::ofstream(bad) << "jobs:\n  - {name: a}\n  - [b\n";
  CmdResult r = Dlsched("validate " + bad);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "dlsched: " + bad + ":4:1: end of sequence flow not found\n");
}

}  // namespace

namespace {

// compare runs its profiles on several threads; the table and the files
// are the same bytes as a run on one thread.
TEST_F(CliTest, ParallelCompareEqualsSerialByteForByte) {
  const std::string args =
      "compare -c examples/cluster-3node.yaml -w examples/workload-small.yaml "
      "-p k8s-default,gang-binpack,kod2,fsched,cps ";
  CmdResult serial = Dlsched(args + "-j 1 -o " + (out_ / "serial").string());
  ASSERT_EQ(serial.code, 0) << serial.out;
  CmdResult parallel = Dlsched(args + "-j 3 -o " + (out_ / "parallel").string());
  ASSERT_EQ(parallel.code, 0) << parallel.out;
  auto table = [](const std::string& s) { return s.substr(0, s.find("results:")); };
  EXPECT_NE(table(serial.out).find("fsched"), std::string::npos) << serial.out;
  EXPECT_EQ(table(serial.out), table(parallel.out));
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(out_ / "serial")) {
    if (!e.is_regular_file()) continue;
    const auto rel = std::filesystem::relative(e.path(), out_ / "serial");
    EXPECT_EQ(ReadFile(e.path()), ReadFile(out_ / "parallel" / rel)) << rel;
    ++files;
  }
  EXPECT_GE(files, 16);  // compare.csv and 3+ files for each of 5 profiles
}

// Ctrl-C (SIGINT) stops the runs: the results computed so far are written,
// each summary.json says "partial": true, and the exit code is 130.
TEST_F(CliTest, InterruptedCompareWritesPartialResults) {
  std::filesystem::create_directories(out_);
  const std::string w = (out_ / "w.yaml").string();
  const std::string c = (out_ / "c.yaml").string();
  CmdResult g = Dlsched("generate --jobs 20000 --seed 3 --mean-interarrival 0.2 --out " + w +
                        " --nodes 20 --gpus-per-node 8 --cluster-out " + c);
  ASSERT_EQ(g.code, 0) << g.out;
  const std::string out = (out_ / "o").string();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string log = (out_ / "log").string();
    std::freopen(log.c_str(), "w", stdout);
    std::freopen(log.c_str(), "a", stderr);
    execl(DLSCHED_BINARY, DLSCHED_BINARY, "compare", "-c", c.c_str(), "-w", w.c_str(), "-p",
          "gang-binpack,fsched", "-j", "1", "-o", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const std::string log = ReadFile(out_ / "log");
  ASSERT_TRUE(WIFEXITED(status)) << log;
  EXPECT_EQ(WEXITSTATUS(status), 130) << log;
  EXPECT_NE(log.find("dlsched: interrupted: the results are partial"), std::string::npos) << log;
  for (const char* p : {"gang-binpack", "fsched"}) {
    const std::string summary = ReadFile(std::filesystem::path(out) / p / "summary.json");
    EXPECT_NE(summary.find("\"partial\": true"), std::string::npos) << p << summary.substr(0, 300);
  }
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(out) / "compare.csv"));
}

// `dlsched sharing` on the small slice of the openb trace in examples/:
// one line per policy with its seeds, the CSV of every run's curve, and
// bad flags and files refused in one line with exit 2.
TEST_F(CliTest, SharingReplaysAnOpenbSliceAndRefusesBadInput) {
  const std::string base =
      "sharing --nodes examples/openb-nodes-small.csv --pods examples/openb-pods-small.csv ";
  const std::string csv = (out_ / "curves.csv").string();
  std::filesystem::create_directories(out_);
  const CmdResult r = Dlsched(base + "--policies bestfit,fgd --seeds 1-2 --csv " + csv);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("openb-pods-small                 bestfit          2"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("openb-pods-small                 fgd              2"), std::string::npos)
      << r.out;
  const std::string curves = ReadFile(csv);
  EXPECT_EQ(curves.substr(0, curves.find('\n')), "trace,policy,seed,arrived,allocated,fragmented");
  // 2 policies x 2 seeds, each run's points 0, 1, ... up to where its last
  // pod arrived (tune 1.3: the pods ask for 1.3 x the capacity, the last
  // one arriving at 129-130%), plus the header.
  std::map<std::string, int> next;  // per policy and seed: the next point expected
  std::istringstream lines(curves.substr(curves.find('\n') + 1));
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> f;
    for (size_t at = 0, comma; at <= line.size(); at = comma + 1) {
      comma = std::min(line.find(',', at), line.size());
      f.push_back(line.substr(at, comma - at));
    }
    ASSERT_EQ(f.size(), 6u) << line;
    int& want = next[f[1] + "," + f[2]];
    EXPECT_EQ(f[3], std::to_string(want)) << line;
    ++want;
  }
  ASSERT_EQ(next.size(), 4u);
  for (const auto& [run, points] : next) {
    EXPECT_GE(points, 130) << run;
    EXPECT_LE(points, 132) << run;
  }
  CmdResult bad = Dlsched(base + "--policies tetris");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.out,
            "dlsched: --policies: expected random, dotprod, clustering, packing, bestfit or fgd, "
            "got 'tetris'\n");
  bad = Dlsched(base + "--seeds 5-2");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.out,
            "dlsched: --seeds: expected N, A-B or a comma-separated list of seeds, got '5-2'\n");
  bad =
      Dlsched("sharing --nodes examples/openb-pods-small.csv --pods examples/openb-pods-small.csv");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("examples/openb-pods-small.csv:1: header: no column 'sn'"),
            std::string::npos)
      << bad.out;
}

}  // namespace
