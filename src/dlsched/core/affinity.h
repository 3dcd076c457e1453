#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlsched::core {

// Hard placement rules of a task and a node, with Kubernetes' semantics
// (k8s.io/api/core/v1: NodeSelectorRequirement, Taint, Toleration; the
// scheduler's NodeAffinity and TaintToleration filter plugins).

using Labels = std::map<std::string, std::string>;

enum class TaintEffect : uint8_t { kNoSchedule, kPreferNoSchedule, kNoExecute };
std::string_view TaintEffectName(TaintEffect e);  // "NoSchedule", ...

struct Taint {
  std::string key;
  std::string value;  // may be empty
  TaintEffect effect = TaintEffect::kNoSchedule;
  friend bool operator==(const Taint&, const Taint&) = default;
};
// "key=value:Effect", or "key:Effect" without a value.
std::string FormatTaint(const Taint& t);

struct Toleration {
  enum class Op : uint8_t { kEqual, kExists };
  std::string key;  // empty with kExists: every key
  Op op = Op::kEqual;
  std::string value;
  bool any_effect = true;  // no effect given: tolerates every effect
  TaintEffect effect = TaintEffect::kNoSchedule;
  // tolerationSeconds (effect NoExecute only): how long a running task
  // stays once the taint is there; none: for ever. Negative counts as 0.
  std::optional<double> seconds{};
  friend bool operator==(const Toleration&, const Toleration&) = default;
};

// The NoExecute taints the node lifecycle controller puts on a node that
// stops reporting (not-ready) or cannot be reached (unreachable). Kubernetes'
// DefaultTolerationSeconds admission gives every pod that does not
// tolerate them itself a toleration of kDefaultTolerationSeconds for each.
inline constexpr std::string_view kNotReadyTaint = "node.kubernetes.io/not-ready";
inline constexpr std::string_view kUnreachableTaint = "node.kubernetes.io/unreachable";
inline constexpr double kDefaultTolerationSeconds = 300;

// True when `toleration` tolerates `taint`: the keys match (or the
// toleration's key is empty with Exists), the values match (Equal) or any
// value does (Exists), and the effects match (or the toleration gives none).
bool Tolerates(const Toleration& toleration, const Taint& taint);
// The first taint with effect NoSchedule or NoExecute that no toleration
// tolerates (the ones that keep a task off a node), or nullptr.
// PreferNoSchedule is a preference, never a filter.
const Taint* FirstUntoleratedTaint(const std::vector<Taint>& taints,
                                   const std::vector<Toleration>& tolerations);
// Likewise for NoExecute only: the taints that evict a running task.
const Taint* FirstUntoleratedNoExecute(const std::vector<Taint>& taints,
                                       const std::vector<Toleration>& tolerations);
// How long a running task with `tolerations` stays once NoExecute `taint`
// is on its node, as Kubernetes' taint eviction: 0 when no toleration
// tolerates it (evicted at once), the least tolerationSeconds of those
// that do (negative: 0), none (for ever) when none of those gives one;
// a not-ready or unreachable taint that no toleration tolerates has the
// default kDefaultTolerationSeconds.
std::optional<double> NoExecuteGrace(const Taint& taint,
                                     const std::vector<Toleration>& tolerations);

struct NodeSelectorRequirement {
  enum class Op : uint8_t { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
  std::string key;
  Op op = Op::kIn;
  std::vector<std::string> values;  // In/NotIn: one or more; Gt/Lt: one integer; else none
  friend bool operator==(const NodeSelectorRequirement&, const NodeSelectorRequirement&) = default;
};
std::string_view OperatorName(NodeSelectorRequirement::Op op);

// Requirements that all hold (matchExpressions of one term).
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  friend bool operator==(const NodeSelectorTerm&, const NodeSelectorTerm&) = default;
};

// What a task demands of a node's labels: a nodeSelector (every key equal)
// and required node affinity (requiredDuringSchedulingIgnoredDuringExecution:
// the node matches if any term matches; an empty term matches nothing).
struct NodeConstraints {
  Labels node_selector;
  std::vector<NodeSelectorTerm> required_terms;  // empty: no required affinity
  std::vector<Toleration> tolerations;

  bool HasLabelRules() const { return !node_selector.empty() || !required_terms.empty(); }
  bool Empty() const { return !HasLabelRules() && tolerations.empty(); }
  friend bool operator==(const NodeConstraints&, const NodeConstraints&) = default;
};

bool Matches(const NodeSelectorRequirement& r, const Labels& labels);
bool Matches(const NodeSelectorTerm& term, const Labels& labels);
// True when `labels` satisfy the nodeSelector and the required affinity.
bool MatchesLabels(const NodeConstraints& c, const Labels& labels);

}  // namespace dlsched::core
