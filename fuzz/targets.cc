#include "targets.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "dlsched/cli/snapshot.h"
#include "dlsched/config/specs.h"
#include "dlsched/config/trace.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/quantity.h"
#include "dlsched/core/resources.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/report/html.h"
#include "dlsched/report/provenance.h"
#include "dlsched/report/run_data.h"
#include "dlsched/report/sweep.h"
#include "dlsched/sim/model_zoo.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::fuzz {
namespace {

// A broken property: the fuzzer keeps the input as a crash.
void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// Inputs whose simulation would be slow rather than wrong are parsed but not
// simulated, so the fuzzer spends its time on many inputs.
constexpr size_t kMaxSimulatedNodes = 2000;
constexpr size_t kMaxSimulatedJobs = 100;
constexpr int64_t kMaxSimulatedTasks = 2000;

// The companions of the input under test: a small cluster and a workload
// that exercise gangs, PS and Chief, elastic workers, deadlines, launch and
// checkpoint delays, priorities and the locality factor.
constexpr char kCluster[] = R"(nodes:
  - {name: g, count: 3, resources: {cpu: "16", memory: 64Gi, nvidia.com/gpu: 4}, labels: {zone: z1}}
  - {name: c, resources: {cpu: "32", memory: 128Gi}}
)";
constexpr char kWorkload[] = R"(jobs:
  - {name: a, arrival: 0, ps: {replicas: 1, resources: {cpu: "1", memory: 1Gi}},
     worker: {replicas: 2, resources: {cpu: "2", memory: 2Gi, nvidia.com/gpu: 1}},
     totalSteps: 200, throughput: {table: {1: 1, 2: 1.8}}, launchDelay: 5}
  - {name: b, arrival: 10, worker: {replicas: 4, minReplicas: 2, maxReplicas: 8,
     resources: {cpu: "1", memory: 1Gi, nvidia.com/gpu: 1}}, totalSteps: 500,
     throughput: {table: {2: 2, 4: 3.5, 8: 6}}, checkpointDelay: 3, launchDelay: 2}
  - {name: c, arrival: 10, priority: high, maxWaitMinutes: 5,
     worker: {replicas: 1, resources: {nvidia.com/gpu: 2}}, totalSteps: 100,
     throughput: {table: {1: 1}}, deadline: 400}
  - {name: d, arrival: 30, namespace: t2, ps: {replicas: 2, resources: {cpu: 500m}},
     chief: {replicas: 1, resources: {cpu: "1"}},
     worker: {replicas: 3, resources: {cpu: "1", nvidia.com/gpu: 1}}, totalSteps: 300,
     throughput: {table: {3: 2}, localitySensitivity: 0.3}}
  - {name: e, arrival: 31, priority: low, worker: {replicas: 6, minReplicas: 1, maxReplicas: 6,
     resources: {cpu: "1", memory: 1Gi, nvidia.com/gpu: 1}}, totalSteps: 1000,
     throughput: {table: {1: 1, 6: 5}}}
)";

const core::ClusterSpec& FixedCluster() {
  static const core::ClusterSpec cluster = *config::ParseCluster(kCluster, "fixed-cluster.yaml");
  return cluster;
}

const config::WorkloadSpec& FixedWorkload() {
  static const config::WorkloadSpec workload = [] {
    config::WorkloadSpec w = *config::ParseWorkload(kWorkload, "fixed-workload.yaml");
    Check(sim::ResolveWorkload(w).has_value());
    return w;
  }();
  return workload;
}

// Runs the workload on the cluster with the simulator's invariant checks
// on: any error here is a scheduling bug (the inputs were accepted).
void Run(const core::ClusterSpec& cluster, const config::WorkloadSpec& workload,
         const engine::Engine& engine) {
  sim::SimOptions options;
  options.check_invariants = true;
  auto result = sim::Simulate(cluster, workload, engine, options);
  Check(result.has_value());
  Check(result->run.jobs.size() == workload.jobs.size());
}

void RunBuiltin(const core::ClusterSpec& cluster, const config::WorkloadSpec& workload,
                const char* profile) {
  auto spec = policy::ResolveProfile(profile);
  Check(spec.has_value());
  auto built = policy::BuildProfile(*spec);
  Check(built.has_value());
  const engine::Engine engine(std::move(*built));
  Run(cluster, workload, engine);
}

std::string Text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

namespace fs = std::filesystem;

// The readers of traces, measurements and result directories take files:
// each input is written into this process's scratch directory (created
// once, before AFL++'s fork server, so every child writes in the same
// place; one input at a time).
const fs::path& Scratch() {
  static const fs::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    fs::path d = fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") /
                 ("dlsched-fuzz-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// A fresh, empty directory `name` in the scratch directory.
fs::path FreshDir(const std::string& name) {
  const fs::path d = Scratch() / name;
  std::error_code ec;
  fs::remove_all(d, ec);
  fs::create_directories(d);
  return d;
}

// A file whose place is taken (an earlier file of the input is named as
// its directory, or a directory as it) is dropped, as a bad name is.
void WriteFile(const fs::path& path, std::string_view text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec || fs::is_directory(path, ec)) return;
  std::ofstream(path, std::ios::binary)
      .write(text.data(), static_cast<std::streamsize>(text.size()));
}

// An input holding several files: "#file NAME" lines start each file (the
// bytes before the first go to `first`). A NAME that is not a plain
// relative path of [A-Za-z0-9._-] segments (no "..", at most 4 deep, 100
// bytes) drops its file.
std::vector<std::pair<std::string, std::string>> Files(std::string_view input,
                                                       std::string first_name) {
  constexpr std::string_view kMarker = "#file ";
  const auto plain = [](std::string_view name) {
    if (name.empty() || name.size() > 100 || name.front() == '/' || name.back() == '/') {
      return false;
    }
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= name.size(); ++i) {
      if (i < name.size() && name[i] != '/') {
        const char c = name[i];
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        if (!ok) return false;
        continue;
      }
      const std::string_view segment = name.substr(start, i - start);
      if (segment.empty() || segment == "." || segment == ".." || ++depth > 4) return false;
      start = i + 1;
    }
    return true;
  };
  std::vector<std::pair<std::string, std::string>> out;
  std::string name = std::move(first_name);
  std::string current;
  bool first = true;
  for (size_t pos = 0; pos < input.size();) {
    const size_t eol = input.find('\n', pos);
    const size_t end = eol == std::string_view::npos ? input.size() : eol + 1;
    const std::string_view line = input.substr(pos, end - pos);
    pos = end;
    if (!line.starts_with(kMarker)) {
      current += line;
      continue;
    }
    // The first file only when it has bytes: an input may start with a name.
    if (!name.empty() && (!first || !current.empty())) {
      out.emplace_back(std::move(name), std::move(current));
    }
    first = false;
    current.clear();
    std::string_view next = line.substr(kMarker.size());
    if (next.ends_with('\n')) next.remove_suffix(1);
    name = plain(next) ? std::string(next) : std::string();
  }
  if (!name.empty() && (!first || !current.empty())) {
    out.emplace_back(std::move(name), std::move(current));
  }
  return out;
}

// Small enough to simulate quickly (see kMaxSimulated*).
bool Small(const config::WorkloadSpec& workload) {
  if (workload.jobs.size() > kMaxSimulatedJobs) return false;
  int64_t tasks = 0;
  for (const auto& job : workload.jobs) {
    tasks += job.NumTasks(job.role(core::Role::kWorker).max_replicas);
  }
  return tasks <= kMaxSimulatedTasks;
}

// A trace's jobs as `dlsched simulate --trace` takes them: loaded, resolved,
// and when small, simulated on the fixed cluster under `profiles`. The
// native format's writer takes every job it can hold, and what it writes
// loads again with the same jobs.
void RunTrace(const config::TraceOptions& options, std::initializer_list<const char*> profiles) {
  auto load = config::LoadTrace(options);
  if (!load) return;
  config::WorkloadSpec& workload = load->workload;
  Check(!workload.jobs.empty());
  if (!sim::ResolveWorkload(workload)) return;
  if (auto csv = config::ToNativeCsv(workload, sim::FindModel)) {
    const fs::path again = Scratch() / "again.csv";
    WriteFile(again, *csv);
    config::TraceOptions o;
    o.format = config::TraceFormat::kNative;
    o.path = again.string();
    auto back = config::LoadTrace(o);
    Check(back.has_value() && back->workload.jobs.size() == workload.jobs.size());
  }
  if (!Small(workload)) return;
  for (const char* profile : profiles) RunBuiltin(FixedCluster(), workload, profile);
}

config::TraceOptions TraceFile(config::TraceFormat format, std::string_view text) {
  const fs::path file = FreshDir("trace") / "trace.csv";
  WriteFile(file, text);
  config::TraceOptions o;
  o.format = format;
  o.path = file.string();
  return o;
}

// Renders what LoadReport made of `dir`, as `dlsched report` does.
void Report(const std::string& dir) {
  const std::string dirs[] = {dir};
  auto loaded = report::LoadReport(dirs);
  if (!loaded) return;
  for (const std::optional<metrics::Window>& window :
       {std::optional<metrics::Window>(), std::optional<metrics::Window>(metrics::Window{5, 50})}) {
    report::RenderOptions options;
    options.window = window;
    if (!report::CheckRenderOptions(*loaded, options)) continue;
    const std::string html = report::RenderHtml(*loaded, options);
    Check(html.starts_with("<!DOCTYPE html>"));
  }
}

}  // namespace

void Quantity(const uint8_t* data, size_t size) {
  const std::string text = Text(data, size);
  auto q = core::Quantity::Parse(text);
  if (q) {
    // The canonical form parses back to the same value.
    auto again = core::Quantity::Parse(q->ToString());
    Check(again.has_value() && *again == *q);
    // Conversions either succeed or say why; a non-negative quantity never
    // becomes a negative amount.
    auto milli = q->MilliValue();
    auto value = q->Value();
    if (milli && !q->IsNegative()) Check(*milli >= 0);
    if (value && !q->IsNegative()) Check(*value >= 0);
  }
  for (core::ResourceId id : {core::kCpu, core::kMemory, core::kGpu}) {
    auto amount = core::ParseResourceAmount(id, text);
    if (amount) Check(*amount >= 0);
  }
}

void Cluster(const uint8_t* data, size_t size) {
  auto cluster = config::ParseCluster(Text(data, size), "fuzz-cluster.yaml");
  if (!cluster || cluster->nodes.size() > kMaxSimulatedNodes) return;
  for (const char* profile : {"gang-binpack", "k8s-default"}) {
    RunBuiltin(*cluster, FixedWorkload(), profile);
  }
}

void Workload(const uint8_t* data, size_t size) {
  auto workload = config::ParseWorkload(Text(data, size), "fuzz-workload.yaml");
  if (!workload) return;
  if (!sim::ResolveWorkload(*workload)) return;  // unknown model, cannot run at its minimum
  if (workload->jobs.size() > kMaxSimulatedJobs) return;
  int64_t tasks = 0;
  for (const auto& job : workload->jobs) {
    tasks += job.NumTasks(job.role(core::Role::kWorker).max_replicas);
  }
  if (tasks > kMaxSimulatedTasks) return;
  for (const char* profile : {"gang-binpack", "k8s-default", "kod2", "fsched"}) {
    RunBuiltin(FixedCluster(), *workload, profile);
  }
}

void Profile(const uint8_t* data, size_t size) {
  auto spec = config::ParseProfile(Text(data, size), "fuzz-profile.yaml");
  if (!spec) return;
  auto built = policy::BuildProfile(*spec);
  if (!built) return;
  const engine::Engine engine(std::move(*built));
  Run(FixedCluster(), FixedWorkload(), engine);
}

void TiresiasTrace(const uint8_t* data, size_t size) {
  auto o = TraceFile(config::TraceFormat::kTiresias, Text(data, size));
  RunTrace(o, {"las", "gang-binpack"});
  // Elastic, with another speed curve.
  o.min_factor = 0.5;
  o.max_factor = 2;
  o.scaling = *core::ScalingCurve::Parse("amdahl:0.9");
  RunTrace(o, {"kod2"});
}

void TiresiasCluster(const uint8_t* data, size_t size) {
  const fs::path file = FreshDir("cluster") / "cluster.csv";
  WriteFile(file, Text(data, size));
  auto cluster = config::LoadTiresiasCluster(file.string());
  if (!cluster) return;
  Check(!cluster->nodes.empty() && static_cast<int>(cluster->nodes.size()) <= core::kMaxNodes);
  if (cluster->nodes.size() > kMaxSimulatedNodes) return;
  RunBuiltin(*cluster, FixedWorkload(), "gang-binpack");
}

void PhillyTrace(const uint8_t* data, size_t size) {
  auto o = TraceFile(config::TraceFormat::kPhilly, Text(data, size));
  RunTrace(o, {"fifo"});
  // Filtered by virtual cluster and time, elastic.
  o.virtual_clusters = {"6214e9", "a"};
  o.from = 1507507200;   // 2017-10-09
  o.until = 1507593600;  // 2017-10-10
  o.min_factor = 0.25;
  o.max_factor = 4;
  o.scaling = *core::ScalingCurve::Parse("sqrt");
  o.limit = 20;
  RunTrace(o, {"las"});
}

void PolluxTrace(const uint8_t* data, size_t size) {
  auto o = TraceFile(config::TraceFormat::kPollux, Text(data, size));
  o.pollux_traces = std::string(DLSCHED_SOURCE_DIR) + "/data/pollux/traces";
  RunTrace(o, {"pollux-tiresias", "gang-binpack"});
}

void PolluxMeasurements(const uint8_t* data, size_t size) {
  // bert's files (two epochs: the smallest validation files), read by a
  // fixed workload of bert jobs at several sizes and batches.
  const fs::path traces = FreshDir("pollux-traces");
  for (const auto& [name, text] : Files(Text(data, size), "placements.csv")) {
    WriteFile(traces / "bert" / name, text);
  }
  const fs::path workload = FreshDir("pollux-workload") / "w.csv";
  WriteFile(workload,
            "name,time,application,num_replicas,batch_size\n"
            "a,0,bert,1,12\nb,10,bert,2,24\nc,20,bert,4,48\nd,30,bert,6,96\n"
            "e,40,bert,8,192\nf,50,bert,16,384\ng,60,bert,3,100\n");
  config::TraceOptions o;
  o.format = config::TraceFormat::kPollux;
  o.path = workload.string();
  o.pollux_traces = traces.string();
  o.skip_bad_rows = true;  // a row the measurements do not cover is skipped
  RunTrace(o, {"pollux-tiresias"});
}

void NativeTrace(const uint8_t* data, size_t size) {
  auto o = TraceFile(config::TraceFormat::kNative, Text(data, size));
  RunTrace(o, {"gang-binpack", "kod2"});
  o.skip_bad_rows = true;
  o.limit = 5;
  RunTrace(o, {"fsched"});
}

void ReportCsv(const uint8_t* data, size_t size) {
  const fs::path dir = FreshDir("report-csv");
  for (const auto& [name, text] : Files(Text(data, size), "jobs.csv")) WriteFile(dir / name, text);
  Report(dir.string());
  // A sweep's cells, as `dlsched sweep --merge` reads them.
  if (report::HasSweepCells(dir.string())) (void)report::MergeSweepCells(dir.string());
}

void ReportJson(const uint8_t* data, size_t size) {
  const std::string text = Text(data, size);
  const fs::path dir = FreshDir("report-json");
  WriteFile(dir / "summary.json", text);
  Report(dir.string());
  // The provenance `dlsched rerun` reads, from each file that holds one.
  for (const char* name : {"provenance.json", "compare.json"}) {
    const fs::path top = FreshDir("provenance");
    WriteFile(top / name, text);
    auto found = report::ReadProvenance(top.string());
    if (found && *found) {
      Check(!(*found)->provenance.command.empty());
      (void)report::ShellCommand((*found)->provenance.command);
    }
  }
}

void Snapshot(const uint8_t* data, size_t size) {
  auto snap = cli::DecodeSnapshot(Text(data, size), "fuzz", "now");
  if (!snap) return;
  if (!sim::ResolveWorkload(snap->workload)) return;
  if (snap->cluster.nodes.size() > kMaxSimulatedNodes || !Small(snap->workload)) return;
  sim::SimOptions options;
  options.check_invariants = true;
  auto spec = policy::ResolveProfile("gang-binpack");
  auto built = policy::BuildProfile(*spec);
  const engine::Engine engine(std::move(*built));
  // A snapshot's running jobs need not fit (nodes can be gone): the
  // simulator refuses such a start with an error, which is not a finding.
  (void)sim::Simulate(snap->cluster, snap->workload, engine, options);
}

std::span<const NamedTarget> Targets() {
  static constexpr NamedTarget kTargets[] = {
      {"quantity", &Quantity},
      {"cluster", &Cluster},
      {"workload", &Workload},
      {"profile", &Profile},
      {"tiresias", &TiresiasTrace},
      {"tiresias_cluster", &TiresiasCluster},
      {"philly", &PhillyTrace},
      {"pollux", &PolluxTrace},
      {"pollux_measurements", &PolluxMeasurements},
      {"native", &NativeTrace},
      {"report_csv", &ReportCsv},
      {"report_json", &ReportJson},
      {"snapshot", &Snapshot},
  };
  return kTargets;
}

void WarmUp() {
  const auto run = [](Target target, std::string_view text) {
    target(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  };
  run(&Quantity, "1.5Gi");
  run(&Cluster, kCluster);
  run(&Workload, kWorkload);
  for (const auto& builtin : policy::BuiltinProfiles()) run(&Profile, builtin.yaml);
  run(&TiresiasTrace, "job_id,num_gpu,submit_time,duration\n0,1,0,50\n1,2,5,40\n");
  run(&TiresiasCluster,
      "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n"
      "1,2,4,8,64\n");
  run(&PhillyTrace,
      "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66,1,66,a\n");
  run(&PolluxTrace, "name,time,application,num_replicas,batch_size\na,0,cifar10,2,256\n");
  run(&NativeTrace, std::string(config::kNativeHeader) + "\na,0,1,1,1,1,,,100,\n");
  run(&ReportCsv, "name,submit,queueing,launching,running\na,0,1,2,3\n");
  run(&ReportJson, "{\"profile\": \"p\", \"end_time\": 10}");
  run(&Snapshot, "{\"cluster\": \"nodes: []\", \"workload\": \"jobs: []\"}");
}

Target FindTarget(std::string_view name) {
  for (const auto& t : Targets()) {
    if (t.name == name) return t.run;
  }
  return nullptr;
}

}  // namespace dlsched::fuzz
