// Every file dlsched writes loads back into what it was written from:
// workloads as YAML (generate, convert, snapshot) and as the native CSV
// (convert, generate), clusters as YAML (generate, size, snapshot) and as a
// Tiresias cluster spec (size), and run directories as `report` reads them
// (simulate, compare, sweep cells). Checked over generated workloads of many
// seeds and options, generated clusters, and slices of the carried traces.
#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "core/files.h"
#include "dlsched/config/specs.h"
#include "dlsched/config/trace.h"
#include "dlsched/config/yaml_util.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/spec_limits.h"
#include "dlsched/metrics/summary.h"
#include "dlsched/report/format.h"
#include "dlsched/report/output_dir.h"
#include "dlsched/report/outputs.h"
#include "dlsched/report/run_data.h"
#include "dlsched/sim/generate.h"
#include "dlsched/sim/model_zoo.h"
#include "dlsched/sim/simulator.h"
#include "dlsched/sim/test_util.h"

namespace dlsched::sim {
namespace {

namespace fs = std::filesystem;

// Every field of a job, in a form of its own (not the writers'), doubles
// in their shortest exact text: two jobs are the same when these are.
std::string Dump(const core::JobSpec& j) {
  std::string out = fmt::format(
      "name={} ns={} arrival={} priority={} maxWait={} queue={} steps={} duration={} scaling={} "
      "done={} attained={} launchGpu={} launch={} checkpoint={} deadline={}\n",
      j.name, j.namespace_name, j.submit_time, core::PriorityClassName(j.priority),
      j.max_wait_minutes.value_or(-1), j.queue, j.total_steps, j.duration.value_or(-1),
      j.scaling.ToString(), j.steps_done, j.attained, j.launch_attained, j.launch_delay,
      j.checkpoint_delay, j.deadline.value_or(-1));
  for (const auto& [field, value] : j.policy_state) out += fmt::format("  {}={}\n", field, value);
  for (core::Role role : {core::Role::kPS, core::Role::kChief, core::Role::kWorker}) {
    const core::RoleSpec& r = j.role(role);
    out += fmt::format("  {}: {} [{}, {}] {}", core::RoleKey(role), r.replicas, r.min_replicas,
                       r.max_replicas, core::FormatResources(r.resources));
    for (const auto* list : {&r.containers, &r.init_containers}) {
      for (const core::ContainerSpec& c : *list) {
        out += fmt::format(" <{} {} {}{}>", c.name, core::FormatResources(c.requests),
                           c.sets_cpu ? "cpu" : "", c.sets_memory ? "memory" : "");
      }
      out += " |";
    }
    const core::NodeConstraints& c = r.constraints;
    for (const auto& [k, v] : c.node_selector) out += fmt::format(" sel:{}={}", k, v);
    for (const auto& t : c.required_terms) {
      for (const auto& e : t.match_expressions) {
        out +=
            fmt::format(" req:{}:{}:{}", e.key, core::OperatorName(e.op), fmt::join(e.values, ","));
      }
      out += " ;";
    }
    for (const auto& t : c.tolerations) {
      out += fmt::format(" tol:{}:{}:{}:{}:{}", t.key, static_cast<int>(t.op), t.value,
                         t.any_effect, core::TaintEffectName(t.effect));
    }
    out += '\n';
  }
  const core::ThroughputProfile& tp = j.throughput;
  // The model's name is information only beside a table of the job's own
  // (the YAML holds a model or a table: pollux's "pollux:cifar10" is not
  // kept); a model-zoo model is the job's table.
  const bool zoo = FindModel(tp.model) != nullptr;
  out += fmt::format("  throughput {} locality={} switch={}", zoo ? tp.model : "",
                     tp.locality_sensitivity, tp.switch_sensitivity);
  for (const auto& [n, rate] : tp.steps_per_s) out += fmt::format(" {}:{}", n, rate);
  for (const auto& [shape, rate] : tp.placements) {
    out += fmt::format(" {}:{}", fmt::join(shape, "+"), rate);
  }
  for (const auto& [type, table] : tp.GpuTypes()) {
    out += " " + type + "{";
    for (const auto& [n, rate] : table) out += fmt::format(" {}:{}", n, rate);
    out += " }";
  }
  out += '\n';
  if (j.initial) {
    const core::InitialState& in = *j.initial;
    out += fmt::format("  running {} since={} first={} last={} seq={}", core::PhaseName(in.phase),
                       in.since, in.first_start, in.last_launch, in.admission_seq);
    for (const auto& t : in.tasks)
      out += fmt::format(" {}-{}@{}", core::RoleKey(t.role), t.index, t.node);
    for (const auto& t : in.held)
      out += fmt::format(" held:{}-{}@{}", core::RoleKey(t.role), t.index, t.node);
    out += '\n';
  }
  return out;
}

std::string Dump(const core::ClusterSpec& c) {
  std::string out;
  for (const core::NodeSpec& n : c.nodes) {
    out += fmt::format("{} {} schedulable={}", n.name, core::FormatResources(n.allocatable),
                       n.schedulable);
    for (const auto& [k, v] : n.labels) out += fmt::format(" {}={}", k, v);
    for (const auto& t : n.taints) {
      out += fmt::format(" taint:{}={}:{}", t.key, t.value, core::TaintEffectName(t.effect));
    }
    if (auto it = c.reserved.find(n.name); it != c.reserved.end()) {
      out += " reserved:" + core::FormatResources(it->second);
    }
    out += '\n';
  }
  return out;
}

class RoundTripTest : public ::testing::Test {
 protected:
  // `text` as the file `name` (dlsched loads files, not text).
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    dlsched::testing::WriteFile(p, text);
    return p.string();
  }

  // The workload YAML as `simulate -w` loads it.
  config::WorkloadSpec LoadYaml(const std::string& text) {
    auto w = LoadWorkload(Write("w.yaml", text));
    EXPECT_TRUE(w.has_value()) << w.error().message;
    return w ? *w : config::WorkloadSpec{};
  }

  // The native CSV as `simulate -t native:` loads it.
  config::WorkloadSpec LoadNative(const std::string& text) {
    config::TraceOptions o;
    o.format = config::TraceFormat::kNative;
    o.path = Write("w.csv", text);
    auto t = config::LoadTrace(o);
    EXPECT_TRUE(t.has_value()) << t.error().message;
    if (!t) return {};
    auto st = ResolveWorkload(t->workload);
    EXPECT_TRUE(st.has_value()) << st.error().message;
    return t->workload;
  }

  core::ClusterSpec LoadClusterYaml(const std::string& text) {
    auto c = config::LoadCluster(Write("c.yaml", text));
    EXPECT_TRUE(c.has_value()) << c.error().message;
    return c ? *c : core::ClusterSpec{};
  }

  // The same workload, job by job.
  static void ExpectSame(const config::WorkloadSpec& got, const config::WorkloadSpec& want) {
    EXPECT_EQ(got.start, want.start);
    ASSERT_EQ(got.jobs.size(), want.jobs.size());
    for (size_t i = 0; i < got.jobs.size(); ++i) EXPECT_EQ(Dump(got.jobs[i]), Dump(want.jobs[i]));
  }

  // `w` written by both workload writers and read back: the same jobs.
  void ExpectRoundTrips(const config::WorkloadSpec& w, bool native = true) {
    const std::string yaml = WorkloadToYaml(w);
    // The writers' check of what they write counts as yaml-cpp does.
    EXPECT_EQ(WrittenYamlNodes(yaml), config::internal::CountYamlNodes(yaml, int64_t{1} << 40));
    ExpectSame(LoadYaml(yaml), w);
    if (!native) return;
    auto csv = config::ToNativeCsv(w, FindModel);
    ASSERT_TRUE(csv.has_value()) << csv.error().message;
    ExpectSame(LoadNative(*csv), w);
  }

  dlsched::testing::TempDir scratch_{"dlsched-roundtrip"};
  const fs::path& dir_ = scratch_.path();
};

TEST_F(RoundTripTest, GeneratedWorkloads) {
  std::mt19937_64 rng(23);
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(seed);
    GenerateOptions o;
    o.seed = seed;
    o.jobs = 1 + static_cast<int>(rng() % 40);
    const double means[] = {0, 0.001, 7.5, 60, 3600, 1e6};
    o.mean_interarrival = means[rng() % std::size(means)];
    o.max_workers = 1 + static_cast<int>(rng() % 64);
    o.elastic_fraction = static_cast<double>(rng() % 101) / 100;
    o.min_steps = 1 + static_cast<double>(rng() % 1000);
    o.max_steps = o.min_steps * (1 + static_cast<double>(rng() % 100000));
    auto w = GenerateWorkload(o);
    ASSERT_TRUE(w.has_value()) << w.error().message;
    ASSERT_FALSE(core::CheckJobsLimits(w->jobs, w->start).has_value());
    ExpectRoundTrips(*w);
    if (HasFatalFailure()) return;
  }
}

// Jobs with every field the YAML holds, as a snapshot writes them: running
// and held tasks, progress, levels, containers and constraints, tables
// with placements, delays and deadlines, a start.
TEST_F(RoundTripTest, SnapshotLikeWorkloads) {
  std::mt19937_64 rng(5);
  auto pick = [&](double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
  };
  for (int round = 0; round < 30; ++round) {
    SCOPED_TRACE(round);
    GenerateOptions o;
    o.seed = 1000 + static_cast<uint64_t>(round);
    o.jobs = 12;
    auto w = GenerateWorkload(o);
    ASSERT_TRUE(w.has_value());
    w->start = std::floor(pick(1000, 1e8));
    for (size_t i = 0; i < w->jobs.size(); ++i) {
      core::JobSpec& j = w->jobs[i];
      j.submit_time = std::min(j.submit_time, w->start);
      if (i % 3 == 0) j.namespace_name = "team-" + std::to_string(i);
      if (i % 4 == 1) j.priority = core::PriorityClass::kHigh;
      if (i % 5 == 2) j.max_wait_minutes = pick(0.001, 1e7);
      if (i % 2 == 0) j.queue = "q" + std::to_string(i % 3);
      j.steps_done = std::floor(pick(0, j.total_steps));
      j.attained = pick(0, 1e9);
      // (A level or base of 0 is the same as none: not written.)
      if (const double base = pick(0, j.attained); base != 0) {
        j.policy_state["levelBaseGpuSeconds"] = base;
      }
      if (const auto level = rng() % 5; level != 0) j.policy_state["level"] = level;
      if (i % 2) j.policy_state["levelSince"] = pick(0, w->start);
      if (i % 3) j.policy_state["ranSince"] = pick(0, w->start);
      if (i % 4) j.policy_state["levelPlace"] = pick(-1e6, 1e6);
      j.launch_attained = pick(0, 1e6);
      j.launch_delay = pick(0, 100);
      j.checkpoint_delay = pick(0, 100);
      if (i % 3 == 1) j.deadline = pick(1, 1e9);
      // Across switches: with a model's table or a job's own.
      if (i % 7 == 3) j.throughput.switch_sensitivity = pick(0, 1);
      if (i % 4 == 3) {
        // A table of its own (not the model's, so without its name: the
        // YAML holds a model or a table), with placements and a table
        // per GPU type.
        j.throughput.model.clear();
        j.throughput.locality_sensitivity = pick(0, 1);
        j.throughput.steps_per_s[j.role(core::Role::kWorker).max_replicas + 1] = pick(1e-6, 1e3);
        j.throughput.placements[{2, 1}] = pick(1e-6, 1e12);
        core::GpuTypeRates rates;
        rates["v100"][1] = pick(1e-6, 1e3);
        rates["Tesla-K80"][2] = pick(0, 1e3);
        j.throughput.SetGpuTypes(std::move(rates));
      }
      core::RoleSpec& worker = j.role(core::Role::kWorker);
      if (i % 6 == 5) {
        worker.constraints.node_selector["zone"] = "z1";
        worker.constraints.tolerations.push_back(
            {.key = "gpu", .op = core::Toleration::Op::kEqual, .value = "yes"});
      }
      if (i % 5 == 0) {
        core::InitialState& in = j.initial.emplace();
        in.phase = i % 10 == 0 ? core::JobPhase::kRunning : core::JobPhase::kCheckpointing;
        in.first_start = std::floor(pick(j.submit_time, w->start));
        in.since = std::floor(pick(in.first_start, w->start));
        in.last_launch = pick(0, 60);
        in.admission_seq = static_cast<int64_t>(i);
        for (int p = 0; p < j.role(core::Role::kPS).replicas; ++p) {
          in.tasks.push_back({core::Role::kPS, p, "node-" + std::to_string(p)});
        }
        for (int k = 0; k < worker.min_replicas; ++k) {
          in.tasks.push_back({core::Role::kWorker, k, "node-" + std::to_string(k % 3)});
        }
        if (in.phase == core::JobPhase::kCheckpointing &&
            worker.max_replicas > worker.min_replicas) {
          in.held.push_back({core::Role::kWorker, worker.max_replicas - 1, "node-9"});
        }
      }
    }
    ASSERT_FALSE(core::CheckJobsLimits(w->jobs, w->start).has_value())
        << core::CheckJobsLimits(w->jobs, w->start)->what;
    ExpectRoundTrips(*w, /*native=*/false);
    if (HasFatalFailure()) return;
  }
}

// Slices of the traces carried in data/: imported, then written by both
// writers (native CSV where the format holds the jobs) and read back.
TEST_F(RoundTripTest, TraceSlices) {
  const std::string data = std::string(DLSCHED_SOURCE_DIR) + "/data/";
  struct Slice {
    config::TraceFormat format;
    std::string path;
    int64_t limit;
    double min_factor, max_factor;
    std::string scaling;
    bool native;  // pollux jobs have tables of their own
  };
  std::vector<Slice> slices = {
      {config::TraceFormat::kTiresias, "tiresias/60_job.csv", 0, 1, 1, "linear", true},
      {config::TraceFormat::kTiresias, "tiresias/60_job.csv", 0, 0.5, 2, "amdahl:0.9", true},
      {config::TraceFormat::kTiresias, "tiresias/60_job.csv", 25, 0.25, 4, "sqrt", true},
      {config::TraceFormat::kPhilly, "pollux/philly.csv", 300, 1, 1, "linear", true},
      {config::TraceFormat::kPhilly, "pollux/philly.csv", 100, 0.5, 1.5, "none", true},
  };
  for (int i = 1; i <= 8; ++i) {
    slices.push_back({config::TraceFormat::kPollux,
                      fmt::format("pollux/workloads/workload-{}.csv", i), i % 2 ? 0 : 40, 1, 1,
                      "linear", false});
  }
  for (const Slice& s : slices) {
    SCOPED_TRACE(s.path + " " + s.scaling);
    config::TraceOptions o;
    o.format = s.format;
    o.path = data + s.path;
    o.limit = s.limit;
    o.min_factor = s.min_factor;
    o.max_factor = s.max_factor;
    auto curve = core::ScalingCurve::Parse(s.scaling);
    ASSERT_TRUE(curve.has_value());
    o.scaling = *curve;
    auto t = config::LoadTrace(o);
    ASSERT_TRUE(t.has_value()) << t.error().message;
    ASSERT_TRUE(ResolveWorkload(t->workload).has_value());
    ExpectRoundTrips(t->workload, s.native);
    if (HasFatalFailure()) return;
  }
}

// Generated clusters (generate --cluster-out, size) and clusters as a
// snapshot writes them: one entry per node with `reserved`, labels, taints.
TEST_F(RoundTripTest, Clusters) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE(round);
    ClusterOptions o;
    o.nodes = 1 + static_cast<int>(rng() % 300);
    o.gpus_per_node = static_cast<int>(rng() % 17);
    o.cpus_per_node = 1 + static_cast<int>(rng() % 256);
    o.memory_gi_per_node = 1 + static_cast<int>(rng() % 4096);
    o.nodes_per_rack = 1 + static_cast<int>(rng() % 40);
    o.racks_per_zone = 1 + static_cast<int>(rng() % 5);
    auto yaml = ClusterYaml(o);
    ASSERT_TRUE(yaml.has_value()) << yaml.error().message;
    EXPECT_EQ(WrittenYamlNodes(*yaml), config::internal::CountYamlNodes(*yaml, int64_t{1} << 40));
    core::ClusterSpec c = LoadClusterYaml(*yaml);
    ASSERT_EQ(c.nodes.size(), static_cast<size_t>(o.nodes));
    // As a snapshot has it.
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      core::NodeSpec& n = c.nodes[i];
      if (i % 3 == 0) {
        core::Resources r;
        for (core::ResourceId id : {core::kCpu, core::kMemory, core::kGpu}) {
          r[id] =
              n.allocatable[id] == 0 ? 0 : static_cast<int64_t>(rng() % (n.allocatable[id] + 1));
        }
        if (!r.IsZero()) c.reserved[n.name] = r;
      }
      if (i % 7 == 1) n.taints.push_back({"dedicated", "ml", core::TaintEffect::kNoSchedule});
      if (i % 11 == 2) n.schedulable = false;
    }
    // Teams' queues, every other round: any amounts, limits only in a cohort.
    for (int q = 0; round % 2 == 0 && q < 1 + static_cast<int>(rng() % 4); ++q) {
      core::QueueSpec queue;
      queue.name = "team-" + std::to_string(q);
      if (rng() % 3 != 0) queue.cohort = "c" + std::to_string(rng() % 2);
      queue.weight = 0.1 * static_cast<double>(rng() % 40);
      for (core::ResourceId id : {core::kCpu, core::kMemory, core::kGpu}) {
        if (rng() % 3 == 0) continue;
        core::QuotaLine l;
        l.id = id;
        l.nominal = static_cast<int64_t>(rng() % (int64_t{1} << (id == core::kGpu ? 8 : 40)));
        if (!queue.cohort.empty() && rng() % 2)
          l.borrowing_limit = static_cast<int64_t>(rng() % 5000);
        if (!queue.cohort.empty() && rng() % 2) {
          l.lending_limit = l.nominal == 0 ? 0 : static_cast<int64_t>(rng() % l.nominal);
        }
        queue.quota.push_back(l);
        if (rng() % 3 == 0) queue.capability.emplace_back(id, static_cast<int64_t>(rng() % 100));
        if (rng() % 3 == 0) queue.guarantee[id] = static_cast<int64_t>(rng() % 100);
        if (rng() % 3 == 0) queue.deserved[id] = static_cast<int64_t>(rng() % 100);
      }
      queue.priority = static_cast<int32_t>(rng() % 7) - 3;
      using P = core::PreemptionPolicy;
      if (rng() % 2) queue.preemption.within_queue = static_cast<P>(rng() % 3);
      if (rng() % 2)
        queue.preemption.reclaim_within_cohort =
            std::array{P::kNever, P::kLowerPriority, P::kAny}[rng() % 3];
      if (rng() % 2) queue.preemption.borrow_within_cohort = static_cast<P>(rng() % 2);
      if (rng() % 2)
        queue.preemption.max_priority_threshold = static_cast<core::PriorityClass>(rng() % 3);
      c.queues.push_back(queue);
    }
    // Cohorts: a chain c1 under c0 (queues may name either), quotas of
    // their own and limits towards the parent.
    if (rng() % 2) {
      for (int k = 0; k < 2; ++k) {
        core::CohortSpec cohort;
        cohort.name = "c" + std::to_string(k);
        if (k == 1) cohort.parent = "c0";
        cohort.weight = static_cast<double>(rng() % 5) / 2;
        core::QuotaLine l;
        l.id = core::kGpu;
        l.nominal = static_cast<int64_t>(rng() % 64);
        if (k == 1 && rng() % 2) l.borrowing_limit = static_cast<int64_t>(rng() % 64);
        if (k == 1 && rng() % 2) l.lending_limit = l.nominal / 2;
        cohort.quota.push_back(l);
        c.cohorts.push_back(cohort);
      }
    }
    ASSERT_FALSE(core::CheckClusterLimits(c).has_value());
    const std::string again = ClusterToYaml(c);
    EXPECT_EQ(WrittenYamlNodes(again), config::internal::CountYamlNodes(again, int64_t{1} << 40));
    EXPECT_EQ(Dump(LoadClusterYaml(again)), Dump(c)) << again.substr(0, 2000);
    EXPECT_TRUE(LoadClusterYaml(again).queues == c.queues) << again.substr(again.find("queues:"));
    EXPECT_TRUE(LoadClusterYaml(again).cohorts == c.cohorts) << again;

    // As `size --to tiresias` writes it.
    const config::TiresiasShape shape{1 + static_cast<int64_t>(rng() % 4),
                                      1 + static_cast<int64_t>(rng() % 64), o.gpus_per_node,
                                      o.cpus_per_node, o.memory_gi_per_node};
    auto built = config::TiresiasCluster(shape);
    ASSERT_TRUE(built.has_value()) << built.error().message;
    auto loaded = config::LoadTiresiasCluster(Write("t.csv", config::TiresiasClusterCsv(shape)));
    ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
    EXPECT_EQ(Dump(*loaded), Dump(*built));
    if (HasFatalFailure()) return;
  }
}

// A run's files (simulate's directory, each profile's under compare, a
// sweep cell's with --keep-runs) as `report` reads them: every job, the
// counts and the utilisation samples, to the precision written.
TEST_F(RoundTripTest, RunDirectories) {
  ClusterOptions co;
  co.nodes = 3;
  co.gpus_per_node = 4;
  auto cluster_yaml = ClusterYaml(co);
  ASSERT_TRUE(cluster_yaml.has_value());
  const core::ClusterSpec cluster = LoadClusterYaml(*cluster_yaml);
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    for (const char* profile : {"gang-binpack", "kod2", "fsched"}) {
      SCOPED_TRACE(fmt::format("seed {} {}", seed, profile));
      GenerateOptions o;
      o.seed = seed;
      o.jobs = 15;
      o.mean_interarrival = 30;
      o.max_steps = 5000;
      auto w = GenerateWorkload(o);
      ASSERT_TRUE(w.has_value());
      const engine::Engine engine = testing::MakeEngine(profile);
      auto r = Simulate(cluster, *w, engine, SimOptions{});
      ASSERT_TRUE(r.has_value()) << r.error().message;
      const metrics::RunSummary summary = metrics::Summarize(r->run, std::nullopt);
      const std::string dir = (dir_ / fmt::format("run-{}-{}", seed, profile)).string();
      auto out = report::OutputDir::Open(dir);
      ASSERT_TRUE(out.has_value()) << out.error().message;
      ASSERT_TRUE(report::AddRunFiles(*out, "", summary, r->run).has_value());
      ASSERT_TRUE(out->Commit().has_value());

      auto back = report::LoadReportDir(dir);
      ASSERT_TRUE(back.has_value()) << back.error().message;
      ASSERT_EQ(back->runs.size(), 1u);
      const report::RunData& run = back->runs[0];
      ASSERT_TRUE(run.summary && run.jobs && run.utilization && run.events && run.allocations);
      const metrics::RunSummary& s = run.summary->figures;
      EXPECT_EQ(s.total_jobs, summary.total_jobs);
      EXPECT_EQ(s.completed_jobs, summary.completed_jobs);
      EXPECT_EQ(s.stuck_jobs, summary.stuck_jobs);
      EXPECT_EQ(s.failed_jobs, summary.failed_jobs);
      EXPECT_EQ(s.jct_mean, report::RoundForOutput(summary.jct_mean));
      EXPECT_EQ(s.makespan, report::RoundForOutput(summary.makespan));
      ASSERT_EQ(run.jobs->size(), r->run.jobs.size());
      auto time = [](core::Time t) -> std::optional<double> {
        if (t >= core::kNever) return std::nullopt;
        return report::RoundForOutput(t);
      };
      for (size_t i = 0; i < run.jobs->size(); ++i) {
        const report::JobRow& row = (*run.jobs)[i];
        const metrics::JobRecord& rec = r->run.jobs[i];
        SCOPED_TRACE(rec.name);
        EXPECT_EQ(row.name, rec.name);
        EXPECT_EQ(row.submit, report::RoundForOutput(rec.submit));
        EXPECT_EQ(row.first_start, time(rec.first_start));
        EXPECT_EQ(row.completion, time(rec.completion));
        EXPECT_EQ(row.queueing, report::RoundForOutput(rec.queueing));
        EXPECT_EQ(row.launching, report::RoundForOutput(rec.launching));
        EXPECT_EQ(row.running, report::RoundForOutput(rec.running));
        EXPECT_EQ(row.final_state, core::PhaseName(rec.final_phase));
        EXPECT_EQ(row.stuck, rec.stuck);
        EXPECT_EQ(row.reallocations, rec.reallocations);
        EXPECT_EQ(row.preemptions, rec.preemptions);
        EXPECT_EQ(row.scale_events, rec.scale_events);
        EXPECT_EQ(row.gpus, rec.gpus);
        EXPECT_EQ(row.ideal_runtime, report::RoundForOutput(rec.ideal_runtime));
      }
      // A row a sample (and one at the run's end), each a fraction of the
      // capacity as written: 0..1.
      const auto& samples = r->run.utilization;
      const size_t rows =
          samples.size() + (!samples.empty() && r->run.end_time > samples.back().time ? 1 : 0);
      ASSERT_EQ(run.utilization->time.size(), rows);
      const report::Utilization::Resource* gpu = run.utilization->Find("nvidia.com/gpu");
      ASSERT_NE(gpu, nullptr);
      for (size_t k = 0; k < rows; ++k) {
        const metrics::UtilizationSample& sample = samples[std::min(k, samples.size() - 1)];
        const double capacity = static_cast<double>(r->run.capacity[core::kGpu]);
        EXPECT_EQ(
            gpu->allocated[k],
            report::RoundForOutput(static_cast<double>(sample.allocated[core::kGpu]) / capacity));
        EXPECT_GE(gpu->allocated[k], 0);
        EXPECT_LE(gpu->allocated[k], 1);
      }
      EXPECT_EQ(run.allocations->size(), r->run.allocations.size());
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace dlsched::sim
