#include "dlsched/report/analysis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/core/time.h"
#include "dlsched/metrics/records.h"

namespace dlsched::report {
namespace {

int ClampToInt(int64_t v) {
  return static_cast<int>(std::clamp<int64_t>(v, 0, std::numeric_limits<int>::max()));
}

// jobs.csv's row as the record metrics::Summarize reads.
metrics::JobRecord Record(const JobRow& j) {
  metrics::JobRecord r;
  r.name = j.name;
  r.submit = j.submit;
  r.first_start = j.first_start.value_or(core::kNever);
  r.completion = j.completion.value_or(core::kNever);
  if (j.final_state == "Completed" || (j.final_state.empty() && j.jct)) {
    r.final_phase = core::JobPhase::kCompleted;
    // A file without `completion` still gives the JCT.
    if (j.jct && !j.completion) r.completion = j.submit + *j.jct;
  } else if (j.final_state == "Failed") {
    r.final_phase = core::JobPhase::kFailed;
  } else {
    r.final_phase = core::JobPhase::kWaiting;
  }
  r.queueing = j.queueing;
  r.launching = j.launching;
  r.running = j.running;
  r.reallocations = ClampToInt(j.reallocations);
  r.preemptions = ClampToInt(j.preemptions);
  r.scale_events = ClampToInt(j.scale_events);
  r.gpus = j.gpus.value_or(0);
  r.lost_gpu_seconds = std::max(0.0, j.lost_gpu_seconds);
  r.alone_jct = std::max(0.0, j.alone_jct);
  r.queue = j.queue;
  r.ideal_runtime = std::max(0.0, j.ideal_runtime.value_or(0));
  r.stuck = j.stuck;
  return r;
}

// The time-weighted mean of a step function over [from, to]: values[i]
// holds from time[i] until time[i + 1], the last until `end`.
double MeanOver(const std::vector<double>& time, const std::vector<double>& values, double end,
                double from, double to) {
  if (!(to > from)) return 0;
  double area = 0;
  for (size_t i = 0; i < time.size(); ++i) {
    const double a = std::max(time[i], from);
    const double b = std::min(i + 1 < time.size() ? time[i + 1] : end, to);
    if (b > a) area += values[i] * (b - a);
  }
  const double mean = area / (to - from);
  return std::isfinite(mean) ? mean : 0;
}

metrics::RunSummary Recompute(const RunData& run, const std::optional<metrics::Window>& window) {
  metrics::RunInput in;
  in.end_time = run.EndTime();
  if (run.summary) {
    const metrics::RunSummary& s = run.summary->figures;
    in.profile = s.profile;
    in.partial = s.partial;
    in.deadlocked = s.deadlocked;
    in.cycles = s.cycles;
  } else {
    in.profile = run.name;
  }
  in.jobs.reserve(run.jobs->size());
  for (const JobRow& j : *run.jobs) {
    in.jobs.push_back(Record(j));
    in.deadlocked = in.deadlocked || j.stuck;
  }
  metrics::RunSummary s = metrics::Summarize(in, window);
  // Utilisation from utilization.csv, over the window Summarize chose.
  if (run.utilization) {
    const Utilization& u = *run.utilization;
    const double end = std::max(in.end_time, u.time.empty() ? 0 : u.time.back());
    for (const auto& r : u.resources) {
      metrics::ResourceUtilization out;
      out.name = r.name;
      if (run.summary) {
        for (const auto& known : run.summary->figures.utilization) {
          if (known.name == r.name) out.capacity = known.capacity;
        }
      }
      out.allocated = MeanOver(u.time, r.allocated, end, s.window_start, s.window_end);
      out.effective = MeanOver(u.time, r.effective, end, s.window_start, s.window_end);
      s.utilization.push_back(std::move(out));
    }
  }
  return s;
}

}  // namespace

Measured Measure(const RunData& run, const std::optional<metrics::Window>& forced) {
  Measured m;
  const std::optional<metrics::Window> own =
      run.summary ? run.summary->figures.window : std::nullopt;
  m.window = forced ? forced : own;
  if (run.summary && (!forced || own == forced)) {
    m.figures = run.summary->figures;
    return m;
  }
  if (run.jobs) {
    m.figures = Recompute(run, m.window);
    m.recomputed = true;
    return m;
  }
  if (run.summary) {
    m.figures = run.summary->figures;
    m.window = own;
    m.window_unapplied = true;
  }
  return m;
}

bool Incomplete(const metrics::RunSummary& f) {
  return f.partial || f.jct_censored > 0 || f.stuck_jobs > 0 || f.failed_jobs > 0 ||
         f.unfinished_jobs > 0;
}

std::string IncompleteText(const metrics::RunSummary& f) {
  std::vector<std::string> parts;
  if (f.partial) parts.emplace_back("partial (interrupted)");
  const int64_t not_done = int64_t{f.stuck_jobs} + f.failed_jobs + f.unfinished_jobs;
  if (not_done > 0) {
    std::vector<std::string> kinds;
    if (f.stuck_jobs > 0) kinds.push_back(fmt::format("{} stuck", f.stuck_jobs));
    if (f.failed_jobs > 0) kinds.push_back(fmt::format("{} failed", f.failed_jobs));
    if (f.unfinished_jobs > 0) kinds.push_back(fmt::format("{} unfinished", f.unfinished_jobs));
    parts.push_back(fmt::format("{} of {} jobs not completed ({})", not_done, f.total_jobs,
                                fmt::join(kinds, ", ")));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<const JobRow*> JobsIn(const RunData& run,
                                  const std::optional<metrics::Window>& window) {
  std::vector<const JobRow*> out;
  if (!run.jobs) return out;
  out.reserve(run.jobs->size());
  for (const JobRow& j : *run.jobs) {
    if (!window || window->Contains(j.submit)) out.push_back(&j);
  }
  return out;
}

Cdf MakeCdf(std::span<const JobRow* const> jobs, CdfOf of) {
  Cdf c;
  for (const JobRow* j : jobs) {
    switch (of) {
      case CdfOf::kJct:
        ++c.total;
        if (j->jct) c.values.push_back(*j->jct);
        break;
      case CdfOf::kQueueing:
        // Every wait for resources, the waits after a stop included: final
        // only once the job completed (a job running now may be stopped
        // and wait again).
        ++c.total;
        if (j->jct) c.values.push_back(j->queueing);
        break;
      case CdfOf::kSlowdown: {
        const double ideal = j->ideal_runtime.value_or(0);
        if (!(ideal > 0)) break;
        ++c.total;
        if (j->jct) c.values.push_back(*j->jct > ideal ? *j->jct / ideal : 1.0);
        break;
      }
      case CdfOf::kFtf:
        // A job without a JCT alone (no --alone, no queue) has no FTF.
        if (!(j->alone_jct > 0)) break;
        ++c.total;
        if (j->jct) c.values.push_back(*j->jct / j->alone_jct);
        break;
    }
  }
  std::sort(c.values.begin(), c.values.end());
  return c;
}

bool DifferentJobsCompleted(std::span<const std::vector<const JobRow*>> runs) {
  std::vector<std::set<std::string_view>> done;
  for (const auto& jobs : runs) {
    std::set<std::string_view> names;
    for (const JobRow* j : jobs) {
      if (j->jct) names.insert(j->name);
    }
    done.push_back(std::move(names));
  }
  for (size_t i = 1; i < done.size(); ++i) {
    if (done[i] != done[0]) return true;
  }
  return false;
}

namespace {

// Samples `value` after the events at each time, when it changed.
class StepRecorder {
 public:
  void At(double time, double value) {
    if (!series_.time.empty() && series_.time.back() == time) {
      series_.value.back() = value;
      // Back to the value before this time: no change after all.
      if (series_.time.size() > 1 && series_.value[series_.value.size() - 2] == value) {
        series_.time.pop_back();
        series_.value.pop_back();
      }
      return;
    }
    if (!series_.value.empty() && series_.value.back() == value) return;
    series_.time.push_back(time);
    series_.value.push_back(value);
  }
  StepSeries Take() { return std::move(series_); }

 private:
  StepSeries series_;
};

}  // namespace

std::optional<QueueSeries> QueueOverTime(const RunData& run) {
  if (!run.events) return std::nullopt;
  std::unordered_map<std::string_view, int64_t> gpus;
  bool has_gpus = run.jobs.has_value() && !run.jobs->empty();
  if (run.jobs) {
    for (const JobRow& j : *run.jobs) {
      if (!j.gpus) has_gpus = false;
      gpus[j.name] = std::max<int64_t>(0, j.gpus.value_or(0));
    }
  }
  std::unordered_map<std::string_view, bool> waiting;
  int64_t jobs = 0;
  double demand = 0;
  StepRecorder jobs_steps;
  StepRecorder gpu_steps;
  // The first sample at the first event, then after every time with events.
  for (const EventRow& e : *run.events) {
    const std::string_view ev = e.event;
    bool& w = waiting[e.job];
    if (ev == "submitted" || ev == "standby") {
      if (!w) {
        w = true;
        ++jobs;
        demand += static_cast<double>(gpus[e.job]);
      }
    } else if (ev == "started" || ev == "relaunching" || ev == "completed" || ev == "failed") {
      if (w) {
        w = false;
        --jobs;
        demand -= static_cast<double>(gpus[e.job]);
      }
    }
    jobs_steps.At(e.time, static_cast<double>(jobs));
    gpu_steps.At(e.time, demand);
  }
  QueueSeries q;
  q.jobs = jobs_steps.Take();
  if (has_gpus) q.gpus = gpu_steps.Take();
  return q;
}

std::optional<StepSeries> PreemptionsOverTime(const RunData& run) {
  if (!run.events) return std::nullopt;
  StepRecorder steps;
  double count = 0;
  for (const EventRow& e : *run.events) {
    if (e.event == "preempted" || (e.event == "resized" && !e.by.empty())) ++count;
    steps.At(e.time, count);
  }
  return steps.Take();
}

std::string SizeBucket::Label() const {
  return lo == hi ? fmt::format("{}", lo) : fmt::format("{}-{}", lo, hi);
}

SizeBucket BucketOf(int64_t gpus) {
  if (gpus <= 2) return {std::max<int64_t>(0, gpus), std::max<int64_t>(0, gpus)};
  int64_t hi = 2;
  while (hi < gpus) {
    if (hi > std::numeric_limits<int64_t>::max() / 2) return {hi + 1, gpus};
    hi *= 2;
  }
  return {hi / 2 + 1, hi};
}

namespace {

// Each group of `jobs` by `key` (nullopt: left out): its mean JCT, in
// (order, label) order.
template <typename Key>
std::vector<GroupJct> JctBy(std::span<const JobRow* const> jobs, double end, const Key& key) {
  std::map<std::pair<int64_t, std::string>, GroupJct> groups;
  for (const JobRow* j : jobs) {
    const std::optional<std::pair<int64_t, std::string>> k = key(*j);
    if (!k) continue;
    GroupJct& out = groups[*k];
    out.order = k->first;
    out.label = k->second;
    ++out.jobs;
    out.mean_jct += j->jct ? *j->jct : std::max(0.0, end - j->submit);
    if (j->jct) ++out.completed;
  }
  std::vector<GroupJct> out;
  for (auto& [k, g] : groups) {
    g.mean_jct /= static_cast<double>(g.jobs);
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

std::vector<GroupJct> JctBySize(std::span<const JobRow* const> jobs, double end) {
  return JctBy(jobs, end, [](const JobRow& j) -> std::optional<std::pair<int64_t, std::string>> {
    if (!j.gpus) return std::nullopt;
    const SizeBucket b = BucketOf(*j.gpus);
    return std::pair{b.lo, b.Label()};
  });
}

std::vector<GroupJct> JctByQueue(std::span<const JobRow* const> jobs, double end) {
  return JctBy(jobs, end, [](const JobRow& j) -> std::optional<std::pair<int64_t, std::string>> {
    if (j.queue.empty()) return std::nullopt;
    return std::pair{int64_t{0}, j.queue};
  });
}

Ratio Normalise(double value, bool value_lower_bound, double base, bool base_lower_bound) {
  Ratio r;
  if (base > 0 && std::isfinite(value / base)) r.ratio = value / base;
  r.bound = value_lower_bound && base_lower_bound ? Bound::kUnknown
            : value_lower_bound                   ? Bound::kAtLeast
            : base_lower_bound                    ? Bound::kAtMost
                                                  : Bound::kExact;
  return r;
}

std::string_view BoundMark(Bound bound) {
  switch (bound) {
    case Bound::kAtLeast:
      return "≥ ";
    case Bound::kAtMost:
      return "≤ ";
    case Bound::kUnknown:
      return "? ";
    case Bound::kExact:
      break;
  }
  return "";
}

bool LowerBoundFigure(std::string_view figure) {
  for (std::string_view f :
       {"jct_mean", "jct_p50", "jct_p95", "jct_p99", "makespan", "slowdown_mean", "slowdown_p95"}) {
    if (f == figure) return true;
  }
  return false;
}

std::vector<QueueUsage> QueueUsageOverTime(const RunData& run) {
  if (!run.jobs || !run.allocations) return {};
  std::unordered_map<std::string_view, size_t> index;  // queue -> its entry
  std::vector<QueueUsage> out;
  auto add = [&](const std::string& queue) {
    if (index.emplace(queue, out.size()).second) out.push_back({.queue = queue});
    return index[queue];
  };
  bool any = false;
  for (const JobRow& j : *run.jobs) any = any || !j.queue.empty();
  if (!any) return {};
  if (run.summary) {
    for (const metrics::QueueSummary& q : run.summary->figures.queues) {
      out[add(q.name)].nominal_gpus = q.nominal_gpus;
    }
  }
  std::unordered_map<std::string_view, size_t> job_queue;
  for (const JobRow& j : *run.jobs) {
    if (!j.queue.empty()) job_queue.emplace(j.name, add(j.queue));
  }
  // Each queue's changes: +gpus at an allocation's start, -gpus at its end.
  std::vector<std::vector<std::pair<double, double>>> changes(out.size());
  for (const AllocationRow& a : *run.allocations) {
    const auto it = job_queue.find(a.job);
    if (it == job_queue.end() || !(a.gpus > 0)) continue;
    changes[it->second].emplace_back(a.start, a.gpus);
    if (a.end) changes[it->second].emplace_back(*a.end, -a.gpus);
  }
  for (size_t q = 0; q < out.size(); ++q) {
    auto& c = changes[q];
    std::stable_sort(c.begin(), c.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    StepSeries& s = out[q].gpus;
    double held = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      held += c[i].second;
      if (i + 1 < c.size() && c[i + 1].first == c[i].first) continue;  // one sample an instant
      if (!s.value.empty() && s.value.back() == held) continue;
      s.time.push_back(c[i].first);
      s.value.push_back(held);
    }
  }
  return out;
}

}  // namespace dlsched::report
