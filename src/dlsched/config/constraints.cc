#include "dlsched/config/constraints.h"

#include <charconv>
#include <cstdint>
#include <set>

#include <fmt/format.h>

#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"

namespace dlsched::config::internal {
namespace {

constexpr std::string_view kEffects = "NoSchedule, PreferNoSchedule or NoExecute";

core::Result<core::TaintEffect> ParseEffect(const Reader& r, const YAML::Node& n,
                                            const std::string& path) {
  const std::string s = n.IsScalar() ? n.Scalar() : "";
  if (s == "NoSchedule") return core::TaintEffect::kNoSchedule;
  if (s == "PreferNoSchedule") return core::TaintEffect::kPreferNoSchedule;
  if (s == "NoExecute") return core::TaintEffect::kNoExecute;
  return r.Expected(path, kEffects, n);
}

// A label key (a name) at `path`.
core::Result<std::string> LabelKey(const Reader& r, const YAML::Node& n, const std::string& path) {
  if (!Given(n)) return r.Missing(path, "a label key");
  return r.Name(n, path);
}

// A label value: a scalar without control characters; may be empty.
core::Result<std::string> LabelValue(const Reader& r, const YAML::Node& n,
                                     const std::string& path) {
  if (!Given(n)) return std::string();
  if (!n.IsScalar()) return r.Expected(path, "a label value", n);
  if (n.Scalar().empty()) return std::string();
  if (auto problem = core::NameProblem(n.Scalar())) return r.Fail(path, *problem);
  return n.Scalar();
}

// A list at `path` (`what` in messages); an empty list is allowed.
core::Status CheckList(const Reader& r, const YAML::Node& n, const std::string& path,
                       std::string_view what) {
  if (!n.IsSequence()) return r.Expected(path, what, n);
  return {};
}

core::Status ParseRequirement(const Reader& r, const YAML::Node& n, const std::string& path,
                              core::NodeSelectorRequirement& out) {
  if (auto st =
          r.CheckMap(n, path, "a map with key, operator and values", {"key", "operator", "values"});
      !st) {
    return st;
  }
  DLSCHED_TRY_LET(key, LabelKey(r, n["key"], Key(path, "key")));
  out.key = *key;

  using Op = core::NodeSelectorRequirement::Op;
  const std::string op_path = Key(path, "operator");
  if (!Given(n["operator"])) return r.Missing(op_path, "In, NotIn, Exists, DoesNotExist, Gt or Lt");
  const std::string op = n["operator"].IsScalar() ? n["operator"].Scalar() : "";
  if (op == "In") {
    out.op = Op::kIn;
  } else if (op == "NotIn") {
    out.op = Op::kNotIn;
  } else if (op == "Exists") {
    out.op = Op::kExists;
  } else if (op == "DoesNotExist") {
    out.op = Op::kDoesNotExist;
  } else if (op == "Gt") {
    out.op = Op::kGt;
  } else if (op == "Lt") {
    out.op = Op::kLt;
  } else {
    return r.Expected(op_path, "In, NotIn, Exists, DoesNotExist, Gt or Lt", n["operator"]);
  }

  const std::string values_path = Key(path, "values");
  const YAML::Node& values = n["values"];
  if (Given(values)) {
    if (auto st = CheckList(r, values, values_path, "a list of label values"); !st) return st;
    for (size_t i = 0; i < values.size(); ++i) {
      DLSCHED_TRY_LET(v, LabelValue(r, values[i], Index(values_path, i)));
      out.values.push_back(*v);
    }
  }
  // Kubernetes' validation of a NodeSelectorRequirement.
  switch (out.op) {
    case Op::kIn:
    case Op::kNotIn:
      if (out.values.empty()) {
        return r.Fail(values_path, fmt::format("{} needs at least one value", op));
      }
      break;
    case Op::kExists:
    case Op::kDoesNotExist:
      if (!out.values.empty()) return r.Fail(values_path, fmt::format("{} takes no values", op));
      break;
    case Op::kGt:
    case Op::kLt: {
      int64_t v = 0;
      const std::string& s = out.values.empty() ? std::string() : out.values[0];
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (out.values.size() != 1 || ec != std::errc() || end != s.data() + s.size()) {
        return r.Fail(values_path, fmt::format("{} takes exactly one integer value", op));
      }
      break;
    }
  }
  return {};
}

}  // namespace

core::Status ParseTaints(const Reader& r, const YAML::Node& n, const std::string& path,
                         std::vector<core::Taint>& out) {
  if (auto st = CheckList(r, n, path, "a list of taints ({key, value, effect})"); !st) return st;
  std::set<std::pair<std::string, core::TaintEffect>> seen;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string item = Index(path, i);
    const YAML::Node& t = n[i];
    if (auto st =
            r.CheckMap(t, item, "a map with key, value and effect", {"key", "value", "effect"});
        !st) {
      return st;
    }
    core::Taint taint;
    DLSCHED_TRY_LET(key, LabelKey(r, t["key"], Key(item, "key")));
    taint.key = *key;
    DLSCHED_TRY_LET(value, LabelValue(r, t["value"], Key(item, "value")));
    taint.value = *value;
    if (!Given(t["effect"])) return r.Missing(Key(item, "effect"), kEffects);
    DLSCHED_TRY_LET(effect, ParseEffect(r, t["effect"], Key(item, "effect")));
    taint.effect = *effect;
    // Kubernetes allows one taint per key and effect.
    if (!seen.emplace(taint.key, taint.effect).second) {
      return r.Fail(item, fmt::format("a taint with key '{}' and effect {} is already given",
                                      taint.key, core::TaintEffectName(taint.effect)));
    }
    out.push_back(std::move(taint));
  }
  return {};
}

core::Status ParseNodeSelector(const Reader& r, const YAML::Node& n, const std::string& path,
                               core::Labels& out) {
  if (auto st = r.CheckAnyMap(n, path, "a map of label to value"); !st) return st;
  for (const auto& kv : n) {
    const std::string key_path = Key(path, kv.first.Scalar());
    if (auto problem = core::NameProblem(kv.first.Scalar())) return r.Fail(key_path, *problem);
    DLSCHED_TRY_LET(value, LabelValue(r, kv.second, key_path));
    out[kv.first.Scalar()] = *value;
  }
  return {};
}

core::Status ParseAffinity(const Reader& r, const YAML::Node& n, const std::string& path,
                           std::vector<core::NodeSelectorTerm>& out) {
  // Only what a scheduler must obey is read: preferred affinity and pod
  // (anti-)affinity are refused by name, not ignored.
  if (auto st = r.CheckMap(n, path, "a map with nodeAffinity", {"nodeAffinity"}); !st) return st;
  const std::string na_path = Key(path, "nodeAffinity");
  if (!Given(n["nodeAffinity"])) return r.Missing(na_path, "a map");
  const YAML::Node& na = n["nodeAffinity"];
  if (auto st = r.CheckMap(na, na_path, "a map with requiredDuringSchedulingIgnoredDuringExecution",
                           {"requiredDuringSchedulingIgnoredDuringExecution"});
      !st) {
    return st;
  }
  const std::string req_path = Key(na_path, "requiredDuringSchedulingIgnoredDuringExecution");
  const YAML::Node& req = na["requiredDuringSchedulingIgnoredDuringExecution"];
  if (!Given(req)) return r.Missing(req_path, "a map with nodeSelectorTerms");
  if (auto st = r.CheckMap(req, req_path, "a map with nodeSelectorTerms", {"nodeSelectorTerms"});
      !st) {
    return st;
  }
  const std::string terms_path = Key(req_path, "nodeSelectorTerms");
  const YAML::Node& terms = req["nodeSelectorTerms"];
  constexpr std::string_view kTerms = "a non-empty list of terms ({matchExpressions: [...]})";
  if (!Given(terms)) return r.Missing(terms_path, kTerms);
  if (!terms.IsSequence() || terms.size() == 0) return r.Expected(terms_path, kTerms, terms);
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string term_path = Index(terms_path, i);
    const YAML::Node& term = terms[i];
    if (auto st = r.CheckMap(term, term_path, "a map with matchExpressions", {"matchExpressions"});
        !st) {
      return st;
    }
    core::NodeSelectorTerm parsed;
    const std::string exprs_path = Key(term_path, "matchExpressions");
    const YAML::Node& exprs = term["matchExpressions"];
    if (Given(exprs)) {
      if (auto st = CheckList(r, exprs, exprs_path, "a list of requirements"); !st) return st;
      for (size_t k = 0; k < exprs.size(); ++k) {
        core::NodeSelectorRequirement req_out;
        if (auto st = ParseRequirement(r, exprs[k], Index(exprs_path, k), req_out); !st) return st;
        parsed.match_expressions.push_back(std::move(req_out));
      }
    }
    out.push_back(std::move(parsed));
  }
  return {};
}

core::Status ParseTolerations(const Reader& r, const YAML::Node& n, const std::string& path,
                              std::vector<core::Toleration>& out) {
  if (auto st = CheckList(r, n, path,
                          "a list of tolerations ({key, operator, value, effect, "
                          "tolerationSeconds})");
      !st) {
    return st;
  }
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string item = Index(path, i);
    const YAML::Node& t = n[i];
    if (auto st =
            r.CheckMap(t, item, "a map with key, operator, value, effect and tolerationSeconds",
                       {"key", "operator", "value", "effect", "tolerationSeconds"});
        !st) {
      return st;
    }
    core::Toleration tol;
    if (Given(t["key"])) {
      DLSCHED_TRY_LET(key, r.Name(t["key"], Key(item, "key")));
      tol.key = *key;
    }
    if (Given(t["operator"])) {
      const std::string op = t["operator"].IsScalar() ? t["operator"].Scalar() : "";
      if (op == "Equal") {
        tol.op = core::Toleration::Op::kEqual;
      } else if (op == "Exists") {
        tol.op = core::Toleration::Op::kExists;
      } else {
        return r.Expected(Key(item, "operator"), "Equal or Exists", t["operator"]);
      }
    }
    DLSCHED_TRY_LET(value, LabelValue(r, t["value"], Key(item, "value")));
    tol.value = *value;
    // Kubernetes' validation of a Toleration.
    if (tol.key.empty() && tol.op != core::Toleration::Op::kExists) {
      return r.Fail(Key(item, "operator"), "a toleration without a key must use Exists");
    }
    if (tol.op == core::Toleration::Op::kExists && !tol.value.empty()) {
      return r.Fail(Key(item, "value"), "a toleration with operator Exists takes no value");
    }
    if (Given(t["effect"])) {
      DLSCHED_TRY_LET(effect, ParseEffect(r, t["effect"], Key(item, "effect")));
      tol.any_effect = false;
      tol.effect = *effect;
    }
    if (Given(t["tolerationSeconds"])) {
      const std::string seconds_path = Key(item, "tolerationSeconds");
      // Kubernetes' validation: only a NoExecute toleration has a duration.
      if (tol.any_effect || tol.effect != core::TaintEffect::kNoExecute) {
        return r.Fail(seconds_path, "only with effect NoExecute");
      }
      DLSCHED_TRY_LET(seconds, r.Int(t["tolerationSeconds"], seconds_path,
                                     -core::kMaxTolerationSeconds, core::kMaxTolerationSeconds));
      tol.seconds = static_cast<double>(*seconds);
    }
    out.push_back(std::move(tol));
  }
  return {};
}

}  // namespace dlsched::config::internal
