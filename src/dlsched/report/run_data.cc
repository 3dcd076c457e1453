#include "dlsched/report/run_data.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <spanstream>
#include <sstream>
#include <system_error>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "dlsched/core/csv.h"
#include "dlsched/core/quantity.h"
#include "dlsched/report/first_seen.h"
#include "dlsched/report/schema.h"
#include "dlsched/report/sweep.h"

namespace dlsched::report {
namespace {

namespace fs = std::filesystem;

using core::internal::QuoteInput;

using schema::kRunFiles;

std::unexpected<core::Error> At(const std::string& path, int line, std::string_view what) {
  return core::Errorf("{}:{}: {}", path, line, what);
}

// The file's text, or nullopt when there is no such file.
core::Result<std::optional<std::string>> ReadIfPresent(const fs::path& p) {
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);
  if (!fs::exists(st)) return std::nullopt;
  if (!fs::is_regular_file(st)) return core::Errorf("{}: not a regular file", p.string());
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in) return core::Errorf("{}: cannot read file", p.string());
  return std::optional<std::string>(ss.str());
}

std::optional<double> ParseNumber(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// Converts the cells of one row; the first bad cell is kept as the error,
// so a row's fields read in a line each.
class Cells {
 public:
  Cells(const CsvFile& f, const CsvFile::Row& r) : f_(f), r_(r) {}

  const std::string& Text(size_t col) const { return r_.cells[col]; }

  double Number(size_t col) {
    auto v = ParseNumber(Text(col));
    if (!v) Fail(col, "a number");
    return v.value_or(0);
  }
  std::optional<double> OptionalNumber(std::optional<size_t> col) {
    if (!col || Text(*col).empty()) return std::nullopt;
    return Number(*col);
  }
  std::optional<int64_t> OptionalInt(std::optional<size_t> col) {
    if (!col || Text(*col).empty()) return std::nullopt;
    auto v = ParseInt(Text(*col));
    if (!v) Fail(*col, "an integer");
    return v;
  }
  bool Bool(std::optional<size_t> col) {
    if (!col || Text(*col).empty()) return false;
    if (Text(*col) != "true" && Text(*col) != "false") Fail(*col, "true or false");
    return Text(*col) == "true";
  }

  core::Status status() const {
    if (error_) return std::unexpected(*error_);
    return {};
  }

 private:
  void Fail(size_t col, std::string_view expected) {
    if (error_) return;
    error_ = core::Error{fmt::format("{}:{}: {}: expected {}, got {}", f_.path, r_.line,
                                     f_.header[col], expected, QuoteInput(Text(col)))};
  }

  const CsvFile& f_;
  const CsvFile::Row& r_;
  std::optional<core::Error> error_;
};

// The indices of the columns `names`; an error names the first missing.
core::Result<std::vector<size_t>> Columns(const CsvFile& f,
                                          std::initializer_list<std::string_view> names) {
  std::vector<size_t> out;
  for (std::string_view n : names) {
    auto col = f.Find(n);
    if (!col) return At(f.path, 1, fmt::format("no column '{}' in the header", n));
    out.push_back(*col);
  }
  return out;
}

// One `T` per row of `f`, filled by `fill(cells, row)`; the first bad cell
// is the error.
template <typename T, typename Fill>
core::Result<std::vector<T>> ParseRows(const CsvFile& f, Fill fill) {
  std::vector<T> out;
  out.reserve(f.rows.size());
  for (const auto& r : f.rows) {
    Cells c(f, r);
    T row;
    fill(c, row);
    DLSCHED_TRY(c.status());
    out.push_back(std::move(row));
  }
  return out;
}

core::Result<CsvFile> ParseCsvFile(const std::string& path, const std::string& text) {
  return ParseCsv(text, path);
}

core::Result<std::vector<JobRow>> ParseJobs(const CsvFile& f) {
  namespace col = schema::jobs;
  auto cols =
      Columns(f, {col::kName, col::kSubmit, col::kQueueing, col::kLaunching, col::kRunning});
  DLSCHED_TRY(cols);
  const auto first_start = f.Find(col::kFirstStart);
  const auto completion = f.Find(col::kCompletion);
  const auto jct = f.Find(col::kJct);
  const auto state = f.Find(col::kFinalState);
  const auto stuck = f.Find(col::kStuck);
  const auto reallocations = f.Find(col::kReallocations);
  const auto preemptions = f.Find(col::kPreemptions);
  const auto scale_events = f.Find(col::kScaleEvents);
  const auto gpus = f.Find(col::kGpus);
  const auto ideal = f.Find(col::kIdealRuntime);
  const auto lost = f.Find(col::kLostGpuSeconds);
  const auto alone = f.Find(col::kAloneJct);
  const auto queue = f.Find(col::kQueue);
  return ParseRows<JobRow>(f, [&](Cells& c, JobRow& j) {
    j.name = c.Text((*cols)[0]);
    j.submit = c.Number((*cols)[1]);
    j.queueing = c.Number((*cols)[2]);
    j.launching = c.Number((*cols)[3]);
    j.running = c.Number((*cols)[4]);
    j.first_start = c.OptionalNumber(first_start);
    j.completion = c.OptionalNumber(completion);
    j.jct = c.OptionalNumber(jct);
    if (state) j.final_state = c.Text(*state);
    j.stuck = c.Bool(stuck);
    j.reallocations = c.OptionalInt(reallocations).value_or(0);
    j.preemptions = c.OptionalInt(preemptions).value_or(0);
    j.scale_events = c.OptionalInt(scale_events).value_or(0);
    j.gpus = c.OptionalInt(gpus);
    j.ideal_runtime = c.OptionalNumber(ideal);
    j.lost_gpu_seconds = c.OptionalNumber(lost).value_or(0);
    j.alone_jct = c.OptionalNumber(alone).value_or(0);
    if (queue) j.queue = c.Text(*queue);
  });
}

core::Result<Utilization> ParseUtilization(const CsvFile& f) {
  namespace col = schema::utilization;
  DLSCHED_TRY_LET(time, Columns(f, {col::kTime}));
  Utilization u;
  std::vector<std::pair<size_t, size_t>> cols;
  constexpr std::string_view kAlloc = col::kAllocatedSuffix;
  for (size_t i = 0; i < f.header.size(); ++i) {
    const std::string& h = f.header[i];
    if (!h.ends_with(kAlloc)) continue;
    const std::string name = h.substr(0, h.size() - kAlloc.size());
    auto eff = f.Find(name + std::string(col::kEffectiveSuffix));
    if (!eff) {
      return At(f.path, 1,
                fmt::format("no column '{}{}' beside '{}'", name, col::kEffectiveSuffix, h));
    }
    cols.emplace_back(i, *eff);
    u.resources.push_back({name, {}, {}});
  }
  for (const auto& r : f.rows) {
    Cells c(f, r);
    u.time.push_back(c.Number((*time)[0]));
    for (size_t k = 0; k < cols.size(); ++k) {
      u.resources[k].allocated.push_back(c.Number(cols[k].first));
      u.resources[k].effective.push_back(c.Number(cols[k].second));
    }
    DLSCHED_TRY(c.status());
  }
  return u;
}

core::Result<std::vector<EventRow>> ParseEvents(const CsvFile& f) {
  namespace col = schema::events;
  DLSCHED_TRY_LET(cols, Columns(f, {col::kTime, col::kJob, col::kEvent}));
  const auto workers = f.Find(col::kWorkers);
  const auto by = f.Find(col::kBy);
  const auto detail = f.Find(col::kDetail);
  return ParseRows<EventRow>(f, [&](Cells& c, EventRow& e) {
    e.time = c.Number((*cols)[0]);
    e.job = c.Text((*cols)[1]);
    e.event = c.Text((*cols)[2]);
    e.workers = c.OptionalInt(workers);
    if (by) e.by = c.Text(*by);
    if (detail) e.detail = c.Text(*detail);
  });
}

core::Result<std::vector<AllocationRow>> ParseAllocations(const CsvFile& f) {
  namespace col = schema::allocations;
  DLSCHED_TRY_LET(cols, Columns(f, {col::kNode, col::kJob, col::kStart, col::kEnd}));
  const auto tasks = f.Find(col::kTasks);
  const auto gpus = f.Find(col::kGpus);
  return ParseRows<AllocationRow>(f, [&](Cells& c, AllocationRow& a) {
    a.node = c.Text((*cols)[0]);
    a.job = c.Text((*cols)[1]);
    a.start = c.Number((*cols)[2]);
    a.end = c.OptionalNumber((*cols)[3]);
    a.tasks = c.OptionalInt(tasks).value_or(0);
    a.gpus = c.OptionalNumber(gpus).value_or(0);
  });
}

// sweep.csv's columns that place a cell rather than measure it.
constexpr std::string_view kSweepPlaceColumns[] = {"cell", "cells", "profile",  "load",
                                                   "seed", "quota", "quota_of", "status"};

// Whether a row of sweep.csv is a complete result: not interrupted, every
// job completed. Without the columns that tell, it counts as complete.
bool CompleteRow(const CsvFile& f, const CsvFile::Row& r) {
  if (auto status = f.Find("status")) {
    const std::string& text = r.cells[*status];
    if (!text.empty() && text != "all done") return false;
  }
  for (std::string_view col : {"stuck", "failed", "unfinished", "jct_censored"}) {
    if (auto c = f.Find(col)) {
      if (auto v = ParseNumber(r.cells[*c]); v && *v > 0) return false;
    }
  }
  return true;
}

core::Result<SweepData> ParseSweep(const CsvFile& f) {
  DLSCHED_TRY_LET(cols, Columns(f, {"profile", "load"}));
  SweepData out;
  // The figures: every other column whose cells are numbers (or empty);
  // columns of text added later are left out, not an error.
  std::vector<size_t> figure_cols;
  for (size_t i = 0; i < f.header.size(); ++i) {
    if (std::find(std::begin(kSweepPlaceColumns), std::end(kSweepPlaceColumns), f.header[i]) !=
        std::end(kSweepPlaceColumns)) {
      continue;
    }
    const bool numeric = std::all_of(f.rows.begin(), f.rows.end(), [&](const CsvFile::Row& r) {
      return r.cells[i].empty() || ParseNumber(r.cells[i]).has_value();
    });
    if (!numeric) continue;
    figure_cols.push_back(i);
    out.figures.push_back(f.header[i]);
  }
  // Values per (profile, quota, load), profiles in order of their first row.
  struct Acc {
    SweepPoint point;
    std::map<std::string, std::vector<double>> values;
  };
  FirstSeen<> profiles;  // numbered in order of their first row
  std::map<std::tuple<size_t, std::optional<double>, double>, Acc> acc;
  const auto status = f.Find("status");
  const auto quota = f.Find("quota");
  if (const auto of = f.Find("quota_of"); of && !f.rows.empty())
    out.quota_of = f.rows[0].cells[*of];
  for (const auto& r : f.rows) {
    Cells c(f, r);
    const std::string& profile = c.Text((*cols)[0]);
    const double load = c.Number((*cols)[1]);
    std::optional<double> q;
    if (quota) q = c.Number(*quota);
    DLSCHED_TRY(c.status());
    const size_t index = profiles.Number(profile);
    Acc& a = acc[{index, q, load}];
    a.point.profile = profile;
    a.point.load = load;
    a.point.quota = q;
    ++a.point.cells;
    if (!CompleteRow(f, r)) {
      ++a.point.incomplete;
      a.point.statuses.push_back(status ? r.cells[*status] : std::string("incomplete"));
    }
    for (size_t k = 0; k < figure_cols.size(); ++k) {
      // A figure left empty (a cell without jobs to measure) is not a 0.
      if (auto v = ParseNumber(r.cells[figure_cols[k]])) a.values[out.figures[k]].push_back(*v);
    }
  }
  for (auto& [key, a] : acc) {
    for (const auto& [figure, values] : a.values) a.point.stats[figure] = Stat(values);
    out.points.push_back(std::move(a.point));
  }
  return out;
}

// The 1-based line of the first `"key"` in `text`: where a summary.json
// value of the wrong type is (our files name each key once).
int LineOfKey(std::string_view text, std::string_view key) {
  const size_t at = text.find(fmt::format("\"{}\"", key));
  if (at == std::string_view::npos) return 1;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

// Reads typed values out of summary.json; absent keys (older files) and
// nulls are left unset, a value of another type is the error kept.
class SummaryReader {
 public:
  SummaryReader(const nlohmann::json& root, std::string_view text, const std::string& path)
      : root_(root), text_(text), path_(path) {}

  std::optional<double> Number(std::initializer_list<const char*> keys) {
    const nlohmann::json* v = Find(keys);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (!v->is_number()) {
      Fail(keys, "a number");
      return std::nullopt;
    }
    return v->get<double>();
  }
  // A count: summed with others, so bounded well within int64_t.
  int64_t Count(std::initializer_list<const char*> keys) {
    constexpr double kMaxCount = 1e15;
    const nlohmann::json* v = Find(keys);
    if (v == nullptr || v->is_null()) return 0;
    if (!v->is_number_integer() || v->get<double>() < 0 || v->get<double>() > kMaxCount) {
      Fail(keys, "an integer from 0 to 10^15");
      return 0;
    }
    return v->get<int64_t>();
  }
  bool Bool(std::initializer_list<const char*> keys) {
    const nlohmann::json* v = Find(keys);
    if (v == nullptr || v->is_null()) return false;
    if (!v->is_boolean()) {
      Fail(keys, "true or false");
      return false;
    }
    return v->get<bool>();
  }
  std::string String(std::initializer_list<const char*> keys) {
    const nlohmann::json* v = Find(keys);
    if (v == nullptr || v->is_null()) return "";
    if (!v->is_string()) {
      Fail(keys, "a string");
      return "";
    }
    return v->get<std::string>();
  }
  // The object at `keys`, or nullptr (absent, or not an object: an error).
  const nlohmann::json* Object(std::initializer_list<const char*> keys) {
    const nlohmann::json* v = Find(keys);
    if (v == nullptr || v->is_null()) return nullptr;
    if (!v->is_object()) {
      Fail(keys, "an object");
      return nullptr;
    }
    return v;
  }
  void Fail(std::initializer_list<const char*> keys, std::string_view expected) {
    if (error_) return;
    std::string dotted;
    for (const char* k : keys) dotted += (dotted.empty() ? "" : ".") + std::string(k);
    error_ = core::Error{fmt::format("{}:{}: {}: expected {}", path_,
                                     LineOfKey(text_, *(keys.end() - 1)), dotted, expected)};
  }
  core::Status status() const {
    if (error_) return std::unexpected(*error_);
    return {};
  }

 private:
  const nlohmann::json* Find(std::initializer_list<const char*> keys) {
    const nlohmann::json* v = &root_;
    for (const char* k : keys) {
      if (!v->is_object()) return nullptr;
      auto it = v->find(k);
      if (it == v->end()) return nullptr;
      v = &*it;
    }
    return v;
  }

  const nlohmann::json& root_;
  std::string_view text_;
  const std::string& path_;
  std::optional<core::Error> error_;
};

core::Result<SummaryData> ParseSummary(const std::string& path, const std::string& text) {
  // The per-job array can be most of the file (100,000 jobs); the report
  // reads jobs.csv instead, so the parser drops it unbuilt.
  namespace key = schema::summary;
  DLSCHED_TRY_LET(parsed, ParseJsonFile(text, path, /*skip_jobs=*/true));
  const nlohmann::json& root = *parsed;
  if (!root.is_object()) return At(path, 1, "expected a JSON object");
  SummaryReader r(root, text, path);
  SummaryData d;
  metrics::RunSummary& s = d.figures;
  // Counts held as int in RunSummary: a hand-made file's larger count is
  // cut to fit (the page shows it as the file's at most).
  auto count = [&](std::initializer_list<const char*> keys) {
    return static_cast<int>(std::min<int64_t>(r.Count(keys), std::numeric_limits<int>::max()));
  };
  s.profile = r.String({key::kProfile});
  const std::optional<double> end = r.Number({key::kEndTime});
  d.has_end_time = end.has_value();
  s.end_time = end.value_or(0);
  s.partial = r.Bool({key::kPartial});
  s.deadlocked = r.Bool({key::kDeadlocked});
  s.cycles = r.Count({key::kCycles});
  if (r.Object({key::kWindow}) != nullptr) {
    metrics::Window w;
    w.from = r.Number({key::kWindow, key::kFrom}).value_or(0);
    w.to = r.Number({key::kWindow, key::kTo}).value_or(core::kNever);
    s.window = w;
  }
  s.total_jobs = count({key::kCounts, key::kTotal});
  s.completed_jobs = count({key::kCounts, key::kCompleted});
  s.stuck_jobs = count({key::kCounts, key::kStuck});
  s.failed_jobs = count({key::kCounts, key::kFailed});
  s.unfinished_jobs = count({key::kCounts, key::kUnfinished});
  s.jct_mean = r.Number({key::kJct, key::kMean}).value_or(0);
  s.jct_p50 = r.Number({key::kJct, key::kP50}).value_or(0);
  s.jct_p95 = r.Number({key::kJct, key::kP95}).value_or(0);
  s.jct_p99 = r.Number({key::kJct, key::kP99}).value_or(0);
  s.jct_censored = count({key::kJct, key::kCensored});
  s.makespan = r.Number({key::kMakespan}).value_or(0);
  s.mean_queueing = r.Number({key::kMeanPhaseTime, key::kQueueing}).value_or(0);
  s.mean_launching = r.Number({key::kMeanPhaseTime, key::kLaunching}).value_or(0);
  s.mean_running = r.Number({key::kMeanPhaseTime, key::kRunning}).value_or(0);
  s.window_start = r.Number({key::kUtilization, key::kWindowStart}).value_or(0);
  s.window_end = r.Number({key::kUtilization, key::kWindowEnd}).value_or(s.end_time);
  s.slowdown_jobs = count({key::kSlowdown, key::kJobs});
  s.slowdown_mean = r.Number({key::kSlowdown, key::kMean}).value_or(0);
  s.slowdown_p95 = r.Number({key::kSlowdown, key::kP95}).value_or(0);
  s.slowdown_variance = r.Number({key::kSlowdown, key::kVariance}).value_or(0);
  s.jain_index = r.Number({key::kSlowdown, key::kJainIndex}).value_or(0);
  s.ftf_jobs = count({key::kFinishTimeFairness, key::kJobs});
  s.ftf_mean = r.Number({key::kFinishTimeFairness, key::kMean}).value_or(0);
  s.ftf_max = r.Number({key::kFinishTimeFairness, key::kMax}).value_or(0);
  s.preemptions = r.Count({key::kEvents, key::kPreemptions});
  s.scale_events = r.Count({key::kEvents, key::kScaleEvents});
  s.reallocations = r.Count({key::kEvents, key::kReallocations});
  s.lost_gpu_hours = r.Number({key::kEvents, key::kLostGpuHours}).value_or(0);
  s.jobs_across_nodes = r.Count({key::kPlacement, key::kJobsAcrossNodes});
  s.jobs_across_switches = r.Count({key::kPlacement, key::kJobsAcrossSwitches});
  if (const nlohmann::json* res = r.Object({key::kUtilization, key::kResources})) {
    for (const auto& [name, value] : res->items()) {
      metrics::ResourceUtilization u;
      u.name = name;
      if (!value.is_object()) {
        r.Fail({key::kUtilization, key::kResources, name.c_str()}, "an object");
        break;
      }
      u.capacity = r.Count({key::kUtilization, key::kResources, name.c_str(), key::kCapacity});
      u.allocated =
          r.Number({key::kUtilization, key::kResources, name.c_str(), key::kAllocated}).value_or(0);
      u.effective =
          r.Number({key::kUtilization, key::kResources, name.c_str(), key::kEffective}).value_or(0);
      s.utilization.push_back(std::move(u));
    }
  }
  DLSCHED_TRY(r.status());
  // The declared queues: their names, cohorts and nominal GPUs (what the
  // queue usage chart draws its lines at).
  if (const auto it = root.find(key::kQueues); it != root.end() && !it->is_null()) {
    const int line = LineOfKey(text, key::kQueues);
    if (!it->is_array()) return At(path, line, "queues: expected a list of queues");
    for (size_t i = 0; i < it->size(); ++i) {
      const nlohmann::json& q = (*it)[i];
      const auto name = q.is_object() ? q.find(schema::queues::kQueue) : q.end();
      if (name == q.end() || !name->is_string()) {
        return At(path, line, fmt::format("queues[{}]: expected an object with a queue name", i));
      }
      metrics::QueueSummary out;
      out.name = name->get<std::string>();
      if (const auto c = q.find(schema::queues::kCohort); c != q.end() && c->is_string()) {
        out.cohort = c->get<std::string>();
      }
      if (const auto n = q.find(schema::queues::kNominalGpus);
          n != q.end() && n->is_number_integer()) {
        out.nominal_gpus = n->get<int64_t>();
      }
      s.queues.push_back(std::move(out));
    }
  }
  if (const auto it = root.find(key::kProvenance); it != root.end()) {
    auto p = ParseProvenance(*it);
    if (!p) return At(path, LineOfKey(text, key::kProvenance), p.error().message);
    d.provenance = std::move(*p);
  }
  return d;
}

// Reads `file` in `dir` with `parse` when it is there.
template <typename T, typename Parse>
core::Status ReadOptional(const fs::path& dir, std::string_view file, Parse parse,
                          std::optional<T>* out) {
  const fs::path p = dir / file;
  DLSCHED_TRY_LET(text, ReadIfPresent(p));
  if (!*text) return {};
  DLSCHED_TRY_LET(parsed, parse(p.string(), **text));
  *out = std::move(*parsed);
  return {};
}

// A CSV file parsed, then converted by `convert`.
template <typename Convert>
auto CsvThen(Convert convert) {
  return [convert](const std::string& path, const std::string& text) {
    auto csv = ParseCsvFile(path, text);
    using R = decltype(convert(*csv));
    if (!csv) return R(std::unexpected(csv.error()));
    return convert(*csv);
  };
}

bool HasRunFiles(const fs::path& dir) {
  std::error_code ec;
  for (auto f : kRunFiles) {
    if (fs::is_regular_file(dir / f, ec)) return true;
  }
  return false;
}

std::string DirName(const fs::path& dir) {
  fs::path p = dir.lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  const std::string name = p.filename().string();
  return name.empty() || name == "." ? fs::absolute(p).filename().string() : name;
}

core::Result<RunData> LoadRun(const fs::path& dir, std::string name) {
  RunData run;
  run.dir = dir.string();
  for (auto st : {
           ReadOptional(dir, schema::kSummaryJson, ParseSummary, &run.summary),
           ReadOptional(dir, schema::kJobsCsv, CsvThen(ParseJobs), &run.jobs),
           ReadOptional(dir, schema::kUtilizationCsv, CsvThen(ParseUtilization), &run.utilization),
           ReadOptional(dir, schema::kEventsCsv, CsvThen(ParseEvents), &run.events),
           ReadOptional(dir, schema::kAllocationsCsv, CsvThen(ParseAllocations), &run.allocations),
       }) {
    DLSCHED_TRY(st);
  }
  if (name.empty() && run.summary) name = run.summary->figures.profile;
  run.name = name.empty() ? DirName(dir) : name;
  return run;
}

}  // namespace

SweepStat Stat(std::span<const double> values) {
  SweepStat s;
  s.n = static_cast<int>(values.size());
  if (values.empty()) return s;
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  if (values.size() > 1) {
    double sq = 0;
    for (double v : values) sq += (v - s.mean) * (v - s.mean);
    s.sd = std::sqrt(sq / static_cast<double>(values.size() - 1));
  }
  // Sums of huge values (a hand-made file) overflow: the range stays right.
  if (!std::isfinite(s.mean)) s.mean = s.max;
  if (!std::isfinite(s.sd)) s.sd = 0;
  return s;
}

const SweepStat* SweepPoint::Find(std::string_view figure) const {
  auto it = stats.find(std::string(figure));
  return it == stats.end() ? nullptr : &it->second;
}

std::optional<size_t> CsvFile::Find(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return i;
  }
  return std::nullopt;
}

core::Result<CsvFile> ParseCsv(std::string_view text, const std::string& path) {
  CsvFile f;
  f.path = path;
  std::ispanstream in(std::span<const char>(text.data(), text.size()));
  core::CsvReader csv(in, {.quotes = true});
  while (csv.Next()) {
    const int line = static_cast<int>(csv.fault_line());
    switch (csv.fault()) {
      case core::CsvFault::kNone:
      case core::CsvFault::kQuote:  // (quotes are read)
        break;
      case core::CsvFault::kUnclosedQuote:
        return At(path, line, "a quoted field is never closed");
      case core::CsvFault::kAfterClosingQuote:
        return At(path, line, "expected a comma or the end of the line after a closing quote");
      case core::CsvFault::kQuoteInField:
        return At(path, line, "a quote inside an unquoted field (quote the whole field)");
    }
    std::vector<std::string> record(csv.fields().begin(), csv.fields().end());
    if (f.header.empty()) {
      f.header = std::move(record);
      continue;
    }
    const int start_line = static_cast<int>(csv.line_no());
    if (record.size() != f.header.size()) {
      return At(path, start_line,
                fmt::format("{} fields, but the header has {}", record.size(), f.header.size()));
    }
    f.rows.push_back({start_line, std::move(record)});
  }
  if (f.header.empty()) return At(path, 1, "empty file (expected a header line)");
  return f;
}

const Utilization::Resource* Utilization::Find(std::string_view name) const {
  for (const auto& r : resources) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

double RunData::EndTime() const {
  if (summary && summary->has_end_time) return summary->figures.end_time;
  double end = 0;
  if (utilization && !utilization->time.empty()) end = std::max(end, utilization->time.back());
  if (jobs) {
    for (const auto& j : *jobs) end = std::max(end, j.completion.value_or(j.submit));
  }
  if (events && !events->empty()) end = std::max(end, events->back().time);
  if (allocations) {
    for (const auto& a : *allocations) end = std::max(end, a.end.value_or(a.start));
  }
  return end;
}

core::Result<ReportDir> LoadReportDir(const std::string& dir) {
  ReportDir out;
  out.dir = dir;
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (!fs::exists(st)) return core::Errorf("{}: no such directory", dir);
  if (!fs::is_directory(st)) return core::Errorf("{}: not a directory", dir);
  const fs::path path(dir);

  DLSCHED_TRY(ReadOptional(path, schema::kCompareCsv, ParseCsvFile, &out.compare));
  DLSCHED_TRY(ReadOptional(path, schema::kSweepCsv, CsvThen(ParseSweep), &out.sweep));
  // The cells of a sweep run one at a time (a Kubernetes Indexed Job):
  // merged as the whole sweep would have written its sweep.csv.
  if (!out.sweep && HasSweepCells(dir)) {
    DLSCHED_TRY_LET(merged, MergeSweepCells(dir));
    DLSCHED_TRY_LET(csv, ParseCsv(*merged, (path / kCellsDir / "").string()));
    DLSCHED_TRY_LET(sweep, ParseSweep(*csv));
    out.sweep = std::move(*sweep);
  }
  if (HasRunFiles(path)) {
    DLSCHED_TRY_LET(run, LoadRun(path, ""));
    if (run->summary) out.provenance = run->summary->provenance;
    out.runs.push_back(std::move(*run));
    return out;
  }
  // A compare's in compare.json, a sweep's in provenance.json.
  DLSCHED_TRY_LET(found, ReadProvenance(dir));
  if (*found) out.provenance = std::move((*found)->provenance);
  // A compare directory: one run directory per profile, in compare.csv's
  // order (its profile column names them), then any others by name.
  std::vector<std::string> names;
  for (fs::directory_iterator it(path, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (it->is_directory(ec) && HasRunFiles(it->path())) {
      names.push_back(it->path().filename().string());
    }
  }
  if (ec) return core::Errorf("{}: cannot read directory: {}", dir, ec.message());
  std::sort(names.begin(), names.end());
  if (out.compare) {
    if (auto col = out.compare->Find("profile")) {
      // The first row naming each directory places it; the rest follow by
      // name (a stable sort on that place, not a search per row).
      FirstSeen<> place;
      for (const auto& row : out.compare->rows) place.Number(row.cells[*col]);
      auto at = [&](const std::string& name) {
        return place.Seen(name) ? place.Number(name) : place.size();
      };
      std::stable_sort(names.begin(), names.end(),
                       [&](const std::string& a, const std::string& b) { return at(a) < at(b); });
    }
  }
  for (const auto& name : names) {
    DLSCHED_TRY_LET(run, LoadRun(path / name, name));
    out.runs.push_back(std::move(*run));
  }
  if (out.runs.empty() && !out.compare && !out.sweep) {
    return core::Errorf(
        "{}: holds no dlsched results (expected summary.json, jobs.csv and utilization.csv of "
        "`simulate --out`, or compare.csv and its profile directories of `compare --out`, or "
        "sweep.csv)",
        dir);
  }
  return out;
}

core::Result<std::vector<ReportDir>> LoadReportDirs(std::span<const std::string> dirs) {
  std::vector<ReportDir> out;
  for (const auto& d : dirs) {
    DLSCHED_TRY_LET(loaded, LoadReportDir(d));
    out.push_back(std::move(*loaded));
  }
  return out;
}

std::vector<ReportDir> Overlay(std::vector<ReportDir> dirs) {
  const auto with_runs =
      std::count_if(dirs.begin(), dirs.end(), [](const ReportDir& d) { return !d.runs.empty(); });
  if (with_runs < 2) return dirs;
  std::map<std::string, int> uses;
  for (const ReportDir& d : dirs) {
    for (const RunData& run : d.runs) ++uses[run.name];
  }
  ReportDir merged;
  std::vector<ReportDir> out;
  std::set<std::string> used;
  size_t at = 0;
  for (ReportDir& d : dirs) {
    if (d.runs.empty()) {
      out.push_back(std::move(d));
      continue;
    }
    if (merged.overlaid.empty()) at = out.size();
    merged.overlaid.push_back(d.dir);
    for (RunData& run : d.runs) {
      // A name two runs share gets its directory; the same directory given
      // twice, a number.
      std::string name = uses[run.name] > 1 ? fmt::format("{} ({})", run.name, d.dir) : run.name;
      const std::string base = name;
      for (int k = 2; used.contains(name); ++k) name = fmt::format("{} #{}", base, k);
      used.insert(name);
      run.name = std::move(name);
      merged.runs.push_back(std::move(run));
    }
    // A sweep beside the runs stays a section of its own.
    if (d.sweep) {
      ReportDir sweep;
      sweep.dir = d.dir;
      sweep.sweep = std::move(d.sweep);
      out.push_back(std::move(sweep));
    }
  }
  merged.dir = fmt::format("{}", fmt::join(merged.overlaid, " + "));
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), std::move(merged));
  return out;
}

core::Result<std::vector<ReportDir>> LoadReport(std::span<const std::string> dirs) {
  DLSCHED_TRY_LET(loaded, LoadReportDirs(dirs));
  return Overlay(std::move(*loaded));
}

}  // namespace dlsched::report
