#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace dlsched::policy {

// Gavel's allocations (docs/policies/gavel.md) as pure functions of plain
// numbers: which fraction of the time each job should run on each GPU type
// (D. Narayanan et al., "Heterogeneity-Aware Cluster Scheduling Policies for
// Deep Learning Workloads", OSDI 2020; stanford-futuredata/gavel).
//
// A job i runs on g_i GPUs of one type at a time; T[i][w] is its rate
// (steps/s) on g_i GPUs of type w, 0 when it cannot run there. An
// allocation X[i][w] in [0, 1] is the fraction of wall-clock time it should
// run on type w, with Gavel's constraints:
//   sum_w X[i][w] <= 1                       (a job runs on one type at a time)
//   sum_i g_i X[i][w] <= N_w                 (no type gives more GPUs than it has)
//   X[i][w] = 0 where T[i][w] = 0 or g_i > N_w   (it cannot run there)
struct GavelProblem {
  int jobs = 0;
  int types = 0;
  std::vector<double> rate;      // jobs x types, row-major: T[i][w]
  std::vector<double> gpus;      // g_i > 0
  std::vector<double> weight;    // w_i > 0 (priority weight, 1 by default)
  std::vector<double> capacity;  // N_w >= 0, the GPUs of each type
  double Rate(int i, int w) const { return rate[static_cast<size_t>(i * types + w)]; }
  // True when job i may be given time on type w.
  bool Usable(int i, int w) const;
};

struct GavelAllocation {
  std::vector<double> x;  // jobs x types, row-major
  double At(int i, int w, int types) const { return x[static_cast<size_t>(i * types + w)]; }
  // The LP's optimum of its first stage (max-min: the worst job's
  // normalised throughput); 0 for FIFO.
  double objective = 0;
};

// Gavel's max-min fairness over effective throughput (its heterogeneity-
// aware LAS, MaxMinFairnessPolicyWithPerf): maximise
//   min_i  sum_w c[i][w] X[i][w],  c[i][w] = T[i][w] g_i / (w_i P_i),
// where P_i = sum_w T[i][w] N_w / N is the job's throughput on the
// cluster's proportional share of each type (N = sum_w N_w). With
// `aware` false every usable T[i][w] is taken as 1 (its heterogeneity-
// agnostic LAS, MaxMinFairnessPolicy): equal weighted GPU-time whatever
// the type. Gavel maximises the minimum only, which leaves the other jobs'
// time to the solver; here a second LP, holding every job at that minimum,
// maximises the sum of the normalised throughputs, so the answer is the
// solver's no more than the problem's (ties between equal sums aside).
// Solved with COIN-OR CLP.
GavelAllocation MaxMinFairness(const GavelProblem& p, bool aware);

// Gavel's FIFO (FIFOPolicy, a greedy, not an LP): jobs in `order` (indices
// into the problem, earliest arrival first) each take X = 1 on one type
// with at least g_i GPUs left, until the first job for which no type has
// room (strict FIFO: nothing behind it is allocated). With `aware` the type
// is the one it runs fastest on (ties: the lowest type index); otherwise
// the first usable type in the job's own random permutation `pick` (types
// in a random order fixed per job, types x jobs; Gavel draws a random type
// among those with room).
GavelAllocation Fifo(const GavelProblem& p, std::span<const int> order, bool aware,
                     std::span<const int> pick = {});

}  // namespace dlsched::policy
