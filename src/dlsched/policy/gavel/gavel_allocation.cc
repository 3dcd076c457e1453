#include "dlsched/policy/gavel/gavel_allocation.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <span>
#include <vector>

#include "dlsched/policy/gavel/clp.h"

namespace dlsched::policy {

bool GavelProblem::Usable(int i, int w) const {
  return Rate(i, w) > 0 && gpus[static_cast<size_t>(i)] <= capacity[static_cast<size_t>(w)];
}

namespace {

// c[i][w] of MaxMinFairness: the normalised throughput of a unit of time.
std::vector<double> Coefficients(const GavelProblem& p, bool aware) {
  const double total = std::accumulate(p.capacity.begin(), p.capacity.end(), 0.0);
  std::vector<double> c(static_cast<size_t>(p.jobs * p.types), 0.0);
  if (total <= 0) return c;
  for (int i = 0; i < p.jobs; ++i) {
    // As Gavel: the proportional share counts every type the job has a
    // rate on, even one too small for its gang.
    auto rate = [&](int w) { return p.Rate(i, w) <= 0 ? 0.0 : aware ? p.Rate(i, w) : 1.0; };
    double proportional = 0;
    for (int w = 0; w < p.types; ++w) {
      proportional += rate(w) * p.capacity[static_cast<size_t>(w)] / total;
    }
    if (proportional <= 0) continue;
    const size_t at = static_cast<size_t>(i);
    for (int w = 0; w < p.types; ++w) {
      if (!p.Usable(i, w)) continue;
      c[static_cast<size_t>(i * p.types + w)] =
          rate(w) * p.gpus[at] / (p.weight[at] * proportional);
    }
  }
  return c;
}

// Columns: X[i][w] (i * types + w), then z. Rows: per counted job z -
// sum_w c X <= 0, per type sum_i m_i g_i X <= N_w, per job sum_w X <= 1.
// First minimise -z; then, z held at its optimum (less a relative 1e-9 for
// the solver's tolerance), minimise -sum m c X from the same basis. Job i
// stands for m_i = `copies[i]` jobs alike (MaxMinFairness).
GavelAllocation SolveMaxMin(const GavelProblem& p, std::span<const double> copies, bool aware) {
  GavelAllocation out;
  const int n = p.jobs * p.types;
  out.x.assign(static_cast<size_t>(n), 0.0);
  const ClpApi* clp = Clp();
  if (p.jobs == 0 || p.types == 0 || clp == nullptr) return out;
  const std::vector<double> c = Coefficients(p, aware);
  // A job with no usable type has nothing to maximise: it is left out of
  // the minimum (else the minimum is 0 whatever the others get).
  std::vector<int> job_row(static_cast<size_t>(p.jobs), -1);
  int rows = 0;
  for (int i = 0; i < p.jobs; ++i) {
    bool usable = false;
    for (int w = 0; w < p.types; ++w) usable = usable || p.Usable(i, w);
    if (usable) job_row[static_cast<size_t>(i)] = rows++;
  }
  const int type_rows = rows;
  const int sum_rows = type_rows + p.types;
  rows = sum_rows + p.jobs;
  // The matrix by columns (CLP's column-major form, no gaps).
  std::vector<CoinBigIndex> start;
  std::vector<int> index;
  std::vector<double> value;
  for (int i = 0; i < p.jobs; ++i) {
    for (int w = 0; w < p.types; ++w) {
      start.push_back(static_cast<CoinBigIndex>(index.size()));
      const double cw = c[static_cast<size_t>(i * p.types + w)];
      if (cw > 0) {
        index.push_back(job_row[static_cast<size_t>(i)]);
        value.push_back(-cw);
      }
      if (p.Usable(i, w)) {
        index.push_back(type_rows + w);
        value.push_back(p.gpus[static_cast<size_t>(i)] * copies[static_cast<size_t>(i)]);
      }
      index.push_back(sum_rows + i);
      value.push_back(1.0);
    }
  }
  start.push_back(static_cast<CoinBigIndex>(index.size()));
  for (int i = 0; i < p.jobs; ++i) {
    if (job_row[static_cast<size_t>(i)] < 0) continue;
    index.push_back(job_row[static_cast<size_t>(i)]);
    value.push_back(1.0);
  }
  start.push_back(static_cast<CoinBigIndex>(index.size()));
  const double inf = std::numeric_limits<double>::max();
  std::vector<double> row_lo(static_cast<size_t>(rows), -inf);
  std::vector<double> row_hi(static_cast<size_t>(rows), 0.0);
  for (int w = 0; w < p.types; ++w) {
    row_hi[static_cast<size_t>(type_rows + w)] = p.capacity[static_cast<size_t>(w)];
  }
  for (int i = 0; i < p.jobs; ++i) row_hi[static_cast<size_t>(sum_rows + i)] = 1.0;
  std::vector<double> col_lo(static_cast<size_t>(n + 1), 0.0);
  std::vector<double> col_hi(static_cast<size_t>(n + 1), 0.0);
  std::vector<double> objective(static_cast<size_t>(n + 1), 0.0);
  for (int i = 0; i < p.jobs; ++i) {
    for (int w = 0; w < p.types; ++w) col_hi[static_cast<size_t>(i * p.types + w)] = p.Usable(i, w);
  }
  col_hi[static_cast<size_t>(n)] = inf;
  objective[static_cast<size_t>(n)] = -1.0;

  // A model of its own for each problem: the same answer to the same
  // problem (a model used before perturbs from where its random generator
  // stands). Making one costs about 30 us, a small LP 200 us.
  Clp_Simplex* lp = clp->new_model();
  clp->set_log_level(lp, 0);
  clp->load_problem(lp, n + 1, rows, start.data(), index.data(), value.data(), col_lo.data(),
                    col_hi.data(), objective.data(), row_lo.data(), row_hi.data());
  clp->primal(lp, 0);
  if (clp->is_proven_optimal(lp)) {  // (always: X = 0, z = 0 is feasible and z bounded)
    const double best = clp->col_solution(lp)[n];
    out.objective = best;
    col_lo[static_cast<size_t>(n)] = std::max(0.0, best - 1e-9 * std::max(1.0, best));
    for (int k = 0; k < n; ++k) {
      objective[static_cast<size_t>(k)] =
          -c[static_cast<size_t>(k)] * copies[static_cast<size_t>(k / p.types)];
    }
    objective[static_cast<size_t>(n)] = 0;
    clp->change_column_lower(lp, col_lo.data());
    clp->change_objective(lp, objective.data());
    clp->primal(lp, 0);
    const double* x = clp->col_solution(lp);
    for (int k = 0; k < n; ++k) out.x[static_cast<size_t>(k)] = std::clamp(x[k], 0.0, 1.0);
  }
  clp->delete_model(lp);
  return out;
}

}  // namespace

// Jobs alike (the same rates on every type, GPUs and weight) have the same
// coefficients and constraints, so averaging any optimum over them keeps
// it optimal in both stages (the minimum cannot fall, the sum is the
// same): the LP is solved over the kinds of job, each counted as many
// times as it has jobs, and every job gets its kind's allocation. A
// round of a trace with hundreds of jobs of a dozen shapes solves a dozen
// rows, not hundreds.
GavelAllocation MaxMinFairness(const GavelProblem& p, bool aware) {
  std::map<std::vector<double>, int> kinds;
  std::vector<int> kind_of(static_cast<size_t>(p.jobs));
  GavelProblem q;
  q.types = p.types;
  q.capacity = p.capacity;
  std::vector<double> copies;
  for (int i = 0; i < p.jobs; ++i) {
    std::vector<double> key{p.gpus[static_cast<size_t>(i)], p.weight[static_cast<size_t>(i)]};
    for (int w = 0; w < p.types; ++w) key.push_back(p.Rate(i, w));
    const auto [it, added] = kinds.emplace(std::move(key), q.jobs);
    if (added) {
      ++q.jobs;
      q.gpus.push_back(p.gpus[static_cast<size_t>(i)]);
      q.weight.push_back(p.weight[static_cast<size_t>(i)]);
      for (int w = 0; w < p.types; ++w) q.rate.push_back(p.Rate(i, w));
      copies.push_back(0);
    }
    kind_of[static_cast<size_t>(i)] = it->second;
    ++copies[static_cast<size_t>(it->second)];
  }
  const GavelAllocation by_kind = SolveMaxMin(q, copies, aware);
  GavelAllocation out;
  out.objective = by_kind.objective;
  out.x.assign(static_cast<size_t>(p.jobs * p.types), 0.0);
  for (int i = 0; i < p.jobs; ++i) {
    for (int w = 0; w < p.types; ++w) {
      out.x[static_cast<size_t>(i * p.types + w)] =
          by_kind.At(kind_of[static_cast<size_t>(i)], w, p.types);
    }
  }
  return out;
}

GavelAllocation Fifo(const GavelProblem& p, std::span<const int> order, bool aware,
                     std::span<const int> pick) {
  GavelAllocation out;
  out.x.assign(static_cast<size_t>(p.jobs * p.types), 0.0);
  std::vector<double> left = p.capacity;
  for (int i : order) {
    const double g = p.gpus[static_cast<size_t>(i)];
    int chosen = -1;
    bool runs_anywhere = false;
    for (int k = 0; k < p.types; ++k) {
      const int w = aware ? k : pick[static_cast<size_t>(i * p.types + k)];
      if (!p.Usable(i, w)) continue;
      runs_anywhere = true;
      if (left[static_cast<size_t>(w)] < g) continue;
      if (!aware) {
        chosen = w;
        break;
      }
      if (chosen < 0 || p.Rate(i, w) > p.Rate(i, chosen)) chosen = w;
    }
    if (chosen < 0) {
      if (runs_anywhere) break;  // it waits for room, and everything behind it too
      continue;                  // it can run on no type of this cluster
    }
    out.x[static_cast<size_t>(i * p.types + chosen)] = 1.0;
    left[static_cast<size_t>(chosen)] -= g;
  }
  return out;
}

}  // namespace dlsched::policy
