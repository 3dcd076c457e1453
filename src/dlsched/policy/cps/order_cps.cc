#include "dlsched/policy/cps/order_cps.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dlsched/policy/framework/args.h"

namespace dlsched::policy {
namespace {

// Largest maxWaitMinutes with a time-constraint priority above 1; beyond it
// (or without a limit) l = 1.
constexpr double kMaxWaitHorizonMinutes = 60;

struct Raw {
  int64_t u, b, l, e, m;
};

Raw RawTerms(const core::JobSpec& spec, const CpsParams& p) {
  Raw r;
  auto it = p.namespace_weights.find(spec.namespace_name);
  r.u = it != p.namespace_weights.end() ? it->second : p.default_user_priority;
  r.b = p.priority_values[static_cast<int>(spec.priority)];
  r.l = TimeConstraintPriority(spec.max_wait_minutes);
  r.e = r.u + r.b + r.l;
  // Parallelism is what the job asks for, its initial `replicas`: it is
  // known before the job runs and does not depend on the sizer.
  r.m = spec.role(core::Role::kWorker).replicas;
  return r;
}

// (x - lo) / (hi - lo), 0 when the set has a single value.
double Normalise(int64_t x, int64_t lo, int64_t hi) {
  return hi > lo ? static_cast<double>(x - lo) / static_cast<double>(hi - lo) : 0.0;
}

// Min and max of e and m over the set, then V per job. `spec_of(i)` gives
// the i-th job's spec and `out(i, raw, m_norm, e_norm, v)` receives it; the
// same arithmetic serves Keys() (no allocation) and CombinedPriorities().
template <typename SpecOf, typename Out>
void Compute(size_t n, const CpsParams& p, SpecOf spec_of, Out out) {
  int64_t e_lo = std::numeric_limits<int64_t>::max(), e_hi = std::numeric_limits<int64_t>::min();
  int64_t m_lo = e_lo, m_hi = e_hi;
  for (size_t i = 0; i < n; ++i) {
    const Raw r = RawTerms(spec_of(i), p);
    e_lo = std::min(e_lo, r.e);
    e_hi = std::max(e_hi, r.e);
    m_lo = std::min(m_lo, r.m);
    m_hi = std::max(m_hi, r.m);
  }
  for (size_t i = 0; i < n; ++i) {
    const Raw r = RawTerms(spec_of(i), p);
    const double m_norm = Normalise(r.m, m_lo, m_hi);
    const double e_norm = Normalise(r.e, e_lo, e_hi);
    out(i, r, m_norm, e_norm, p.k * (m_norm + e_norm));
  }
}

}  // namespace

int64_t TimeConstraintPriority(std::optional<double> max_wait_minutes) {
  if (!max_wait_minutes || !(*max_wait_minutes <= kMaxWaitHorizonMinutes)) return 1;
  const double minutes = std::max(*max_wait_minutes, 1.0);
  return static_cast<int64_t>(std::ceil(100.0 / minutes));
}

std::vector<CpsTerms> CombinedPriorities(std::span<const core::JobSpec* const> jobs,
                                         const CpsParams& params) {
  std::vector<CpsTerms> out(jobs.size());
  Compute(
      jobs.size(), params, [&](size_t i) -> const core::JobSpec& { return *jobs[i]; },
      [&](size_t i, const Raw& r, double m_norm, double e_norm, double v) {
        out[i] = CpsTerms{r.u, r.b, r.l, r.e, r.m, m_norm, e_norm, v};
      });
  return out;
}

void CombinedPriorityOrder::Keys(const engine::ClusterState& state,
                                 std::span<const engine::JobIndex> jobs, core::Time /*now*/,
                                 std::span<double> keys) const {
  Compute(
      jobs.size(), params_,
      [&](size_t i) -> const core::JobSpec& { return *state.Job(jobs[i]).spec; },
      [&](size_t i, const Raw&, double, double, double v) { keys[i] = -v; });
}

core::Result<std::unique_ptr<engine::JobOrder>> MakeCombinedPriority(const YAML::Node& args,
                                                                     const std::string& where) {
  ArgReader reader(args, where);
  CpsParams p;
  // k only scales V: any k > 0 gives the same order. It is kept because
  // the paper has it and V is shown to users.
  DLSCHED_TRY_LET(k, reader.Double("k", 1, 1e-9, 1e9));
  p.k = *k;
  DLSCHED_TRY_LET(def, reader.Int("defaultUserPriority", 5, 1, 10));
  p.default_user_priority = *def;

  const std::string ns_path = reader.Path("namespaceWeights");
  const YAML::Node ns = reader.Node("namespaceWeights");
  if (ns.IsDefined() && !ns.IsNull()) {
    if (!ns.IsMap()) {
      return core::Errorf("{}: expected a map of namespace: weight (an integer in 1..10)", ns_path);
    }
    ArgReader nr(ns, ns_path);
    for (const auto& kv : ns) {
      if (!kv.first.IsScalar() || kv.first.Scalar().empty()) {
        return core::Errorf("{}: expected namespace names as keys", ns_path);
      }
      const std::string& name = kv.first.Scalar();
      DLSCHED_TRY_LET(w, nr.Int(name, p.default_user_priority, 1, 10));
      p.namespace_weights[name] = *w;
    }
  }

  const std::string pv_path = reader.Path("priorityValues");
  const YAML::Node pv = reader.Node("priorityValues");
  if (pv.IsDefined() && !pv.IsNull()) {
    if (!pv.IsMap()) {
      return core::Errorf("{}: expected a map {{high, normal, low}} of integers in 0..1000000",
                          pv_path);
    }
    ArgReader pr(pv, pv_path);
    constexpr struct {
      const char* key;
      core::PriorityClass cls;
    } kClasses[] = {{"high", core::PriorityClass::kHigh},
                    {"normal", core::PriorityClass::kNormal},
                    {"low", core::PriorityClass::kLow}};
    for (const auto& c : kClasses) {
      const int idx = static_cast<int>(c.cls);
      DLSCHED_TRY_LET(v, pr.Int(c.key, p.priority_values[idx], 0, 1000000));
      p.priority_values[idx] = *v;
    }
    DLSCHED_TRY(pr.Finish());
  }
  DLSCHED_TRY(reader.Finish());
  return std::make_unique<CombinedPriorityOrder>(std::move(p));
}

}  // namespace dlsched::policy
