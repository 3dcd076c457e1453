#include "dlsched/sim/model_zoo.h"

#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <vector>

// Every number below is compiled in; nothing is read at run time.
// model_zoo_test.cc checks every one against data/gavel/ (in this repository).
//
// Source: Gavel (Narayanan et al., "Heterogeneity-Aware Cluster Scheduling
// Policies for Deep Learning Workloads", OSDI'20), repository
// stanford-futuredata/gavel at commit c4fa400, MIT licence, file
// simulation_throughputs.json. Its keys are GPU type ("k80", "p100", "v100",
// and "<type>_unconsolidated" when the job's GPUs are spread over servers),
// then "('<job type>', <scale factor = number of GPUs>)", then "null" for the
// job running alone, in training steps per second. One GPU is one worker.
// Rates are rounded to 4 significant digits.
//
// Per GPU type: besides its own table (measured on the GPU type `gpu`), every
// entry carries, in ThroughputProfile::by_gpu_type, a table for each GPU type
// Gavel measured its job type on ("k80", "p100", "v100"; consolidated keys
// only), read on nodes whose GPU type (label nvidia.com/gpu.product) has that
// name. The table of the entry's own type is its own table.
//
// Locality sensitivity: 1 - unconsolidated / consolidated rate (same GPU
// type), averaged over the scale factors > 1 that both have, clamped to
// [0, 1], rounded to 2 decimals. 0 where Gavel has no such pair.

namespace dlsched::sim {
namespace {

struct Point {
  int workers;
  double steps_per_s;
};

// One GPU type's table of an entry's job type.
struct GpuTable {
  std::string_view gpu;  // Gavel GPU type, the key in ThroughputProfile::by_gpu_type
  std::span<const Point> points;
};

struct Entry {
  std::string_view name;
  std::string_view gpu;
  std::string_view job_type;
  std::span<const Point> points;
  std::span<const GpuTable> by_gpu_type;  // one per GPU type, `gpu`'s being `points`
  double locality_sensitivity;
  std::string_view locality_note;
};

constexpr std::string_view kSource =
    "Gavel (OSDI'20), stanford-futuredata/gavel@c4fa400, MIT licence, "
    "simulation_throughputs.json";

constexpr std::string_view kSingleGpuOnly =
    "0: Gavel measured this job type on 1 GPU only, so there is no "
    "unconsolidated rate at a scale factor > 1";

// Gavel measures each job type at several batch sizes; the zoo keeps one:
// ResNet-50 64 and ResNet-18 128; Transformer 64 and Recommendation 2048 (the
// middle of Gavel's ranges); LM 40, because the middle LM size (20) drops from
// 132.2 to 111.0 steps/s between 2 and 4 v100 GPUs while 40 does not.
// A3C, CycleGAN and Recommendation were measured on 1 GPU only: their tables
// have the single point 1 -> rate, so more workers do not speed them up.
//
// Each job type has its k80, p100 and v100 tables (the v100 one is the v100
// entry's own table) and a GpuTable array listing the three; every entry of
// that job type carries that array.

constexpr Point kA3C[] = {
    // gavel simulation_throughputs.json, v100, "('A3C', 1)", null
    {1, 7.176},
};
constexpr Point kA3CK80[] = {
    // gavel simulation_throughputs.json, k80, "('A3C', 1)", null
    {1, 3.439},
};
constexpr Point kA3CP100[] = {
    // gavel simulation_throughputs.json, p100, "('A3C', 1)", null
    {1, 5.681},
};
constexpr GpuTable kA3CByGpu[] = {{"k80", kA3CK80}, {"p100", kA3CP100}, {"v100", kA3C}};

constexpr Point kCycleGan[] = {
    // gavel simulation_throughputs.json, v100, "('CycleGAN', 1)", null
    {1, 4.426},
};
constexpr Point kCycleGanK80[] = {
    // gavel simulation_throughputs.json, k80, "('CycleGAN', 1)", null
    {1, 0.5048},
};
constexpr Point kCycleGanP100[] = {
    // gavel simulation_throughputs.json, p100, "('CycleGAN', 1)", null
    {1, 2.403},
};
constexpr GpuTable kCycleGanByGpu[] = {
    {"k80", kCycleGanK80}, {"p100", kCycleGanP100}, {"v100", kCycleGan}};

constexpr Point kLm[] = {
    // gavel simulation_throughputs.json, v100, "('LM (batch size 40)', 1)", null
    {1, 45.24},
    // gavel simulation_throughputs.json, v100, "('LM (batch size 40)', 2)", null
    {2, 91.59},
    // gavel simulation_throughputs.json, v100, "('LM (batch size 40)', 4)", null
    {4, 96.03},
    // gavel simulation_throughputs.json, v100, "('LM (batch size 40)', 8)", null
    {8, 359.3},
};
constexpr Point kLmK80[] = {
    // gavel simulation_throughputs.json, k80, "('LM (batch size 40)', 1)", null
    {1, 11.50},
    // gavel simulation_throughputs.json, k80, "('LM (batch size 40)', 2)", null
    {2, 16.07},
    // gavel simulation_throughputs.json, k80, "('LM (batch size 40)', 4)", null
    {4, 22.99},
    // gavel simulation_throughputs.json, k80, "('LM (batch size 40)', 8)", null
    {8, 43.15},
};
constexpr Point kLmP100[] = {
    // gavel simulation_throughputs.json, p100, "('LM (batch size 40)', 1)", null
    {1, 35.77},
    // gavel simulation_throughputs.json, p100, "('LM (batch size 40)', 2)", null
    {2, 48.04},
    // gavel simulation_throughputs.json, p100, "('LM (batch size 40)', 4)", null
    {4, 76.05},
    // gavel simulation_throughputs.json, p100, "('LM (batch size 40)', 8)", null
    {8, 102.2},
};
constexpr GpuTable kLmByGpu[] = {{"k80", kLmK80}, {"p100", kLmP100}, {"v100", kLm}};

constexpr Point kRecommendation[] = {
    // gavel simulation_throughputs.json, v100, "('Recommendation (batch size 2048)', 1)", null
    {1, 7.470},
};
constexpr Point kRecommendationK80[] = {
    // gavel simulation_throughputs.json, k80, "('Recommendation (batch size 2048)', 1)", null
    {1, 10.44},
};
constexpr Point kRecommendationP100[] = {
    // gavel simulation_throughputs.json, p100, "('Recommendation (batch size 2048)', 1)", null
    {1, 16.60},
};
constexpr GpuTable kRecommendationByGpu[] = {
    {"k80", kRecommendationK80}, {"p100", kRecommendationP100}, {"v100", kRecommendation}};

constexpr Point kResNet18[] = {
    // gavel simulation_throughputs.json, v100, "('ResNet-18 (batch size 128)', 1)", null
    {1, 17.99},
    // gavel simulation_throughputs.json, v100, "('ResNet-18 (batch size 128)', 2)", null
    {2, 23.99},
    // gavel simulation_throughputs.json, v100, "('ResNet-18 (batch size 128)', 4)", null
    {4, 69.95},
    // gavel simulation_throughputs.json, v100, "('ResNet-18 (batch size 128)', 8)", null
    {8, 162.1},
};
constexpr Point kResNet18K80[] = {
    // gavel simulation_throughputs.json, k80, "('ResNet-18 (batch size 128)', 1)", null
    {1, 1.807},
    // gavel simulation_throughputs.json, k80, "('ResNet-18 (batch size 128)', 2)", null
    {2, 3.631},
    // gavel simulation_throughputs.json, k80, "('ResNet-18 (batch size 128)', 4)", null
    {4, 6.982},
    // gavel simulation_throughputs.json, k80, "('ResNet-18 (batch size 128)', 8)", null
    {8, 13.66},
};
constexpr Point kResNet18P100[] = {
    // gavel simulation_throughputs.json, p100, "('ResNet-18 (batch size 128)', 1)", null
    {1, 11.68},
    // gavel simulation_throughputs.json, p100, "('ResNet-18 (batch size 128)', 2)", null
    {2, 24.23},
    // gavel simulation_throughputs.json, p100, "('ResNet-18 (batch size 128)', 4)", null
    {4, 45.35},
    // gavel simulation_throughputs.json, p100, "('ResNet-18 (batch size 128)', 8)", null
    {8, 85.08},
};
constexpr GpuTable kResNet18ByGpu[] = {
    {"k80", kResNet18K80}, {"p100", kResNet18P100}, {"v100", kResNet18}};

constexpr Point kResNet50[] = {
    // gavel simulation_throughputs.json, v100, "('ResNet-50 (batch size 64)', 1)", null
    {1, 4.395},
    // gavel simulation_throughputs.json, v100, "('ResNet-50 (batch size 64)', 2)", null
    {2, 7.922},
    // gavel simulation_throughputs.json, v100, "('ResNet-50 (batch size 64)', 4)", null
    {4, 9.452},
    // gavel simulation_throughputs.json, v100, "('ResNet-50 (batch size 64)', 8)", null
    {8, 17.30},
};
constexpr Point kResNet50K80[] = {
    // gavel simulation_throughputs.json, k80, "('ResNet-50 (batch size 64)', 1)", null
    {1, 0.6190},
    // gavel simulation_throughputs.json, k80, "('ResNet-50 (batch size 64)', 2)", null
    {2, 1.264},
    // gavel simulation_throughputs.json, k80, "('ResNet-50 (batch size 64)', 4)", null
    {4, 2.412},
    // gavel simulation_throughputs.json, k80, "('ResNet-50 (batch size 64)', 8)", null
    {8, 4.569},
};
constexpr Point kResNet50P100[] = {
    // gavel simulation_throughputs.json, p100, "('ResNet-50 (batch size 64)', 1)", null
    {1, 2.619},
    // gavel simulation_throughputs.json, p100, "('ResNet-50 (batch size 64)', 2)", null
    {2, 5.516},
    // gavel simulation_throughputs.json, p100, "('ResNet-50 (batch size 64)', 4)", null
    {4, 10.36},
    // gavel simulation_throughputs.json, p100, "('ResNet-50 (batch size 64)', 8)", null
    {8, 18.22},
};
constexpr GpuTable kResNet50ByGpu[] = {
    {"k80", kResNet50K80}, {"p100", kResNet50P100}, {"v100", kResNet50}};

constexpr Point kTransformer[] = {
    // gavel simulation_throughputs.json, v100, "('Transformer (batch size 64)', 1)", null
    {1, 8.618},
    // gavel simulation_throughputs.json, v100, "('Transformer (batch size 64)', 2)", null
    {2, 15.88},
    // gavel simulation_throughputs.json, v100, "('Transformer (batch size 64)', 4)", null
    {4, 19.66},
    // gavel simulation_throughputs.json, v100, "('Transformer (batch size 64)', 8)", null
    {8, 49.65},
};
constexpr Point kTransformerK80[] = {
    // gavel simulation_throughputs.json, k80, "('Transformer (batch size 64)', 1)", null
    {1, 1.752},
    // gavel simulation_throughputs.json, k80, "('Transformer (batch size 64)', 2)", null
    {2, 3.063},
    // gavel simulation_throughputs.json, k80, "('Transformer (batch size 64)', 4)", null
    {4, 5.031},
    // gavel simulation_throughputs.json, k80, "('Transformer (batch size 64)', 8)", null
    {8, 8.976},
};
constexpr Point kTransformerP100[] = {
    // gavel simulation_throughputs.json, p100, "('Transformer (batch size 64)', 1)", null
    {1, 5.092},
    // gavel simulation_throughputs.json, p100, "('Transformer (batch size 64)', 2)", null
    {2, 7.887},
    // gavel simulation_throughputs.json, p100, "('Transformer (batch size 64)', 4)", null
    {4, 13.31},
    // gavel simulation_throughputs.json, p100, "('Transformer (batch size 64)', 8)", null
    {8, 19.94},
};
constexpr GpuTable kTransformerByGpu[] = {
    {"k80", kTransformerK80}, {"p100", kTransformerP100}, {"v100", kTransformer}};

// Sorted by name (checked below).
constexpr Entry kEntries[] = {
    {"a3c", "v100", "A3C", kA3C, kA3CByGpu, 0.0, kSingleGpuOnly},
    {"cyclegan", "v100", "CycleGAN", kCycleGan, kCycleGanByGpu, 0.0, kSingleGpuOnly},
    // gavel simulation_throughputs.json, v100 and v100_unconsolidated,
    // "('LM (batch size 40)', 2|4|8)", null
    {"lm", "v100", "LM (batch size 40)", kLm, kLmByGpu, 0.77,
     "1 - v100_unconsolidated / v100 at 2, 4, 8 GPUs = 0.768, 0.696, 0.855; mean 0.773"},
    {"recommendation", "v100", "Recommendation (batch size 2048)", kRecommendation,
     kRecommendationByGpu, 0.0, kSingleGpuOnly},
    // gavel simulation_throughputs.json, v100 and v100_unconsolidated,
    // "('ResNet-18 (batch size 128)', 2|4|8)", null
    {"resnet18", "v100", "ResNet-18 (batch size 128)", kResNet18, kResNet18ByGpu, 0.37,
     "1 - v100_unconsolidated / v100 at 2, 4, 8 GPUs = -0.022, 0.494, 0.623; mean 0.365"},
    // gavel simulation_throughputs.json, v100 and v100_unconsolidated,
    // "('ResNet-50 (batch size 64)', 2|4|8)", null. Gavel measured the spread runs
    // faster than the packed ones at 4 and 8 GPUs, so the mean is negative.
    {"resnet50", "v100", "ResNet-50 (batch size 64)", kResNet50, kResNet50ByGpu, 0.0,
     "1 - v100_unconsolidated / v100 at 2, 4, 8 GPUs = 0.133, -0.178, -0.142; mean -0.062, "
     "clamped to 0 (spread runs measured faster than packed ones at 4 and 8 GPUs)"},
    // k80_unconsolidated has "('ResNet-50 (batch size 64)', 1)" only.
    {"resnet50-k80", "k80", "ResNet-50 (batch size 64)", kResNet50K80, kResNet50ByGpu, 0.0,
     "0: k80_unconsolidated has this job type at 1 GPU only"},
    // gavel simulation_throughputs.json, p100 and p100_unconsolidated,
    // "('ResNet-50 (batch size 64)', 2|4|8)", null
    {"resnet50-p100", "p100", "ResNet-50 (batch size 64)", kResNet50P100, kResNet50ByGpu, 0.0,
     "1 - p100_unconsolidated / p100 at 2, 4, 8 GPUs = -0.016, -0.019, -0.037; mean -0.024, "
     "clamped to 0"},
    // gavel simulation_throughputs.json, v100 and v100_unconsolidated,
    // "('Transformer (batch size 64)', 2|4|8)", null
    {"transformer", "v100", "Transformer (batch size 64)", kTransformer, kTransformerByGpu, 0.56,
     "1 - v100_unconsolidated / v100 at 2, 4, 8 GPUs = 0.559, 0.462, 0.657; mean 0.560"},
};

static_assert(std::ranges::adjacent_find(kEntries, std::ranges::greater_equal{}, &Entry::name) ==
                  std::ranges::end(kEntries),
              "kEntries must be sorted by name, without duplicates");

struct Zoo {
  std::vector<core::ThroughputProfile> profiles;
  std::vector<ModelInfo> infos;
};

Zoo Build() {
  Zoo zoo;
  zoo.profiles.reserve(std::size(kEntries));
  for (const Entry& e : kEntries) {
    core::ThroughputProfile p;
    p.model = std::string(e.name);
    for (const Point& pt : e.points) p.steps_per_s.emplace(pt.workers, pt.steps_per_s);
    core::GpuTypeRates rates;
    for (const GpuTable& t : e.by_gpu_type) {
      std::map<int, double>& table = rates[std::string(t.gpu)];
      for (const Point& pt : t.points) table.emplace(pt.workers, pt.steps_per_s);
    }
    p.SetGpuTypes(std::move(rates));
    p.locality_sensitivity = e.locality_sensitivity;
    zoo.profiles.push_back(std::move(p));
  }
  // `profiles` is complete and never resized again, so the pointers stay valid.
  zoo.infos.reserve(std::size(kEntries));
  for (size_t i = 0; i < std::size(kEntries); ++i) {
    const Entry& e = kEntries[i];
    zoo.infos.push_back(ModelInfo{.name = e.name,
                                  .source = kSource,
                                  .gpu = e.gpu,
                                  .job_type = e.job_type,
                                  .locality_note = e.locality_note,
                                  .profile = &zoo.profiles[i]});
  }
  return zoo;
}

const Zoo& Get() {
  static const Zoo zoo = Build();
  return zoo;
}

}  // namespace

std::span<const ModelInfo> Models() { return Get().infos; }

const ModelInfo* FindModelInfo(std::string_view name) {
  std::span<const ModelInfo> all = Models();
  auto it = std::ranges::lower_bound(all, name, {}, &ModelInfo::name);
  if (it == all.end() || it->name != name) return nullptr;
  return &*it;
}

const core::ThroughputProfile* FindModel(std::string_view name) {
  const ModelInfo* info = FindModelInfo(name);
  return info ? info->profile : nullptr;
}

std::vector<std::string_view> ModelNames() {
  std::vector<std::string_view> names;
  names.reserve(std::size(kEntries));
  for (const Entry& e : kEntries) names.push_back(e.name);
  return names;
}

}  // namespace dlsched::sim
