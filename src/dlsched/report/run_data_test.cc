#include "dlsched/report/run_data.h"

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlsched/report/test_util.h"

namespace dlsched::report {
namespace {

namespace fs = std::filesystem;

using testing::TempDir;
using testing::WriteFile;
using testing::WriteFixtureRun;

TEST(ParseCsvTest, QuotedFieldsHoldCommasQuotesAndLineBreaks) {
  auto f = ParseCsv(
      "a,b,c\r\n"
      "1,\"x, y\",\"say \"\"hi\"\"\"\r\n"
      "2,\"two\nlines\",\n"
      "3,,last",
      "f.csv");
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->header, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(f->rows.size(), 3u);
  EXPECT_EQ(f->rows[0].cells, (std::vector<std::string>{"1", "x, y", "say \"hi\""}));
  EXPECT_EQ(f->rows[1].cells, (std::vector<std::string>{"2", "two\nlines", ""}));
  EXPECT_EQ(f->rows[2].cells, (std::vector<std::string>{"3", "", "last"}));
  // Rows are numbered by the line they start on.
  EXPECT_EQ(f->rows[0].line, 2);
  EXPECT_EQ(f->rows[1].line, 3);
  EXPECT_EQ(f->rows[2].line, 5);
  EXPECT_EQ(f->Find("c"), 2u);
  EXPECT_FALSE(f->Find("d"));
}

TEST(ParseCsvTest, MalformedFilesNameTheLine) {
  struct Case {
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {"a,b\n1,2\n3\n", "f.csv:3: 1 fields, but the header has 2"},
      {"a,b\n1,\"2\n3,4\n", "f.csv:2: a quoted field is never closed"},
      {"a,b\n1,2\n3,x\"y\n", "f.csv:3: a quote inside an unquoted field (quote the whole field)"},
      {"a,b\n\"1\"2,3\n", "f.csv:2: expected a comma or the end of the line after a closing quote"},
      {"", "f.csv:1: empty file (expected a header line)"},
  };
  for (const auto& c : cases) {
    auto f = ParseCsv(c.text, "f.csv");
    ASSERT_FALSE(f) << c.text;
    EXPECT_EQ(f.error().message, c.error);
  }
}

TEST(LoadReportDirTest, ReadsEveryFileOfARun) {
  TempDir tmp;
  WriteFixtureRun(tmp.path() / "run", "kod2");
  auto d = LoadReportDir((tmp.path() / "run").string());
  ASSERT_TRUE(d) << d.error().message;
  ASSERT_EQ(d->runs.size(), 1u);
  const RunData& run = d->runs[0];
  EXPECT_EQ(run.name, "kod2");
  EXPECT_FALSE(d->compare);
  EXPECT_FALSE(d->sweep);

  ASSERT_TRUE(run.summary);
  const metrics::RunSummary& s = run.summary->figures;
  EXPECT_EQ(s.profile, "kod2");
  EXPECT_TRUE(run.summary->has_end_time);
  EXPECT_EQ(s.end_time, 400);
  EXPECT_EQ(s.total_jobs, 3);
  EXPECT_EQ(s.completed_jobs, 2);
  EXPECT_EQ(run.summary->NotDone(), 1);
  EXPECT_TRUE(s.deadlocked);
  EXPECT_EQ(s.jct_p95, 294.5);
  EXPECT_EQ(s.scale_events, 2);
  EXPECT_EQ(s.cycles, 9);
  EXPECT_FALSE(s.window);
  ASSERT_EQ(s.utilization.size(), 2u);
  EXPECT_EQ(s.utilization[1].name, "nvidia.com/gpu");
  EXPECT_EQ(s.utilization[1].capacity, 8);
  EXPECT_EQ(s.utilization[1].effective, 0.25);
  EXPECT_EQ(run.EndTime(), 400);

  ASSERT_TRUE(run.jobs);
  ASSERT_EQ(run.jobs->size(), 3u);
  EXPECT_EQ((*run.jobs)[1].name, "<script>alert(1)</script>");
  EXPECT_EQ((*run.jobs)[0].jct, 300);
  EXPECT_EQ((*run.jobs)[0].launching, 20);
  EXPECT_FALSE((*run.jobs)[2].first_start);
  EXPECT_FALSE((*run.jobs)[2].jct);
  EXPECT_TRUE((*run.jobs)[2].stuck);
  EXPECT_EQ((*run.jobs)[2].final_state, "Waiting");

  ASSERT_TRUE(run.utilization);
  EXPECT_EQ(run.utilization->time, (std::vector<double>{0, 30, 300, 400}));
  ASSERT_EQ(run.utilization->resources.size(), 3u);
  const auto* gpu = run.utilization->Find("nvidia.com/gpu");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->allocated, (std::vector<double>{0.5, 1, 0, 0}));
  EXPECT_EQ(gpu->effective, (std::vector<double>{0, 0.5, 0, 0}));

  ASSERT_TRUE(run.events);
  ASSERT_EQ(run.events->size(), 14u);
  const EventRow& resized = (*run.events)[7];
  EXPECT_EQ(resized.event, "resized");
  EXPECT_EQ(resized.workers, 2);
  EXPECT_EQ(resized.by, "job-7");
  EXPECT_EQ(resized.detail, "4 -> 2: scaled in for \"job-7\"");
  EXPECT_FALSE((*run.events)[0].workers);

  ASSERT_TRUE(run.allocations);
  ASSERT_EQ(run.allocations->size(), 5u);
  EXPECT_EQ((*run.allocations)[0].end, 95);
  EXPECT_EQ((*run.allocations)[4].node, "node-10");
  EXPECT_FALSE((*run.allocations)[4].end);
  EXPECT_EQ((*run.allocations)[4].tasks, 1);
}

TEST(LoadReportDirTest, MissingFilesAreLeftUnset) {
  TempDir tmp;
  WriteFixtureRun(tmp.path(), "old");
  fs::remove(tmp.path() / "events.csv");
  fs::remove(tmp.path() / "allocations.csv");
  fs::remove(tmp.path() / "summary.json");
  auto d = LoadReportDir(tmp.path().string());
  ASSERT_TRUE(d) << d.error().message;
  const RunData& run = d->runs[0];
  EXPECT_FALSE(run.events);
  EXPECT_FALSE(run.allocations);
  EXPECT_FALSE(run.summary);
  EXPECT_TRUE(run.jobs);
  // Without summary.json: named after its directory, ending at its last time.
  EXPECT_EQ(run.name, tmp.path().filename().string());
  EXPECT_EQ(run.EndTime(), 400);
}

// A compare directory: its runs in compare.csv's order, then the others by
// name; every column of compare.csv kept.
TEST(LoadReportDirTest, CompareDirectoryInCompareCsvOrder) {
  TempDir tmp;
  for (const char* p : {"a-profile", "kod2", "gang-binpack", "extra"}) {
    WriteFixtureRun(tmp.path() / p, p);
  }
  WriteFile(tmp.path() / "compare.csv",
            "profile,completed,total,not_done,jct_mean,jct_p95,makespan,new_column\n"
            "kod2,2,3,1,245,294.5,300,x\n"
            "gang-binpack,2,3,1,245,294.5,300,y\n"
            "a-profile,2,3,1,245,294.5,300,z\n");
  auto d = LoadReportDir(tmp.path().string());
  ASSERT_TRUE(d) << d.error().message;
  std::vector<std::string> names;
  for (const auto& r : d->runs) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"kod2", "gang-binpack", "a-profile", "extra"}));
  ASSERT_TRUE(d->compare);
  EXPECT_EQ(d->compare->header.back(), "new_column");
  EXPECT_EQ(d->compare->rows.size(), 3u);
}

// sweep.csv: averaged over seeds per (profile, load); a cell where no job
// completed (empty JCT) is left out of the average.
TEST(LoadReportDirTest, SweepIsAveragedOverSeeds) {
  TempDir tmp;
  WriteFile(tmp.path() / "sweep.csv",
            "profile,load,seed,jobs,completed,status,jct_mean,jct_p95,makespan,gpu_alloc,gpu_eff\n"
            "gang-binpack,0.5,1,100,100,all done,800,2000,5400,0.41,0.39\n"
            "gang-binpack,0.5,2,100,100,all done,900,2200,5400,0.41,0.39\n"
            "gang-binpack,0.25,1,100,100,all done,500,1000,5400,0.41,0.39\n"
            "kod2,0.5,1,100,0,stuck,,,5400,0.41,0.39\n"
            "kod2,0.5,2,100,100,all done,600,1500,5400,0.41,0.39\n"
            "kod2,1,1,100,0,stuck,,,5400,0.41,0.39\n");
  auto d = LoadReportDir(tmp.path().string());
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_TRUE(d->runs.empty());
  ASSERT_TRUE(d->sweep);
  // Every numeric column after the cell's place is a figure; status is not.
  EXPECT_EQ(d->sweep->figures, (std::vector<std::string>{"jobs", "completed", "jct_mean", "jct_p95",
                                                         "makespan", "gpu_alloc", "gpu_eff"}));
  const auto& s = d->sweep->points;
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].profile, "gang-binpack");
  EXPECT_EQ(s[0].load, 0.25);
  EXPECT_EQ(s[1].load, 0.5);
  EXPECT_EQ(s[1].Find("jct_mean")->mean, 850);
  EXPECT_EQ(s[1].Find("jct_p95")->mean, 2100);
  EXPECT_EQ(s[1].Find("jct_mean")->n, 2);
  EXPECT_EQ(s[1].cells, 2);
  EXPECT_EQ(s[1].incomplete, 0);
  // kod2 at 0.5: one stuck cell, left out of the JCT (empty), counted in
  // the rest, and marked incomplete.
  EXPECT_EQ(s[2].profile, "kod2");
  EXPECT_EQ(s[2].Find("jct_mean")->mean, 600);
  EXPECT_EQ(s[2].Find("jct_mean")->n, 1);
  EXPECT_EQ(s[2].Find("completed")->mean, 50);
  EXPECT_EQ(s[2].cells, 2);
  EXPECT_EQ(s[2].incomplete, 1);
  EXPECT_EQ(s[2].statuses, (std::vector<std::string>{"stuck"}));
  // kod2 at 1: no JCT at all, the point is still there for the others.
  EXPECT_EQ(s[3].Find("jct_mean"), nullptr);
  EXPECT_EQ(s[3].incomplete, 1);
}

// Error bars: the sample standard deviation over seeds (n - 1), 0 for one.
TEST(SweepStatTest, MeanSpreadAndRange) {
  const double v[] = {2, 4, 4, 4, 5, 5, 7, 9};
  const SweepStat s = Stat(v);
  EXPECT_EQ(s.n, 8);
  EXPECT_EQ(s.mean, 5);
  EXPECT_NEAR(s.sd, std::sqrt(32.0 / 7), 1e-12);
  EXPECT_EQ(s.min, 2);
  EXPECT_EQ(s.max, 9);
  const double one[] = {3};
  EXPECT_EQ(Stat(one).sd, 0);
  EXPECT_EQ(Stat(one).mean, 3);
  EXPECT_EQ(Stat({}).n, 0);
}

// sweep.csv as dlsched writes it: a partial cell (interrupted) and a cell
// with stuck jobs are incomplete, by their status or their counts.
TEST(LoadReportDirTest, SweepCellsThatAreNotCompleteResults) {
  TempDir tmp;
  WriteFile(tmp.path() / "sweep.csv",
            "cell,cells,profile,load,seed,status,total,completed,stuck,unfinished,jct_censored,"
            "jct_mean\n"
            "0,4,a,1,1,all done,5,5,0,0,0,10\n"
            "1,4,a,1,2,partial: all done,5,5,0,0,0,12\n"
            "2,4,b,1,1,,5,3,2,0,2,0\n"
            "3,4,b,1,2,all done,5,4,0,1,1,30\n");
  auto d = LoadReportDir(tmp.path().string());
  ASSERT_TRUE(d) << d.error().message;
  const auto& p = d->sweep->points;
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].incomplete, 1);
  EXPECT_EQ(p[0].statuses, (std::vector<std::string>{"partial: all done"}));
  EXPECT_EQ(p[1].incomplete, 2);
  EXPECT_EQ(p[1].Find("jct_mean")->mean, 15);
  EXPECT_EQ(p[1].Find("jct_mean")->min, 0);
  EXPECT_EQ(d->sweep->figures.front(), "total");
}

// Run directories given together are one comparison; names two runs share
// get their directory, the same directory twice a number.
TEST(OverlayTest, RunDirectoriesBecomeOneComparison) {
  TempDir tmp;
  WriteFixtureRun(tmp.path() / "a" / "kod2", "kod2");
  WriteFixtureRun(tmp.path() / "a" / "fifo", "fifo");
  WriteFile(tmp.path() / "a" / "compare.csv", "profile,status\nkod2,all done\nfifo,all done\n");
  WriteFixtureRun(tmp.path() / "b", "kod2");
  WriteFile(tmp.path() / "s" / "sweep.csv", "profile,load,jct_mean\nkod2,1,5\n");
  const std::string a = (tmp.path() / "a").string();
  const std::string b = (tmp.path() / "b").string();
  const std::string sw = (tmp.path() / "s").string();
  const std::vector<std::string> dirs = {sw, a, b, b};
  auto loaded = LoadReport(dirs);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 2u);
  EXPECT_EQ((*loaded)[0].dir, sw);  // the sweep stays a section of its own, first
  const ReportDir& cmp = (*loaded)[1];
  EXPECT_EQ(cmp.overlaid, (std::vector<std::string>{a, b, b}));
  EXPECT_EQ(cmp.dir, a + " + " + b + " + " + b);
  EXPECT_FALSE(cmp.compare);  // the table comes from the runs
  std::vector<std::string> names;
  for (const auto& r : cmp.runs) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"kod2 (" + a + ")", "fifo", "kod2 (" + b + ")",
                                             "kod2 (" + b + ") #2"}));
  // One directory alone is as it was.
  auto one = LoadReport(std::vector<std::string>{a});
  ASSERT_TRUE(one);
  EXPECT_TRUE((*one)[0].overlaid.empty());
  EXPECT_TRUE((*one)[0].compare);
  EXPECT_EQ((*one)[0].runs[0].name, "kod2");
}

// Each bad file gives one line naming the file, the line and what was
// expected.
TEST(LoadReportDirTest, BadFilesNameFileLineAndField) {
  TempDir tmp;
  const fs::path run = tmp.path() / "run";
  const std::string dir = run.string();
  struct Case {
    std::string file;
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {"jobs.csv", "name,submit,queueing,launching,running\na,0,1,2,3\nb,zero,1,2,3\n",
       dir + "/jobs.csv:3: submit: expected a number, got 'zero'"},
      {"jobs.csv", "name,submit,queueing,launching\n",
       dir + "/jobs.csv:1: no column 'running' in the header"},
      {"jobs.csv", "name,submit,queueing,launching,running,stuck\na,0,1,2,3,maybe\n",
       dir + "/jobs.csv:2: stuck: expected true or false, got 'maybe'"},
      {"utilization.csv", "time,cpu_allocated\n0,1\n",
       dir + "/utilization.csv:1: no column 'cpu_effective' beside 'cpu_allocated'"},
      {"utilization.csv", "time,cpu_allocated,cpu_effective\n0,1,inf\n",
       dir + "/utilization.csv:2: cpu_effective: expected a number, got 'inf'"},
      {"events.csv", "time,job,event,workers\n0,a,started,4.5\n",
       dir + "/events.csv:2: workers: expected an integer, got '4.5'"},
      {"allocations.csv", "node,job,start,end\nn,a,0,\"x\"\"\n",
       dir + "/allocations.csv:2: a quoted field is never closed"},
      {"summary.json", "{\n  \"profile\": \"x\",\n  \"end_time\": 1..5\n}\n",
       dir + "/summary.json:3: invalid JSON: "},
      {"summary.json", "{\n  \"profile\": \"x\",\n  \"counts\": {\"total\": \"three\"}\n}\n",
       dir + "/summary.json:3: counts.total: expected an integer from 0 to 10^15"},
      {"summary.json",
       "{\n  \"counts\": {\"stuck\": 9223372036854775807, \"failed\": 9223372036854775807}\n}\n",
       dir + "/summary.json:2: counts.stuck: expected an integer from 0 to 10^15"},
      {"summary.json", "[1, 2]\n", dir + "/summary.json:1: expected a JSON object"},
      // A number beyond double's range: nlohmann throws out_of_range, not
      // parse_error (it was "internal error: [json.exception...]").
      {"summary.json", "{\n  \"profile\": \"x\",\n  \"end_time\": 1e400\n}\n",
       dir + "/summary.json:3: invalid JSON: number overflow parsing '1e400'"},
      {"summary.json", "{\"counts\": {\"total\": -1e999}}",
       dir + "/summary.json:1: invalid JSON: number overflow parsing '-1e999'"},
      {"summary.json", "{\n  \"profile\": \"x\",\n  \"queues\": {\"a\": 1}\n}\n",
       dir + "/summary.json:3: queues: expected a list of queues"},
      {"summary.json", "{\n  \"profile\": \"x\",\n  \"queues\": [{\"queue\": 7}]\n}\n",
       dir + "/summary.json:3: queues[0]: expected an object with a queue name"},
  };
  for (const auto& c : cases) {
    fs::remove_all(run);
    WriteFixtureRun(run, "p");
    WriteFile(run / c.file, c.text);
    auto d = LoadReportDir(dir);
    ASSERT_FALSE(d) << c.file << ": " << c.text;
    EXPECT_TRUE(d.error().message.starts_with(c.error)) << d.error().message;
    EXPECT_EQ(d.error().message.find('\n'), std::string::npos) << d.error().message;
  }
}

TEST(LoadReportDirTest, DirectoriesWithoutResultsAreRefused) {
  TempDir tmp;
  auto missing = LoadReportDir((tmp.path() / "nope").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, (tmp.path() / "nope").string() + ": no such directory");
  fs::create_directories(tmp.path() / "empty" / "sub");
  WriteFile(tmp.path() / "empty" / "notes.txt", "hi");
  auto empty = LoadReportDir((tmp.path() / "empty").string());
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("holds no dlsched results"), std::string::npos);
}

}  // namespace
}  // namespace dlsched::report
