#pragma once

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/files.h"
#include "dlsched/metrics/records.h"

namespace dlsched::report::testing {

// Reading and writing files, from the shared test library (testing/core).
using dlsched::testing::ReadFile;
using dlsched::testing::WriteFile;

// A fresh directory per test (not created), removed afterwards.
class TempDir : public dlsched::testing::TempDir {
 public:
  TempDir() : dlsched::testing::TempDir("dlsched-report", /*create=*/false) {}
};

// A small run used by the report tests, on a cluster of 8 cpu (8000m) and
// 4 GPUs:
//   resnet-a: submit 0, start 12.5, completed at 100 (JCT 100), 4 workers,
//             4 GPUs, ideal runtime 50 -> slowdown 2; relaunched once on
//             its 4 GPUs (2.5 s): 10 GPU-seconds lost; JCT alone on its
//             queue's quota 80 -> finish-time fairness 1.25
//   vgg,b:    submit 30, asks 2 GPUs, never started, stuck waiting with a
//             reason that has a comma and quotes
// GPU use: 2 allocated and effective from 0, 4 allocated / 0 effective from
// 50; run ends at 100.
inline metrics::RunInput SampleRun() {
  metrics::RunInput in;
  in.profile = "kod2";
  in.capacity[core::kCpu] = 8000;
  in.capacity[core::kGpu] = 4;
  in.end_time = 100;
  in.deadlocked = true;
  in.cycles = 7;

  metrics::JobRecord a;
  a.name = "resnet-a";
  a.namespace_name = "team-1";
  a.submit = 0;
  a.first_start = 12.5;
  a.completion = 100;
  a.final_phase = core::JobPhase::kCompleted;
  a.admission_seq = 0;
  a.queueing = 12.5;
  a.launching = 2.5;
  a.running = 85;
  a.reallocations = 1;
  a.preemptions = 0;
  a.scale_events = 2;
  a.final_workers = 4;
  a.gpus = 4;
  a.max_nodes = 2;
  a.max_switches = 1;
  a.lost_gpu_seconds = 10;
  a.ideal_runtime = 50;
  a.alone_jct = 80;

  metrics::JobRecord b;
  b.name = "vgg,b";
  b.namespace_name = "team-2";
  b.submit = 30;
  b.final_phase = core::JobPhase::kWaiting;
  b.queueing = 70;
  b.queue = "research";
  b.gpus = 2;
  b.stuck = true;
  b.reason = "waiting: needs \"4 gpu\" on one node, largest free is 2";
  in.jobs = {a, b};

  metrics::UtilizationSample s0;
  s0.time = 0;
  s0.allocated[core::kGpu] = 2;
  s0.effective[core::kGpu] = 2;
  s0.allocated[core::kCpu] = 1000;
  s0.effective[core::kCpu] = 1000;
  metrics::UtilizationSample s1;
  s1.time = 50;
  s1.allocated[core::kGpu] = 4;
  s1.allocated[core::kCpu] = 3000;
  s1.effective[core::kCpu] = 1000;
  in.utilization = {s0, s1};

  in.nodes = {"node-0", "node-1"};
  in.events = {
      {0, 0, "submitted", -1, -1, ""},
      {12.5, 0, "started", 4, -1, "started with 4 workers on node-0 (2) node-1 (2)"},
      {30, 1, "submitted", -1, -1, ""},
      {30, 1, "waiting", -1, -1, b.reason},
      {50, 0, "resized", 2, 1, "4 -> 2: scaled in for vgg,b"},
      {100, 0, "completed", 0, -1, ""},
  };
  in.allocations = {
      {0, 0, 12.5, 50, 2, 2},
      {1, 0, 12.5, 100, 2, 2},
      {1, 1, 50, core::kNever, 1, 0},
  };
  return in;
}

// ---- reading the HTML report back -------------------------------------------

// A chart of the report (an element with data-chart) as its markup or a
// browser's DOM holds it.
struct ScannedChart {
  std::string id;
  std::map<std::string, std::string> attrs;  // of the chart element
  // Its data-series elements in order: name and data-point elements inside.
  std::vector<std::pair<std::string, int>> series;
  // Per series, in the same order: its attributes, and how many of its
  // data-point elements carry data-incomplete.
  std::vector<std::map<std::string, std::string>> series_attrs;
  std::vector<int> incomplete_points;
  int points = 0;                      // data-point elements anywhere in the chart
  std::map<std::string, int> classes;  // class names of the elements in it, counted

  // The attributes of series `name` (empty when there is none).
  std::map<std::string, std::string> AttrsOf(std::string_view name) const {
    for (size_t i = 0; i < series.size(); ++i) {
      if (series[i].first == name) return series_attrs[i];
    }
    return {};
  }
  int IncompletePointsOf(std::string_view name) const {
    for (size_t i = 0; i < series.size(); ++i) {
      if (series[i].first == name) return incomplete_points[i];
    }
    return -1;
  }

  int PointsOf(std::string_view name) const {
    for (const auto& [n, p] : series) {
      if (n == name) return p;
    }
    return -1;
  }
};

// A tag scanner, enough for the report's markup and for Chromium's
// serialisation of its DOM: comments, raw text of <style> and <script>,
// void and self-closed elements, quoted attributes with character
// references (&amp; &lt; &gt; &quot; &#39;).
inline std::vector<ScannedChart> ScanCharts(std::string_view html) {
  auto unescape = [](std::string_view v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      bool replaced = false;
      for (auto [ref, ch] :
           {std::pair{"&amp;", '&'}, std::pair{"&lt;", '<'}, std::pair{"&gt;", '>'},
            std::pair{"&quot;", '"'}, std::pair{"&#39;", '\''}, std::pair{"&#x27;", '\''}}) {
        if (v.substr(i).starts_with(ref)) {
          out += ch;
          i += std::string_view(ref).size() - 1;
          replaced = true;
          break;
        }
      }
      if (!replaced) out += v[i];
    }
    return out;
  };
  struct Open {
    std::string name;
    int chart = -1;   // index into charts when this element is one
    int series = -1;  // index into its chart's series when it is one
  };
  std::vector<ScannedChart> charts;
  std::vector<Open> stack;
  auto innermost = [&](auto member) {
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      if ((*it).*member >= 0) return (*it).*member;
    }
    return -1;
  };
  const std::string_view kVoid[] = {"area",  "base", "br",   "col",    "embed", "hr", "img",
                                    "input", "link", "meta", "source", "track", "wbr"};
  size_t i = 0;
  while ((i = html.find('<', i)) != std::string_view::npos) {
    if (html.substr(i).starts_with("<!--")) {
      const size_t end = html.find("-->", i);
      i = end == std::string_view::npos ? html.size() : end + 3;
      continue;
    }
    if (html.substr(i).starts_with("<!")) {
      i = html.find('>', i);
      continue;
    }
    if (html.substr(i).starts_with("</")) {
      const size_t end = html.find('>', i);
      std::string name(html.substr(i + 2, end - i - 2));
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      while (!stack.empty()) {
        const bool match = stack.back().name == name;
        stack.pop_back();
        if (match) break;
      }
      i = end + 1;
      continue;
    }
    size_t k = i + 1;
    std::string name;
    while (k < html.size() && !std::isspace(static_cast<unsigned char>(html[k])) &&
           html[k] != '>' && html[k] != '/') {
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(html[k++])));
    }
    std::map<std::string, std::string> attrs;
    bool self_closed = false;
    while (k < html.size() && html[k] != '>') {
      if (std::isspace(static_cast<unsigned char>(html[k]))) {
        ++k;
        continue;
      }
      if (html[k] == '/') {
        self_closed = true;
        ++k;
        continue;
      }
      std::string attr;
      while (k < html.size() && !std::isspace(static_cast<unsigned char>(html[k])) &&
             html[k] != '=' && html[k] != '>' && html[k] != '/') {
        attr += html[k++];
      }
      std::string value;
      if (k < html.size() && html[k] == '=') {
        ++k;
        if (html[k] == '"' || html[k] == '\'') {
          const char q = html[k];
          const size_t end = html.find(q, k + 1);
          value = unescape(html.substr(k + 1, end - k - 1));
          k = end + 1;
        } else {
          const size_t start = k;
          while (k < html.size() && !std::isspace(static_cast<unsigned char>(html[k])) &&
                 html[k] != '>') {
            ++k;
          }
          value = unescape(html.substr(start, k - start));
        }
      }
      self_closed = false;
      attrs[attr] = value;
    }
    i = k + 1;
    Open open{name};
    if (attrs.contains("data-chart")) {
      open.chart = static_cast<int>(charts.size());
      charts.push_back({attrs["data-chart"], attrs, {}, {}, {}, 0, {}});
    }
    if (const int chart = open.chart >= 0 ? open.chart : innermost(&Open::chart); chart >= 0) {
      if (attrs.contains("data-series")) {
        open.series = static_cast<int>(charts[chart].series.size());
        charts[chart].series.emplace_back(attrs["data-series"], 0);
        charts[chart].series_attrs.push_back(attrs);
        charts[chart].incomplete_points.push_back(0);
      }
      if (attrs.contains("data-point")) {
        ++charts[chart].points;
        // A series' own element may be its point too (a table row is not).
        const int series = open.series >= 0 ? open.series : innermost(&Open::series);
        if (series >= 0) {
          ++charts[chart].series[series].second;
          if (attrs.contains("data-incomplete")) ++charts[chart].incomplete_points[series];
        }
      }
      if (auto cls = attrs.find("class"); cls != attrs.end()) {
        std::istringstream words(cls->second);
        for (std::string w; words >> w;) ++charts[chart].classes[w];
      }
    }
    if (name == "style" || name == "script") {
      i = html.find("</" + name, i);
      if (i == std::string_view::npos) break;
      continue;
    }
    const bool is_void = std::find(std::begin(kVoid), std::end(kVoid), name) != std::end(kVoid);
    if (!self_closed && !is_void) stack.push_back(std::move(open));
  }
  return charts;
}

// The charts with data-chart `id`, in page order.
inline std::vector<ScannedChart> ChartsNamed(const std::vector<ScannedChart>& all,
                                             std::string_view id) {
  std::vector<ScannedChart> out;
  for (const auto& c : all) {
    if (c.id == id) out.push_back(c);
  }
  return out;
}

// ---- a hand-made run directory ----------------------------------------------

// A run of profile `profile` as simulate writes it, in the formats of
// docs/formats.md, on nodes node-0, node-1 and node-10, ending at 400 s:
//   job-1: submit 0, start 30, completed 300; 4 workers, resized to 2 at 95
//          (by job-7), relaunched (events: 7 with a worker count)
//   <script>alert(1)</script>: submit 10, start 40, completed 200; 2 workers
//          throughout (not elastic); its reason has a comma and quotes
//   job-3: submit 20, never started, stuck
// jobs.csv: job-1 asks 4 GPUs (ideal runtime 150 s), the second 2 (95 s),
// job-3 3 (ideal runtime unknown).
// utilization.csv has 4 rows; allocations.csv has 3 rows on node-0, 1 on
// node-1 and 1 (still held at the end) on node-10.
inline void WriteFixtureRun(const std::filesystem::path& dir, std::string_view profile) {
  WriteFile(dir / "summary.json",
            "{\n  \"profile\": \"" + std::string(profile) +
                "\",\n  \"counts\": {\"total\": 3, \"completed\": 2, \"failed\": 0, "
                "\"stuck\": 1, \"unfinished\": 0},\n  \"deadlocked\": true,\n  \"partial\": "
                "false,\n  \"cycles\": 9,\n  \"end_time\": 400.0,\n  \"jct\": {\"mean\": 245.0, "
                "\"p50\": 245.0, \"p95\": 294.5, \"p99\": 298.9},\n  \"makespan\": 300.0,\n  "
                "\"utilization\": {\"window_start\": 0.0, \"window_end\": 400.0, \"resources\": "
                "{\"cpu\": {\"capacity\": 16000, \"allocated\": 0.4, \"effective\": 0.3}, "
                "\"nvidia.com/gpu\": {\"capacity\": 8, \"allocated\": 0.5, \"effective\": "
                "0.25}}},\n  \"slowdown\": {\"jobs\": 2, \"mean\": 0.5, \"variance\": 0.0, "
                "\"jain_index\": 1.0},\n  \"events\": {\"preemptions\": 1, \"scale_events\": 2, "
                "\"reallocations\": 1},\n  \"jobs\": [\n    {\"name\": \"job-1\"}\n  ]\n}\n");
  WriteFile(dir / "jobs.csv",
            "name,namespace,submit,first_start,completion,jct,queueing,launching,running,"
            "final_state,admission_seq,reallocations,preemptions,scale_events,final_workers,gpus,"
            "ideal_runtime,stuck,reason\n"
            "job-1,default,0,30,300,300,30,20,250,Completed,0,1,1,2,2,4,150,false,started with 4 "
            "workers\n"
            "<script>alert(1)</script>,default,10,40,200,190,30,10,150,Completed,1,0,0,0,2,2,95,"
            "false,\"a, \"\"quoted\"\" reason\"\n"
            "job-3,default,20,,,,380,0,0,Waiting,-1,0,0,0,1,3,0,true,waiting: never fits\n");
  WriteFile(dir / "utilization.csv",
            "time,cpu_allocated,cpu_effective,memory_allocated,memory_effective,"
            "nvidia.com/gpu_allocated,nvidia.com/gpu_effective\n"
            "0,0.5,0,0.5,0,0.5,0\n"
            "30,0.75,0.5,0.75,0.5,1,0.5\n"
            "300,0,0,0,0,0,0\n"
            "400,0,0,0,0,0,0\n");
  WriteFile(dir / "events.csv",
            "time,job,event,workers,by,detail\n"
            "0,job-1,submitted,,,\n"
            "0,job-1,waiting,,,waiting: 0/3 nodes fit Worker: 3 insufficient nvidia.com/gpu\n"
            "10,<script>alert(1)</script>,submitted,,,\n"
            "20,job-3,submitted,,,\n"
            "30,job-1,started,4,,started with 4 workers on node-0 (2) node-1 (2)\n"
            "30,job-1,running,4,,\n"
            "40,<script>alert(1)</script>,started,2,,\"started with 2 workers, on node-0\"\n"
            "95,job-1,resized,2,job-7,\"4 -> 2: scaled in for \"\"job-7\"\"\"\n"
            "100,job-1,checkpointing,2,,\n"
            "110,job-1,relaunching,2,,\n"
            "120,job-1,running,2,,\n"
            "200,<script>alert(1)</script>,completed,0,,\n"
            "300,job-1,completed,0,,\n"
            "400,job-3,stuck,,,waiting: never fits\n");
  WriteFile(dir / "allocations.csv",
            "node,job,start,end,tasks,gpus\n"
            "node-0,job-1,30,95,2,2\n"
            "node-0,job-1,95,300,1,1\n"
            "node-0,<script>alert(1)</script>,40,200,2,2\n"
            "node-1,job-1,30,95,2,2\n"
            "node-10,<script>alert(1)</script>,40,,1,0\n");
}

}  // namespace dlsched::report::testing
