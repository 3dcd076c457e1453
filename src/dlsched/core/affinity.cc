#include "dlsched/core/affinity.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace dlsched::core {

std::string_view TaintEffectName(TaintEffect e) {
  switch (e) {
    case TaintEffect::kNoSchedule:
      return "NoSchedule";
    case TaintEffect::kPreferNoSchedule:
      return "PreferNoSchedule";
    case TaintEffect::kNoExecute:
      return "NoExecute";
  }
  return "?";
}

std::string FormatTaint(const Taint& t) {
  std::string out = t.key;
  if (!t.value.empty()) out += "=" + t.value;
  out += ":";
  out += TaintEffectName(t.effect);
  return out;
}

bool Tolerates(const Toleration& tol, const Taint& taint) {
  if (!tol.any_effect && tol.effect != taint.effect) return false;
  // An empty key with Exists tolerates everything (of the effect).
  if (tol.key.empty()) return tol.op == Toleration::Op::kExists;
  if (tol.key != taint.key) return false;
  return tol.op == Toleration::Op::kExists || tol.value == taint.value;
}

namespace {

const Taint* FirstUntolerated(const std::vector<Taint>& taints,
                              const std::vector<Toleration>& tolerations, bool no_execute_only) {
  for (const Taint& taint : taints) {
    if (taint.effect == TaintEffect::kPreferNoSchedule) continue;
    if (no_execute_only && taint.effect != TaintEffect::kNoExecute) continue;
    const bool tolerated = std::any_of(tolerations.begin(), tolerations.end(),
                                       [&](const Toleration& t) { return Tolerates(t, taint); });
    if (!tolerated) return &taint;
  }
  return nullptr;
}

// Kubernetes parses Gt/Lt operands as 64-bit integers; a label that is not
// one does not match.
bool ParseInt(std::string_view s, int64_t* out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

std::optional<double> NoExecuteGrace(const Taint& taint,
                                     const std::vector<Toleration>& tolerations) {
  bool tolerated = false;
  std::optional<double> grace;
  for (const Toleration& t : tolerations) {
    if (!Tolerates(t, taint)) continue;
    tolerated = true;
    if (!t.seconds) continue;
    const double s = std::max(0.0, *t.seconds);
    grace = grace ? std::min(*grace, s) : s;
  }
  if (tolerated) return grace;
  if (taint.key == kNotReadyTaint || taint.key == kUnreachableTaint) {
    return kDefaultTolerationSeconds;
  }
  return 0.0;
}

const Taint* FirstUntoleratedTaint(const std::vector<Taint>& taints,
                                   const std::vector<Toleration>& tolerations) {
  return FirstUntolerated(taints, tolerations, /*no_execute_only=*/false);
}

const Taint* FirstUntoleratedNoExecute(const std::vector<Taint>& taints,
                                       const std::vector<Toleration>& tolerations) {
  return FirstUntolerated(taints, tolerations, /*no_execute_only=*/true);
}

std::string_view OperatorName(NodeSelectorRequirement::Op op) {
  switch (op) {
    case NodeSelectorRequirement::Op::kIn:
      return "In";
    case NodeSelectorRequirement::Op::kNotIn:
      return "NotIn";
    case NodeSelectorRequirement::Op::kExists:
      return "Exists";
    case NodeSelectorRequirement::Op::kDoesNotExist:
      return "DoesNotExist";
    case NodeSelectorRequirement::Op::kGt:
      return "Gt";
    case NodeSelectorRequirement::Op::kLt:
      return "Lt";
  }
  return "?";
}

bool Matches(const NodeSelectorRequirement& r, const Labels& labels) {
  const auto it = labels.find(r.key);
  const bool has = it != labels.end();
  using Op = NodeSelectorRequirement::Op;
  switch (r.op) {
    case Op::kIn:
      return has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    case Op::kNotIn:
      return !has || std::find(r.values.begin(), r.values.end(), it->second) == r.values.end();
    case Op::kExists:
      return has;
    case Op::kDoesNotExist:
      return !has;
    case Op::kGt:
    case Op::kLt: {
      int64_t label = 0;
      int64_t bound = 0;
      if (!has || r.values.size() != 1 || !ParseInt(it->second, &label) ||
          !ParseInt(r.values[0], &bound)) {
        return false;
      }
      return r.op == Op::kGt ? label > bound : label < bound;
    }
  }
  return false;
}

bool Matches(const NodeSelectorTerm& term, const Labels& labels) {
  if (term.match_expressions.empty()) return false;  // an empty term matches nothing
  return std::all_of(term.match_expressions.begin(), term.match_expressions.end(),
                     [&](const NodeSelectorRequirement& r) { return Matches(r, labels); });
}

bool MatchesLabels(const NodeConstraints& c, const Labels& labels) {
  for (const auto& [key, value] : c.node_selector) {
    const auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  if (c.required_terms.empty()) return true;
  return std::any_of(c.required_terms.begin(), c.required_terms.end(),
                     [&](const NodeSelectorTerm& t) { return Matches(t, labels); });
}

}  // namespace dlsched::core
