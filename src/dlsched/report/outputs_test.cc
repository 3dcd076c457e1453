#include "dlsched/report/outputs.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "dlsched/report/test_util.h"

namespace dlsched::report {
namespace {

namespace fs = std::filesystem;

using testing::ReadFile;
using testing::TempDir;

// SampleRun (test_util.h): the completed job has every time set; the stuck
// job never started, so first_start, completion and jct are empty cells, and
// its name and reason are quoted (comma; quotes doubled).
TEST(JobsCsvTest, HandWorkedRows) {
  const std::string expected =
      "name,namespace,queue,submit,first_start,completion,jct,queueing,launching,running,"
      "final_state,"
      "admission_seq,reallocations,preemptions,scale_events,final_workers,gpus,max_nodes,"
      "max_switches,lost_gpu_seconds,ideal_runtime,alone_jct,ftf,stuck,reason\n"
      "resnet-a,team-1,,0,12.5,100,100,12.5,2.5,85,Completed,0,1,0,2,4,4,2,1,10,50,80,1.25,false,\n"
      "\"vgg,b\",team-2,research,30,,,,70,0,0,Waiting,-1,0,0,0,0,2,0,0,0,0,,,true,"
      "\"waiting: needs \"\"4 gpu\"\" on one node, largest free is 2\"\n";
  EXPECT_EQ(JobsCsv(testing::SampleRun()), expected);
}

TEST(JobsCsvTest, EmptyRunHasHeaderOnly) {
  const std::string csv = JobsCsv(metrics::RunInput{});
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1);
  EXPECT_TRUE(csv.starts_with("name,namespace,queue,submit,"));
}

// Capacity cpu 8000m, gpu 4 (memory 0 is left out). Samples:
//   t=0:  cpu 1000/1000 -> 0.125/0.125, gpu 2/2 -> 0.5/0.5
//   t=50: cpu 3000/1000 -> 0.375/0.125, gpu 4/0 -> 1/0
// and a closing row at end_time 100 repeating the last sample.
TEST(UtilizationCsvTest, FractionsPerResourceWithClosingRow) {
  const metrics::RunInput in = testing::SampleRun();
  const std::string expected =
      "time,cpu_allocated,cpu_effective,nvidia.com/gpu_allocated,nvidia.com/gpu_effective\n"
      "0,0.125,0.125,0.5,0.5\n"
      "50,0.375,0.125,1,0\n"
      "100,0.375,0.125,1,0\n";
  EXPECT_EQ(UtilizationCsv(metrics::Summarize(in), in), expected);
}

// Window [0, 100]: gpu allocated (2*50 + 4*50) / 100 / 4 = 0.75, effective
// 2*50 / 100 / 4 = 0.25; cpu allocated (1000*50 + 3000*50) / 100 / 8000 =
// 0.25, effective 0.125. One slowdown of JCT 100 / ideal 50 = 2 (the stuck
// job has no ideal runtime), so variance 0 and Jain 1. JCTs {100, and 70
// for the stuck job censored at the end}: p95 70 + 30 x 0.95 = 98.5.
// Finish-time fairness: resnet-a alone 80, 100 / 80 = 1.25 (vgg,b has no
// JCT alone); work lost 10 GPU-seconds = 0.002778 GPU-hours.
TEST(SummaryJsonTest, HandWorkedValuesAndKeyOrder) {
  const metrics::RunInput in = testing::SampleRun();
  const nlohmann::ordered_json j = SummaryJson(metrics::Summarize(in));

  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"profile", "counts", "deadlocked", "partial", "cycles",
                                            "end_time", "window", "jct", "makespan",
                                            "mean_phase_time", "utilization", "slowdown",
                                            "finish_time_fairness", "events", "placement"}));
  EXPECT_EQ(j["profile"], "kod2");
  EXPECT_TRUE(j["window"].is_null());  // the whole run
  EXPECT_EQ(j["counts"]["completed"], 1);
  EXPECT_EQ(j["counts"]["stuck"], 1);
  EXPECT_EQ(j["deadlocked"], true);
  EXPECT_EQ(j["jct"]["p95"], 98.5);
  EXPECT_EQ(j["jct"]["censored"], 1);
  const auto& res = j["utilization"]["resources"];
  EXPECT_EQ(res.begin().key(), "cpu");  // resource id order, not alphabetical
  EXPECT_EQ(res["nvidia.com/gpu"]["capacity"], 4);
  EXPECT_EQ(res["nvidia.com/gpu"]["allocated"], 0.75);
  EXPECT_EQ(res["nvidia.com/gpu"]["effective"], 0.25);
  EXPECT_EQ(res["cpu"]["allocated"], 0.25);
  EXPECT_EQ(res["cpu"]["effective"], 0.125);
  EXPECT_EQ(j["slowdown"]["mean"], 2.0);
  EXPECT_EQ(j["slowdown"]["jain_index"], 1.0);
  EXPECT_EQ(j["events"]["scale_events"], 2);
  EXPECT_EQ(j["events"]["lost_gpu_hours"], 0.002778);
  // resnet-a spanned 2 nodes under 1 switch; vgg,b never started.
  EXPECT_EQ(j["placement"]["jobs_across_nodes"], 1);
  EXPECT_EQ(j["placement"]["jobs_across_switches"], 0);
  EXPECT_EQ(j["finish_time_fairness"]["jobs"], 1);
  EXPECT_EQ(j["finish_time_fairness"]["mean"], 1.25);
  EXPECT_EQ(j["finish_time_fairness"]["max"], 1.25);
  // Per job: jobs.csv (JobsCsvTest), not summary.json.
  EXPECT_FALSE(j.contains("jobs"));
}

// A window is recorded, its figures over the jobs it holds: [20, 90)
// holds vgg,b (submit 30) alone; utilisation over [20, 90]: gpu (2*30 +
// 4*40) / 70 / 4 allocated. An open end is null.
TEST(SummaryJsonTest, RecordsTheWindow) {
  const metrics::RunInput in = testing::SampleRun();
  const nlohmann::ordered_json j = SummaryJson(metrics::Summarize(in, metrics::Window{20, 90}));
  EXPECT_EQ(j["window"]["from"], 20);
  EXPECT_EQ(j["window"]["to"], 90);
  EXPECT_EQ(j["counts"]["total"], 1);
  EXPECT_EQ(j["counts"]["stuck"], 1);
  EXPECT_EQ(j["jct"]["censored"], 1);
  EXPECT_EQ(j["jct"]["mean"], 70);  // censored at the run's end, 100 - 30
  EXPECT_EQ(j["utilization"]["window_start"], 20);
  EXPECT_EQ(j["utilization"]["window_end"], 90);
  EXPECT_EQ(j["utilization"]["resources"]["nvidia.com/gpu"]["allocated"], 0.785714);
  const nlohmann::ordered_json open =
      SummaryJson(metrics::Summarize(in, metrics::Window{20, core::kNever}));
  EXPECT_EQ(open["window"]["from"], 20);
  EXPECT_TRUE(open["window"]["to"].is_null());
  EXPECT_EQ(open["utilization"]["window_end"], 100);
}

// Numbers are rounded to 6 decimals: JCT mean 1/3 s is written 0.333333.
TEST(SummaryJsonTest, RoundsNumbers) {
  metrics::RunInput in;
  metrics::JobRecord job;
  job.name = "third";
  job.submit = 0;
  job.first_start = 0;
  job.completion = 1.0 / 3;
  job.final_phase = core::JobPhase::kCompleted;
  in.jobs = {job};
  const std::string text = SummaryJsonText(metrics::Summarize(in));
  EXPECT_NE(text.find("\"mean\": 0.333333,"), std::string::npos) << text;
  EXPECT_EQ(text.find("0.3333333"), std::string::npos) << text;
}

// The same input summarised twice gives byte-identical text.
TEST(SummaryJsonTest, Deterministic) {
  const metrics::RunInput in1 = testing::SampleRun();
  const metrics::RunInput in2 = testing::SampleRun();
  const std::string a = SummaryJsonText(metrics::Summarize(in1));
  const std::string b = SummaryJsonText(metrics::Summarize(in2));
  EXPECT_EQ(a, b);
  EXPECT_TRUE(a.ends_with("}\n"));
  EXPECT_EQ(JobsCsv(in1), JobsCsv(in2));
}

// Invalid UTF-8 in a name must not throw out of the report.
TEST(SummaryJsonTest, InvalidUtf8IsReplaced) {
  metrics::RunInput in = testing::SampleRun();
  in.profile = "bad \xff byte";
  std::string text;
  EXPECT_NO_THROW(text = SummaryJsonText(metrics::Summarize(in)));
  EXPECT_NE(text.find("bad \xEF\xBF\xBD byte"), std::string::npos);
}

// Callers holding a plain nlohmann::json can take the ordered result.
TEST(SummaryJsonTest, ConvertsToPlainJson) {
  const metrics::RunInput in = testing::SampleRun();
  const nlohmann::json plain = SummaryJson(metrics::Summarize(in));
  EXPECT_EQ(plain["counts"]["total"], 2);
}

// The timeline in order, names CSV-quoted, empty cells where nothing
// applies; an allocation still held at the end has no end.
TEST(EventsCsvTest, TimelineAndAllocations) {
  const metrics::RunInput in = testing::SampleRun();
  EXPECT_EQ(EventsCsv(in),
            "time,job,event,workers,by,detail\n"
            "0,resnet-a,submitted,,,\n"
            "12.5,resnet-a,started,4,,started with 4 workers on node-0 (2) node-1 (2)\n"
            "30,\"vgg,b\",submitted,,,\n"
            "30,\"vgg,b\",waiting,,,\"waiting: needs \"\"4 gpu\"\" on one node, largest free is "
            "2\"\n"
            "50,resnet-a,resized,2,\"vgg,b\",\"4 -> 2: scaled in for vgg,b\"\n"
            "100,resnet-a,completed,0,,\n");
  EXPECT_EQ(AllocationsCsv(in),
            "node,job,start,end,tasks,gpus\n"
            "node-0,resnet-a,12.5,50,2,2\n"
            "node-1,resnet-a,12.5,100,2,2\n"
            "node-1,\"vgg,b\",50,,1,0\n");
}

TEST(WriteOutputsTest, CreatesDirectoryAndWritesFiveFiles) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "nested" / "out";
  const metrics::RunInput in = testing::SampleRun();
  const metrics::RunSummary s = metrics::Summarize(in);

  const core::Status st = WriteOutputs(dir.string(), s, in);
  ASSERT_TRUE(st.has_value()) << st.error().message;

  EXPECT_EQ(ReadFile(dir / "summary.json"), SummaryJsonText(s));
  EXPECT_EQ(ReadFile(dir / "jobs.csv"), JobsCsv(in));
  EXPECT_EQ(ReadFile(dir / "utilization.csv"), UtilizationCsv(s, in));
  EXPECT_EQ(ReadFile(dir / "events.csv"), EventsCsv(in));
  EXPECT_EQ(ReadFile(dir / "allocations.csv"), AllocationsCsv(in));
  const auto parsed = nlohmann::ordered_json::parse(ReadFile(dir / "summary.json"));
  EXPECT_EQ(parsed, SummaryJson(s));

  // Exactly the five files: no temporary left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_FALSE(e.path().filename().string().ends_with(".tmp")) << e.path();
  }
  EXPECT_EQ(files, 5);
}

// Writing again over existing outputs replaces them.
TEST(WriteOutputsTest, OverwritesExistingFiles) {
  TempDir tmp;
  fs::create_directories(tmp.path());
  { std::ofstream(tmp.path() / "jobs.csv") << "old content that is longer than the new one\n"; }
  const metrics::RunInput in;  // empty run
  ASSERT_TRUE(WriteOutputs(tmp.path().string(), metrics::Summarize(in), in).has_value());
  EXPECT_EQ(ReadFile(tmp.path() / "jobs.csv"), JobsCsv(in));
  EXPECT_EQ(ReadFile(tmp.path() / "utilization.csv"), "time\n");
}

// The output directory is an existing regular file: one-line error naming it.
TEST(WriteOutputsTest, ErrorNamesThePath) {
  TempDir tmp;
  fs::create_directories(tmp.path());
  const fs::path file = tmp.path() / "not-a-dir";
  { std::ofstream(file) << "x"; }
  const metrics::RunInput in;
  const core::Status st = WriteOutputs(file.string(), metrics::Summarize(in), in);
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().message, file.string() + ": exists and is not a directory");
  EXPECT_EQ(st.error().message.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace dlsched::report
