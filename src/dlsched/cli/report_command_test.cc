// `dlsched report` and `--report`, end to end: the command's exit codes and
// files, then the page in a real browser (Debian's chromium, headless; it is
// installed by scripts/deps, and its absence fails the test).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dlsched/cli/test_util.h"
#include "dlsched/report/test_util.h"

namespace dlsched::cli {
namespace {

namespace fs = std::filesystem;

using report::testing::ChartsNamed;
using report::testing::ReadFile;
using report::testing::ScanCharts;
using report::testing::ScannedChart;
using report::testing::WriteFile;
using report::testing::WriteFixtureRun;

using testing::Ran;
using testing::Shell;

class ReportCommandTest : public testing::CommandTest {
 protected:
  ReportCommandTest() : CommandTest("report") {}
};

TEST_F(ReportCommandTest, WritesThePageIntoTheDirectoryByDefault) {
  WriteFixtureRun(tmp_ / "run", "kod2");
  const Ran r = Dlsched("report " + (tmp_ / "run").string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "report: " + (tmp_ / "run" / "report.html").string() + "\n");
  const std::string html = ReadFile(tmp_ / "run" / "report.html");
  EXPECT_EQ(ChartsNamed(ScanCharts(html), "gpu-util").size(), 1u);
  // Several directories: report.html here, unless -o says where.
  WriteFixtureRun(tmp_ / "other", "gang-binpack");
  const Ran two = Dlsched(fmt::format("report {} {} -o {}", (tmp_ / "run").string(),
                                      (tmp_ / "other").string(), (tmp_ / "both.html").string()));
  EXPECT_EQ(two.code, 0) << two.err;
  EXPECT_EQ(ChartsNamed(ScanCharts(ReadFile(tmp_ / "both.html")), "gpu-util").size(), 2u);
}

TEST_F(ReportCommandTest, BadInputIsOneLineExitTwoAndWritesNothing) {
  WriteFixtureRun(tmp_ / "run", "kod2");
  WriteFile(tmp_ / "run" / "events.csv", "time,job,event,workers\n0,a,submitted,\n5,a,started,x\n");
  const fs::path page = tmp_ / "page.html";
  const Ran r = Dlsched(fmt::format("report {} -o {}", (tmp_ / "run").string(), page.string()));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, fmt::format("dlsched: {}/events.csv:3: workers: expected an integer, got 'x'\n",
                               (tmp_ / "run").string()));
  EXPECT_FALSE(fs::exists(page));

  const Ran none = Dlsched("report " + (tmp_ / "missing").string());
  EXPECT_EQ(none.code, 2);
  EXPECT_EQ(none.err, "dlsched: " + (tmp_ / "missing").string() + ": no such directory\n");
  const Ran dir_out =
      Dlsched(fmt::format("report {} -o {}", (tmp_ / "run").string(), tmp_.string()));
  EXPECT_EQ(dir_out.code, 2);
  EXPECT_NE(dir_out.err.find("is a directory"), std::string::npos) << dir_out.err;
  const Ran no_dirs = Dlsched("report");
  EXPECT_EQ(no_dirs.code, 2);
}

TEST_F(ReportCommandTest, HelpTeachesWithExamples) {
  const Ran r = Dlsched("report --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dlsched report out/cmp"), std::string::npos) << r.out;
  EXPECT_NE(Dlsched("simulate --help").out.find("--report"), std::string::npos);
  EXPECT_NE(Dlsched("compare --help").out.find("--report"), std::string::npos);
  EXPECT_NE(Dlsched("--help").out.find("report"), std::string::npos);
}

// --report inside the output directory: allowed there, so the next run may
// replace the directory as a whole.
TEST_F(ReportCommandTest, SimulateWritesItsReportAndMayRunAgain) {
  const std::string out = (tmp_ / "out").string();
  const std::string run =
      "simulate -c examples/cluster-kod2-elastic.yaml "
      "-w examples/workload-kod2-elastic.yaml -p kod2 -q -o " +
      out + " --report " + out + "/report.html";
  const Ran first = Dlsched(run);
  EXPECT_EQ(first.code, 0) << first.err;
  ASSERT_TRUE(fs::exists(tmp_ / "out" / "report.html"));
  const Ran again = Dlsched(run);
  EXPECT_EQ(again.code, 0) << again.err;
  const auto charts = ScanCharts(ReadFile(tmp_ / "out" / "report.html"));
  EXPECT_EQ(ChartsNamed(charts, "jct-cdf").size(), 1u);
}

// ---- in a real browser --------------------------------------------------------

// Chromium in headless mode with nothing of its own going on: no network
// services, a fresh profile, console messages logged to stderr.
class BrowserTest : public ReportCommandTest {
 protected:
  Ran Chromium(const std::string& args, const fs::path& page) {
    const fs::path profile = tmp_ / fmt::format("profile-{}", runs_++);
    return Shell(fmt::format("HOME='{}' timeout 180 chromium --headless --no-sandbox --disable-gpu "
                             "--disable-quic --no-first-run --disable-background-networking "
                             "--disable-component-update --disable-sync --user-data-dir='{}' "
                             "--enable-logging=stderr --v=0 {} 'file://{}'",
                             tmp_.string(), profile.string(), args, fs::absolute(page).string()),
                 tmp_);
  }

  // The page's DOM as the browser built it.
  std::string Dom(const fs::path& page) {
    const Ran r = Chromium("--dump-dom", page);
    EXPECT_EQ(r.code, 0) << r.err;
    ExpectNoConsoleMessages(r.err);
    return r.out;
  }

  static void ExpectNoConsoleMessages(const std::string& log) {
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_EQ(line.find(":CONSOLE"), std::string::npos) << line;
      EXPECT_EQ(line.find("Uncaught"), std::string::npos) << line;
    }
  }

  void SetUp() override {
    ReportCommandTest::SetUp();
    ASSERT_EQ(Shell("command -v chromium", tmp_).code, 0)
        << "chromium is not installed: run scripts/deps";
  }

  int runs_ = 0;
};

// The console check sees what it looks for: a page that logs an error.
TEST_F(BrowserTest, ConsoleMessagesAreSeen) {
  WriteFile(tmp_ / "probe.html",
            "<!DOCTYPE html><html><body><script>console.error('probe-42')</script></body></html>");
  const Ran r = Chromium("--dump-dom", tmp_ / "probe.html");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find(":CONSOLE"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("probe-42"), std::string::npos) << r.err;
}

// Cells of a CSV file we wrote ourselves, split on commas: enough for the
// columns before any free text (the last column of jobs.csv and events.csv).
std::vector<std::vector<std::string>> Rows(const fs::path& file) {
  std::vector<std::vector<std::string>> out;
  std::istringstream lines(ReadFile(file));
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::stringstream cs(line);
    for (std::string cell; std::getline(cs, cell, ',');) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    out.push_back(std::move(cells));
  }
  return out;
}

size_t Column(const std::vector<std::vector<std::string>>& rows, const std::string& name) {
  const auto& h = rows.at(0);
  return static_cast<size_t>(std::find(h.begin(), h.end(), name) - h.begin());
}

// Counts its own way what the page should hold for one profile's run
// directory, and checks the DOM against it.
void ExpectRunCharts(const std::vector<ScannedChart>& dom, const fs::path& run,
                     const std::string& name, const std::string& dom_text) {
  SCOPED_TRACE(name);
  const auto util = Rows(run / "utilization.csv");
  for (const char* id : {"gpu-util", "cpu-util"}) {
    const auto charts = ChartsNamed(dom, id);
    ASSERT_EQ(charts.size(), 1u) << id;
    EXPECT_EQ(charts[0].PointsOf(name), static_cast<int>(util.size()) - 1) << id;
  }
  const auto jobs = Rows(run / "jobs.csv");
  int completed = 0;
  int started = 0;
  for (size_t i = 1; i < jobs.size(); ++i) {
    completed += !jobs[i].at(Column(jobs, "jct")).empty();
    started += !jobs[i].at(Column(jobs, "first_start")).empty();
  }
  EXPECT_EQ(ChartsNamed(dom, "jct-cdf").at(0).PointsOf(name), completed);
  EXPECT_EQ(ChartsNamed(dom, "queueing-cdf").at(0).PointsOf(name), started);

  auto of_run = [&](const char* id) {
    std::vector<ScannedChart> out;
    for (const auto& c : ChartsNamed(dom, id)) {
      if (c.attrs.at("data-run") == name) out.push_back(c);
    }
    return out;
  };
  const auto phases = of_run("job-phases");
  ASSERT_EQ(phases.size(), 1u);
  ASSERT_EQ(phases[0].series.size(), 3u);
  for (const auto& [phase, points] : phases[0].series) {
    EXPECT_EQ(points, static_cast<int>(std::min<size_t>(jobs.size() - 1, 200))) << phase;
  }

  const auto gantt = of_run("node-gantt");
  if (fs::exists(run / "allocations.csv")) {
    const auto rows = Rows(run / "allocations.csv");
    std::set<std::string> nodes;
    for (size_t i = 1; i < rows.size(); ++i) nodes.insert(rows[i].at(0));
    ASSERT_EQ(gantt.size(), rows.size() > 1 ? 1u : 0u);
    if (!gantt.empty()) {
      EXPECT_EQ(gantt[0].series.size(), std::min<size_t>(nodes.size(), 40));
      if (nodes.size() <= 40) {
        EXPECT_EQ(gantt[0].points, static_cast<int>(rows.size()) - 1);
      }
    }
  } else {
    EXPECT_TRUE(gantt.empty());
    EXPECT_NE(dom_text.find("no allocations.csv in " + run.string()), std::string::npos);
  }

  const auto elastic = of_run("elastic-workers");
  if (fs::exists(run / "events.csv")) {
    const auto rows = Rows(run / "events.csv");
    const size_t job = Column(rows, "job");
    const size_t workers = Column(rows, "workers");
    std::map<std::string, std::set<std::string>> sizes;
    std::map<std::string, int> points;
    std::vector<std::string> order;
    for (size_t i = 1; i < rows.size(); ++i) {
      const std::string& j = rows[i].at(job);
      const std::string& w = rows[i].at(workers);
      if (!points.contains(j)) order.push_back(j);
      points[j] += w.empty() ? 0 : 1;
      if (!w.empty() && w != "0") sizes[j].insert(w);
    }
    std::vector<std::pair<std::string, int>> expected;
    for (const auto& j : order) {
      if (sizes[j].size() > 1 && expected.size() < 12) expected.emplace_back(j, points[j]);
    }
    ASSERT_EQ(elastic.size(), expected.empty() ? 0u : 1u);
    if (!expected.empty()) {
      EXPECT_EQ(elastic[0].series, expected);
    }
  } else {
    EXPECT_TRUE(elastic.empty());
    EXPECT_NE(dom_text.find("no events.csv in " + run.string()), std::string::npos);
  }
}

// A PNG of the window's size that is more than a blank page.
void ExpectScreenshot(const fs::path& png) {
  ASSERT_TRUE(fs::exists(png));
  const std::string bytes = ReadFile(png);
  ASSERT_GT(bytes.size(), 24u);
  EXPECT_EQ(bytes.substr(0, 8), "\x89PNG\r\n\x1a\n");
  auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  EXPECT_EQ(be32(16), 1400u);  // IHDR width
  EXPECT_EQ(be32(20), 4000u);  // IHDR height
  // A blank page of this size compresses to a few kilobytes.
  EXPECT_GT(bytes.size(), 40u * 1024);
}

// The three-profile comparison of the KOD2 example: every chart in the DOM
// with the series and points the run's own files call for, a screenshot,
// no console message.
TEST_F(BrowserTest, CompareReportInChromium) {
  const fs::path out = tmp_ / "cmp";
  const fs::path page = tmp_ / "r.html";
  const Ran run = Dlsched(fmt::format(
      "compare -c examples/cluster-kod2-elastic.yaml -w examples/workload-kod2-elastic.yaml "
      "-p k8s-default,gang-binpack,kod2 -q -o {} --report {}",
      out.string(), page.string()));
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string dom_text = Dom(page);
  const auto dom = ScanCharts(dom_text);
  for (const char* p : {"k8s-default", "gang-binpack", "kod2"}) {
    ExpectRunCharts(dom, out / p, p, dom_text);
  }
  for (const char* id : {"gpu-util", "jct-cdf", "queueing-cdf", "compare-table"}) {
    const auto c = ChartsNamed(dom, id);
    ASSERT_EQ(c.size(), 1u) << id;
    std::vector<std::string> names;
    for (const auto& [n, points] : c[0].series) names.push_back(n);
    EXPECT_EQ(names, (std::vector<std::string>{"k8s-default", "gang-binpack", "kod2"})) << id;
  }
  const auto compare = Rows(out / "compare.csv");
  EXPECT_EQ(ChartsNamed(dom, "compare-table").at(0).points,
            static_cast<int>((compare.size() - 1) * compare[0].size()));
  EXPECT_TRUE(ChartsNamed(dom, "jct-vs-load").empty());

  const fs::path png = tmp_ / "r.png";
  const Ran shot =
      Chromium(fmt::format("--screenshot='{}' --window-size=1400,4000", png.string()), page);
  EXPECT_EQ(shot.code, 0) << shot.err;
  ExpectNoConsoleMessages(shot.err);
  ExpectScreenshot(png);
}

// Every chart at once, from hand-made files in the formats the other
// subcommands write (events.csv, allocations.csv, sweep.csv), with names
// that are markup: the browser must build them as text.
TEST_F(BrowserTest, EveryChartAndHostileNamesInChromium) {
  const fs::path dir = tmp_ / "fixture";
  WriteFixtureRun(dir / "kod2", "kod2");
  WriteFixtureRun(dir / "<i>x", "<i>x");
  WriteFile(dir / "compare.csv",
            "profile,completed,total,not_done,jct_mean,jct_p95,makespan\n"
            "kod2,2,3,1,245,294.5,300\n"
            "<i>x,2,3,1,245,294.5,300\n");
  WriteFile(dir / "sweep.csv",
            "profile,load,seed,jobs,completed,status,jct_mean,jct_p95,makespan,gpu_alloc,gpu_eff\n"
            "kod2,0.5,1,10,10,all done,100,200,500,0.4,0.3\n"
            "kod2,1,1,10,10,all done,300,600,900,0.8,0.7\n"
            "<i>x,0.5,1,10,10,all done,150,250,500,0.4,0.3\n");
  const fs::path page = tmp_ / "fixture.html";
  const Ran r = Dlsched(fmt::format("report {} -o {}", dir.string(), page.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string dom_text = Dom(page);
  const auto dom = ScanCharts(dom_text);
  for (const char* id :
       {"gpu-util", "cpu-util", "jct-cdf", "queueing-cdf", "compare-table", "jct-vs-load"}) {
    EXPECT_EQ(ChartsNamed(dom, id).size(), 1u) << id;
  }
  for (const char* id : {"job-phases", "node-gantt", "elastic-workers"}) {
    EXPECT_EQ(ChartsNamed(dom, id).size(), 2u) << id;
  }
  ExpectRunCharts(dom, dir / "kod2", "kod2", dom_text);
  ExpectRunCharts(dom, dir / "<i>x", "<i>x", dom_text);
  const auto sweep = ChartsNamed(dom, "jct-vs-load").at(0);
  EXPECT_EQ(sweep.series, (std::vector<std::pair<std::string, int>>{{"kod2", 2}, {"<i>x", 1}}));
  // Markup in names stayed text (the series named "<i>x" above came back
  // whole): no element came of it.
  EXPECT_EQ(dom_text.find("<script"), std::string::npos);
  EXPECT_NE(dom_text.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

}  // namespace
}  // namespace dlsched::cli
