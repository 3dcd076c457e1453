#include "sim/liveness.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <utility>

#include <fmt/format.h>

#include "dlsched/config/specs.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/sim/generate.h"

namespace dlsched::testing {
namespace {

// Uniform draws from the raw engine output (the same on every library).
class Draw {
 public:
  explicit Draw(uint64_t seed) : gen_(seed) {}
  double Unit() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  int In(int lo, int hi) { return lo + static_cast<int>(gen_() % uint64_t(hi - lo + 1)); }
  double LogUniform(double lo, double hi) {
    return std::exp(std::log(lo) + Unit() * (std::log(hi) - std::log(lo)));
  }

 private:
  std::mt19937_64 gen_;
};

}  // namespace

std::string LivenessCase::Describe() const {
  return fmt::format(
      "seed {} ({} jobs, load {:.2f}, {} nodes x {} GPUs, elastic {:g}, {}delays, shared {:g})",
      seed, jobs, load, nodes, gpus_per_node, elastic_fraction, delays ? "" : "no ",
      shared_fraction);
}

LivenessCase DrawCase(uint64_t seed, int min_jobs, int max_jobs) {
  Draw d(seed * 0x9E3779B97F4A7C15ULL + 1);
  LivenessCase c;
  c.seed = seed;
  c.jobs = static_cast<int>(std::lround(d.LogUniform(min_jobs, max_jobs)));
  c.load = 0.3 + 1.7 * d.Unit();
  c.nodes = static_cast<int>(std::lround(d.LogUniform(2, 64)));
  c.gpus_per_node = d.In(0, 1) ? 8 : 4;
  const double fractions[] = {0.2, 0.5, 1};
  c.elastic_fraction = fractions[d.In(0, 2)];
  c.delays = d.In(0, 1) == 1;
  // Drawn last: the draws above stay what they were before shares.
  c.shared_fraction = d.In(0, 3) == 0 ? 0.5 : 0;
  return c;
}

core::Result<CaseInput> BuildCase(const LivenessCase& c) {
  CaseInput in;
  sim::ClusterOptions co;
  co.nodes = c.nodes;
  co.gpus_per_node = c.gpus_per_node;
  co.shared_gpus = c.shared_fraction > 0;
  DLSCHED_TRY_LET(yaml, sim::ClusterYaml(co));
  DLSCHED_TRY_LET(cluster, config::ParseCluster(*yaml, "generated"));
  in.cluster = std::move(*cluster);

  sim::GenerateOptions go;
  go.jobs = c.jobs;
  go.seed = c.seed;
  go.max_workers = c.gpus_per_node;
  go.elastic_fraction = c.elastic_fraction;
  go.shared_fraction = c.shared_fraction;
  DLSCHED_TRY_LET(workload, sim::GenerateWorkload(go));
  in.workload = sim::WithLoad(*workload, c.load, int64_t{c.nodes} * c.gpus_per_node);
  if (c.delays) {
    Draw d(c.seed ^ 0xD1B54A32D192ED03ULL);
    for (core::JobSpec& j : in.workload.jobs) {
      j.launch_delay = d.In(1, 12) * 5;
      j.checkpoint_delay = d.In(0, 6) * 5;
    }
  }
  return in;
}

std::vector<std::string> BuiltinProfileRuns() {
  std::vector<std::string> names;
  for (const auto& b : policy::BuiltinProfiles()) {
    names.push_back(b.name == "static-n" ? "static-2" : std::string(b.name));
  }
  return names;
}

std::vector<std::string> ExampleProfileRuns(const std::string& source_dir) {
  std::vector<std::string> files;
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(source_dir) / "examples")) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("profile-") && name.ends_with(".yaml")) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool CanEverStart(const core::ClusterSpec& cluster, const core::JobSpec& job,
                  const engine::Engine& engine) {
  config::WorkloadSpec alone;
  alone.jobs.push_back(job);
  alone.jobs[0].submit_time = 0;
  alone.jobs[0].deadline.reset();
  auto r = sim::Simulate(cluster, alone, engine, {});
  return r.has_value() && r->run.jobs[0].first_start != core::kNever;
}

double GainRuleOf(const std::string& profile) {
  auto spec = policy::ResolveProfile(profile);
  if (!spec || spec->sizer.name != "FScheduling") return 0;
  const YAML::Node gain = spec->sizer.args["minGain"];
  return gain ? gain.as<double>() : 1;  // the sizer's default
}

namespace {

// Arrivals and completions of a run, sorted, each once.
std::vector<core::Time> Changes(const sim::SimResult& run) {
  std::vector<core::Time> changes;
  for (const auto& j : run.run.jobs) {
    changes.push_back(j.submit);
    if (j.completion != core::kNever) changes.push_back(j.completion);
  }
  std::sort(changes.begin(), changes.end());
  changes.erase(std::unique(changes.begin(), changes.end()), changes.end());
  return changes;
}

// The instants of `instants` in [from, to] that are not in `changes`.
int QuietIn(const std::vector<core::Time>& instants, const std::vector<core::Time>& changes,
            core::Time from, core::Time to) {
  int n = 0;
  for (auto it = std::lower_bound(instants.begin(), instants.end(), from);
       it != instants.end() && *it <= to; ++it) {
    if (!std::binary_search(changes.begin(), changes.end(), *it)) ++n;
  }
  return n;
}

double BestRate(const core::JobSpec& spec) {
  const core::RoleSpec& w = spec.role(core::Role::kWorker);
  double best = 0;
  for (int n = std::max(1, w.min_replicas); n <= std::max(1, w.max_replicas); ++n) {
    best = std::max(best, spec.throughput.Rate(n));
  }
  return best;
}

}  // namespace

std::vector<int> ScaleEventBounds(const sim::SimResult& run, const ResizeCounter& resizes,
                                  double min_gain) {
  const auto& jobs = run.run.jobs;
  std::vector<core::Time> all;  // arrivals and completions, with repeats
  for (const auto& j : jobs) {
    all.push_back(j.submit);
    if (j.completion != core::kNever) all.push_back(j.completion);
  }
  std::sort(all.begin(), all.end());
  const std::vector<core::Time> changes = Changes(run);
  std::vector<int> bounds;
  bounds.reserve(jobs.size());
  for (const auto& j : jobs) {
    const core::Time end = j.completion != core::kNever ? j.completion : run.run.end_time;
    const auto lo = std::lower_bound(all.begin(), all.end(), j.submit);
    const auto hi = std::upper_bound(all.begin(), all.end(), end);
    // Its own arrival and completion are among them.
    const int own = 1 + (j.completion != core::kNever ? 1 : 0);
    int bound = 2 + 2 * (static_cast<int>(hi - lo) - own);
    if (min_gain > 0) bound += QuietIn(resizes.Instants(), changes, j.submit, end);
    bounds.push_back(bound);
  }
  return bounds;
}

void ResizeCounter::Hook(sim::SimOptions& options) {
  options.on_plan = [this](core::Time now, const engine::Plan& plan) {
    if (now != now_) {
      now_ = now;
      resized_now_.clear();
    }
    for (const engine::Action& a : plan.actions) {
      if (a.kind != engine::ActionKind::kResize) continue;
      const int32_t j = a.task.job;
      if (instants_.empty() || instants_.back() != now) instants_.push_back(now);
      if (std::find(resized_now_.begin(), resized_now_.end(), j) != resized_now_.end()) {
        twice_.emplace_back(j, now);
      } else {
        resized_now_.push_back(j);
      }
    }
  };
}

std::vector<std::string> CheckLiveness(const CaseInput& input, const engine::Engine& engine,
                                       const sim::SimResult& run, const ResizeCounter& resizes,
                                       double min_gain, LivenessStats* stats) {
  std::vector<std::string> out;
  const auto& jobs = run.run.jobs;
  const bool per_pod = engine.profile().admission->UsesPodQueue();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const metrics::JobRecord& r = jobs[i];
    if (r.final_phase == core::JobPhase::kCompleted) continue;
    if (per_pod && run.run.deadlocked && r.stuck &&
        r.reason.find("livelock") == std::string::npos) {
      continue;  // the per-pod deadlock the baseline exists to show, labelled as such
    }
    if (!CanEverStart(input.cluster, input.workload.jobs[i], engine)) continue;
    out.push_back(fmt::format("job {} could start alone but ended {}{}: {}", r.name,
                              core::PhaseName(r.final_phase), r.stuck ? " (stuck)" : "", r.reason));
  }
  for (const auto& [j, t] : resizes.Twice()) {
    out.push_back(fmt::format("job {} resized twice at {:g} s", jobs[j].name, t));
  }
  const std::vector<int> bounds = ScaleEventBounds(run, resizes, min_gain);
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (stats != nullptr) {
      stats->max_scale_events = std::max(stats->max_scale_events, jobs[i].scale_events);
      stats->max_bound_use =
          std::max(stats->max_bound_use, static_cast<double>(jobs[i].scale_events) / bounds[i]);
    }
    if (jobs[i].scale_events > bounds[i]) {
      out.push_back(fmt::format("job {}: {} scale events, more than its bound {}", jobs[i].name,
                                jobs[i].scale_events, bounds[i]));
    }
  }
  if (min_gain > 0) {
    const std::vector<core::Time> changes = Changes(run);
    for (size_t k = 0; k < changes.size(); ++k) {
      const core::Time from = changes[k];
      const core::Time to = k + 1 < changes.size() ? changes[k + 1] : run.run.end_time;
      const int quiet = QuietIn(resizes.Instants(), changes, from, to);
      if (quiet == 0) continue;
      int present = 0;
      double best = 0;
      for (size_t i = 0; i < jobs.size(); ++i) {
        if (jobs[i].submit > from ||
            (jobs[i].completion != core::kNever && jobs[i].completion <= from)) {
          continue;
        }
        ++present;
        best += BestRate(input.workload.jobs[i]);
      }
      const double bound = 2.0 * (present + 1) * (1 + std::ceil(best / min_gain));
      if (stats != nullptr)
        stats->max_stretch_use = std::max(stats->max_stretch_use, quiet / bound);
      if (quiet > bound) {
        out.push_back(
            fmt::format("{} quiet instants with a resize between {:g} s and {:g} s, more "
                        "than the bound {:g} ({} jobs, best throughputs {:g} steps/s)",
                        quiet, from, to, bound, present, best));
      }
    }
  }
  return out;
}

}  // namespace dlsched::testing
