#include "dlsched/metrics/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <span>

namespace dlsched::metrics {
namespace {

double Mean(std::span<const double> values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// Population variance, two-pass for accuracy.
double Variance(std::span<const double> values, double mean) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += (v - mean) * (v - mean);
  return sum / static_cast<double>(values.size());
}

int64_t Amount(const UtilizationSample& s, core::ResourceId id, UtilizationKind kind) {
  return kind == UtilizationKind::kAllocated ? s.allocated[id] : s.effective[id];
}

}  // namespace

JobOutcome Outcome(const JobRecord& job) {
  if (job.final_phase == core::JobPhase::kCompleted) return JobOutcome::kCompleted;
  if (job.stuck) return JobOutcome::kStuck;
  if (job.final_phase == core::JobPhase::kFailed) return JobOutcome::kFailed;
  return JobOutcome::kUnfinished;
}

std::optional<core::Time> Jct(const JobRecord& job) {
  if (Outcome(job) != JobOutcome::kCompleted || job.completion >= core::kNever) {
    return std::nullopt;
  }
  return job.completion - job.submit;
}

namespace {

// The lendable GPUs of a queue holding `held` it leaves unused: its usage
// fills the part it keeps first.
double UnusedLendable(const QueueInfo& info, int64_t held) {
  const int64_t kept = info.nominal_gpus - info.lendable_gpus;
  return static_cast<double>(
      std::max<int64_t>(0, info.lendable_gpus - std::max<int64_t>(0, held - kept)));
}

// JCT / ideal, at least 1: a JCT at or below the ideal (a zero-length job,
// rounding in the backend) counts as "as fast as alone" rather than faster.
double SlowdownOf(core::Time jct, core::Time ideal) { return jct > ideal ? jct / ideal : 1.0; }

}  // namespace

std::optional<double> FinishTimeFairness(const JobRecord& job) {
  const std::optional<core::Time> jct = Jct(job);
  if (!jct || !(job.alone_jct > 0)) return std::nullopt;
  return *jct / job.alone_jct;
}

std::optional<double> Slowdown(const JobRecord& job) {
  const std::optional<core::Time> jct = Jct(job);
  if (!jct || !(job.ideal_runtime > 0)) return std::nullopt;
  return SlowdownOf(*jct, job.ideal_runtime);
}

double Percentile(std::span<const double> sorted, double percent) {
  if (sorted.empty()) return 0;
  const double h = static_cast<double>(sorted.size() - 1) * std::clamp(percent, 0.0, 100.0) / 100;
  const size_t lo = static_cast<size_t>(h);
  if (lo + 1 >= sorted.size()) return sorted.back();
  // numpy's _lerp: a + (b - a) * t, from the other end when t >= 0.5.
  const double t = h - static_cast<double>(lo);
  const double a = sorted[lo];
  const double b = sorted[lo + 1];
  return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}

double JainIndex(std::span<const double> values) {
  if (values.empty()) return 0;
  double sum = 0;
  double sum_sq = 0;
  for (double v : values) {
    sum += v;
    sum_sq += v * v;
  }
  if (sum_sq <= 0) return 0;
  return sum * sum / (static_cast<double>(values.size()) * sum_sq);
}

double TimeWeightedUtilization(std::span<const UtilizationSample> samples, core::ResourceId id,
                               UtilizationKind kind, int64_t capacity, core::Time start,
                               core::Time end) {
  if (capacity <= 0 || !(end > start)) return 0;
  double area = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const core::Time from = std::max(samples[i].time, start);
    const core::Time to = std::min(i + 1 < samples.size() ? samples[i + 1].time : end, end);
    if (to <= from) continue;
    area += static_cast<double>(Amount(samples[i], id, kind)) * (to - from);
  }
  return area / (end - start) / static_cast<double>(capacity);
}

std::string ResourceLabel(core::ResourceId id) {
  const std::string_view name = core::ResourceName(id);
  // Same fallback as core::FormatResources for an id that was never interned.
  if (name.empty()) return "resource-" + std::to_string(id);
  return std::string(name);
}

namespace {

// What Summarize gathers from the jobs in its window.
struct JobTotals {
  std::vector<double> jcts;
  std::vector<double> slowdowns;
  std::vector<double> speeds;  // 1 / slowdown
  std::vector<double> ftfs;    // JCT / JCT alone
  double queueing = 0;
  double launching = 0;
  double running = 0;
  int completed_with_jct = 0;
  core::Time last_end = -std::numeric_limits<double>::infinity();
  core::Time first_submit = core::kNever;
};

// Counts the jobs in `s`'s window into `s` and gathers their times.
JobTotals CountJobs(const RunInput& input, RunSummary& s) {
  JobTotals t;
  const std::optional<Window>& window = s.window;
  for (const JobRecord& job : input.jobs) {
    if (window && !window->Contains(job.submit)) continue;
    ++s.total_jobs;
    t.first_submit = std::min(t.first_submit, job.submit);
    s.preemptions += job.preemptions;
    s.scale_events += job.scale_events;
    s.reallocations += job.reallocations;
    s.lost_gpu_hours += job.lost_gpu_seconds / 3600;
    s.jobs_across_nodes += job.max_nodes > 1;
    s.jobs_across_switches += job.max_switches > 1;

    switch (Outcome(job)) {
      case JobOutcome::kCompleted:
        ++s.completed_jobs;
        break;
      case JobOutcome::kStuck:
        ++s.stuck_jobs;
        break;
      case JobOutcome::kFailed:
        ++s.failed_jobs;
        break;
      case JobOutcome::kUnfinished:
        ++s.unfinished_jobs;
        break;
    }

    // A job that did not complete is censored at the run's end.
    std::optional<core::Time> jct = Jct(job);
    if (jct) {
      ++t.completed_with_jct;
      t.queueing += job.queueing;
      t.launching += job.launching;
      t.running += job.running;
      t.last_end = std::max(t.last_end, job.completion);
    } else {
      ++s.jct_censored;
      jct = std::max(0.0, input.end_time - job.submit);
      t.last_end = std::max(t.last_end, input.end_time);
    }
    t.jcts.push_back(*jct);
    if (job.ideal_runtime > 0) {
      t.slowdowns.push_back(SlowdownOf(*jct, job.ideal_runtime));
      t.speeds.push_back(1 / t.slowdowns.back());
    }
    if (job.alone_jct > 0) t.ftfs.push_back(*jct / job.alone_jct);
  }
  return t;
}

// The JCT, phase and slowdown figures of `t` into `s`.
void SummarizeTimes(JobTotals& t, RunSummary& s) {
  if (!t.jcts.empty()) {
    s.jct_mean = Mean(t.jcts);
    std::vector<double> sorted = t.jcts;
    std::sort(sorted.begin(), sorted.end());
    s.jct_p50 = Percentile(sorted, 50);
    s.jct_p95 = Percentile(sorted, 95);
    s.jct_p99 = Percentile(sorted, 99);
    s.makespan = std::max(0.0, t.last_end - t.first_submit);
  }
  if (t.completed_with_jct > 0) {
    const double n = static_cast<double>(t.completed_with_jct);
    s.mean_queueing = t.queueing / n;
    s.mean_launching = t.launching / n;
    s.mean_running = t.running / n;
  }

  s.slowdown_jobs = static_cast<int>(t.slowdowns.size());
  s.slowdown_mean = Mean(t.slowdowns);
  s.slowdown_variance = Variance(t.slowdowns, s.slowdown_mean);
  std::sort(t.slowdowns.begin(), t.slowdowns.end());
  s.slowdown_p95 = Percentile(t.slowdowns, 95);
  s.jain_index = JainIndex(t.speeds);
  s.ftf_jobs = static_cast<int>(t.ftfs.size());
  s.ftf_mean = Mean(t.ftfs);
  if (!t.ftfs.empty()) s.ftf_max = *std::max_element(t.ftfs.begin(), t.ftfs.end());
}

// The utilisation window and each resource's utilisation over it into `s`.
void SummarizeUtilization(const RunInput& input, core::Time first_submit, RunSummary& s) {
  if (s.window) {
    s.window_start = s.window->from;
    s.window_end = std::max(std::min(s.window->to, input.end_time), s.window_start);
  } else {
    s.window_start = input.jobs.empty() ? 0 : first_submit;
    s.window_end = std::max(input.end_time, s.window_start);
  }
  for (int i = 0; i < core::NumResources(); ++i) {
    const auto id = static_cast<core::ResourceId>(i);
    const int64_t capacity = input.capacity[id];
    if (capacity <= 0) continue;
    ResourceUtilization u;
    u.id = id;
    u.name = ResourceLabel(id);
    u.capacity = capacity;
    u.allocated = TimeWeightedUtilization(input.utilization, id, UtilizationKind::kAllocated,
                                          capacity, s.window_start, s.window_end);
    u.effective = TimeWeightedUtilization(input.utilization, id, UtilizationKind::kEffective,
                                          capacity, s.window_start, s.window_end);
    s.utilization.push_back(std::move(u));
  }
}

}  // namespace

RunSummary Summarize(const RunInput& input, std::optional<Window> window) {
  RunSummary s;
  s.window = window;
  s.profile = input.profile;
  s.deadlocked = input.deadlocked;
  s.partial = input.partial;
  s.cycles = input.cycles;
  s.end_time = input.end_time;
  JobTotals totals = CountJobs(input, s);
  SummarizeTimes(totals, s);
  SummarizeUtilization(input, totals.first_submit, s);
  s.queues = SummarizeQueues(input);
  return s;
}

namespace {

// Each queue's reclaims (QueueSummary::reclaims): for each start in
// `reclaims`, the time from when its job last began to wait to when it ran.
void ReclaimWaits(const RunInput& input, std::span<const int> queue_of,
                  const std::set<std::pair<int32_t, core::Time>>& reclaims,
                  std::vector<QueueSummary>& out) {
  std::vector<core::Time> waiting_since(queue_of.size(), 0);
  std::vector<char> reclaiming(queue_of.size(), 0);
  std::vector<std::vector<core::Time>> waits(out.size());
  for (const JobEvent& e : input.events) {
    if (e.job < 0 || static_cast<size_t>(e.job) >= queue_of.size() || queue_of[e.job] < 0) continue;
    if (e.kind == "submitted" || e.kind == "standby") {
      waiting_since[e.job] = e.time;
    } else if (e.kind == "started" || e.kind == "relaunching") {
      reclaiming[e.job] = reclaims.contains({e.job, e.time}) ? 1 : 0;
    } else if (e.kind == "running" && reclaiming[e.job]) {
      reclaiming[e.job] = 0;
      waits[queue_of[e.job]].push_back(e.time - waiting_since[e.job]);
    }
  }
  for (size_t q = 0; q < out.size(); ++q) {
    if (waits[q].empty()) continue;
    out[q].reclaims = static_cast<int>(waits[q].size());
    out[q].reclaim_wait_mean = Mean(waits[q]);
    out[q].reclaim_wait_max = *std::max_element(waits[q].begin(), waits[q].end());
  }
}

}  // namespace

std::vector<QueueSummary> SummarizeQueues(const RunInput& input) {
  std::vector<QueueSummary> out(input.queues.size());
  std::map<std::string, size_t, std::less<>> index;
  for (size_t q = 0; q < input.queues.size(); ++q) {
    out[q].name = input.queues[q].name;
    out[q].cohort = input.queues[q].cohort;
    out[q].nominal_gpus = input.queues[q].nominal_gpus;
    index.emplace(input.queues[q].name, q);
  }
  // Each job's queue, or -1.
  std::vector<int> queue_of(input.jobs.size(), -1);
  std::vector<std::vector<double>> jct(out.size()), queueing(out.size()), ftf(out.size());
  for (size_t j = 0; j < input.jobs.size(); ++j) {
    const JobRecord& job = input.jobs[j];
    const auto it = index.find(job.queue);
    if (it == index.end()) continue;
    queue_of[j] = static_cast<int>(it->second);
    QueueSummary& s = out[it->second];
    ++s.jobs;
    s.preemptions_suffered += job.preemptions;
    s.lost_gpu_hours += job.lost_gpu_seconds / 3600;
    if (const auto t = Jct(job)) {
      ++s.completed;
      jct[it->second].push_back(*t);
      queueing[it->second].push_back(job.queueing);
    }
    if (const auto f = FinishTimeFairness(job)) ftf[it->second].push_back(*f);
  }
  for (size_t q = 0; q < out.size(); ++q) {
    if (!ftf[q].empty()) {
      out[q].ftf_mean = Mean(ftf[q]);
      out[q].ftf_max = *std::max_element(ftf[q].begin(), ftf[q].end());
    }
    if (jct[q].empty()) continue;
    std::sort(jct[q].begin(), jct[q].end());
    out[q].jct_mean = Mean(jct[q]);
    out[q].jct_p95 = Percentile(jct[q], 95);
    out[q].queueing_mean = Mean(queueing[q]);
  }
  // Reclaims: (job, time) of a start that took room from another queue's job.
  std::set<std::pair<int32_t, core::Time>> reclaims;
  for (const JobEvent& e : input.events) {
    if (e.by < 0 || static_cast<size_t>(e.by) >= queue_of.size() || queue_of[e.by] < 0) continue;
    if (e.kind != "preempted" && e.kind != "resized") continue;
    ++out[queue_of[e.by]].preemptions_caused;
    if (e.job >= 0 && static_cast<size_t>(e.job) < queue_of.size() &&
        queue_of[e.job] != queue_of[e.by]) {
      reclaims.emplace(e.by, e.time);
    }
  }
  if (!reclaims.empty()) ReclaimWaits(input, queue_of, reclaims, out);
  // Each queue's GPUs over time, from the allocations: (time, queue, +-gpus).
  struct Step {
    core::Time time;
    int queue;
    int64_t gpus;
  };
  std::vector<Step> steps;
  for (const Allocation& a : input.allocations) {
    if (a.job < 0 || static_cast<size_t>(a.job) >= queue_of.size() || queue_of[a.job] < 0) continue;
    const core::Time end = a.end >= core::kNever ? input.end_time : a.end;
    steps.push_back({a.start, queue_of[a.job], a.gpus});
    steps.push_back({end, queue_of[a.job], -a.gpus});
  }
  std::sort(steps.begin(), steps.end(),
            [](const Step& a, const Step& b) { return a.time < b.time; });
  std::vector<int64_t> held(out.size(), 0);
  constexpr double kHour = 3600;
  for (size_t i = 0; i < steps.size();) {
    const core::Time t = steps[i].time;
    for (; i < steps.size() && steps[i].time == t; ++i) held[steps[i].queue] += steps[i].gpus;
    if (i == steps.size()) break;
    const double dt = (steps[i].time - t) / kHour;
    // Per cohort: GPUs borrowed, and lendable GPUs left unused.
    std::map<std::string_view, std::pair<double, double>> cohorts;
    for (size_t q = 0; q < out.size(); ++q) {
      const QueueInfo& info = input.queues[q];
      const double used = static_cast<double>(held[q]);
      const double borrowed = std::max(0.0, used - static_cast<double>(info.nominal_gpus));
      out[q].gpu_hours += used * dt;
      out[q].borrowed_gpu_hours += borrowed * dt;
      if (info.cohort.empty()) continue;
      auto& c = cohorts[info.cohort];
      c.first += borrowed;
      c.second += UnusedLendable(info, held[q]);
    }
    for (size_t q = 0; q < out.size(); ++q) {
      const QueueInfo& info = input.queues[q];
      if (info.cohort.empty()) continue;
      const auto& [borrowed, unused] = cohorts[info.cohort];
      if (unused > 0)
        out[q].lent_gpu_hours += UnusedLendable(info, held[q]) / unused * borrowed * dt;
    }
  }
  return out;
}

}  // namespace dlsched::metrics
