#include "dlsched/core/queue.h"

#include <algorithm>
#include <span>

namespace dlsched::core {

std::optional<FlavorKey> SplitFlavor(std::string_view name) {
  const size_t at = name.find('@');
  if (at == std::string_view::npos || at == 0 || at + 1 == name.size() ||
      name.find('@', at + 1) != std::string_view::npos) {
    return std::nullopt;
  }
  return FlavorKey{name.substr(0, at), name.substr(at + 1)};
}

namespace {

constexpr std::string_view kPolicyNames[] = {"Never", "LowerPriority", "LowerOrNewerEqualPriority",
                                             "Any"};
constexpr std::string_view kFieldKeys[] = {"withinQueue", "reclaimWithinCohort",
                                           "borrowWithinCohort"};

std::span<const PreemptionPolicy> Allowed(PreemptionField f) {
  using P = PreemptionPolicy;
  static constexpr P kWithin[] = {P::kNever, P::kLowerPriority, P::kLowerOrNewerEqualPriority};
  static constexpr P kReclaim[] = {P::kNever, P::kLowerPriority, P::kAny};
  static constexpr P kBorrow[] = {P::kNever, P::kLowerPriority};
  switch (f) {
    case PreemptionField::kWithinQueue:
      return kWithin;
    case PreemptionField::kReclaimWithinCohort:
      return kReclaim;
    case PreemptionField::kBorrowWithinCohort:
      return kBorrow;
  }
  return {};
}

}  // namespace

std::string_view PreemptionPolicyName(PreemptionPolicy p) {
  return kPolicyNames[static_cast<int>(p)];
}

std::string_view PreemptionFieldKey(PreemptionField f) { return kFieldKeys[static_cast<int>(f)]; }

std::optional<PreemptionPolicy> ParsePreemptionPolicy(PreemptionField f, std::string_view name) {
  for (PreemptionPolicy p : Allowed(f)) {
    if (name == PreemptionPolicyName(p)) return p;
  }
  return std::nullopt;
}

std::string AllowedPolicies(PreemptionField f) {
  const std::span<const PreemptionPolicy> allowed = Allowed(f);
  std::string out;
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (i > 0) out += i + 1 == allowed.size() ? " or " : ", ";
    out += PreemptionPolicyName(allowed[i]);
  }
  return out;
}

}  // namespace dlsched::core
