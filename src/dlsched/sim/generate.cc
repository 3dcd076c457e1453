#include "dlsched/sim/generate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/config/job_codec.h"
#include "dlsched/config/trace.h"
#include "dlsched/core/affinity.h"
#include "dlsched/core/job.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"
#include "dlsched/sim/model_zoo.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::sim {
namespace {

// Distributions computed from the engine's raw 64-bit outputs, identical on
// every standard library (only std::mt19937_64 itself is fully specified).
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1), 53 random bits.
  double Unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  // Uniform integer in [lo, hi], without modulo bias (rejection).
  int64_t Int(int64_t lo, int64_t hi) {
    const uint64_t range = static_cast<uint64_t>(hi - lo) + 1;
    if (range == 0) return static_cast<int64_t>(engine_());  // the full 64-bit range
    const uint64_t rem = (0 - range) % range;                // 2^64 mod range
    uint64_t x = engine_();
    while (x > std::numeric_limits<uint64_t>::max() - rem) x = engine_();
    return lo + static_cast<int64_t>(x % range);
  }

  bool Bernoulli(double p) { return Unit() < p; }

  // Exponential with the given mean (inverse transform).
  double Exponential(double mean) { return -mean * std::log1p(-Unit()); }

  // Log-uniform in [lo, hi]: uniform in log space.
  double LogUniform(double lo, double hi) {
    return std::exp(std::log(lo) + Unit() * (std::log(hi) - std::log(lo)));
  }

  // Index i with probability weights[i] / sum(weights).
  template <size_t N>
  size_t Weighted(const std::array<int, N>& weights) {
    int total = 0;
    for (int w : weights) total += w;
    int64_t x = Int(0, total - 1);
    for (size_t i = 0; i < N; ++i) {
      if (x < weights[i]) return i;
      x -= weights[i];
    }
    return N - 1;
  }

 private:
  std::mt19937_64 engine_;
};

constexpr int64_t kGi = int64_t{1} << 30;

// Workers per job: mostly powers of two, as in the Philly and Helios traces.
constexpr std::array<int, 8> kWorkerCounts = {1, 2, 4, 8, 3, 5, 6, 7};
constexpr std::array<int, 8> kWorkerWeights = {40, 25, 18, 10, 2, 2, 2, 1};

int DrawWorkers(Rng& rng, int max_workers) {
  std::array<int, kWorkerCounts.size()> weights{};
  for (size_t i = 0; i < weights.size(); ++i) {
    weights[i] = kWorkerCounts[i] <= max_workers ? kWorkerWeights[i] : 0;
  }
  // max_workers above 8: the same mix (larger gangs come from elasticity).
  return kWorkerCounts[rng.Weighted(weights)];
}

core::Resources CpuMemory(int64_t cores, int64_t gib) {
  core::Resources r;
  r[core::kCpu] = cores * 1000;
  r[core::kMemory] = gib * kGi;
  return r;
}

// --gpu-types: distinct names, each a label value the native format holds.
core::Status CheckGpuTypes(const std::vector<std::string>& types) {
  for (size_t i = 0; i < types.size(); ++i) {
    const std::string& t = types[i];
    if (auto problem = core::NameProblem(t)) {
      return core::Errorf("--gpu-types: '{}': {}", core::EscapeMessage(t, 80), *problem);
    }
    if (t.find_first_of("|,\" ") != std::string::npos) {
      return core::Errorf("--gpu-types: '{}': expected a name without '|', ',', '\"' or spaces",
                          core::EscapeMessage(t, 80));
    }
    if (std::find(types.begin(), types.begin() + static_cast<std::ptrdiff_t>(i), t) !=
        types.begin() + static_cast<std::ptrdiff_t>(i)) {
      return core::Errorf("--gpu-types: '{}' is given twice", t);
    }
  }
  return {};
}

core::Status CheckOptionsOf(const GenerateOptions& o) {
  if (o.jobs < 1 || o.jobs > kMaxGeneratedJobs) {
    return core::Errorf("--jobs: expected an integer between 1 and {}, got {}", kMaxGeneratedJobs,
                        o.jobs);
  }
  if (!(o.mean_interarrival >= 0 && o.mean_interarrival <= core::kMaxTime)) {
    return core::Errorf("--mean-interarrival: expected a number of seconds in [0, {:g}], got {}",
                        core::kMaxTime, o.mean_interarrival);
  }
  if (o.max_workers < 1 || o.max_workers > 1024) {
    return core::Errorf("--max-workers: expected an integer in [1, 1024], got {}", o.max_workers);
  }
  if (!(o.elastic_fraction >= 0 && o.elastic_fraction <= 1)) {
    return core::Errorf("--elastic-fraction: expected a number in [0, 1], got {}",
                        o.elastic_fraction);
  }
  if (!std::isfinite(o.min_steps) || o.min_steps < 1) {
    return core::Errorf("--min-steps: expected a number >= 1, got {}", o.min_steps);
  }
  if (!(o.max_steps >= o.min_steps && o.max_steps <= core::kMaxSteps)) {
    return core::Errorf("--max-steps: expected a number between --min-steps ({}) and {:g}, got {}",
                        o.min_steps, core::kMaxSteps, o.max_steps);
  }
  if (o.name_prefix.empty()) return core::Errorf("--name-prefix: expected a non-empty string");
  DLSCHED_TRY(CheckGpuTypes(o.gpu_types));
  if (!(o.typed_fraction >= 0 && o.typed_fraction <= 1)) {
    return core::Errorf("--typed-fraction: expected a number in [0, 1], got {}", o.typed_fraction);
  }
  if (o.shape == GenerateOptions::Shape::kGavel && o.typed_fraction > 0) {
    return core::Errorf(
        "--typed-fraction: not with --shape gavel (its jobs run on every type, at its rates)");
  }
  if (o.typed_fraction > 0 && o.gpu_types.empty()) {
    return core::Errorf("--typed-fraction: needs --gpu-types (the types jobs may require)");
  }
  if (!(o.shared_fraction >= 0 && o.shared_fraction <= 1)) {
    return core::Errorf("--shared-fraction: expected a number in [0, 1], got {}",
                        o.shared_fraction);
  }
  if (o.shape == GenerateOptions::Shape::kGavel && o.shared_fraction > 0) {
    return core::Errorf("--shared-fraction: not with --shape gavel (its jobs take whole GPUs)");
  }
  return {};
}

// A YAML scalar: plain when it cannot be mistaken for anything but a string.
std::string Str(std::string_view s) {
  static constexpr std::array<std::string_view, 14> kReserved = {
      "null",  "Null",  "NULL", "true", "True", "TRUE", "false",
      "False", "FALSE", "yes",  "no",   "on",   "off",  "~"};
  bool plain = !s.empty() && ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'));
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-' || c == '/';
    plain = plain && ok;
  }
  for (std::string_view r : kReserved) plain = plain && s != r;
  if (plain) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

// Shortest text that reads back as the same double.
std::string Num(double v) { return fmt::format("{}", v); }

std::string ResourcesYaml(const core::Resources& r) {
  std::string out = "{";
  bool first = true;
  core::FirstId(r, [&](core::ResourceId id) {
    if (r[id] == 0) return false;
    out += first ? "" : ", ";
    first = false;
    out += Str(core::ResourceName(id));
    out += ": \"";
    out += core::FormatResourceAmount(id, r[id]);
    out += '"';
    return false;
  });
  out += '}';
  return out;
}

std::string ContainersYaml(const std::vector<core::ContainerSpec>& containers) {
  std::string out = "[";
  for (size_t i = 0; i < containers.size(); ++i) {
    const core::ContainerSpec& c = containers[i];
    core::Resources shown = c.requests;
    std::string res = ResourcesYaml(shown);
    // An explicit 0 for cpu or memory is kept (scoring then counts no
    // default for it).
    for (auto [set, id] : {std::pair{c.sets_cpu, core::kCpu}, {c.sets_memory, core::kMemory}}) {
      if (!set || c.requests[id] != 0) continue;
      res.insert(res.size() - 1,
                 fmt::format("{}{}: \"0\"", res.size() > 2 ? ", " : "", core::ResourceName(id)));
    }
    fmt::format_to(std::back_inserter(out), "{}{{name: {}, resources: {}}}", i ? ", " : "",
                   Str(c.name), res);
  }
  return out + "]";
}

std::string StrList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + Str(items[i]);
  return out + "]";
}

void AppendConstraints(std::string& out, const core::NodeConstraints& c) {
  auto emit = std::back_inserter(out);
  if (!c.node_selector.empty()) {
    out += ", nodeSelector: {";
    bool first = true;
    for (const auto& [k, v] : c.node_selector) {
      fmt::format_to(emit, "{}{}: {}", first ? "" : ", ", Str(k), Str(v));
      first = false;
    }
    out += '}';
  }
  if (!c.required_terms.empty()) {
    out +=
        ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        "{nodeSelectorTerms: [";
    for (size_t t = 0; t < c.required_terms.size(); ++t) {
      out += t ? ", {matchExpressions: [" : "{matchExpressions: [";
      const auto& exprs = c.required_terms[t].match_expressions;
      for (size_t e = 0; e < exprs.size(); ++e) {
        fmt::format_to(emit, "{}{{key: {}, operator: {}", e ? ", " : "", Str(exprs[e].key),
                       core::OperatorName(exprs[e].op));
        if (!exprs[e].values.empty()) out += ", values: " + StrList(exprs[e].values);
        out += '}';
      }
      out += "]}";
    }
    out += "]}}}";
  }
  if (!c.tolerations.empty()) {
    out += ", tolerations: [";
    for (size_t i = 0; i < c.tolerations.size(); ++i) {
      const core::Toleration& t = c.tolerations[i];
      out += i ? ", {" : "{";
      if (!t.key.empty()) fmt::format_to(emit, "key: {}, ", Str(t.key));
      out += t.op == core::Toleration::Op::kExists ? "operator: Exists" : "operator: Equal";
      if (t.op == core::Toleration::Op::kEqual) out += ", value: " + Str(t.value);
      if (!t.any_effect) fmt::format_to(emit, ", effect: {}", core::TaintEffectName(t.effect));
      if (t.seconds) fmt::format_to(emit, ", tolerationSeconds: {}", *t.seconds);
      out += '}';
    }
    out += ']';
  }
}

void AppendRole(std::string& out, std::string_view key, const core::RoleSpec& role, bool worker) {
  fmt::format_to(std::back_inserter(out), "    {}: {{replicas: {}", key, role.replicas);
  if (worker && role.min_replicas != role.replicas) {
    fmt::format_to(std::back_inserter(out), ", minReplicas: {}", role.min_replicas);
  }
  if (worker && role.max_replicas != role.replicas) {
    fmt::format_to(std::back_inserter(out), ", maxReplicas: {}", role.max_replicas);
  }
  if (!role.containers.empty()) {
    out += ", containers: " + ContainersYaml(role.containers);
    if (!role.init_containers.empty()) {
      out += ", initContainers: " + ContainersYaml(role.init_containers);
    }
  } else if (!role.resources.IsZero()) {
    out += ", resources: ";
    out += ResourcesYaml(role.resources);
  }
  AppendConstraints(out, role.constraints);
  if (role.restart_policy != core::RestartPolicy::kNever) {
    fmt::format_to(std::back_inserter(out), ", restartPolicy: {}",
                   core::RestartPolicyName(role.restart_policy));
  }
  out += "}\n";
}

std::string ThroughputYaml(const core::ThroughputProfile& tp) {
  const core::ThroughputProfile* zoo = tp.model.empty() ? nullptr : FindModel(tp.model);
  const bool unresolved = tp.steps_per_s.empty();
  if (!tp.model.empty() &&
      (unresolved || (zoo != nullptr && zoo->steps_per_s == tp.steps_per_s &&
                      zoo->locality_sensitivity == tp.locality_sensitivity &&
                      zoo->placements == tp.placements && zoo->GpuTypes() == tp.GpuTypes()))) {
    // The zoo has no rate across switches: a job's own is written beside.
    if (tp.switch_sensitivity != 0) {
      return fmt::format("{{model: {}, switchSensitivity: {}}}", Str(tp.model),
                         Num(tp.switch_sensitivity));
    }
    return fmt::format("{{model: {}}}", Str(tp.model));
  }
  auto table = [](std::string& out, const std::map<int, double>& rates) {
    out += '{';
    bool first = true;
    for (const auto& [workers, rate] : rates) {
      fmt::format_to(std::back_inserter(out), "{}{}: {}", first ? "" : ", ", workers, Num(rate));
      first = false;
    }
    out += '}';
  };
  std::string out = "{table: ";
  table(out, tp.steps_per_s);
  bool first = true;
  if (tp.locality_sensitivity != 0) {
    out += ", localitySensitivity: " + Num(tp.locality_sensitivity);
  }
  if (tp.switch_sensitivity != 0) {
    out += ", switchSensitivity: " + Num(tp.switch_sensitivity);
  }
  if (!tp.placements.empty()) {
    out += ", placements: {";
    first = true;
    for (const auto& [shape, rate] : tp.placements) {
      fmt::format_to(std::back_inserter(out), "{}{}: {}", first ? "" : ", ", fmt::join(shape, "+"),
                     Num(rate));
      first = false;
    }
    out += '}';
  }
  if (!tp.GpuTypes().empty()) {
    out += ", gpuTypes: {";
    first = true;
    for (const auto& [type, rates] : tp.GpuTypes()) {
      fmt::format_to(std::back_inserter(out), "{}{}: ", first ? "" : ", ", Str(type));
      table(out, rates);
      first = false;
    }
    out += '}';
  }
  out += '}';
  return out;
}

void AppendInitial(std::string& out, const core::InitialState& in) {
  auto emit = std::back_inserter(out);
  fmt::format_to(emit, "    running:\n      phase: {}\n", core::PhaseName(in.phase));
  fmt::format_to(emit, "      since: {}\n", Num(in.since));
  if (in.phase != core::JobPhase::kWaiting) {
    fmt::format_to(emit, "      firstStart: {}\n", Num(in.first_start));
    fmt::format_to(emit, "      lastLaunch: {}\n", Num(in.last_launch));
  }
  if (in.admission_seq >= 0) fmt::format_to(emit, "      admissionOrder: {}\n", in.admission_seq);
  out += "      nodes: {";
  for (size_t i = 0; i < in.tasks.size(); ++i) {
    const auto& t = in.tasks[i];
    fmt::format_to(emit, "{}{}-{}: {}", i ? ", " : "", core::RoleKey(t.role), t.index, Str(t.node));
  }
  out += "}\n";
  if (in.held.empty()) return;
  out += "      held: {";
  for (size_t i = 0; i < in.held.size(); ++i) {
    const auto& t = in.held[i];
    fmt::format_to(emit, "{}{}-{}: {}", i ? ", " : "", core::RoleKey(t.role), t.index, Str(t.node));
  }
  out += "}\n";
}

// A job's fields (config::EncodeJob) as an item of the workload YAML's
// `jobs` list.
struct YamlJob : config::JobFieldSink {
  explicit YamlJob(std::string& o) : out(o) {}
  std::string& out;
  bool first = true;  // the job's first field starts its item

  void Scalar(std::string_view key, std::string_view text, Text kind) override {
    fmt::format_to(std::back_inserter(out), "{}{}: {}\n", first ? "  - " : "    ", key,
                   kind == Text::kString ? Str(text) : text);
    first = false;
  }
  void Role(std::string_view key, const core::RoleSpec& role, bool worker) override {
    AppendRole(out, key, role, worker);
  }
  void Throughput(const core::ThroughputProfile& tp) override {
    fmt::format_to(std::back_inserter(out), "    throughput: {}\n", ThroughputYaml(tp));
  }
  void Initial(const core::InitialState& in) override { AppendInitial(out, in); }
  void Failures(std::span<const core::ScheduledFailure> failures) override {
    out += "    failures:\n";
    for (const core::ScheduledFailure& f : failures) {
      fmt::format_to(std::back_inserter(out), "      - {{after: {}, task: {}-{}", Num(f.after),
                     core::RoleKey(f.role), f.index);
      if (f.failure.disruption) out += ", evicted: true";
      if (f.failure.exit_code) {
        fmt::format_to(std::back_inserter(out), ", exitCode: {}", *f.failure.exit_code);
      }
      out += "}\n";
    }
  }
  void Unwritten(std::string_view) override {}
};

}  // namespace

double OfferedLoad(const config::WorkloadSpec& workload, int64_t gpus) {
  if (workload.jobs.empty() || gpus <= 0) return 0;
  double gpu_seconds = 0;
  core::Time first = core::kNever;
  core::Time last = 0;
  for (const core::JobSpec& j : workload.jobs) {
    first = std::min(first, j.submit_time);
    last = std::max(last, j.submit_time);
    const int n = j.role(core::Role::kWorker).replicas;
    const double rate = j.throughput.Rate(n);
    if (rate > 0) {
      const core::Resources demand = j.Demand(n);
      const double gpu = static_cast<double>(demand[core::kGpu]) +
                         static_cast<double>(demand[core::kGpuMilli]) / core::kMilliPerGpu;
      gpu_seconds += gpu * j.total_steps / rate;
    }
  }
  if (gpu_seconds == 0) return 0;
  if (last <= first) return std::numeric_limits<double>::infinity();
  return gpu_seconds / (static_cast<double>(gpus) * (last - first));
}

config::WorkloadSpec WithLoad(const config::WorkloadSpec& workload, double load, int64_t gpus) {
  config::WorkloadSpec out = workload;
  const double now = OfferedLoad(workload, gpus);
  if (!(now > 0) || !std::isfinite(now) || !(load > 0)) return out;
  core::Time first = core::kNever;
  for (const core::JobSpec& j : out.jobs) first = std::min(first, j.submit_time);
  for (core::JobSpec& j : out.jobs) j.submit_time = first + (j.submit_time - first) * now / load;
  return out;
}

core::Status CheckGenerateOptions(const GenerateOptions& options) {
  return CheckOptionsOf(options);
}

namespace {

// A job of Gavel's continuous traces (GenerateOptions::Shape::kGavel).
core::Status GavelJob(Rng& rng, const GenerateOptions& options, core::JobSpec& job) {
  constexpr int kSizes[] = {1, 2, 4, 8};
  const int size =
      std::min(options.max_workers, kSizes[rng.Weighted(std::array<int, 4>{70, 10, 15, 5})]);
  // Gavel's job templates per family (batch sizes), the distributed first.
  constexpr std::string_view kFamilies[] = {"resnet18",       "resnet50", "transformer", "lm",
                                            "recommendation", "a3c",      "cyclegan"};
  const size_t family = size == 1 ? rng.Weighted(std::array<int, 7>{5, 4, 5, 5, 5, 1, 1})
                                  : rng.Weighted(std::array<int, 4>{5, 4, 5, 5});
  const core::ThroughputProfile* model = FindModel(kFamilies[family]);
  if (model == nullptr) return core::Errorf("the model zoo has no {}", kFamilies[family]);
  const double exponent = rng.Bernoulli(0.8) ? 1.5 + 1.5 * rng.Unit() : 3 + rng.Unit();
  const double seconds = 60 * std::pow(10.0, exponent);
  job.throughput = *model;
  job.throughput.model = std::string(kFamilies[family]);
  core::RoleSpec& worker = job.role(core::Role::kWorker);
  worker.replicas = worker.min_replicas = worker.max_replicas = size;
  // 1 core and 4 GiB a GPU: generate's nodes (64 cores, 512 GiB) hold a
  // worker on each of up to 64 GPUs.
  worker.resources = CpuMemory(1, 4);
  worker.resources[core::kGpu] = 1;
  job.total_steps = std::max(1.0, std::round(seconds * model->RateOn("v100", size)));
  return {};
}

}  // namespace

core::Result<config::WorkloadSpec> GenerateWorkload(const GenerateOptions& options) {
  DLSCHED_TRY(CheckOptionsOf(options));
  const std::vector<std::string_view> models = ModelNames();
  if (models.empty()) return core::Errorf("the model zoo is empty");

  Rng rng(options.seed);
  config::WorkloadSpec w;
  w.source = fmt::format("generated (seed {}, {} jobs)", options.seed, options.jobs);
  w.jobs.reserve(options.jobs);
  const int width = static_cast<int>(fmt::format("{}", options.jobs - 1).size());
  int64_t arrival_ms = 0;
  for (int i = 0; i < options.jobs; ++i) {
    core::JobSpec job;
    job.name = fmt::format("{}-{:0{}}", options.name_prefix, i, width);

    // Whole milliseconds, summed as integers, so arrivals are exact and
    // non-decreasing: the file order is the arrival order.
    if (i > 0 && options.mean_interarrival > 0) {
      arrival_ms += std::llround(rng.Exponential(options.mean_interarrival) * 1000.0);
      // Checked at every step, so the sum cannot overflow either.
      if (arrival_ms > static_cast<int64_t>(core::kMaxTime) * 1000) {
        return core::Errorf(
            "--mean-interarrival: job {} of {} would arrive after {:g} s, the limit for arrivals; "
            "use fewer jobs or a shorter mean",
            i + 1, options.jobs, core::kMaxTime);
      }
    }
    job.submit_time = static_cast<double>(arrival_ms) / 1000.0;
    if (options.shape == GenerateOptions::Shape::kGavel) {
      DLSCHED_TRY(GavelJob(rng, options, job));
      w.jobs.push_back(std::move(job));
      continue;
    }

    // 0-2 parameter servers: cpu and memory only.
    core::RoleSpec& ps = job.role(core::Role::kPS);
    ps.replicas = static_cast<int>(rng.Weighted(std::array<int, 3>{30, 50, 20}));
    const int64_t ps_cpu = rng.Int(1, 4);
    const int64_t ps_mem = int64_t{4} << rng.Int(0, 2);  // 4, 8 or 16 Gi
    ps.min_replicas = ps.max_replicas = ps.replicas;
    if (ps.replicas > 0) ps.resources = CpuMemory(ps_cpu, ps_mem);

    // Workers: 1 GPU each; some elastic with min < max.
    core::RoleSpec& worker = job.role(core::Role::kWorker);
    worker.replicas = DrawWorkers(rng, options.max_workers);
    worker.min_replicas = worker.max_replicas = worker.replicas;
    if (rng.Bernoulli(options.elastic_fraction) && options.max_workers > 1) {
      worker.min_replicas = std::max(1, worker.replicas / 2);
      worker.max_replicas = std::min(options.max_workers, worker.replicas * 2);
    }
    // Separate statements: argument evaluation order is unspecified.
    const int64_t worker_cpu = rng.Int(2, 6);
    const int64_t worker_mem = int64_t{8} << rng.Int(0, 2);  // 8, 16 or 32 Gi
    worker.resources = CpuMemory(worker_cpu, worker_mem);
    worker.resources[core::kGpu] = 1;

    const std::string_view model = models[rng.Int(0, static_cast<int64_t>(models.size()) - 1)];
    job.throughput = *FindModel(model);
    job.throughput.model = std::string(model);

    job.total_steps =
        std::max(1.0, std::round(rng.LogUniform(options.min_steps, options.max_steps)));
    if (options.typed_fraction > 0 && rng.Bernoulli(options.typed_fraction)) {
      const int64_t last = static_cast<int64_t>(options.gpu_types.size()) - 1;
      worker.constraints.required_terms = {
          config::GpuTypeTerm({options.gpu_types[static_cast<size_t>(rng.Int(0, last))]})};
    }
    if (options.shared_fraction > 0 && rng.Bernoulli(options.shared_fraction)) {
      constexpr std::array<int64_t, 4> kShares = {100, 250, 500, 750};
      worker.resources[core::kGpu] = 0;
      worker.resources[core::kGpuMilli] = kShares[static_cast<size_t>(rng.Int(0, 3))];
    }
    w.jobs.push_back(std::move(job));
  }
  if (auto st = CheckRunnable(w); !st) {
    return core::Errorf("{} (lower --max-steps)", st.error().message);
  }
  return w;
}

std::string WorkloadToYaml(const config::WorkloadSpec& workload) {
  std::string out;
  out.reserve(workload.jobs.size() * 320 + 64);
  const bool placed = std::any_of(workload.jobs.begin(), workload.jobs.end(),
                                  [](const core::JobSpec& j) { return j.initial.has_value(); });
  if (workload.start != 0 || placed) out += fmt::format("start: {}\n", Num(workload.start));
  out += "jobs:\n";
  YamlJob writer(out);
  for (const core::JobSpec& job : workload.jobs) {
    writer.first = true;
    config::EncodeJob(job, writer);
  }
  return out;
}

std::string ClusterToYaml(const core::ClusterSpec& cluster) {
  std::string out = "nodes:\n";
  auto emit = std::back_inserter(out);
  for (const core::NodeSpec& n : cluster.nodes) {
    fmt::format_to(emit, "  - name: {}\n    resources: {}\n", Str(n.name),
                   ResourcesYaml(n.allocatable));
    if (auto it = cluster.reserved.find(n.name); it != cluster.reserved.end()) {
      fmt::format_to(emit, "    reserved: {}\n", ResourcesYaml(it->second));
    }
    if (!n.labels.empty()) {
      out += "    labels: {";
      bool first = true;
      for (const auto& [k, v] : n.labels) {
        fmt::format_to(emit, "{}{}: {}", first ? "" : ", ", Str(k), Str(v));
        first = false;
      }
      out += "}\n";
    }
    if (!n.taints.empty()) {
      out += "    taints: [";
      for (size_t i = 0; i < n.taints.size(); ++i) {
        const core::Taint& t = n.taints[i];
        fmt::format_to(emit, "{}{{key: {}", i ? ", " : "", Str(t.key));
        if (!t.value.empty()) fmt::format_to(emit, ", value: {}", Str(t.value));
        fmt::format_to(emit, ", effect: {}}}", core::TaintEffectName(t.effect));
      }
      out += "]\n";
    }
    if (!n.schedulable) out += "    schedulable: false\n";
  }
  auto quota = [&](const std::vector<core::QuotaLine>& lines) {
    out += "    quota: {";
    for (size_t i = 0; i < lines.size(); ++i) {
      const core::QuotaLine& l = lines[i];
      auto amount = [&](int64_t a) { return Str(core::FormatResourceAmount(l.id, a)); };
      fmt::format_to(emit, "{}{}: {{nominal: {}", i ? ", " : "", Str(core::ResourceName(l.id)),
                     amount(l.nominal));
      if (l.borrowing_limit)
        fmt::format_to(emit, ", borrowingLimit: {}", amount(*l.borrowing_limit));
      if (l.lending_limit) fmt::format_to(emit, ", lendingLimit: {}", amount(*l.lending_limit));
      out += "}";
    }
    out += "}\n";
  };
  if (!cluster.queues.empty()) out += "queues:\n";
  for (const core::QueueSpec& q : cluster.queues) {
    fmt::format_to(emit, "  - name: {}\n", Str(q.name));
    if (!q.cohort.empty()) fmt::format_to(emit, "    cohort: {}\n", Str(q.cohort));
    if (q.weight != 1) fmt::format_to(emit, "    weight: {}\n", q.weight);
    quota(q.quota);
    if (q.priority != 0) fmt::format_to(emit, "    priority: {}\n", q.priority);
    if (!q.capability.empty()) {
      out += "    capability: {";
      for (size_t i = 0; i < q.capability.size(); ++i) {
        const auto [id, amount] = q.capability[i];
        fmt::format_to(emit, "{}{}: {}", i ? ", " : "", Str(core::ResourceName(id)),
                       Str(core::FormatResourceAmount(id, amount)));
      }
      out += "}\n";
    }
    if (!q.guarantee.IsZero()) {
      fmt::format_to(emit, "    guarantee: {}\n", ResourcesYaml(q.guarantee));
    }
    if (!q.deserved.IsZero()) fmt::format_to(emit, "    deserved: {}\n", ResourcesYaml(q.deserved));
    if (!q.preemption.Empty()) {
      const core::QueuePreemption& p = q.preemption;
      std::string fields;
      auto add = [&](std::string_view key, std::string_view value) {
        fmt::format_to(std::back_inserter(fields), "{}{}: {}", fields.empty() ? "" : ", ", key,
                       value);
      };
      if (p.within_queue) add("withinQueue", core::PreemptionPolicyName(*p.within_queue));
      if (p.reclaim_within_cohort) {
        add("reclaimWithinCohort", core::PreemptionPolicyName(*p.reclaim_within_cohort));
      }
      if (p.borrow_within_cohort) {
        add("borrowWithinCohort", core::PreemptionPolicyName(*p.borrow_within_cohort));
      }
      if (p.max_priority_threshold) {
        add("maxPriorityThreshold", core::PriorityClassName(*p.max_priority_threshold));
      }
      fmt::format_to(emit, "    preemption: {{{}}}\n", fields);
    }
  }
  if (!cluster.cohorts.empty()) out += "cohorts:\n";
  for (const core::CohortSpec& c : cluster.cohorts) {
    fmt::format_to(emit, "  - name: {}\n", Str(c.name));
    if (!c.parent.empty()) fmt::format_to(emit, "    parent: {}\n", Str(c.parent));
    if (c.weight != 1) fmt::format_to(emit, "    weight: {}\n", c.weight);
    quota(c.quota);
  }
  return out;
}

int64_t WrittenYamlNodes(std::string_view yaml) {
  // yaml-cpp emits one node for the root, two for each map entry (its key
  // and value) and one for each list entry (yaml_util.cc, YamlNodeBound).
  int64_t nodes = 1;
  std::vector<char> flow;  // the open '[' and '{'
  bool line_start = true;
  for (size_t i = 0; i < yaml.size(); ++i) {
    const char c = yaml[i];
    if (line_start) {
      const size_t content = yaml.find_first_not_of(' ', i);
      if (content == std::string_view::npos) break;
      if (yaml[content] == '#') {  // a comment line
        i = yaml.find('\n', content);
        if (i == std::string_view::npos) break;
        continue;
      }
      if (yaml[content] == '-' && content + 1 < yaml.size() && yaml[content + 1] == ' ') {
        ++nodes;  // a block list entry
      }
      line_start = false;
    }
    switch (c) {
      case '\n':
        line_start = true;
        break;
      case '"':
        // A double-quoted scalar, escapes and all.
        for (++i; i < yaml.size() && yaml[i] != '"'; ++i) {
          if (yaml[i] == '\\') ++i;
        }
        break;
      case ':':
        if (i + 1 == yaml.size() || yaml[i + 1] == ' ' || yaml[i + 1] == '\n') nodes += 2;
        break;
      case '[':
        flow.push_back(c);
        if (i + 1 < yaml.size() && yaml[i + 1] != ']') ++nodes;
        break;
      case '{':
        flow.push_back(c);
        break;
      case ']':
      case '}':
        if (!flow.empty()) flow.pop_back();
        break;
      case ',':
        if (!flow.empty() && flow.back() == '[') ++nodes;
        break;
      default:
        break;
    }
  }
  return nodes;
}

core::Status CheckWrittenYaml(std::string_view yaml, std::string_view source) {
  if (yaml.size() > core::kMaxInputBytes) {
    return core::Errorf("{}: it would have {} bytes; dlsched reads files of at most {} MiB", source,
                        yaml.size(), core::kMaxInputBytes >> 20);
  }
  if (const int64_t nodes = WrittenYamlNodes(yaml); nodes > core::kMaxYamlNodes) {
    return core::Errorf("{}: it would have {} YAML nodes; dlsched reads at most {}", source, nodes,
                        core::kMaxYamlNodes);
  }
  return {};
}

core::Result<std::string> ClusterYaml(const ClusterOptions& o) {
  if (o.nodes < 1 || o.nodes > core::kMaxNodes) {
    return core::Errorf("--nodes: expected an integer between 1 and {}, got {}", core::kMaxNodes,
                        o.nodes);
  }
  if (o.gpus_per_node < 0 || o.gpus_per_node > core::kMaxGpusPerNode) {
    return core::Errorf("--gpus-per-node: expected an integer between 0 and {}, got {}",
                        core::kMaxGpusPerNode, o.gpus_per_node);
  }
  if (o.cpus_per_node < 1) {
    return core::Errorf("--cpus-per-node: expected an integer >= 1, got {}", o.cpus_per_node);
  }
  if (o.memory_gi_per_node < 1) {
    return core::Errorf("--memory-gi-per-node: expected an integer >= 1, got {}",
                        o.memory_gi_per_node);
  }
  if (o.nodes_per_rack < 1 || o.racks_per_zone < 1) {
    return core::Errorf("nodes per rack and racks per zone must be >= 1");
  }
  if (o.gpu_model.empty()) return core::Errorf("--gpu-model: expected a non-empty string");
  DLSCHED_TRY(CheckGpuTypes(o.gpu_types));
  const int groups = std::max<int>(1, static_cast<int>(o.gpu_types.size()));
  if (o.nodes < groups) {
    return core::Errorf("--nodes: expected at least one node per GPU type ({}), got {}", groups,
                        o.nodes);
  }

  // Each group's racks: its nodes in racks of nodes_per_rack.
  std::vector<std::pair<int, int>> racks;  // (group, nodes)
  for (int g = 0; g < groups; ++g) {
    int left = o.nodes / groups + (g < o.nodes % groups ? 1 : 0);
    for (; left > 0; left -= o.nodes_per_rack)
      racks.emplace_back(g, std::min(left, o.nodes_per_rack));
  }
  const int width = std::max(3, static_cast<int>(fmt::format("{}", racks.size() - 1).size()));
  std::string out = fmt::format(
      "# {} nodes of {} GPUs{}, {} cpu, {}Gi in racks of {}, generated by `{}`.\n"
      "nodes:\n",
      o.nodes, o.gpus_per_node,
      o.gpu_types.empty() ? "" : fmt::format(" ({})", fmt::join(o.gpu_types, ", ")),
      o.cpus_per_node, o.memory_gi_per_node, o.nodes_per_rack, o.generator);
  auto emit = std::back_inserter(out);
  for (size_t r = 0; r < racks.size(); ++r) {
    const auto [group, count] = racks[r];
    const std::string rack = fmt::format("r{:0{}}", r, width);
    const std::string& model = o.gpu_types.empty() ? o.gpu_model : o.gpu_types[group];
    fmt::format_to(emit, "  - name: {}\n", rack);
    fmt::format_to(emit, "    count: {}\n", count);
    fmt::format_to(emit,
                   "    resources: {{cpu: \"{}\", memory: \"{}Gi\", nvidia.com/gpu: \"{}\"{}}}\n",
                   o.cpus_per_node, o.memory_gi_per_node, o.gpus_per_node,
                   o.shared_gpus ? fmt::format(", dlsched.io/gpu-milli: \"{}\"",
                                               int64_t{o.gpus_per_node} * core::kMilliPerGpu)
                                 : "");
    if (!o.gpu_types.empty()) fmt::format_to(emit, "    gpuType: {}\n", Str(model));
    fmt::format_to(emit, "    labels: {{zone: z{}, rack: {}, gpu-model: {}}}\n",
                   static_cast<int>(r) / o.racks_per_zone, rack, Str(model));
  }
  // What the options add up to must be a cluster dlsched accepts (e.g. the
  // total memory stays within core::kMaxTotalAmount).
  DLSCHED_TRY(config::ParseCluster(out, "generated cluster"));
  return out;
}

}  // namespace dlsched::sim
