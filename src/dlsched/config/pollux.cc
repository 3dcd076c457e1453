#include "dlsched/config/pollux.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/config/csv.h"
#include "dlsched/core/limits.h"

namespace dlsched::config::internal {
namespace {

struct AppConstants {
  std::string_view name;
  int max_epochs;
  int64_t max_local_bsz;  // 0: the largest measured
};
// Pollux's APPLICATIONS table (simulator/applications.py).
constexpr std::array<AppConstants, 6> kApps = {{{"bert", 2, 0},
                                                {"cifar10", 100, 0},
                                                {"deepspeech2", 80, 0},
                                                {"imagenet", 90, 0},
                                                {"ncf", 10, 0},
                                                {"yolov3", 50, 8}}};
constexpr std::array<std::string_view, 6> kAppNames = {"bert",     "cifar10", "deepspeech2",
                                                       "imagenet", "ncf",     "yolov3"};

// A column of a measurement file and the numbers it may hold. Counts and
// batch sizes become integers (an id, a per-GPU batch, nodes and GPUs),
// so they are bounded where they are read: a local_bsz of 0 used to
// divide by zero into an overflow, 1e300 to overflow the cast.
struct Column {
  std::string_view name;
  NumberRange range = kNonNegative;
};
constexpr double kMaxBatch = double(int64_t{1} << 40);  // as validation-<N>.csv's N
constexpr NumberRange kBatch{1, false, kMaxBatch};
constexpr NumberRange kCount{1, false, double(core::kMaxTasksPerJob)};

// Reads every row of `path` with `columns` as numbers in their ranges.
core::Result<std::vector<std::vector<double>>> ReadNumbers(const std::string& path,
                                                           std::span<const Column> columns) {
  CsvReader csv(path);
  DLSCHED_TRY(csv.Open());
  std::vector<std::string_view> names;
  for (const Column& c : columns) names.push_back(c.name);
  DLSCHED_TRY_LET(pos, csv.Header(names));
  std::vector<std::vector<double>> rows;
  while (csv.Next()) {
    if (csv.TooLong()) return std::unexpected(csv.TooLongError());
    const std::vector<std::string_view>& fields = csv.fields();
    if (csv.Quoted() || fields.size() != csv.width()) {
      return std::unexpected(
          csv.At(fmt::format("expected {} comma-separated fields (no quotes)", csv.width())));
    }
    std::vector<double> row;
    for (size_t i = 0; i < columns.size(); ++i) {
      auto v = NumberField(fields[(*pos)[i]], columns[i].name, columns[i].range);
      if (!v) return std::unexpected(csv.At(v.error().what));
      row.push_back(*v);
    }
    rows.push_back(std::move(row));
  }
  DLSCHED_TRY(csv.ReadError());
  if (rows.empty()) return core::Errorf("{}: no rows after the header", path);
  return rows;
}

// Linear interpolation of step and sync time in the per-GPU batch between
// measured points sorted by local_bsz (scipy's interp1d); none outside.
template <typename P>
std::optional<std::pair<double, double>> Interpolate(const std::vector<P>& points, double x) {
  if (points.empty() || x < points.front().local_bsz || x > points.back().local_bsz) {
    return std::nullopt;
  }
  auto hi = std::lower_bound(points.begin(), points.end(), x,
                             [](const P& p, double v) { return p.local_bsz < v; });
  if (hi->local_bsz == x) return std::pair{hi->step_time, hi->sync_time};
  auto lo = hi - 1;
  // scipy's _call_linear: slope * (x - x_lo) + y_lo.
  const double dx = hi->local_bsz - lo->local_bsz;
  return std::pair{(hi->step_time - lo->step_time) / dx * (x - lo->local_bsz) + lo->step_time,
                   (hi->sync_time - lo->sync_time) / dx * (x - lo->local_bsz) + lo->sync_time};
}

// Python's math.ceil(a / b - 1e-8), as Pollux rounds batch sizes.
int64_t CeilDiv(double a, double b) { return static_cast<int64_t>(std::ceil(a / b - 1e-8)); }

}  // namespace

std::span<const std::string_view> PolluxApplicationNames() { return kAppNames; }

std::vector<std::vector<int>> PolluxPlacements(int replicas) {
  std::vector<std::vector<int>> out;
  std::vector<int> parts;
  // Parts of at most `most`, non-increasing, summing to `left`.
  auto fill = [&](auto&& self, int left, int most) -> void {
    if (left == 0) {
      out.push_back(parts);
      return;
    }
    if (static_cast<int>(parts.size()) == kPolluxNodes) return;
    for (int g = std::min(left, most); g >= 1; --g) {
      parts.push_back(g);
      self(self, left - g, g);
      parts.pop_back();
    }
  };
  fill(fill, replicas, kPolluxGpusPerNode);
  return out;
}

core::Result<PolluxApplication> PolluxApplication::Load(const std::string& traces_dir,
                                                        std::string_view name) {
  auto c = std::find_if(kApps.begin(), kApps.end(),
                        [&](const AppConstants& a) { return a.name == name; });
  if (c == kApps.end()) {
    return core::Errorf("expected one of {}", fmt::join(kAppNames, ", "));
  }
  PolluxApplication app;
  app.name_ = std::string(name);
  app.max_epochs_ = c->max_epochs;
  const std::filesystem::path dir = std::filesystem::path(traces_dir) / app.name_;
  int64_t min_local = std::numeric_limits<int64_t>::max();
  int64_t max_local = 0;
  DLSCHED_TRY(app.ReadThroughputs(dir.string(), min_local, max_local));
  DLSCHED_TRY(app.ReadValidation(dir.string()));
  if (app.validation_.empty()) {
    return core::Errorf("{}: no validation-<batch size>.csv files", dir.string());
  }
  app.init_batch_size_ = app.validation_.begin()->first;
  app.max_batch_size_ = app.validation_.rbegin()->first;
  app.min_local_bsz_ = min_local;
  app.max_local_bsz_ = c->max_local_bsz != 0 ? c->max_local_bsz : max_local;
  // Progress at the end of each epoch: the smallest over the validation
  // files (get_progress); 0 before the first.
  app.progress_.assign(app.max_epochs_ + 1, std::numeric_limits<double>::infinity());
  app.progress_[0] = 0;
  for (int e = 1; e <= app.max_epochs_; ++e) {
    for (const auto& [_, v] : app.validation_) {
      app.progress_[e] = std::min(app.progress_[e], v.progress[e - 1]);
    }
  }
  return app;
}

core::Status PolluxApplication::ReadThroughputs(const std::string& dir_name, int64_t& min_local,
                                                int64_t& max_local) {
  // A placement is its GPUs per node as digits ("44": 2 nodes of 4).
  constexpr Column kPlacementColumns[] = {
      {"placement", {1, false, 1e15}}, {"local_bsz", kBatch}, {"step_time"}, {"sync_time"}};
  const std::filesystem::path dir(dir_name);
  const std::string placements_path = (dir / "placements.csv").string();
  DLSCHED_TRY_LET(placements, ReadNumbers(placements_path, kPlacementColumns));
  for (const auto& r : *placements) {
    placements_[static_cast<int64_t>(r[0])].push_back({r[1], r[2], r[3]});
    min_local = std::min(min_local, static_cast<int64_t>(r[1]));
    max_local = std::max(max_local, static_cast<int64_t>(r[1]));
  }
  constexpr Column kScalabilityColumns[] = {{"num_nodes", kCount},
                                            {"num_replicas", kCount},
                                            {"local_bsz", kBatch},
                                            {"step_time"},
                                            {"sync_time"}};
  DLSCHED_TRY_LET(scalability,
                  ReadNumbers((dir / "scalability.csv").string(), kScalabilityColumns));
  for (const auto& r : *scalability) {
    at_[{static_cast<int>(r[0]), static_cast<int>(r[1])}].push_back({r[2], r[3], r[4]});
  }
  auto by_bsz = [](const Point& a, const Point& b) { return a.local_bsz < b.local_bsz; };
  for (auto& [_, points] : placements_) std::sort(points.begin(), points.end(), by_bsz);
  // Up to 4 nodes, the mean of the placements of each (nodes, GPUs) at
  // each per-GPU batch (Pollux's groupby(["num_nodes", "num_replicas",
  // "local_bsz"]).mean()): with scalability.csv's, the lines that
  // placements beyond 4 nodes are interpolated between (Throughput).
  std::map<std::tuple<int, int, double>, std::pair<Point, int>> sums;
  for (const auto& [id, points] : placements_) {
    int nodes = 0;
    int replicas = 0;
    for (int64_t rest = id; rest > 0; rest /= 10) {
      ++nodes;
      replicas += static_cast<int>(rest % 10);
    }
    for (const Point& pt : points) {
      auto& [sum, count] = sums[{nodes, replicas, pt.local_bsz}];
      sum.local_bsz = pt.local_bsz;
      sum.step_time += pt.step_time;
      sum.sync_time += pt.sync_time;
      ++count;
    }
  }
  for (const auto& [key, entry] : sums) {
    const auto& [sum, count] = entry;
    at_[{std::get<0>(key), std::get<1>(key)}].push_back(
        {sum.local_bsz, sum.step_time / count, sum.sync_time / count});
  }
  for (auto& [_, points] : at_) std::sort(points.begin(), points.end(), by_bsz);
  return {};
}

core::Status PolluxApplication::ReadValidation(const std::string& dir_name) {
  const std::filesystem::path dir(dir_name);
  std::error_code ec;
  constexpr Column kValidationColumns[] = {{"progress"}, {"grad_sqr"}, {"grad_var"}};
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    if (!file.starts_with("validation-") || !file.ends_with(".csv")) continue;
    const std::string_view digits =
        std::string_view(file).substr(11, file.size() - 11 - 4);  // validation-<N>.csv
    auto bsz = IntField(digits, "batch size", 1, static_cast<int64_t>(kMaxBatch));
    if (!bsz)
      return core::Errorf("{}: expected validation-<batch size>.csv", entry.path().string());
    DLSCHED_TRY_LET(rows, ReadNumbers(entry.path().string(), kValidationColumns));
    if (static_cast<int>(rows->size()) < max_epochs_) {
      return core::Errorf("{}: {} epochs, expected at least {} (max_epochs of {})",
                          entry.path().string(), rows->size(), max_epochs_, name_);
    }
    Validation& v = validation_[*bsz];
    for (const auto& r : *rows) {
      v.progress.push_back(r[0]);
      v.grad_sqr.push_back(r[1]);
      v.grad_var.push_back(r[2]);
    }
  }
  if (ec) return core::Errorf("{}: cannot read directory: {}", dir.string(), ec.message());
  return {};
}

std::expected<std::pair<double, double>, std::string> PolluxApplication::Throughput(
    const std::vector<int>& placement, int64_t local_bsz) const {
  // The lexicographically smallest rotation names the placement (4,2 -> 24).
  std::vector<int> best = placement;
  for (size_t i = 1; i < placement.size(); ++i) {
    std::vector<int> r(placement.begin() + static_cast<std::ptrdiff_t>(i), placement.end());
    r.insert(r.end(), placement.begin(), placement.begin() + static_cast<std::ptrdiff_t>(i));
    best = std::min(best, r);
  }
  // Its digits name it as Pollux's placement files do; a placement of
  // more nodes than an int64 has digits, or of 10 or more GPUs on a node,
  // was never measured (id -1).
  int64_t id = best.size() <= 18 ? 0 : -1;
  int replicas = 0;
  for (int g : best) {
    if (id >= 0) id = g <= 9 ? id * 10 + g : -1;
    replicas += g;
  }
  if (auto it = placements_.find(id); it != placements_.end()) {
    if (auto t = Interpolate(it->second, static_cast<double>(local_bsz))) return *t;
    return std::unexpected(
        fmt::format("{} per GPU is outside the batches measured at placement {}", local_bsz, id));
  }
  // Beyond the placements: Pollux interpolates over (nodes, replicas,
  // per-GPU batch) in the measured lines (scalability.csv beyond 4 nodes,
  // the placements' means up to 4) with scipy's LinearNDInterpolator, at
  // no more than 16 nodes. On a line that was measured that is
  // interpolation along the line. Between two lines of the same replicas
  // (16 GPUs on 5 nodes: 4 and 6 nodes were measured) dlsched interpolates
  // along each line, then between them in nodes: Pollux's value wherever
  // the per-GPU batch was measured on both lines, and close to it (its
  // triangulation mixes the points around) elsewhere.
  const int nodes = std::min(static_cast<int>(placement.size()), kPolluxNodes);
  auto line_at = [&](int n) -> std::optional<std::pair<double, double>> {
    auto it = at_.find({n, replicas});
    if (it == at_.end()) return std::nullopt;
    return Interpolate(it->second, static_cast<double>(local_bsz));
  };
  int below = 0;
  int above = 0;
  for (const auto& [key, _] : at_) {
    if (key.second != replicas) continue;
    if (key.first <= nodes) below = std::max(below, key.first);
    if (key.first >= nodes && (above == 0 || key.first < above)) above = key.first;
  }
  if (below == 0 || above == 0) {
    return std::unexpected(fmt::format(
        "{} GPUs on {} nodes lie on no measured line, nor between two (scalability.csv)", replicas,
        nodes));
  }
  const auto lo = line_at(below);
  const auto hi = line_at(above);
  if (!lo || !hi) {
    return std::unexpected(
        fmt::format("{} per GPU is outside the batches measured at {} GPUs on {} nodes", local_bsz,
                    replicas, lo ? above : below));
  }
  if (below == above) return *lo;
  const double t = static_cast<double>(nodes - below) / (above - below);
  return std::pair{lo->first + t * (hi->first - lo->first),
                   lo->second + t * (hi->second - lo->second)};
}

std::expected<double, std::string> PolluxApplication::Seconds(int64_t batch, int replicas) const {
  std::vector<int> placement;
  for (int left = replicas; left > 0; left -= kPolluxGpusPerNode) {
    placement.push_back(std::min(left, kPolluxGpusPerNode));
  }
  return Seconds(batch, placement);
}

std::expected<double, std::string> PolluxApplication::Seconds(
    int64_t batch, const std::vector<int>& placement) const {
  int replicas = 0;
  for (int g : placement) replicas += g;
  // Job.update_local_bsz with a target batch size.
  const int64_t local = CeilDiv(static_cast<double>(batch), replicas);
  if (local < min_local_bsz_) {
    return std::unexpected(fmt::format("{} per GPU is below {}'s smallest measured, {}", local,
                                       name_, min_local_bsz_));
  }
  int64_t accum = CeilDiv(static_cast<double>(local), static_cast<double>(max_local_bsz_)) - 1;
  if (replicas == 1 && batch > init_batch_size_) accum = std::max<int64_t>(1, accum);
  int64_t atomic = CeilDiv(static_cast<double>(local), static_cast<double>(accum + 1));
  const int64_t count = replicas * (accum + 1);
  atomic = std::min(atomic, static_cast<int64_t>(static_cast<double>(max_batch_size_) /
                                                 static_cast<double>(count)));
  const int64_t effective = replicas * atomic * (accum + 1);
  if (atomic < 1 || effective < init_batch_size_ || effective > max_batch_size_) {
    return std::unexpected(fmt::format("the batch runs as {}, outside {}'s validated {}..{}",
                                       effective, name_, init_batch_size_, max_batch_size_));
  }
  DLSCHED_TRY_LET(t, Throughput(placement, atomic));
  const auto [step_time, sync_time] = *t;
  const double total_time =
      step_time + (step_time - sync_time) * static_cast<double>(accum);  // Job.step
  const double scale = static_cast<double>(effective) / static_cast<double>(init_batch_size_);
  // Gradient statistics at the effective batch, between the validated
  // batch sizes that bracket it (_validated_batch_sizes, get_grad_stats).
  auto upper = validation_.lower_bound(effective);
  auto lower = upper->first == effective ? upper : std::prev(upper);
  double seconds = 0;
  for (int e = 0; e < max_epochs_; ++e) {
    double sqr = lower->second.grad_sqr[e];
    double var = lower->second.grad_var[e];
    if (lower != upper) {
      const auto lo = static_cast<double>(lower->first);
      const auto hi = static_cast<double>(upper->first);
      const auto b = static_cast<double>(effective);
      sqr =
          ((b - lo) * upper->second.grad_sqr[e] + (hi - b) * lower->second.grad_sqr[e]) / (hi - lo);
      var =
          ((b - lo) * upper->second.grad_var[e] + (hi - b) * lower->second.grad_var[e]) / (hi - lo);
    }
    const double gain = (var + sqr) / (var / scale + sqr);
    // Job.step: each epoch takes its progress over the goodput, rounded to
    // whole seconds (Python's round: half to even, as nearbyint).
    const double goodput = gain / total_time;
    seconds += std::nearbyint((progress_[e + 1] - progress_[e]) / goodput);
  }
  if (!std::isfinite(seconds) || seconds <= 0) {
    return std::unexpected(fmt::format("the measurements give {} seconds", seconds));
  }
  return seconds;
}

}  // namespace dlsched::config::internal
