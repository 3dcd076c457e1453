// One meaning per flag: --jobs is a job count everywhere (simulate's
// per-job table is --job-table), -q is --quiet on every command that takes
// it, unknown names get a "did you mean", a CSV given as a workload points
// to --trace, and the progress line's ETA counts runs not yet started.
#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "dlsched/cli/runs.h"
#include "dlsched/cli/test_util.h"
#include "dlsched/report/test_util.h"

namespace dlsched::cli {
namespace {

namespace fs = std::filesystem;

using report::testing::WriteFile;
using testing::Ran;

class FlagsTest : public testing::CommandTest {
 protected:
  FlagsTest() : CommandTest("flags") {}
};

constexpr const char* kRun = "-c examples/cluster-3node.yaml -w examples/workload-small.yaml";

TEST_F(FlagsTest, SimulateJobsPointsToJobTable) {
  for (const char* jobs : {"--jobs", "--jobs=3"}) {
    const Ran r = Dlsched(fmt::format("simulate {} {} -o {}", kRun, jobs, Path("out")));
    EXPECT_EQ(r.code, 2) << jobs;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err,
              "dlsched: simulate: --jobs is now --job-table (one row per job after the summary); "
              "--jobs N is a job count, as on generate and sweep\n");
    EXPECT_FALSE(fs::exists(tmp_ / "out"));
  }
  const Ran table = Dlsched(fmt::format("simulate {} --job-table -o {}", kRun, Path("out")));
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("resnet-1"), std::string::npos) << table.out;
  const Ran plain = Dlsched(fmt::format("simulate {} -o {}", kRun, Path("out")));
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("resnet-1"), std::string::npos) << plain.out;
  // --jobs is the job count it is elsewhere.
  EXPECT_NE(Dlsched("generate --help").out.find("--jobs"), std::string::npos);
  EXPECT_NE(Dlsched("sweep --help").out.find("--jobs"), std::string::npos);
}

// Every command's --help: -q appears only as --quiet, with one meaning.
TEST_F(FlagsTest, QuietIsTheSameOnEveryCommand) {
  const std::vector<std::string> commands = {
      "simulate", "compare", "sweep", "validate", "explain",  "profiles", "models", "generate",
      "convert",  "report",  "rerun", "operator", "snapshot", "size",     "sharing"};
  std::vector<std::string> with_quiet;
  for (const auto& c : commands) {
    const Ran help = Dlsched(c + " --help");
    ASSERT_EQ(help.code, 0) << c << help.err;
    const bool has_q = std::regex_search(help.out, std::regex("(^|[ ,])-q[, ]"));
    const bool has_quiet = help.out.find("--quiet") != std::string::npos;
    EXPECT_EQ(has_q, has_quiet) << c << ": -q must be --quiet\n" << help.out;
    if (!has_quiet) continue;
    with_quiet.push_back(c);
    EXPECT_NE(help.out.find("-q,--quiet"), std::string::npos) << c << help.out;
    EXPECT_NE(help.out.find("Print no tables and no progress line"), std::string::npos)
        << c << help.out;
  }
  EXPECT_EQ(with_quiet, (std::vector<std::string>{"simulate", "compare", "sweep", "rerun"}));

  // And it does the same: no table, only where the results went.
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"simulate " + std::string(kRun) + " -p fifo",
       "results: {}/ (summary.json, jobs.csv, "
       "events.csv, allocations.csv, "
       "utilization.csv)\n"},
      {"compare " + std::string(kRun) + " -p fifo,las",
       "results: {0}/compare.csv, {0}/compare.json and {0}/<profile>/\n"},
      {"sweep " + std::string(kRun) + " -p fifo --load 1,2",
       "results: {0}/sweep.csv and {0}/cells/\n"},
  };
  for (const auto& [run, results] : runs) {
    for (const char* q : {"-q", "--quiet"}) {
      const std::string out = Path(std::string("q") + q);
      const Ran r = Dlsched(fmt::format("{} {} -o {}", run, q, out));
      ASSERT_EQ(r.code, 0) << run << r.err;
      EXPECT_EQ(r.out, fmt::format(fmt::runtime(results), out)) << run << " " << q;
      EXPECT_EQ(r.err, "") << run;
    }
    const Ran loud = Dlsched(fmt::format("{} -o {}", run, Path("loud")));
    EXPECT_NE(loud.out.find("fifo"), std::string::npos) << run << loud.out;
  }
  ASSERT_EQ(Dlsched(fmt::format("simulate {} -q -o {}", kRun, Path("sim"))).code, 0);
  const Ran rerun = Dlsched("rerun -q " + Path("sim"));
  ASSERT_EQ(rerun.code, 0) << rerun.err;
  EXPECT_EQ(rerun.out, fmt::format("results: {0}-rerun/ (summary.json, jobs.csv, events.csv, "
                                   "allocations.csv, utilization.csv)\n"
                                   "rerun: {0}-rerun/ is byte for byte {0}/ (5 files compared; "
                                   "report.html is not)\n",
                                   Path("sim")));
}

TEST_F(FlagsTest, UnknownNamesGetADidYouMean) {
  Ran r = Dlsched(fmt::format("simulate {} -p kod", kRun));
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.err.ends_with(" nor a .yaml file; did you mean 'kod2'?\n")) << r.err;
  // Nothing close: no guess.
  r = Dlsched(fmt::format("simulate {} -p fastest", kRun));
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.err.ends_with(" nor a .yaml file\n")) << r.err;
  r = Dlsched(
      "compare -c examples/cluster-3node.yaml -w examples/workload-small.yaml "
      "-p fifo,gang-binpak");
  EXPECT_TRUE(r.err.ends_with("did you mean 'gang-binpack'?\n")) << r.err;
  r = Dlsched("profiles --show FIFO");
  EXPECT_EQ(r.err,
            "dlsched: --show: no built-in profile named 'FIFO' (see `dlsched profiles`); did "
            "you mean 'fifo'?\n");
  r = Dlsched("simulat");
  EXPECT_TRUE(r.err.ends_with("; did you mean 'simulate'?\n")) << r.err;

  // YAML keys, in each kind of file.
  WriteFile(tmp_ / "w.yaml",
            "jobs:\n  - {name: a, arrival: 0, totalStep: 10, throughput: {model: resnet50},\n"
            "     worker: {replicas: 1, resources: {nvidia.com/gpu: 1}}}\n");
  r = Dlsched("validate " + Path("w.yaml"));
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.err.starts_with("dlsched: " + Path("w.yaml") +
                                ": jobs[0].totalStep: unknown key (allowed: name, "))
      << r.err;
  EXPECT_TRUE(r.err.ends_with("); did you mean 'totalSteps'?\n")) << r.err;
  WriteFile(tmp_ / "c.yaml", "nodes:\n  - {name: n, resources: {cpu: 1}, lables: {a: b}}\n");
  r = Dlsched("validate " + Path("c.yaml"));
  EXPECT_TRUE(r.err.ends_with("; did you mean 'labels'?\n")) << r.err;
  WriteFile(tmp_ / "p.yaml", "name: p\nadmission: Gang\nordr: FIFO\n");
  r = Dlsched("validate " + Path("p.yaml"));
  EXPECT_TRUE(r.err.ends_with("; did you mean 'order'?\n")) << r.err;
  WriteFile(tmp_ / "p.yaml", "name: p\norder: LIFO\n");
  r = Dlsched("validate " + Path("p.yaml"));
  EXPECT_TRUE(r.err.ends_with("; did you mean 'FIFO'?\n")) << r.err;
  WriteFile(tmp_ / "p.yaml", "name: p\nadmission: {name: Gang, args: {backfil: true}}\n");
  r = Dlsched("validate " + Path("p.yaml"));
  EXPECT_TRUE(r.err.ends_with("; did you mean 'backfill'?\n")) << r.err;

  // Trace and cluster formats.
  r = Dlsched("simulate -c examples/cluster-3node.yaml -t tiresais:data/tiresias/60_job.csv");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "dlsched: --trace: expected FORMAT:FILE with FORMAT one of tiresias, philly, pollux, "
            "native, got 'tiresais:data/tiresias/60_job.csv'; did you mean 'tiresias'?\n");
  r = Dlsched("simulate -c tiresas:data/tiresias/n32g4.csv -t tiresias:data/tiresias/60_job.csv");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "dlsched: --cluster: 'tiresas:data/tiresias/n32g4.csv': expected a cluster YAML or "
            "tiresias:FILE; did you mean 'tiresias'?\n");
  r = Dlsched("simulate -c examples/cluster-3node.yaml -t alibaba:x.csv");
  EXPECT_TRUE(r.err.ends_with("got 'alibaba:x.csv'\n")) << r.err;
}

TEST_F(FlagsTest, CsvGivenAsWorkloadPointsToTrace) {
  for (const char* cmd :
       {"simulate", "compare -p fifo,las", "sweep -p fifo", "explain --job a", "convert"}) {
    const std::string_view name(cmd);
    std::string args = fmt::format("{} -w data/tiresias/60_job.csv", cmd);
    if (!name.starts_with("convert")) args += " -c tiresias:data/tiresias/n32g4.csv";
    if (!name.starts_with("explain")) args += " -o " + Path("out");
    const Ran r = Dlsched(args);
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_EQ(r.err,
              "dlsched: --workload: data/tiresias/60_job.csv is a CSV file; --workload reads "
              "workload YAML. Give a trace as --trace FORMAT:FILE (-t), FORMAT one of tiresias, "
              "philly, pollux, native (docs/traces.md), e.g. -t native:data/tiresias/60_job.csv\n")
        << cmd;
    EXPECT_FALSE(fs::exists(tmp_ / "out")) << cmd;
  }
}

// Every flag that takes a number with a fraction refuses NaN (and the
// infinities) with one line naming it: `snapshot --timeout nan` used to
// pass the range check and never time out. The flags are found in each
// command's --help, where CLI11 names a double's type FLOAT.
TEST_F(FlagsTest, EveryFloatingFlagRefusesNan) {
  const std::vector<std::string> commands = {
      "simulate", "compare", "sweep", "validate", "explain",  "profiles", "models", "generate",
      "convert",  "report",  "rerun", "operator", "snapshot", "size",     "sharing"};
  const std::regex floating(R"((--[a-z0-9-]+) FLOAT)");
  std::vector<std::string> seen;
  for (const auto& c : commands) {
    const Ran help = Dlsched(c + " --help");
    ASSERT_EQ(help.code, 0) << c << help.err;
    for (std::sregex_iterator it(help.out.begin(), help.out.end(), floating), end; it != end;
         ++it) {
      const std::string flag = (*it)[1];
      seen.push_back(c + " " + flag);
      for (const char* value : {"nan", "NaN", "inf", "+nan", "1e999"}) {
        const Ran r = Dlsched(fmt::format("{} {} {}", c, flag, value));
        EXPECT_EQ(r.code, 2) << c << " " << flag << " " << value << ": " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_NE(r.err.find(flag + ": expected a number from "), std::string::npos)
            << c << " " << flag << " " << value << ": " << r.err;
      }
    }
  }
  // generate and sweep share the shape's 4, generate has --typed-fraction
  // and --shared-fraction, operator 5, snapshot 1 (sweep --load is a list flag, below); simulate,
  // compare, sweep, explain, convert and size take --launch-delay and
  // --checkpoint-delay; sharing has --tune.
  EXPECT_EQ(seen.size(), 29u) << fmt::format("{}", fmt::join(seen, "; "));
  // Numbers inside a text flag are parsed by their command, with the same
  // refusal.
  const std::string trace = "-t tiresias:data/tiresias/60_job.csv";
  const std::vector<std::pair<std::string, std::string>> texts = {
      {fmt::format("simulate {} --window nan:", kRun), "--window"},
      {fmt::format("sweep {} -p fifo --window 0:nan", kRun), "--window"},
      {fmt::format("sweep {} -p fifo --load 1,nan", kRun), "--load"},
      {"report --window nan:1 " + Path("none"), "--window"},
      {"size --load nan:1 " + trace, "--load"},
      {"size --load 0.5:inf " + trace, "--load"},
      {"simulate -c tiresias:data/tiresias/n32g4.csv --elastic nan:2 " + trace, "--elastic"}};
  for (const auto& [args, flag] : texts) {
    const Ran r = Dlsched(args + " -o " + Path("out"));
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_TRUE(r.err.starts_with("dlsched: " + flag + ": ")) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// --threads: 0 (one per core) to 256; more is refused, not tried.
TEST_F(FlagsTest, ThreadsAreBounded) {
  for (const char* cmd : {"compare -p fifo,las", "sweep -p fifo", "rerun x"}) {
    for (const char* n : {"257", "100000", "-1"}) {
      const Ran r = Dlsched(fmt::format("{} {} --threads {} -o {}", cmd, kRun, n, Path("out")));
      EXPECT_EQ(r.code, 2) << cmd << " " << n;
      EXPECT_NE(r.err.find("--threads"), std::string::npos) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
  }
  const Ran r =
      Dlsched(fmt::format("compare {} -p fifo,las,fifo --threads 256 -q -o {}", kRun, Path("out")));
  EXPECT_EQ(r.code, 0) << r.err;
}

// The ETA counts the jobs of runs not started yet at the rate jobs were
// done so far.
TEST(ProgressTest, EtaCountsRunsNotYetStarted) {
  // Four runs of 100 jobs: one done, one half way, two not started; 150
  // jobs in 15 s is 10 jobs/s, and 250 are left.
  const std::vector<RunProgress> runs = {
      {100, 100, true}, {100, 50, false}, {100, 0, false}, {100, 0, false}};
  EXPECT_DOUBLE_EQ(EtaSeconds(runs, 15).value(), 25);
  EXPECT_EQ(ProgressLine(runs, 7200, 15),
            "1/4 runs done, 150/400 jobs, simulated 2.0 h, 10 jobs/s, ETA 25 s");
  // A run that ended with jobs stuck counts all its jobs as done.
  const std::vector<RunProgress> stuck = {{100, 60, true}, {100, 0, false}};
  EXPECT_DOUBLE_EQ(EtaSeconds(stuck, 10).value(), 10);
  // Nothing done yet: no rate, no ETA.
  const std::vector<RunProgress> none = {{100, 0, false}};
  EXPECT_FALSE(EtaSeconds(none, 3).has_value());
  EXPECT_EQ(ProgressLine(none, 0, 3), "0/1 runs done, 0/100 jobs, simulated 0 s, 0 jobs/s, ETA ?");
}

}  // namespace
}  // namespace dlsched::cli
