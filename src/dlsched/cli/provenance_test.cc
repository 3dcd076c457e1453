// Provenance and `dlsched rerun`: the command line as recorded, SHA-256,
// then end to end through the built binary: simulate, compare and sweep
// directories rerun byte for byte, and a changed or missing input, a
// tampered result, a directory without provenance and partial results are
// refused or reported.
#include "dlsched/cli/provenance.h"

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dlsched/cli/rerun_command.h"
#include "dlsched/cli/test_util.h"
#include "dlsched/report/test_util.h"

namespace dlsched::cli {
namespace {

namespace fs = std::filesystem;

using report::testing::ReadFile;
using report::testing::WriteFile;
using testing::Ran;

std::vector<std::string> Words(std::initializer_list<const char*> words) {
  return {words.begin(), words.end()};
}

TEST(RecordedCommandTest, DropsWhereAndHowVisiblyButKeepsWhat) {
  EXPECT_EQ(RecordedCommand(Words({"simulate", "-c", "c.yaml", "-w", "w.yaml", "-o", "out/x", "-q",
                                   "--report", "r.html", "-p", "kod2"})),
            Words({"simulate", "-c", "c.yaml", "-w", "w.yaml", "-p", "kod2"}));
  // Every form CLI11 reads: attached values, --name=value, flags run
  // together with an option.
  EXPECT_EQ(RecordedCommand(Words({"compare", "-oout", "--out=o2", "--threads=3", "-j4", "-qo",
                                   "o3", "--quiet", "-p", "fifo,las", "--set", "a.b=1"})),
            Words({"compare", "-p", "fifo,las", "--set", "a.b=1"}));
  EXPECT_EQ(RecordedCommand(Words({"sweep", "-j", "2", "--threads", "8", "--report=s.html",
                                   "-cc.yaml", "--load", "1,2"})),
            Words({"sweep", "-cc.yaml", "--load", "1,2"}));
  // A short option with its value attached keeps the value whatever it
  // holds; a negative number is a value.
  EXPECT_EQ(RecordedCommand(Words({"sweep", "-wq.yaml", "--load", "-1"})),
            Words({"sweep", "-wq.yaml", "--load", "-1"}));
}

TEST(Sha256Test, KnownDigests) {
  // FIPS 180-2, appendix B.
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const fs::path dir = fs::temp_directory_path() / fmt::format("dlsched-sha-{}", ::getpid());
  fs::create_directories(dir);
  // A million 'a', read in pieces.
  WriteFile(dir / "a", std::string(1000000, 'a'));
  EXPECT_EQ(Sha256File((dir / "a").string()).value(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(Sha256File((dir / "none").string()).error().message,
            (dir / "none").string() + ": cannot read file: No such file or directory");
  EXPECT_EQ(Sha256File(dir.string()).error().message,
            dir.string() + ": cannot read file: not a regular file");
  fs::remove_all(dir);
}

class RerunTest : public testing::CommandTest {
 protected:
  RerunTest() : CommandTest("rerun") {}

  // Copies of the examples, so that a test may change them.
  void CopyInputs() {
    for (const char* f : {"cluster-3node.yaml", "workload-small.yaml", "cluster-kod2-elastic.yaml",
                          "workload-kod2-elastic.yaml"}) {
      fs::copy_file(fs::path(DLSCHED_SOURCE_DIR) / "examples" / f, tmp_ / f);
    }
    const Ran r = Dlsched("profiles --show fifo");
    ASSERT_EQ(r.code, 0);
    WriteFile(tmp_ / "mine.yaml", r.out);
  }

  // `dlsched rerun DIR`: reproduced, byte for byte, in DIR-rerun.
  void ExpectReproduced(const std::string& dir) {
    const Ran r = Dlsched("rerun -q " + Path(dir));
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(
        r.out.find(fmt::format("rerun: {}-rerun/ is byte for byte {}/", Path(dir), Path(dir))),
        std::string::npos)
        << r.out;
    const std::vector<std::string> files = ComparedFiles(Path(dir));
    EXPECT_EQ(ComparedFiles(Path(dir + "-rerun")), files);
    for (const auto& f : files) {
      EXPECT_EQ(ReadFile(tmp_ / (dir + "-rerun") / f), ReadFile(tmp_ / dir / f)) << f;
    }
  }
};

TEST_F(RerunTest, SimulateRerunsByteForByte) {
  CopyInputs();
  const Ran r =
      Dlsched(fmt::format("simulate -c {} -w {} -p kod2 --set order.args.kappa=2 -q -o {}",
                          Path("cluster-3node.yaml"), Path("workload-small.yaml"), Path("sim")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto summary = nlohmann::json::parse(ReadFile(tmp_ / "sim" / "summary.json"));
  const auto& p = summary["provenance"];
  EXPECT_EQ(p["dlsched_version"], DLSCHED_VERSION);
  // The command without -q and -o: they change neither file.
  const std::vector<std::string> command = {
      "simulate", "-c",    Path("cluster-3node.yaml"), "-w", Path("workload-small.yaml"), "-p",
      "kod2",     "--set", "order.args.kappa=2"};
  EXPECT_EQ(p["command"], nlohmann::json(command));
  ASSERT_EQ(p["inputs"].size(), 2u);
  EXPECT_EQ(p["inputs"][0]["role"], "cluster");
  EXPECT_EQ(p["inputs"][0]["sha256"], Sha256File(Path("cluster-3node.yaml")).value());
  EXPECT_EQ(p["inputs"][1]["role"], "workload");
  EXPECT_TRUE(p["seeds"].is_null());
  EXPECT_TRUE(p["window"].is_null());
  ASSERT_EQ(p["profiles"].size(), 1u);
  EXPECT_EQ(p["profiles"][0]["name"], "kod2-kappa-2");
  EXPECT_EQ(p["profiles"][0]["builtin"], "kod2");
  // The profile as it ran, run as a file, gives the same results.
  const std::string yaml = p["profiles"][0]["yaml"];
  EXPECT_NE(yaml.find("kappa: 2"), std::string::npos) << yaml;
  WriteFile(tmp_ / "resolved.yaml", yaml);
  const Ran again =
      Dlsched(fmt::format("simulate -c {} -w {} -p {} -q -o {}", Path("cluster-3node.yaml"),
                          Path("workload-small.yaml"), Path("resolved.yaml"), Path("resolved")));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(ReadFile(tmp_ / "resolved" / "jobs.csv"), ReadFile(tmp_ / "sim" / "jobs.csv"));
  ExpectReproduced("sim");
}

TEST_F(RerunTest, CompareRerunsByteForByte) {
  CopyInputs();
  const Ran r = Dlsched(
      fmt::format("compare -c {} -w {} -p gang-binpack,{},kod2:order.args.kappa=8 -j 2 -q -o {}",
                  Path("cluster-kod2-elastic.yaml"), Path("workload-kod2-elastic.yaml"),
                  Path("mine.yaml"), Path("cmp")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto compare = nlohmann::json::parse(ReadFile(tmp_ / "cmp" / "compare.json"));
  const auto& p = compare["provenance"];
  ASSERT_EQ(p["profiles"].size(), 3u);
  EXPECT_EQ(p["profiles"][1]["file"], Path("mine.yaml"));
  EXPECT_EQ(p["profiles"][2]["name"], "kod2-kappa-8");
  EXPECT_EQ(p["profiles"][2]["set"], nlohmann::json(Words({"order.args.kappa=8"})));
  // The profile file is an input; built-in profiles are named, not files.
  ASSERT_EQ(p["inputs"].size(), 3u);
  EXPECT_EQ(p["inputs"][2]["role"], "profile");
  EXPECT_EQ(p["inputs"][2]["path"], Path("mine.yaml"));
  // The run directories inside do not repeat it.
  EXPECT_EQ(ReadFile(tmp_ / "cmp" / "fifo" / "summary.json").find("provenance"), std::string::npos);
  ExpectReproduced("cmp");
}

TEST_F(RerunTest, SweepRerunsByteForByte) {
  CopyInputs();
  Ran r =
      Dlsched(fmt::format("sweep -c {} --jobs 12 --seeds 3,4 --mean-interarrival 30 -p fifo,las "
                          "--load 1,2 -q -o {}",
                          Path("cluster-kod2-elastic.yaml"), Path("gen")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto p = nlohmann::json::parse(ReadFile(tmp_ / "gen" / "provenance.json"))["provenance"];
  EXPECT_EQ(p["seeds"], nlohmann::json::parse("[3, 4]"));
  EXPECT_EQ(p["inputs"].size(), 1u);  // the cluster; the jobs are generated
  ExpectReproduced("gen");
  r = Dlsched(fmt::format(
      "sweep -c {} -w {} -p gang-binpack,kod2 --load 0.5,1 --keep-runs -q "
      "-o {}",
      Path("cluster-kod2-elastic.yaml"), Path("workload-kod2-elastic.yaml"), Path("file")));
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectReproduced("file");
}

// A pollux trace reads Pollux's measurements too: each file under the
// directory is an input, and a changed one is refused.
TEST_F(RerunTest, PolluxMeasurementsAreInputs) {
  fs::copy(fs::path(DLSCHED_SOURCE_DIR) / "data/pollux/traces", tmp_ / "traces",
           fs::copy_options::recursive);
  WriteFile(tmp_ / "one.csv",
            "name,time,application,num_replicas,batch_size\ncifar10-0,107,cifar10,6,2048\n");
  const Ran r = Dlsched(fmt::format(
      "simulate -c tiresias:examples/tiresias-n16g4.csv -t pollux:{} --pollux-traces {} -q -o {}",
      Path("one.csv"), Path("traces"), Path("sim")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto p = nlohmann::json::parse(ReadFile(tmp_ / "sim" / "summary.json"))["provenance"];
  EXPECT_EQ(p["inputs"][0]["format"], "tiresias");
  EXPECT_EQ(p["inputs"][0]["path"], "examples/tiresias-n16g4.csv");
  EXPECT_EQ(p["inputs"][1]["role"], "trace");
  EXPECT_EQ(p["inputs"][1]["format"], "pollux");
  size_t measurements = 0;
  for (const auto& in : p["inputs"]) measurements += in["role"] == "pollux-traces";
  EXPECT_EQ(measurements, ComparedFiles(Path("traces")).size());
  EXPECT_GT(measurements, 10u);
  ExpectReproduced("sim");
  const fs::path placements = tmp_ / "traces" / "cifar10" / "placements.csv";
  WriteFile(placements, ReadFile(placements) + "\n");
  const Ran refused = Dlsched("rerun " + Path("sim"));
  EXPECT_EQ(refused.code, 2);
  EXPECT_TRUE(refused.err.starts_with("dlsched: rerun: " + placements.string() +
                                      ": the run's pollux-traces has changed since the run"))
      << refused.err;
}

// An input that changed or went is refused before anything runs: one line
// naming it, exit 2, nothing written.
TEST_F(RerunTest, RefusesChangedOrMissingInputs) {
  CopyInputs();
  const Ran r = Dlsched(fmt::format("compare -c {} -w {} -p gang-binpack,{} -q -o {}",
                                    Path("cluster-3node.yaml"), Path("workload-small.yaml"),
                                    Path("mine.yaml"), Path("cmp")));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string recorded = Sha256File(Path("mine.yaml")).value();
  WriteFile(tmp_ / "mine.yaml", ReadFile(tmp_ / "mine.yaml") + "# edited\n");
  Ran refused = Dlsched("rerun " + Path("cmp"));
  EXPECT_EQ(refused.code, 2);
  EXPECT_EQ(refused.err,
            fmt::format("dlsched: rerun: {}: the run's profile has changed since the run "
                        "(SHA-256 {}, recorded {})\n",
                        Path("mine.yaml"), Sha256File(Path("mine.yaml")).value(), recorded));
  EXPECT_FALSE(fs::exists(tmp_ / "cmp-rerun"));
  fs::remove(tmp_ / "workload-small.yaml");
  refused = Dlsched("rerun " + Path("cmp"));
  EXPECT_EQ(refused.code, 2);
  EXPECT_EQ(refused.err,
            fmt::format("dlsched: rerun: {}: the run's workload is missing or unreadable ({}: "
                        "cannot read file: No such file or directory); paths are relative to the "
                        "directory the run started in\n",
                        Path("workload-small.yaml"), Path("workload-small.yaml")));
  EXPECT_FALSE(fs::exists(tmp_ / "cmp-rerun"));
}

// A result that differs from what its inputs give is found and named.
TEST_F(RerunTest, NamesTheFirstFileThatDiffers) {
  CopyInputs();
  const Ran r = Dlsched(fmt::format("simulate -c {} -w {} -q -o {}", Path("cluster-3node.yaml"),
                                    Path("workload-small.yaml"), Path("sim")));
  ASSERT_EQ(r.code, 0) << r.err;
  std::string jobs = ReadFile(tmp_ / "sim" / "jobs.csv");
  jobs.replace(jobs.find("resnet-1"), 8, "resnet-X");
  WriteFile(tmp_ / "sim" / "jobs.csv", jobs);
  // report.html is not compared: the report names its directories.
  ASSERT_EQ(Dlsched("report " + Path("sim")).code, 0);
  const Ran rerun = Dlsched("rerun -q " + Path("sim") + " -o " + Path("again"));
  EXPECT_EQ(rerun.code, 1);
  EXPECT_EQ(rerun.err, fmt::format("dlsched: rerun: {}/jobs.csv differs from {}/jobs.csv from "
                                   "line 2 on\n",
                                   Path("again"), Path("sim")));
}

TEST_F(RerunTest, RefusesDirectoriesWithoutProvenanceOrWithPartialResults) {
  CopyInputs();
  const Ran r =
      Dlsched(fmt::format("compare -c {} -w {} -p gang-binpack,kod2 -q -o {}",
                          Path("cluster-3node.yaml"), Path("workload-small.yaml"), Path("cmp")));
  ASSERT_EQ(r.code, 0) << r.err;
  Ran refused = Dlsched("rerun " + Path("cmp/kod2"));
  EXPECT_EQ(refused.code, 2);
  EXPECT_EQ(refused.err,
            fmt::format("dlsched: rerun: {}: records no provenance (simulate, compare and sweep "
                        "record it at the top of their --out; a compare's or a sweep's run "
                        "directories do not: rerun the directory above)\n",
                        Path("cmp/kod2")));
  refused = Dlsched("rerun " + Path("nowhere"));
  EXPECT_EQ(refused.code, 2);
  EXPECT_EQ(refused.err, "dlsched: rerun: " + Path("nowhere") + ": no such directory\n");
  // An interrupted run's results cannot come out the same.
  const fs::path summary = tmp_ / "cmp" / "kod2" / "summary.json";
  std::string text = ReadFile(summary);
  text.replace(text.find("\"partial\": false"), 16, "\"partial\": true");
  WriteFile(summary, text);
  refused = Dlsched("rerun " + Path("cmp"));
  EXPECT_EQ(refused.code, 2);
  EXPECT_EQ(refused.err, fmt::format("dlsched: rerun: {}: the run was interrupted (\"partial\": "
                                     "true); partial results cannot be reproduced\n",
                                     summary.string()));
  // Nor is the original replaced by its own rerun.
  refused = Dlsched("rerun " + Path("cmp") + " -o " + Path("cmp/again"));
  EXPECT_EQ(refused.code, 2);
  EXPECT_FALSE(fs::exists(tmp_ / "cmp-rerun"));
}

// The HTML report shows how its results were made.
TEST_F(RerunTest, ReportShowsTheProvenance) {
  CopyInputs();
  const Ran r =
      Dlsched(fmt::format("simulate -c {} -w {} -p {} -q -o {}", Path("cluster-3node.yaml"),
                          Path("workload-small.yaml"), Path("mine.yaml"), Path("sim")));
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(Dlsched("report " + Path("sim")).code, 0);
  const std::string html = ReadFile(tmp_ / "sim" / "report.html");
  EXPECT_NE(html.find("<details class=\"provenance\" data-provenance>"), std::string::npos);
  EXPECT_NE(html.find(Sha256File(Path("mine.yaml")).value()), std::string::npos);
  EXPECT_NE(html.find("<code>dlsched rerun " + Path("sim") + "</code>"), std::string::npos);
  EXPECT_NE(html.find("data-profile=\"fifo\""), std::string::npos);
}

}  // namespace
}  // namespace dlsched::cli
