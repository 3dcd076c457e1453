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

#include <nlohmann/json.hpp>

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
  // ... drawn as one comparison: a chart, a series per run.
  const auto both = ChartsNamed(ScanCharts(ReadFile(tmp_ / "both.html")), "gpu-util");
  ASSERT_EQ(both.size(), 1u);
  EXPECT_EQ(both[0].series.size(), 2u);
}

// The column `name` of the compare table's row `profile`, as its title holds
// it (the value unrounded).
std::string TableCell(const std::string& html, const std::string& profile,
                      const std::string& name) {
  const size_t head = html.find("<table data-chart=\"compare-table\">");
  const size_t body = html.find("<tbody>", head);
  int col = -1;
  int k = 0;
  for (size_t at = html.find("<th>", head); at < body; at = html.find("<th>", at + 1), ++k) {
    if (html.compare(at + 4, name.size() + 5, name + "</th>") == 0) col = k;
  }
  size_t at = html.find(fmt::format("<tr data-series=\"{}\"", profile), body);
  if (col < 0 || at == std::string::npos) return "<none>";
  for (int i = 0; i <= col; ++i) at = html.find("<td data-point=\"\" title=\"", at + 1);
  at += std::string_view("<td data-point=\"\" title=\"").size();
  return html.substr(at, html.find('"', at) - at);
}

// --window: checked before anything runs (one line, exit 2), recorded in
// summary.json and compare.json, and applied by the report to files
// written without it.
TEST_F(ReportCommandTest, WindowIsCheckedRecordedAndApplied) {
  const std::string inputs =
      "-c examples/cluster-kod2-elastic.yaml -w examples/workload-kod2-elastic.yaml";
  const std::string expected =
      "expected FROM:TO in seconds with 0 <= FROM < TO <= 1e9 (e.g. 3600:86400; 3600: runs to "
      "the end of the run)";
  for (const auto& [cmd, bad] : std::vector<std::pair<std::string, std::string>>{
           {"simulate " + inputs + " -p kod2 -q", "abc"},
           {"compare " + inputs + " -p kod2 -q", "10:5"},
           {"sweep " + inputs + " -p kod2 -q", "5"},
           {"sweep " + inputs + " -p kod2 -q", ":"},
           {"simulate " + inputs + " -p kod2 -q", "-1:"},
           {"compare " + inputs + " -p kod2 -q", "0:2e9"}}) {
    const Ran r = Dlsched(fmt::format("{} -o {} --window '{}'", cmd, (tmp_ / "o").string(), bad));
    EXPECT_EQ(r.code, 2) << cmd << " " << bad;
    EXPECT_EQ(r.err, fmt::format("dlsched: --window: {}, got '{}'\n", expected, bad)) << cmd;
    EXPECT_FALSE(fs::exists(tmp_ / "o"));
  }

  // job e arrives at 0, h at 100: a window from 50 holds h alone.
  const fs::path out = tmp_ / "cmp";
  const Ran r = Dlsched(
      fmt::format("compare {} -p gang-binpack,kod2 -q -o {} --window 50:", inputs, out.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto compare = nlohmann::json::parse(ReadFile(out / "compare.json"));
  EXPECT_EQ(compare["window"]["from"], 50);
  EXPECT_TRUE(compare["window"]["to"].is_null());
  EXPECT_EQ(compare["profiles"][1]["total"], 1);
  const auto summary = nlohmann::json::parse(ReadFile(out / "kod2" / "summary.json"));
  EXPECT_EQ(summary["window"]["from"], 50);
  EXPECT_EQ(summary["counts"]["total"], 1);
  // jobs.csv still lists every job: a header and two rows.
  const std::string jobs_csv = ReadFile(out / "kod2" / "jobs.csv");
  EXPECT_EQ(std::count(jobs_csv.begin(), jobs_csv.end(), '\n'), 3);

  // The report of the whole run, and of the same run under a window: the
  // table recomputed from jobs.csv is what compare computes with it.
  const fs::path whole = tmp_ / "whole";
  ASSERT_EQ(
      Dlsched(fmt::format("compare {} -p gang-binpack,kod2 -q -o {}", inputs, whole.string())).code,
      0);
  const Ran rep = Dlsched(
      fmt::format("report {} --window 50: -o {}", whole.string(), (tmp_ / "w.html").string()));
  ASSERT_EQ(rep.code, 0) << rep.err;
  const std::string html = ReadFile(tmp_ / "w.html");
  const auto windowed = Rows(out / "compare.csv");
  for (const char* col : {"total", "jct_mean", "jct_p95", "makespan", "gpu_effective"}) {
    const std::string expected_cell = windowed.at(2).at(Column(windowed, col));
    EXPECT_NEAR(std::stod(TableCell(html, "kod2", col)), std::stod(expected_cell), 1e-5) << col;
  }
  EXPECT_NE(html.find("computed from each run's jobs.csv and utilization.csv"), std::string::npos);
  EXPECT_NE(html.find("Figures over jobs submitted in [50 s, the end) (--window), computed "
                      "from jobs.csv and utilization.csv."),
            std::string::npos);
  // The window the run was measured over is the report's by default.
  const Ran own = Dlsched(fmt::format("report {} -o {}", out.string(), (tmp_ / "o.html").string()));
  ASSERT_EQ(own.code, 0) << own.err;
  EXPECT_NE(ReadFile(tmp_ / "o.html").find("Figures over jobs submitted in [50 s, the end)."),
            std::string::npos);
  const Ran bad = Dlsched(fmt::format("report {} --window x", out.string()));
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, fmt::format("dlsched: --window: {}, got 'x'\n", expected));
}

TEST_F(ReportCommandTest, BaselineAndLogAxisAreChecked) {
  WriteFixtureRun(tmp_ / "a", "kod2");
  WriteFixtureRun(tmp_ / "b", "fifo");
  const std::string dirs = (tmp_ / "a").string() + " " + (tmp_ / "b").string();
  const Ran none = Dlsched("report " + dirs + " --baseline nope -o " + (tmp_ / "r.html").string());
  EXPECT_EQ(none.code, 2);
  EXPECT_EQ(none.err,
            "dlsched: --baseline: no profile 'nope' in the report (profiles: kod2, fifo)\n");
  EXPECT_FALSE(fs::exists(tmp_ / "r.html"));
  const Ran axis = Dlsched("report " + dirs + " --log-axis sideways");
  EXPECT_EQ(axis.code, 2);
  EXPECT_EQ(axis.err, "dlsched: --log-axis: expected auto, on or off, got 'sideways'\n");
  const Ran ok =
      Dlsched("report " + dirs + " --baseline fifo --log-axis on -o " + (tmp_ / "r.html").string());
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ReadFile(tmp_ / "r.html").find("each figure divided by fifo's"), std::string::npos);
  // compare refuses it before running.
  const Ran cmp = Dlsched(fmt::format(
      "compare -c examples/cluster-kod2-elastic.yaml -w examples/workload-kod2-elastic.yaml "
      "-p gang-binpack,kod2 -q -o {} --report {} --baseline fifo",
      (tmp_ / "c").string(), (tmp_ / "c.html").string()));
  EXPECT_EQ(cmp.code, 2);
  EXPECT_EQ(cmp.err, "dlsched: --baseline: no profile 'fifo' (profiles: gang-binpack, kod2)\n");
  EXPECT_FALSE(fs::exists(tmp_ / "c"));
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

  // Loads `page` in an iframe of a page of our own (file access between
  // the two allowed), runs `script` there (an async function: it may
  // await) once it has loaded, and returns what it left in `out` (an array
  // of strings), a line each. The script sees the report's document as `d`
  // and its window as `w`.
  std::vector<std::string> InFrame(const fs::path& page, const std::string& script) {
    const fs::path harness = tmp_ / fmt::format("harness-{}.html", runs_);
    WriteFile(harness,
              fmt::format("<!DOCTYPE html><html><body><pre id=\"out\"></pre>"
                          "<iframe id=\"f\" src=\"file://{}\" width=\"1400\" height=\"900\">"
                          "</iframe><script>document.getElementById('f').onload = async () => {{"
                          "const d = document.getElementById('f').contentDocument;"
                          "const w = d.defaultView; const out = [];\n{}\n"
                          "document.getElementById('out').textContent = out.join('\\n'); }};"
                          "</script></body></html>",
                          fs::absolute(page).string(), script));
    const Ran r =
        Chromium("--allow-file-access-from-files --virtual-time-budget=10000 --dump-dom", harness);
    EXPECT_EQ(r.code, 0) << r.err;
    ExpectNoConsoleMessages(r.err);
    const size_t from = r.out.find("<pre id=\"out\">");
    const size_t to = r.out.find("</pre>", from);
    if (from == std::string::npos || to == std::string::npos) return {};
    const size_t start = from + std::string_view("<pre id=\"out\">").size();
    const std::string text = r.out.substr(start, to - start);
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      // The <pre>'s text as the browser serialised it.
      std::string plain;
      for (size_t i = 0; i < line.size(); ++i) {
        bool replaced = false;
        for (auto [ref, ch] : {std::pair<std::string_view, char>{"&lt;", '<'},
                               {"&gt;", '>'},
                               {"&quot;", '"'},
                               {"&amp;", '&'}}) {
          if (std::string_view(line).substr(i).starts_with(ref)) {
            plain += ch;
            i += ref.size() - 1;
            replaced = true;
            break;
          }
        }
        if (!replaced) plain += line[i];
      }
      lines.push_back(plain);
    }
    return lines;
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

// `dlsched sharing --html`: per pod list, the GPUs unallocated and
// fragmented against the workload arrived, a series per policy with a
// point per integer % arrived (its --csv rows for one seed), and the
// figures it prints at 100% in the points' titles.
TEST_F(BrowserTest, SharingCurvesInChromium) {
  const fs::path page = tmp_ / "sharing.html";
  const fs::path csv = tmp_ / "sharing.csv";
  const Ran run = Dlsched(fmt::format(
      "sharing --nodes examples/openb-nodes-small.csv --pods examples/openb-pods-small.csv "
      "--policies bestfit,fgd --seeds 42 --csv {} --html {}",
      csv.string(), page.string()));
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string dom_text = Dom(page);
  const auto dom = ScanCharts(dom_text);
  std::map<std::string, int> rows;  // per policy
  std::string fgd_at_100;           // fgd's allocated % at 100% arrived
  for (const auto& row : Rows(csv)) {
    if (row.size() < 6 || row[0] == "trace") continue;
    ++rows[row[1]];
    if (row[1] == "fgd" && row[3] == "100") fgd_at_100 = row[4];
  }
  ASSERT_EQ(rows.size(), 2u);
  for (const char* id : {"unallocated-1", "fragmented-1"}) {
    const auto c = ChartsNamed(dom, id);
    ASSERT_EQ(c.size(), 1u) << id;
    std::vector<std::string> names;
    for (const auto& [n, points] : c[0].series) names.push_back(n);
    EXPECT_EQ(names, (std::vector<std::string>{"bestfit", "fgd"})) << id;
    for (const auto& [policy, n] : rows) EXPECT_EQ(c[0].PointsOf(policy), n) << id << policy;
  }
  // The printed line's unallocated share at 100% is the point's.
  ASSERT_FALSE(fgd_at_100.empty());
  const double unalloc = 100 - std::stod(fgd_at_100);
  const std::string printed = fmt::format("{:.2f}", unalloc);
  EXPECT_NE(run.out.find(printed), std::string::npos) << run.out;
  EXPECT_NE(dom_text.find(fmt::format("fgd at 100% arrived: {:.1f}%", unalloc)), std::string::npos)
      << printed;

  const fs::path png = tmp_ / "sharing.png";
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

// The names of a chart's series, in order.
std::vector<std::string> SeriesNames(const ScannedChart& c) {
  std::vector<std::string> out;
  for (const auto& [name, points] : c.series) out.push_back(name);
  return out;
}

// The queue views in the browser: a compare with --alone on the reclaim
// example (docs/queues.md) draws each run's GPUs per queue against the
// nominal quotas and the finish-time fairness CDF; a sweep of --quota
// draws against the quota, with a chart per queue figure.
TEST_F(BrowserTest, QueueViewsInChromium) {
  const fs::path out = tmp_ / "cmp";
  const fs::path page = tmp_ / "r.html";
  ASSERT_EQ(Dlsched(fmt::format("compare -c examples/cluster-reclaim.yaml -w "
                                "examples/workload-reclaim.yaml -p queue-reclaim,fifo --alone -q "
                                "-o {} --report {}",
                                out.string(), page.string()))
                .code,
            0);
  std::string dom_text = Dom(page);
  auto dom = ScanCharts(dom_text);
  const auto usage = ChartsNamed(dom, "queue-usage");
  ASSERT_EQ(usage.size(), 2u);  // one per run
  EXPECT_EQ(SeriesNames(usage[0]), (std::vector<std::string>{"research", "prod"}));
  EXPECT_NE(dom_text.find("data-nominal=\"4\""), std::string::npos);
  const auto ftf = ChartsNamed(dom, "ftf-cdf");
  ASSERT_EQ(ftf.size(), 1u);
  EXPECT_EQ(ftf[0].PointsOf("queue-reclaim"), 3);  // sweep, eval, train
  const fs::path sweep = tmp_ / "sweep";
  const fs::path sweep_page = tmp_ / "s.html";
  ASSERT_EQ(Dlsched(fmt::format("sweep -c examples/cluster-queues.yaml -w "
                                "examples/workload-queues.yaml -p fifo --quota team-a=2,4,8 -q "
                                "-o {} --report {}",
                                sweep.string(), sweep_page.string()))
                .code,
            0);
  dom_text = Dom(sweep_page);
  dom = ScanCharts(dom_text);
  ASSERT_EQ(ChartsNamed(dom, "jct-vs-load").size(), 1u);
  EXPECT_EQ(ChartsNamed(dom, "jct-vs-load")[0].PointsOf("fifo"), 3);
  const auto per_queue = ChartsNamed(dom, "sweep-queues-jct_mean");
  ASSERT_EQ(per_queue.size(), 1u);
  EXPECT_EQ(SeriesNames(per_queue[0]), (std::vector<std::string>{"team-a", "team-b"}));
  EXPECT_NE(dom_text.find("team-a's nominal nvidia.com/gpu quota"), std::string::npos);
}

// A job that completes, then two that deadlock under per-pod scheduling
// (examples/workload-deadlock.yaml's, later): k8s-default completes 1 of
// 3 jobs, gang-binpack all 3.
constexpr std::string_view kStuckWorkload = R"yaml(jobs:
  - name: first
    arrival: 0
    worker: {replicas: 2, resources: {cpu: "1", memory: 2Gi, nvidia.com/gpu: 1}}
    totalSteps: 500
    throughput: {model: resnet50}
  - name: job-a
    arrival: 600
    worker: {replicas: 4, resources: {cpu: "1", memory: 2Gi, nvidia.com/gpu: 1}}
    totalSteps: 2000
    throughput: {model: resnet50}
  - name: job-b
    arrival: 600
    worker: {replicas: 4, resources: {cpu: "1", memory: 2Gi, nvidia.com/gpu: 1}}
    totalSteps: 2000
    throughput: {model: resnet50}
)yaml";

// The text of the element with `attr`="`value`" (its first), tags dropped.
std::string TextOf(const std::string& dom, const std::string& attr, const std::string& value) {
  const size_t at = dom.find(fmt::format("{}=\"{}\"", attr, value));
  if (at == std::string::npos) return "<none>";
  const size_t open = dom.rfind('<', at);
  std::string tag = dom.substr(open + 1, dom.find_first_of(" >", open) - open - 1);
  const size_t end = dom.find("</" + tag + ">", at);
  std::string text;
  bool in_tag = false;
  for (size_t i = dom.find('>', at) + 1; i < end; ++i) {
    if (dom[i] == '<') in_tag = true;
    if (!in_tag) text += dom[i];
    if (dom[i] == '>') in_tag = false;
  }
  return text;
}

// A compare in which one profile leaves jobs stuck: that run is marked
// wherever it is drawn, its values read "≥", and its CDF stops short of
// 100% and says by how much.
TEST_F(BrowserTest, StuckProfileIsMarkedAndItsCdfCensored) {
  WriteFile(tmp_ / "w.yaml", kStuckWorkload);
  const fs::path out = tmp_ / "cmp";
  const fs::path page = tmp_ / "r.html";
  const Ran run = Dlsched(fmt::format(
      "compare -c examples/cluster-2x3gpu.yaml -w {} -p k8s-default,gang-binpack -q -o {} "
      "--report {}",
      (tmp_ / "w.yaml").string(), out.string(), page.string()));
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string dom_text = Dom(page);
  const auto dom = ScanCharts(dom_text);
  ExpectRunCharts(dom, out / "k8s-default", "k8s-default", dom_text);
  ExpectRunCharts(dom, out / "gang-binpack", "gang-binpack", dom_text);

  // The table: the row marked, its JCT a lower bound; the complete row not.
  const std::string table = dom_text.substr(dom_text.find("data-chart=\"compare-table\""));
  EXPECT_NE(table.find("<tr data-series=\"k8s-default\" data-incomplete=\"\">"), std::string::npos);
  EXPECT_NE(table.find("<tr data-series=\"gang-binpack\">"), std::string::npos);
  const auto rows = Rows(out / "compare.csv");
  EXPECT_NE(table.find(fmt::format("title=\"{0}\">≥ ", rows[1][Column(rows, "jct_mean")])),
            std::string::npos);

  // The JCT CDF over all 3 jobs: k8s-default's stops at 1/3, perforated,
  // with the gap drawn and said.
  const ScannedChart jct = ChartsNamed(dom, "jct-cdf").at(0);
  const auto stuck = jct.AttrsOf("k8s-default");
  EXPECT_EQ(stuck.at("data-incomplete"), "2 of 3 jobs not completed (2 stuck)");
  EXPECT_EQ(stuck.at("data-total"), "3");
  EXPECT_EQ(stuck.at("data-censored"), "2");
  EXPECT_EQ(stuck.at("data-reaches"), "0.333333");
  EXPECT_EQ(stuck.at("class"), "inc");
  EXPECT_EQ(jct.PointsOf("k8s-default"), 1);
  EXPECT_EQ(jct.classes.at("censor"), 1);  // one gap, k8s-default's
  EXPECT_EQ(jct.classes.at("perf"), 1);    // one perforated line
  const auto done = jct.AttrsOf("gang-binpack");
  EXPECT_FALSE(done.contains("data-incomplete"));
  EXPECT_EQ(done.at("data-reaches"), "1");
  EXPECT_EQ(TextOf(dom_text, "data-censor", "k8s-default"),
            "k8s-default: the curve stops at 33.3%, short of 100% by 66.7%: 2 of 3 jobs had not "
            "completed when the run ended at 10 min.");
  EXPECT_EQ(TextOf(dom_text, "data-legend", "censored"),
            "k8s-default (incomplete) (1 of 3 jobs; stops at 33.3%)");
  EXPECT_NE(TextOf(dom_text, "data-warn", "different-jobs")
                .find("The profiles completed different sets of jobs (k8s-default 1 of 3, "
                      "gang-binpack 3 of 3)"),
            std::string::npos);
  // Every chart of runs: the stuck run's series marked, a legend entry
  // saying what that is.
  for (const char* id : {"gpu-util", "queue-length", "pending-gpus", "jct-cdf", "queueing-cdf",
                         "slowdown-cdf", "jct-by-size", "vs-baseline"}) {
    const auto c = ChartsNamed(dom, id);
    ASSERT_EQ(c.size(), 1u) << id;
    EXPECT_TRUE(c[0].AttrsOf("k8s-default").contains("data-incomplete")) << id;
    EXPECT_FALSE(c[0].AttrsOf("gang-binpack").contains("data-incomplete")) << id;
  }
  EXPECT_GE(ChartsNamed(dom, "jct-by-size").at(0).classes.at("hatch"), 1);
  EXPECT_NE(dom_text.find("data-legend=\"incomplete\""), std::string::npos);
  EXPECT_NE(dom_text.find("<li data-incomplete=\"2 of 3 jobs not completed (2 stuck)\">"),
            std::string::npos);
  // The baseline is the complete run, not the first.
  EXPECT_NE(dom_text.find("each figure divided by gang-binpack's"), std::string::npos);

  const fs::path png = tmp_ / "r.png";
  const Ran shot =
      Chromium(fmt::format("--screenshot='{}' --window-size=1400,4000", png.string()), page);
  EXPECT_EQ(shot.code, 0) << shot.err;
  ExpectScreenshot(png);
  if (const char* keep = std::getenv("DLSCHED_KEEP_SCREENSHOTS")) {
    fs::copy_file(png, fs::path(keep) / "compare-stuck.png", fs::copy_options::overwrite_existing);
  }
}

// The log axis: automatic by the span of the values, set by --log-axis,
// and switched by the reader on the page (a checkbox, no script).
TEST_F(BrowserTest, LogAxisSwitchesOnThePage) {
  const fs::path out = tmp_ / "cmp";
  const Ran run = Dlsched(fmt::format(
      "compare -c examples/cluster-kod2-elastic.yaml -w examples/workload-kod2-elastic.yaml "
      "-p gang-binpack,kod2 -q -o {}",
      out.string()));
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string script = R"js(
    const show = s => w.getComputedStyle(d.querySelector(s)).display;
    const a = 'svg[data-chart="jct-cdf"]', b = 'svg[data-chart-alt="jct-cdf"]';
    out.push(d.querySelector(a).getAttribute('class') + ' ' + show(a) + ' ' + show(b));
    d.querySelector(a).closest('figure').querySelector('label.logbtn').click();
    out.push(show(a) + ' ' + show(b));
    d.querySelector(a).closest('figure').querySelector('label.logbtn').click();
    out.push(show(a) + ' ' + show(b));
  )js";
  // JCTs of 100 s and 550 s (less than two decades): linear first.
  for (const auto& [flag, first] : std::vector<std::pair<std::string, std::string>>{
           {"", "v-lin"}, {"--log-axis on", "v-log"}, {"--log-axis off", "v-lin"}}) {
    const fs::path page = tmp_ / "r.html";
    ASSERT_EQ(Dlsched(fmt::format("report {} {} -o {}", out.string(), flag, page.string())).code,
              0);
    EXPECT_EQ(InFrame(page, script),
              (std::vector<std::string>{first + " block none", "none block", "block none"}))
        << flag;
  }
}

// Each chart's CSV link holds the data it draws, as the browser reads it
// (the link's data: URI fetched: what a click downloads): the JCT CDF's
// rows are each profile's completed jobs, by JCT, and the share of all jobs.
TEST_F(BrowserTest, CsvLinksHoldTheChartsData) {
  WriteFile(tmp_ / "w.yaml", kStuckWorkload);
  const fs::path out = tmp_ / "cmp";
  const fs::path page = tmp_ / "r.html";
  ASSERT_EQ(Dlsched(fmt::format("compare -c examples/cluster-2x3gpu.yaml -w {} "
                                "-p k8s-default,gang-binpack -q -o {} --report {}",
                                (tmp_ / "w.yaml").string(), out.string(), page.string()))
                .code,
            0);
  const auto lines = InFrame(page, R"js(
    const links = d.querySelectorAll('figure a[download][href^="data:text/csv"]');
    out.push(String(links.length), String(d.querySelectorAll('figure').length));
    const a = d.querySelector('a[data-csv="jct-cdf.csv"]');
    out.push(a.getAttribute('download'));
    const text = await (await fetch(a.href)).text();
    out.push(...text.split('\n'));
  )js");
  ASSERT_GE(lines.size(), 3u);
  // Every figure has its link.
  EXPECT_EQ(lines[0], lines[1]);
  EXPECT_EQ(lines[2], "jct-cdf.csv");
  std::string csv;
  for (size_t i = 3; i < lines.size(); ++i) csv += lines[i] + "\n";
  // Expected: from each run's jobs.csv, computed here.
  std::string expected = "profile,jct,share,jobs,not_reached\n";
  for (const char* p : {"k8s-default", "gang-binpack"}) {
    const auto jobs = Rows(out / p / "jobs.csv");
    std::vector<double> jcts;
    for (size_t i = 1; i < jobs.size(); ++i) {
      const std::string& j = jobs[i].at(Column(jobs, "jct"));
      if (!j.empty()) jcts.push_back(std::stod(j));
    }
    std::sort(jcts.begin(), jcts.end());
    const size_t total = jobs.size() - 1;
    for (size_t i = 0; i < jcts.size(); ++i) {
      expected += fmt::format("{},{},{},{},{}\n", p, jcts[i],
                              std::round(1e6 * static_cast<double>(i + 1) / total) / 1e6, total,
                              total - jcts.size());
    }
  }
  EXPECT_EQ(csv, expected);
}

// A sweep with stuck cells (k8s-default deadlocks at every load) and an
// interrupted one: their points are marked, and say "≥".
TEST_F(BrowserTest, SweepWithPartialAndStuckCellsIsMarked) {
  const fs::path out = tmp_ / "s";
  const Ran run = Dlsched(
      fmt::format("sweep -c examples/cluster-2x3gpu.yaml -w examples/workload-deadlock.yaml "
                  "-p k8s-default,gang-binpack --load 0.5,1,2 -q -o {}",
                  out.string()));
  ASSERT_EQ(run.code, 0) << run.err;
  // Cell 4 (gang-binpack at load 1) as an interrupted sweep leaves it.
  std::string csv = ReadFile(out / "sweep.csv");
  const size_t at = csv.find("\n4,6,gang-binpack,1,,all done,");
  ASSERT_NE(at, std::string::npos) << csv;
  csv.replace(at + std::string_view("\n4,6,gang-binpack,1,,").size(), 8, "partial: all done");
  WriteFile(out / "sweep.csv", csv);
  const fs::path page = tmp_ / "s.html";
  ASSERT_EQ(Dlsched(fmt::format("report {} -o {}", out.string(), page.string())).code, 0);
  const std::string dom_text = Dom(page);
  const auto dom = ScanCharts(dom_text);
  const ScannedChart sweep = ChartsNamed(dom, "jct-vs-load").at(0);
  EXPECT_EQ(sweep.series,
            (std::vector<std::pair<std::string, int>>{{"k8s-default", 3}, {"gang-binpack", 3}}));
  EXPECT_EQ(sweep.IncompletePointsOf("k8s-default"), 3);
  EXPECT_EQ(sweep.IncompletePointsOf("gang-binpack"), 1);
  // A triangle per incomplete point and figure (mean, p95), none else.
  EXPECT_EQ(sweep.classes.at("tri"), 8);
  EXPECT_EQ(sweep.classes.at("dot"), 4);
  EXPECT_NE(dom_text.find("k8s-default at load 1: jct_mean ≥ 0 s, jct_p95 ≥ 0 s (1 run; 1 "
                          "incomplete: 2 stuck (deadlocked))"),
            std::string::npos);
  EXPECT_NE(dom_text.find("gang-binpack at load 1: jct_mean ≥ "), std::string::npos);
  EXPECT_NE(dom_text.find("(1 run; 1 incomplete: partial: all done)"), std::string::npos);
  EXPECT_NE(TextOf(dom_text, "data-legend", "incomplete").find("lower bounds (≥)"),
            std::string::npos);
  // Every figure of compare.csv has its chart, marked the same.
  for (const char* id : {"sweep-completed", "sweep-stuck", "sweep-makespan", "sweep-gpu_effective",
                         "sweep-preemptions"}) {
    const auto c = ChartsNamed(dom, id);
    ASSERT_EQ(c.size(), 1u) << id;
    EXPECT_EQ(c[0].IncompletePointsOf("k8s-default"), 3) << id;
  }
  EXPECT_TRUE(ChartsNamed(dom, "sweep-total").empty());

  const fs::path png = tmp_ / "s.png";
  const Ran shot =
      Chromium(fmt::format("--screenshot='{}' --window-size=1400,4000", png.string()), page);
  EXPECT_EQ(shot.code, 0) << shot.err;
  ExpectScreenshot(png);
  if (const char* keep = std::getenv("DLSCHED_KEEP_SCREENSHOTS")) {
    fs::copy_file(png, fs::path(keep) / "sweep.png", fs::copy_options::overwrite_existing);
  }
}

// `dlsched report A B`: separate runs as one comparison, on one time axis;
// runs of the same name told apart by their directory.
TEST_F(BrowserTest, ReportOfTwoDirectoriesOverlaysThem) {
  const fs::path a = tmp_ / "a";
  const fs::path b = tmp_ / "b";
  for (const auto& [dir, workload] : {std::pair{a, "examples/workload-kod2-elastic.yaml"},
                                      std::pair{b, "examples/workload-kod2-seed.yaml"}}) {
    const Ran r =
        Dlsched(fmt::format("simulate -c examples/cluster-kod2-elastic.yaml -w {} "
                            "-p kod2 -q -o {}",
                            workload, dir.string()));
    ASSERT_LE(r.code, 1) << r.err;
  }
  const fs::path page = tmp_ / "ab.html";
  const Ran r = Dlsched(fmt::format("report {} {} -o {}", a.string(), b.string(), page.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string dom_text = Dom(page);
  const auto dom = ScanCharts(dom_text);
  const std::string na = "kod2 (" + a.string() + ")";
  const std::string nb = "kod2 (" + b.string() + ")";
  for (const char* id : {"compare-table", "gpu-util", "jct-cdf", "queue-length", "vs-baseline"}) {
    const auto c = ChartsNamed(dom, id);
    ASSERT_EQ(c.size(), 1u) << id;
    ASSERT_EQ(c[0].series.size(), 2u) << id;
    EXPECT_EQ(c[0].series[0].first, na) << id;
    EXPECT_EQ(c[0].series[1].first, nb) << id;
  }
  ExpectRunCharts(dom, a, na, dom_text);
  ExpectRunCharts(dom, b, nb, dom_text);
  EXPECT_EQ(dom_text.find("id=\"dir-2\""), std::string::npos);
  EXPECT_NE(dom_text.find("A comparison of 2 runs from 2 directories, on one time axis."),
            std::string::npos);
}

}  // namespace
}  // namespace dlsched::cli
