#include "dlsched/policy/fsched/fsched_allocation.h"

#include <algorithm>
#include <cmath>

namespace dlsched::policy {
namespace {

// Sums of slowdowns are updated per candidate, so two candidates whose
// variance (or throughput) is mathematically equal may differ in the last
// bits; values this close count as equal and the earlier job wins.
constexpr double kTolerance = 1e-9;

bool Below(double a, double b) {
  return a < b - kTolerance * std::max({1.0, std::abs(a), std::abs(b)});
}

bool Aware(const FschedInput& in) { return !in.types.empty(); }

// f(n) of `job` on GPUs of type `type` (aware), else its table.
double Rate(const FschedInput& in, const FschedJob& job, int type, int workers) {
  return Aware(in) && type >= 0 ? job.throughput->RateOn(in.types[type], workers)
                                : job.throughput->Rate(workers);
}

// The best f(n) over the sizes the job could have on `gpus` GPUs of `type`.
double BestRateOn(const FschedInput& in, const FschedJob& job, int type, int gpus) {
  int hi = job.max_workers;
  if (job.gpus_per_worker > 0) hi = std::min(hi, (gpus - job.fixed_gpus) / job.gpus_per_worker);
  double best = 0;
  for (int n = std::max(job.min_workers, 1); n <= hi; ++n) {
    best = std::max(best, Rate(in, job, type, n));
  }
  return best;
}

double BestRate(const FschedInput& in, const FschedJob& job) {
  if (!Aware(in)) return BestRateOn(in, job, -1, in.cluster_gpus);
  double best = 0;
  for (int t = 0; t < static_cast<int>(in.types.size()); ++t) {
    best = std::max(best, BestRateOn(in, job, t, in.type_gpus[t]));
  }
  return best;
}

double Slowdown(const FschedInput& in, const FschedJob& job, int type, double best, int workers) {
  return best > 0 && workers > 0 ? Rate(in, job, type, workers) / best : 0;
}

// Population variance from the sum and the sum of squares of k values.
double VarianceOf(double sum, double sum_sq, int k) {
  if (k == 0) return 0;
  const double mean = sum / k;
  return std::max(0.0, sum_sq / k - mean * mean);
}

}  // namespace

double PopulationVariance(std::span<const double> values) {
  if (values.empty()) return 0;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double var = 0;
  for (double v : values) var += (v - mean) * (v - mean);
  return var / static_cast<double>(values.size());
}

namespace {

// The type of job i in `out` (aware), or -1 (agnostic: one pool).
int TypeOf(const FschedInput& in, const FschedAllocation& out, int i) {
  return Aware(in) ? out.type[i] : -1;
}

// The pool job i takes its GPUs from: its type (aware), else the one pool.
int Pool(const FschedInput& in, const FschedAllocation& out, int i) {
  return Aware(in) ? out.type[i] : 0;
}

// Step 1: every job at its minimum, running jobs first (they hold at least
// their minimum already, so with a consistent input they always fit);
// frozen jobs keep what they hold. `left` gets the GPUs left in each pool;
// the jobs that got their minimum are marked `growable`.
void AdmitMinimums(const FschedInput& input, FschedAllocation* out, std::vector<int>* left,
                   std::vector<uint8_t>* growable) {
  const std::span<const FschedJob> jobs = input.jobs;
  const int n = static_cast<int>(jobs.size());
  const bool aware = Aware(input);
  if (aware) {
    left->assign(input.type_free.begin(), input.type_free.end());
  } else {
    left->assign(1, input.free_gpus);
  }
  auto admit = [&](int i) {
    const FschedJob& job = jobs[i];
    const int need = job.fixed_gpus + job.min_workers * job.gpus_per_worker;
    int pool = aware ? job.type : 0;
    if (aware && pool < 0) {
      // A job that waits: the type where its minimum runs fastest, of those
      // with room for it.
      for (int t = 0; t < static_cast<int>(left->size()); ++t) {
        if ((*left)[t] >= need && (pool < 0 || Rate(input, job, t, job.min_workers) >
                                                   Rate(input, job, pool, job.min_workers))) {
          pool = t;
        }
      }
    }
    if (pool < 0 || need > (*left)[pool]) {
      out->left_at_turn[i] =
          pool >= 0 ? (*left)[pool] : *std::max_element(left->begin(), left->end());
      return;
    }
    (*left)[pool] -= need;
    out->workers[i] = job.min_workers;
    if (aware) out->type[i] = pool;
    (*growable)[i] = 1;
  };
  for (int i = 0; i < n; ++i) {
    if (jobs[i].frozen) {
      out->workers[i] = jobs[i].current_workers;
    } else if (jobs[i].current_workers > 0) {
      admit(i);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (!jobs[i].frozen && jobs[i].current_workers == 0) admit(i);
  }
}

// One turn of step 2: the job to give one more worker (the most throughput
// under the variance bound, else the smallest variance), or -1 when none
// can grow. `step` gets the candidates when `traced`.
int PickWorker(const FschedInput& input, const FschedAllocation& out,
               const std::vector<uint8_t>& growable, const std::vector<int>& left, bool traced,
               FschedStep* step) {
  const std::span<const FschedJob> jobs = input.jobs;
  const int n = static_cast<int>(jobs.size());
  double sum = 0;
  double sum_sq = 0;
  double total = 0;
  int holding = 0;
  for (int i = 0; i < n; ++i) {
    if (out.workers[i] == 0) continue;
    const int type = TypeOf(input, out, i);
    const double s = Slowdown(input, jobs[i], type, out.best[i], out.workers[i]);
    sum += s;
    sum_sq += s * s;
    total += Rate(input, jobs[i], type, out.workers[i]);
    ++holding;
  }
  int best_under = -1;
  int best_any = -1;
  FschedCandidate best_under_c;
  FschedCandidate best_any_c;
  for (int i = 0; i < n; ++i) {
    const FschedJob& job = jobs[i];
    if (!growable[i] || out.workers[i] >= job.max_workers ||
        job.gpus_per_worker > left[Pool(input, out, i)]) {
      continue;
    }
    const int type = TypeOf(input, out, i);
    const int w = out.workers[i];
    const double s0 = Slowdown(input, job, type, out.best[i], w);
    const double s1 = Slowdown(input, job, type, out.best[i], w + 1);
    FschedCandidate c;
    c.job = i;
    c.workers = w + 1;
    c.variance = VarianceOf(sum - s0 + s1, sum_sq - s0 * s0 + s1 * s1, holding);
    c.throughput = total - Rate(input, job, type, w) + Rate(input, job, type, w + 1);
    c.under_bound = Below(c.variance, input.v_bound);
    // Candidates come in job order, so strict comparisons keep the earlier
    // job on ties.
    if (c.under_bound && (best_under < 0 || Below(best_under_c.throughput, c.throughput))) {
      best_under = i;
      best_under_c = c;
    }
    if (best_any < 0 || Below(c.variance, best_any_c.variance)) {
      best_any = i;
      best_any_c = c;
    }
    if (traced) step->candidates.push_back(c);
  }
  if (best_any < 0) return -1;
  step->smallest_variance = best_under < 0;
  return best_under >= 0 ? best_under : best_any;
}

}  // namespace

FschedAllocation AllocateFsched(const FschedInput& input, std::vector<FschedStep>* trace) {
  const std::span<const FschedJob> jobs = input.jobs;
  const int n = static_cast<int>(jobs.size());
  FschedAllocation out;
  out.workers.assign(n, 0);
  out.left_at_turn.assign(n, -1);
  out.best.resize(n);
  out.slowdown.assign(n, 0);
  if (Aware(input)) {
    out.type.resize(n);
    for (int i = 0; i < n; ++i) out.type[i] = jobs[i].type;
  }
  std::vector<uint8_t> growable(n, 0);
  for (int i = 0; i < n; ++i) out.best[i] = BestRate(input, jobs[i]);

  std::vector<int> left;
  AdmitMinimums(input, &out, &left, &growable);
  // Step 2: one worker at a time.
  for (;;) {
    FschedStep step;
    step.gpus_left = 0;
    for (int l : left) step.gpus_left += l;
    const int pick = PickWorker(input, out, growable, left, trace != nullptr, &step);
    if (pick < 0) break;
    if (trace != nullptr) {
      for (int k = 0; k < static_cast<int>(step.candidates.size()); ++k) {
        if (step.candidates[k].job == pick) step.chosen = k;
      }
      trace->push_back(std::move(step));
    }
    ++out.workers[pick];
    left[Pool(input, out, pick)] -= jobs[pick].gpus_per_worker;
  }

  std::vector<double> held;
  held.reserve(n);
  for (int i = 0; i < n; ++i) {
    const int type = TypeOf(input, out, i);
    out.throughput += Rate(input, jobs[i], type, out.workers[i]);
    out.slowdown[i] = Slowdown(input, jobs[i], type, out.best[i], out.workers[i]);
    if (out.workers[i] > 0) held.push_back(out.slowdown[i]);
  }
  out.variance = PopulationVariance(held);
  out.gpus_left = 0;
  for (int l : left) out.gpus_left += l;
  return out;
}

}  // namespace dlsched::policy
