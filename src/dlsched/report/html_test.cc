#include "dlsched/report/html.h"

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dlsched/report/test_util.h"

namespace dlsched::report {
namespace {

namespace fs = std::filesystem;

using testing::ChartsNamed;
using testing::ScanCharts;
using testing::ScannedChart;
using testing::TempDir;
using testing::WriteFile;
using testing::WriteFixtureRun;

const std::string kScript = "<script>alert(1)</script>";

std::string Render(const std::vector<std::string>& dirs, const RenderOptions& options = {}) {
  auto loaded = LoadReport(dirs);
  EXPECT_TRUE(loaded) << loaded.error().message;
  return loaded ? RenderHtml(*loaded, options) : "";
}

// The one chart `id` of a page; fails the test when there is not exactly one.
ScannedChart One(const std::vector<ScannedChart>& charts, std::string_view id) {
  auto found = ChartsNamed(charts, id);
  EXPECT_EQ(found.size(), 1u) << id;
  return found.empty() ? ScannedChart{} : found[0];
}

std::vector<std::string> SeriesNames(const ScannedChart& c) {
  std::vector<std::string> out;
  for (const auto& [name, points] : c.series) out.push_back(name);
  return out;
}

// The fixture of test_util.h, chart by chart: series and points as its
// files hold them.
TEST(HtmlReportTest, RunDirectoryHasEveryChart) {
  TempDir tmp;
  WriteFixtureRun(tmp.path(), "kod2");
  const std::string html = Render({tmp.path().string()});
  const auto charts = ScanCharts(html);

  for (const char* id : {"gpu-util", "cpu-util"}) {
    const ScannedChart c = One(charts, id);
    EXPECT_EQ(SeriesNames(c), (std::vector<std::string>{"kod2"})) << id;
    EXPECT_EQ(c.PointsOf("kod2"), 4) << id;  // utilization.csv's rows
  }
  const ScannedChart jct = One(charts, "jct-cdf");
  EXPECT_EQ(jct.PointsOf("kod2"), 2);  // two completed jobs
  const ScannedChart queueing = One(charts, "queueing-cdf");
  EXPECT_EQ(queueing.PointsOf("kod2"), 2);  // two started jobs
  // Two of the jobs with a known ideal runtime completed.
  EXPECT_EQ(One(charts, "slowdown-cdf").PointsOf("kod2"), 2);
  // Waiting jobs: job-1 0-30, the second 10-40, job-3 20 to the end; one
  // point per change: 0 (1), 10 (2), 20 (3), 30 (2), 40 (1).
  EXPECT_EQ(One(charts, "queue-length").PointsOf("kod2"), 5);
  EXPECT_EQ(One(charts, "pending-gpus").PointsOf("kod2"), 5);
  // The resize by job-7 at 95: the count goes 0 -> 1.
  EXPECT_EQ(One(charts, "preemptions").PointsOf("kod2"), 2);
  // Sizes 4, 2, 3: buckets 2, 3-4, one bar each.
  EXPECT_EQ(One(charts, "jct-by-size").PointsOf("kod2"), 2);
  // No queue column (an older dlsched, or no queues): no per-queue chart.
  EXPECT_TRUE(ChartsNamed(charts, "jct-by-queue").empty());
  // One run: nothing to divide by.
  EXPECT_TRUE(ChartsNamed(charts, "vs-baseline").empty());

  const ScannedChart phases = One(charts, "job-phases");
  EXPECT_EQ(phases.attrs.at("data-run"), "kod2");
  EXPECT_EQ(SeriesNames(phases), (std::vector<std::string>{"queueing", "launching", "running"}));
  for (const auto& [name, points] : phases.series) EXPECT_EQ(points, 3) << name;

  // Nodes in natural order; one bar per allocations.csv row.
  const ScannedChart gantt = One(charts, "node-gantt");
  EXPECT_EQ(SeriesNames(gantt), (std::vector<std::string>{"node-0", "node-1", "node-10"}));
  EXPECT_EQ(gantt.PointsOf("node-0"), 3);
  EXPECT_EQ(gantt.PointsOf("node-1"), 1);
  EXPECT_EQ(gantt.PointsOf("node-10"), 1);

  // Only job-1 changed size; a dot per event with a worker count.
  const ScannedChart elastic = One(charts, "elastic-workers");
  EXPECT_EQ(SeriesNames(elastic), (std::vector<std::string>{"job-1"}));
  EXPECT_EQ(elastic.PointsOf("job-1"), 7);

  // Built from summary.json: one row of compare.csv's 32 columns; the run
  // left a job stuck, so its JCT is a lower bound.
  const ScannedChart table = One(charts, "compare-table");
  EXPECT_EQ(SeriesNames(table), (std::vector<std::string>{"kod2"}));
  EXPECT_EQ(table.points, 32);
  EXPECT_NE(html.find("<td data-point=\"\" title=\"294.5\">≥ 294.5</td>"), std::string::npos);
  EXPECT_NE(html.find("<tr data-series=\"kod2\" data-incomplete=\"\">"), std::string::npos);

  // No sweep.csv, no sweep chart (and no note: it is optional).
  EXPECT_TRUE(ChartsNamed(charts, "jct-vs-load").empty());
  EXPECT_EQ(html.find("data-note"), std::string::npos) << html;
}

TEST(HtmlReportTest, UserTextIsEscaped) {
  TempDir tmp;
  // Without summary.json a run is named after its directory.
  const fs::path run = tmp.path() / "a\"b<c>&'d";
  WriteFixtureRun(run, "x");
  fs::remove(run / "summary.json");
  const std::string html = Render({run.string()});
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("a&quot;b&lt;c&gt;&amp;&#39;d"), std::string::npos);
  EXPECT_EQ(html.find("a\"b"), std::string::npos);
  // The scanner unescapes: the names come back as they were.
  const auto charts = ScanCharts(html);
  EXPECT_EQ(SeriesNames(One(charts, "gpu-util")), (std::vector<std::string>{"a\"b<c>&'d"}));
  EXPECT_EQ(HtmlText("x\ny\x1b[31m"), "x\\x0ay\\x1b[31m");

  // A sweep's column names and statuses are user text too: they name
  // charts, files and tooltips.
  WriteFile(tmp.path() / "s" / "sweep.csv",
            "profile,load,status,\"x\"\" onmouseover=\"\"y<i>\"\n"
            "<b>p,1,<i>partial</i>,5\n");
  const std::string sweep = Render({(tmp.path() / "s").string()});
  EXPECT_EQ(sweep.find("<i>"), std::string::npos);
  EXPECT_EQ(sweep.find("<b>p"), std::string::npos);
  EXPECT_EQ(sweep.find("\" onmouseover"), std::string::npos);
  const auto sweep_charts = ScanCharts(sweep);
  const ScannedChart hostile = One(sweep_charts, "sweep-x\" onmouseover=\"y<i>");
  EXPECT_EQ(SeriesNames(hostile), (std::vector<std::string>{"<b>p"}));
  EXPECT_EQ(hostile.IncompletePointsOf("<b>p"), 1);
}

// The page fetches nothing and runs nothing.
TEST(HtmlReportTest, PageIsSelfContained) {
  TempDir tmp;
  WriteFixtureRun(tmp.path(), "kod2");
  const std::string html = Render({tmp.path().string()});
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
  for (const char* outside : {"<script", "src=", "href=\"http", "url(", "@import", "<link"}) {
    EXPECT_EQ(html.find(outside), std::string::npos) << outside;
  }
  // The only URL is SVG's namespace name, which is never fetched.
  size_t at = 0;
  while ((at = html.find("http", at)) != std::string::npos) {
    EXPECT_TRUE(html.substr(at).starts_with("http://www.w3.org/2000/svg\"") ||
                html.substr(at).starts_with("http-equiv"))
        << html.substr(at, 40);
    ++at;
  }
}

TEST(HtmlReportTest, MissingFilesOmitTheirChartsWithANote) {
  TempDir tmp;
  WriteFixtureRun(tmp.path(), "old");
  fs::remove(tmp.path() / "events.csv");
  fs::remove(tmp.path() / "allocations.csv");
  fs::remove(tmp.path() / "utilization.csv");
  const std::string html = Render({tmp.path().string()});
  const auto charts = ScanCharts(html);
  for (const char* id : {"node-gantt", "elastic-workers", "gpu-util", "cpu-util"}) {
    EXPECT_TRUE(ChartsNamed(charts, id).empty()) << id;
    EXPECT_NE(html.find(fmt::format("data-note=\"{}\"", id)), std::string::npos) << id;
  }
  EXPECT_NE(html.find("no events.csv in " + tmp.path().string()), std::string::npos);
  One(charts, "jct-cdf");
  One(charts, "job-phases");

  fs::remove(tmp.path() / "jobs.csv");
  const std::string no_jobs = Render({tmp.path().string()});
  for (const char* id : {"jct-cdf", "queueing-cdf", "job-phases"}) {
    EXPECT_TRUE(ChartsNamed(ScanCharts(no_jobs), id).empty()) << id;
    EXPECT_NE(no_jobs.find(fmt::format("data-note=\"{}\"", id)), std::string::npos) << id;
  }
}

// A compare directory: one series per profile in the shared charts, the
// per-run charts once per profile, every column of compare.csv.
TEST(HtmlReportTest, CompareDirectoryHasASeriesPerProfile) {
  TempDir tmp;
  WriteFixtureRun(tmp.path() / "gang-binpack", "gang-binpack");
  WriteFixtureRun(tmp.path() / "kod2", "kod2");
  fs::remove(tmp.path() / "kod2" / "utilization.csv");
  WriteFile(tmp.path() / "compare.csv",
            "profile,completed,total,not_done,jct_mean,jct_p95,makespan,gpu_eff\n"
            "kod2,2,3,1,245.000000,294.500000,300.000000,0.123456\n"
            "gang-binpack,2,3,1,245.000000,294.500000,300.000000,0.5\n");
  const std::string html = Render({tmp.path().string()});
  const auto charts = ScanCharts(html);
  EXPECT_EQ(SeriesNames(One(charts, "jct-cdf")),
            (std::vector<std::string>{"kod2", "gang-binpack"}));
  // kod2 has no utilization.csv: its series is left out, and the page says so.
  EXPECT_EQ(SeriesNames(One(charts, "gpu-util")), (std::vector<std::string>{"gang-binpack"}));
  EXPECT_NE(html.find("Not shown: kod2 (no utilization.csv)"), std::string::npos);
  const auto phases = ChartsNamed(charts, "job-phases");
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].attrs.at("data-run"), "kod2");
  EXPECT_EQ(phases[1].attrs.at("data-run"), "gang-binpack");
  EXPECT_EQ(ChartsNamed(charts, "node-gantt").size(), 2u);
  const ScannedChart table = One(charts, "compare-table");
  EXPECT_EQ(SeriesNames(table), (std::vector<std::string>{"kod2", "gang-binpack"}));
  EXPECT_EQ(table.points, 16);  // 8 columns
  EXPECT_NE(html.find("<th>gpu_eff</th>"), std::string::npos);
  // Numbers are shown with the decimals their size needs, exact on hover.
  EXPECT_NE(html.find("title=\"0.123456\">0.123</td>"), std::string::npos);
  EXPECT_NE(html.find("title=\"245.000000\">245</td>"), std::string::npos);
}

// Run directories given together are one comparison (Overlay); a sweep
// stays a section of its own.
TEST(HtmlReportTest, SeveralRunDirectoriesAreOneComparison) {
  TempDir tmp;
  WriteFixtureRun(tmp.path() / "a", "gang-binpack");
  WriteFixtureRun(tmp.path() / "b", "kod2");
  WriteFile(tmp.path() / "s" / "sweep.csv", "profile,load,jct_mean\nkod2,1,5\n");
  const std::string html = Render(
      {(tmp.path() / "a").string(), (tmp.path() / "b").string(), (tmp.path() / "s").string()});
  const auto charts = ScanCharts(html);
  for (const char* id : {"gpu-util", "jct-cdf", "compare-table", "vs-baseline"}) {
    EXPECT_EQ(SeriesNames(One(charts, id)), (std::vector<std::string>{"gang-binpack", "kod2"}))
        << id;
  }
  EXPECT_EQ(ChartsNamed(charts, "job-phases").size(), 2u);
  EXPECT_NE(html.find("<section class=\"dir\" id=\"dir-2\""), std::string::npos);
  EXPECT_EQ(html.find("<section class=\"dir\" id=\"dir-3\""), std::string::npos);
  EXPECT_NE(html.find("<a href=\"#dir-1\">"), std::string::npos);
  EXPECT_NE(html.find("A comparison of 2 runs from 2 directories"), std::string::npos);
}

// One point per (profile, load), averaged over seeds; a line per profile.
TEST(HtmlReportTest, SweepChartsJctAgainstLoad) {
  TempDir tmp;
  WriteFile(tmp.path() / "sweep.csv",
            "profile,load,seed,jobs,completed,status,jct_mean,jct_p95,makespan,gpu_alloc,gpu_eff\n"
            "gang-binpack,0.5,1,100,100,all done,800,2000,5400,0.41,0.39\n"
            "gang-binpack,0.5,2,100,100,all done,900,2200,5400,0.41,0.39\n"
            "gang-binpack,0.75,1,100,100,all done,1400,3500,5400,0.41,0.39\n"
            "gang-binpack,1,1,100,100,all done,2600,7000,5400,0.41,0.39\n"
            "kod2,0.5,1,100,100,all done,700,1800,5400,0.41,0.39\n"
            "kod2,1,1,100,100,all done,1700,4200,5400,0.41,0.39\n");
  const std::string html = Render({tmp.path().string()});
  const auto charts = ScanCharts(html);
  const ScannedChart sweep = One(charts, "jct-vs-load");
  EXPECT_EQ(SeriesNames(sweep), (std::vector<std::string>{"gang-binpack", "kod2"}));
  EXPECT_EQ(sweep.PointsOf("gang-binpack"), 3);
  EXPECT_EQ(sweep.PointsOf("kod2"), 2);
  // Mean over the seeds, ± the sample standard deviation (70.7 s, 141.4 s).
  EXPECT_NE(html.find("gang-binpack at load 0.5: jct_mean 14.2 min ± 70.7 s, jct_p95 35 min ± "
                      "2.4 min (2 runs)"),
            std::string::npos);
  // A chart per figure, beside JCT against load.
  for (const char* id :
       {"sweep-jobs", "sweep-completed", "sweep-jct_mean", "sweep-makespan", "sweep-gpu_eff"}) {
    EXPECT_EQ(SeriesNames(One(charts, id)), (std::vector<std::string>{"gang-binpack", "kod2"}))
        << id;
  }
  // No runs here: the run charts are not drawn, and nothing fails; nor is
  // a "no comparison" note, the sweep's cells being its points.
  EXPECT_TRUE(ChartsNamed(charts, "gpu-util").empty());
  EXPECT_TRUE(ChartsNamed(charts, "compare-table").empty());
  EXPECT_NE(html.find("A sweep (sweep.csv)"), std::string::npos);
  // The x axis is the sweep's load factor, not a measured load.
  EXPECT_NE(html.find("load factor (arrival rate x L; 1 = the workload as given)"),
            std::string::npos);
}

// A sweep of --quota: points per (profile, quota), averaged over seeds,
// drawn against the quota; each queue's columns (`<figure>@<queue>`) a
// chart per figure with a line per queue, not in the grid of figures.
TEST(HtmlReportTest, QuotaSweepDrawsAgainstTheQuotaAndPerQueue) {
  TempDir tmp;
  WriteFile(tmp.path() / "sweep.csv",
            "cell,cells,profile,load,seed,quota,quota_of,status,jct_mean,jct_mean@team-a,"
            "jct_mean@team-b,ftf_max@team-a,ftf_max@team-b\n"
            "0,4,fifo,1,1,2,team-a nvidia.com/gpu,all done,300,500,100,,\n"
            "1,4,fifo,1,2,2,team-a nvidia.com/gpu,all done,340,540,140,,\n"
            "2,4,fifo,1,1,8,team-a nvidia.com/gpu,all done,200,200,200,,\n"
            "3,4,fifo,1,2,8,team-a nvidia.com/gpu,all done,200,200,200,,\n");
  const std::string html = Render({tmp.path().string()});
  const auto charts = ScanCharts(html);
  const ScannedChart jct = One(charts, "jct-vs-load");
  EXPECT_EQ(SeriesNames(jct), (std::vector<std::string>{"fifo"}));
  EXPECT_EQ(jct.PointsOf("fifo"), 2);  // quota 2 and 8, each over 2 seeds
  EXPECT_NE(html.find("JCT against team-a&#39;s nominal nvidia.com/gpu quota"), std::string::npos);
  // Mean over the seeds: (300 + 340) / 2 = 320 s, sd 28.3 s.
  EXPECT_NE(html.find("fifo at quota 2 (load 1): jct_mean 5.3 min ± 28.3 s (2 runs)"),
            std::string::npos);
  const ScannedChart queues = One(charts, "sweep-queues-jct_mean");
  EXPECT_EQ(SeriesNames(queues), (std::vector<std::string>{"team-a", "team-b"}));
  EXPECT_NE(html.find("team-b at quota 2 (load 1): jct_mean@team-b 2 min ± 28.3 s"),
            std::string::npos);
  // ftf_max is empty in every row (no --alone): no chart; nor is a queue's
  // column a chart of its own.
  EXPECT_TRUE(ChartsNamed(charts, "sweep-queues-ftf_max").empty());
  EXPECT_TRUE(ChartsNamed(charts, "sweep-jct_mean@team-a").empty());
  EXPECT_EQ(SeriesNames(One(charts, "sweep-jct_mean")), (std::vector<std::string>{"fifo"}));
}

// The fixture run of `profile` in `dir`, its three jobs in queues: job-1
// (4 GPUs) and job-2 (2) of team-a completed, job-3 (3) of `team_b`
// stuck; `alone`: jobs.csv's alone_jct of each, when given.
void WriteQueueRun(const std::filesystem::path& dir, const std::string& team_b,
                   const std::vector<std::string>& alone = {}) {
  WriteFixtureRun(dir, "kod2");
  const auto a = [&](size_t i) { return alone.empty() ? std::string() : "," + alone[i]; };
  WriteFile(dir / "jobs.csv",
            "name,namespace,queue,submit,first_start,completion,jct,queueing,launching,running,"
            "final_state,gpus" +
                std::string(alone.empty() ? "" : ",alone_jct") + ",stuck\n" +
                "job-1,default,team-a,0,30,300,300,30,20,250,Completed,4" + a(0) + ",false\n" +
                "job-2,default,team-a,10,40,200,190,30,10,150,Completed,2" + a(1) + ",false\n" +
                "job-3,default," + team_b + ",20,,,,380,0,0,Waiting,3" + a(2) + ",true\n");
}

// jobs.csv's queue column: a bar per queue and run, the mean JCT of its
// jobs (team-a: 300 and 190 -> 245; the stuck job of team-b counts at the
// run's end, 400 - 20 = 380, a lower bound); a queue name is text, not
// markup.
TEST(HtmlReportTest, JctByQueueHasABarPerQueue) {
  TempDir tmp;
  WriteQueueRun(tmp.path(), "<b>team-b</b>");
  const std::string html = Render({tmp.path().string()});
  const auto charts = ScanCharts(html);
  EXPECT_EQ(One(charts, "jct-by-queue").PointsOf("kod2"), 2);
  EXPECT_NE(html.find("kod2, team-a: mean JCT 4.1 min over 2 jobs (2 completed)"),
            std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;team-b&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<b>team-b</b>"), std::string::npos);
}

// Each queue's GPUs over time against its nominal quota (summary.json's
// queues): team-a holds 4 + 2 = 6 from 40 to 200, 2 above its nominal 4,
// then 4 until 300; team-b is not declared (no nominal line).
TEST(HtmlReportTest, QueueUsageAgainstNominal) {
  TempDir tmp;
  WriteQueueRun(tmp.path(), "team-b");
  std::string summary = testing::ReadFile(tmp.path() / "summary.json");
  summary.insert(summary.find("\"jobs\": ["),
                 "\"queues\": [{\"queue\": \"team-a\", \"cohort\": \"c\", "
                 "\"nominal_gpus\": 4}],\n  ");
  WriteFile(tmp.path() / "summary.json", summary);
  WriteFile(tmp.path() / "allocations.csv",
            "node,job,start,end,tasks,gpus\nn1,job-1,30,300,1,4\nn2,job-2,40,200,1,2\n");
  const std::string html = Render({tmp.path().string()});
  const auto charts = ScanCharts(html);
  const ScannedChart usage = One(charts, "queue-usage");
  EXPECT_EQ(SeriesNames(usage), (std::vector<std::string>{"team-a", "team-b"}));
  EXPECT_EQ(usage.PointsOf("team-a"), 4);  // 4 at 30, 6 at 40, 4 at 200, 0 at 300
  EXPECT_EQ(usage.PointsOf("team-b"), 0);  // it never ran
  EXPECT_NE(html.find("team-a at 40 s: 6 GPUs (2 above its nominal 4: borrowed)"),
            std::string::npos);
  EXPECT_NE(html.find("team-a at 3.3 min: 4 GPUs (nominal 4)"), std::string::npos);
  EXPECT_NE(html.find("data-nominal=\"4\""), std::string::npos);
  EXPECT_EQ(html.find("data-nominal=\"0\""), std::string::npos);
  // Without queues the chart is not there at all.
  TempDir plain;
  WriteFixtureRun(plain.path(), "kod2");
  EXPECT_TRUE(ChartsNamed(ScanCharts(Render({plain.path().string()})), "queue-usage").empty());
}

// Finish-time fairness (jobs.csv's alone_jct): a CDF over the jobs with a
// JCT alone, drawn only when some job has one. job-1: 300 / 150 = 2;
// job-2: 190 / 190 = 1; job-3 never completed: the CDF stops at 2 of 3.
TEST(HtmlReportTest, FinishTimeFairnessCdfOnlyWithAloneRuns) {
  TempDir tmp;
  WriteQueueRun(tmp.path(), "team-b", {"150", "190", "100"});
  const std::string html = Render({tmp.path().string()});
  const auto charts = ScanCharts(html);
  EXPECT_EQ(One(charts, "ftf-cdf").PointsOf("kod2"), 2);
  EXPECT_NE(html.find("data-csv=\"ftf-cdf.csv\""), std::string::npos);
  const size_t csv = html.find("ftf-cdf.csv\" download");
  ASSERT_NE(csv, std::string::npos);
  EXPECT_NE(html.find("profile,ftf,share,jobs,not_reached%0Akod2,1,", csv), std::string::npos);
  TempDir plain;
  WriteFixtureRun(plain.path(), "kod2");
  EXPECT_TRUE(ChartsNamed(ScanCharts(Render({plain.path().string()})), "ftf-cdf").empty());
}

TEST(HtmlReportTest, ManyJobsAreCappedAndThePageSaysSo) {
  TempDir tmp;
  WriteFixtureRun(tmp.path(), "big");
  std::string jobs =
      "name,namespace,submit,first_start,completion,jct,queueing,launching,running,final_state,"
      "admission_seq,reallocations,preemptions,scale_events,final_workers,stuck,reason\n";
  // (Without gpus and ideal_runtime: a file of an older dlsched.)
  // Submitted in reverse: the first 200 by submit time are job-250 .. job-51.
  for (int i = 1; i <= 250; ++i) {
    const int submit = 1000 - i;
    jobs += fmt::format("job-{},default,{},{},{},20,10,0,10,Completed,{},0,0,0,1,false,\n", i,
                        submit, submit + 10, submit + 20, i);
  }
  WriteFile(tmp.path() / "jobs.csv", jobs);
  // 1000 one-second samples and the closing row at 1000 s.
  std::string util = "time,cpu_allocated,cpu_effective\n";
  for (int t = 0; t < 1000; ++t) util += fmt::format("{},{},{}\n", t, t % 2, 0);
  util += "1000,0,0\n";
  WriteFile(tmp.path() / "utilization.csv", util);
  const std::string html = Render({tmp.path().string()});
  const auto charts = ScanCharts(html);
  const ScannedChart phases = One(charts, "job-phases");
  for (const auto& [name, points] : phases.series) EXPECT_EQ(points, 200) << name;
  EXPECT_NE(html.find("Showing the first 200 of 250 jobs by submit time."), std::string::npos);
  EXPECT_NE(html.find("job-250: queueing"), std::string::npos);
  EXPECT_EQ(html.find("job-50: queueing"), std::string::npos);
  // 250 completed jobs: every one a point of the CDF (under the cap).
  EXPECT_EQ(One(charts, "jct-cdf").PointsOf("big"), 250);
  // 1001 rows become kMaxUtilizationPoints means over 2-second buckets; the
  // square wave averages to one half in each.
  const ScannedChart cpu = One(charts, "cpu-util");
  EXPECT_EQ(cpu.PointsOf("big"), static_cast<int>(kMaxUtilizationPoints));
  EXPECT_NE(html.find("big at 2 s: 50% allocated"), std::string::npos);
  EXPECT_NE(html.find("time-weighted means over 500 equal time buckets"), std::string::npos);
  // No GPU column at all: the GPU chart is left out.
  EXPECT_TRUE(ChartsNamed(charts, "gpu-util").empty());
  EXPECT_NE(html.find("big (no nvidia.com/gpu capacity)"), std::string::npos);
}

TEST(HtmlReportTest, LargeCdfsAreSampledAtEvenQuantiles) {
  TempDir tmp;
  WriteFixtureRun(tmp.path(), "big");
  std::string jobs = "name,submit,first_start,jct,queueing,launching,running\n";
  for (int i = 0; i < 1000; ++i) {
    jobs += fmt::format("j{},0,0,{},0,0,{}\n", i, i + 1, i + 1);
  }
  WriteFile(tmp.path() / "jobs.csv", jobs);
  const auto charts = ScanCharts(Render({tmp.path().string()}));
  EXPECT_EQ(One(charts, "jct-cdf").PointsOf("big"), static_cast<int>(kMaxCdfPoints));
  EXPECT_EQ(One(charts, "queueing-cdf").PointsOf("big"), static_cast<int>(kMaxCdfPoints));
}

// Numbers a hand-made file may hold: huge, tiny, equal, negative. The page
// is still drawn (under the sanitizers: no overflow in a conversion), and
// no loop runs away.
TEST(HtmlReportTest, ExtremeNumbersStillDraw) {
  TempDir tmp;
  WriteFixtureRun(tmp.path(), "odd");
  WriteFile(tmp.path() / "jobs.csv",
            "name,submit,first_start,jct,queueing,launching,running\n"
            "a,-1e300,1e300,1e300,1e300,0,1e-300\n"
            "b,1e15,1e15,1e-300,0,0,0\n"
            "c,0,0,5e-324,0,1e308,1e308\n");
  std::string util = "time,cpu_allocated,cpu_effective\n";
  for (int i = 0; i < 600; ++i) util += fmt::format("{},1e300,-1e300\n", i * 1e-310);
  util += "1e308,0,0\n";
  WriteFile(tmp.path() / "utilization.csv", util);
  WriteFile(tmp.path() / "events.csv",
            "time,job,event,workers\n0,a,started,9223372036854775807\n1e300,a,resized,1\n");
  WriteFile(tmp.path() / "allocations.csv",
            "node,job,start,end,tasks,gpus\nn,a,-1e308,1e308,1,1e300\nn,b,5,5,0,0\n");
  const auto charts = ScanCharts(Render({tmp.path().string()}));
  for (const char* id : {"cpu-util", "jct-cdf", "job-phases", "node-gantt", "elastic-workers"}) {
    EXPECT_EQ(ChartsNamed(charts, id).size(), 1u) << id;
  }
}

// The log axis: drawn first when the values span more than two decades
// (auto), or as asked; the other variant is there as data-chart-alt.
TEST(HtmlReportTest, LogAxisByTheSpanOfTheValues) {
  TempDir tmp;
  WriteFixtureRun(tmp.path(), "wide");
  WriteFile(tmp.path() / "jobs.csv",
            "name,submit,first_start,jct,queueing,launching,running\n"
            "a,0,0,1,0,0,1\nb,0,0,30,0,0,30\nc,0,0,2000,0,0,2000\n");
  const std::string html = Render({tmp.path().string()});
  const auto charts = ScanCharts(html);
  EXPECT_EQ(One(charts, "jct-cdf").attrs.at("class"), "v-log");  // 1 s to 2000 s
  EXPECT_NE(html.find("<svg data-chart-alt=\"jct-cdf\""), std::string::npos);
  EXPECT_NE(html.find("job completion time (log scale)"), std::string::npos);
  EXPECT_NE(html.find("<input type=\"checkbox\" class=\"logsw\" id=\"log-1\" checked>"),
            std::string::npos);
  // Queueing: all 0, nothing to draw in log.
  EXPECT_FALSE(One(charts, "queueing-cdf").attrs.contains("class"));
  const auto off = ScanCharts(Render({tmp.path().string()}, {.log_axis = LogAxis::kOff}));
  EXPECT_EQ(One(off, "jct-cdf").attrs.at("class"), "v-lin");
  // Narrow values: linear unless asked.
  WriteFile(tmp.path() / "jobs.csv",
            "name,submit,first_start,jct,queueing,launching,running\n"
            "a,0,0,10,0,0,10\nb,0,0,900,0,0,900\n");
  EXPECT_EQ(One(ScanCharts(Render({tmp.path().string()})), "jct-cdf").attrs.at("class"), "v-lin");
  EXPECT_EQ(One(ScanCharts(Render({tmp.path().string()}, {.log_axis = LogAxis::kOn})), "jct-cdf")
                .attrs.at("class"),
            "v-log");
}

// Beyond 10 profiles the colours come round again with a dash pattern.
TEST(HtmlReportTest, ElevenProfilesStayDistinct) {
  TempDir tmp;
  std::vector<std::string> dirs;
  for (int i = 0; i < 12; ++i) {
    const fs::path d = tmp.path() / fmt::format("p{}", i);
    WriteFixtureRun(d, fmt::format("p{}", i));
    dirs.push_back(d.string());
  }
  const ScannedChart gpu = One(ScanCharts(Render(dirs)), "gpu-util");
  ASSERT_EQ(gpu.series.size(), 12u);
  auto style = [&](int i) { return gpu.series_attrs[i].at("style"); };
  EXPECT_EQ(style(0).find("--d:"), std::string::npos);
  EXPECT_EQ(style(9).find("--d:"), std::string::npos);
  EXPECT_NE(style(10).find("--d:10 3"), std::string::npos);
  EXPECT_NE(style(11).find("--d:10 3"), std::string::npos);
  EXPECT_EQ(style(10).substr(0, 13), style(0).substr(0, 13));  // color:#4e79a7
  EXPECT_NE(style(11).substr(0, 13), style(10).substr(0, 13));
}

// A window the files were not measured over: the figures recomputed from
// jobs.csv, the per-job charts over the jobs in it, the time charts shaded
// outside it.
TEST(HtmlReportTest, WindowRecomputesAndShades) {
  TempDir tmp;
  WriteFixtureRun(tmp.path() / "kod2", "kod2");
  WriteFixtureRun(tmp.path() / "fifo", "fifo");
  const std::string html = Render({(tmp.path() / "kod2").string(), (tmp.path() / "fifo").string()},
                                  {.window = metrics::Window{5, 30}});
  const auto charts = ScanCharts(html);
  EXPECT_NE(html.find("computed from each run's jobs.csv and utilization.csv"), std::string::npos);
  EXPECT_NE(html.find("Figures over jobs submitted in [5 s, 30 s) (--window), computed from "
                      "jobs.csv and utilization.csv."),
            std::string::npos);
  // Two jobs in the window, one of them stuck.
  const ScannedChart jct = One(charts, "jct-cdf");
  EXPECT_EQ(jct.AttrsOf("kod2").at("data-total"), "2");
  EXPECT_EQ(jct.AttrsOf("kod2").at("data-censored"), "1");
  EXPECT_EQ(jct.PointsOf("kod2"), 1);
  for (const char* id : {"gpu-util", "queue-length", "preemptions"}) {
    EXPECT_EQ(One(charts, id).classes.at("outside"), 2) << id;  // before 5 s, after 30 s
  }
  EXPECT_NE(html.find("data-legend=\"outside-window\""), std::string::npos);

  // Runs measured over different windows (their own): the page says so,
  // each run's line says which, and nothing is shaded.
  std::string summary = testing::ReadFile(tmp.path() / "fifo" / "summary.json");
  summary.replace(summary.find("\"cycles\""), 0, "\"window\": {\"from\": 5, \"to\": null},\n  ");
  WriteFile(tmp.path() / "fifo" / "summary.json", summary);
  const std::string mixed =
      Render({(tmp.path() / "kod2").string(), (tmp.path() / "fifo").string()});
  EXPECT_NE(mixed.find("The runs were measured over different windows."), std::string::npos);
  EXPECT_NE(mixed.find("measured over jobs submitted in [5 s, the end)"), std::string::npos);
  EXPECT_EQ(ScanCharts(mixed).size(), ScanCharts(html).size());
  EXPECT_FALSE(One(ScanCharts(mixed), "gpu-util").classes.contains("outside"));
}

// Relative to a baseline: each figure over the baseline's; the baseline
// against itself is 1, exactly.
TEST(HtmlReportTest, BarsRelativeToTheBaseline) {
  TempDir tmp;
  WriteFixtureRun(tmp.path() / "a", "a");
  WriteFixtureRun(tmp.path() / "b", "b");
  // b: JCT mean twice a's.
  std::string summary = testing::ReadFile(tmp.path() / "b" / "summary.json");
  summary.replace(summary.find("\"mean\": 245.0"), 13, "\"mean\": 490.0");
  WriteFile(tmp.path() / "b" / "summary.json", summary);
  const std::vector<std::string> dirs = {(tmp.path() / "a").string(), (tmp.path() / "b").string()};
  const std::string html = Render(dirs, {.baseline = "a"});
  const ScannedChart bars = One(ScanCharts(html), "vs-baseline");
  EXPECT_EQ(SeriesNames(bars), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(bars.points, 12);  // 6 figures x 2 runs
  // Both runs left a job stuck: a's own bars are exact, b's ratios to a
  // are not bounds in either direction.
  EXPECT_NE(html.find("<title>a: JCT mean ≥ 4.1 min = 1x a&#39;s ≥ 4.1 min</title>"),
            std::string::npos);
  EXPECT_NE(html.find("<title>b: JCT mean ≥ 8.2 min = ? 2x a&#39;s ≥ 4.1 min</title>"),
            std::string::npos);
  EXPECT_NE(html.find("each figure divided by a's"), std::string::npos);
  // Without --baseline: the first complete run, else the first.
  EXPECT_NE(Render(dirs).find("each figure divided by a's"), std::string::npos);
  // The check of --baseline.
  auto loaded = LoadReport(dirs);
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(CheckRenderOptions(*loaded, {.baseline = "b"}));
  EXPECT_EQ(CheckRenderOptions(*loaded, {.baseline = "c"}).error().message,
            "--baseline: no profile 'c' in the report (profiles: a, b)");
}

// The scanner itself, on a browser's serialisation (void elements, quotes
// and references, <style> text).
TEST(ScanChartsTest, ReadsSeriesAndPoints) {
  const auto charts = ScanCharts(
      "<html><head><meta charset=\"utf-8\"><style>a>b{}</style></head><body>"
      "<svg data-chart=\"x\" data-run=\"a&amp;b\"><g data-series=\"&lt;s&gt;\">"
      "<circle data-point=\"\"></circle><g data-point=\"\"><title>t</title><circle/></g></g>"
      "<g data-series='q'><rect data-point=\"\"/></g></svg><br>"
      "<table data-chart=\"t\"><tr data-series=\"r\"><td data-point=\"\">1</td></tr></table>"
      "</body></html>");
  ASSERT_EQ(charts.size(), 2u);
  EXPECT_EQ(charts[0].id, "x");
  EXPECT_EQ(charts[0].attrs.at("data-run"), "a&b");
  EXPECT_EQ(charts[0].series, (std::vector<std::pair<std::string, int>>{{"<s>", 2}, {"q", 1}}));
  EXPECT_EQ(charts[0].points, 3);
  EXPECT_EQ(charts[1].PointsOf("r"), 1);
}

}  // namespace
}  // namespace dlsched::report
