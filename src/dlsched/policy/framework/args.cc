#include "dlsched/policy/framework/args.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/core/text.h"

namespace dlsched::policy {

ArgReader::ArgReader(const YAML::Node& args, std::string where)
    : args_(args), where_(std::move(where)) {}

bool ArgReader::Has(std::string_view key) const {
  return args_.IsMap() && args_[std::string(key)].IsDefined();
}

const YAML::Node ArgReader::Node(std::string_view key) {
  known_.emplace_back(key);
  if (!args_.IsMap()) return YAML::Node();
  return args_[std::string(key)];
}

std::string ArgFields::Describe(const YAML::Node& n) {
  return fmt::format("'{}'", n.IsScalar() ? n.Scalar() : "a non-scalar");
}

std::string ArgFields::DescribeBool(const YAML::Node& n) {
  return fmt::format("'{}'", n.IsScalar() ? n.Scalar() : n.IsMap() ? "a map" : "a list");
}

std::optional<int64_t> ArgFields::ToInt(const YAML::Node& n) {
  int64_t v = 0;
  if (!n.IsScalar() || !YAML::convert<int64_t>::decode(n, v)) return std::nullopt;
  return v;
}

std::optional<double> ArgFields::ToNumber(const YAML::Node& n) {
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v)) return std::nullopt;
  return v;
}

core::Result<bool> ArgReader::Bool(std::string_view key, bool fallback) {
  const YAML::Node n = Node(key);
  if (!n.IsDefined() || n.IsNull()) return fallback;
  return fields_.Bool(n, Path(key));
}

core::Result<bool> ArgReader::Either(std::string_view key, std::string_view first,
                                     std::string_view second, bool fallback) {
  const YAML::Node n = Node(key);
  if (!n.IsDefined() || n.IsNull()) return fallback;
  const std::string s = n.IsScalar() ? n.Scalar() : "";
  if (s == first) return true;
  if (s == second) return false;
  return Expected(key, fmt::format("{} or {}", first, second), n);
}

core::Result<int64_t> ArgReader::Int(std::string_view key, int64_t fallback, int64_t min,
                                     int64_t max) {
  const YAML::Node n = Node(key);
  if (!n.IsDefined() || n.IsNull()) return fallback;
  return fields_.Int(n, Path(key), min, max);
}

core::Result<double> ArgReader::Double(std::string_view key, double fallback, double min,
                                       double max) {
  const YAML::Node n = Node(key);
  if (!n.IsDefined() || n.IsNull()) return fallback;
  return fields_.Number(n, Path(key), config::NumberRange{min, false, max});
}

core::Status ArgReader::Finish() const {
  if (!args_.IsDefined() || args_.IsNull()) return {};
  if (!args_.IsMap()) return core::Errorf("{}: expected a map of arguments", where_);
  for (const auto& kv : args_) {
    if (!kv.first.IsScalar()) {
      return core::Errorf("{}: argument names must be plain names, got a {}", where_,
                          kv.first.IsMap()        ? "map"
                          : kv.first.IsSequence() ? "list"
                                                  : "null");
    }
    const std::string& key = kv.first.Scalar();
    if (std::find(known_.begin(), known_.end(), key) == known_.end()) {
      if (known_.empty()) return core::Errorf("{}.{}: this plugin takes no arguments", where_, key);
      const std::vector<std::string_view> known(known_.begin(), known_.end());
      return core::Errorf("{}.{}: unknown argument (expected one of: {}){}", where_, key,
                          fmt::join(known_, ", "), core::DidYouMean(key, known));
    }
  }
  return {};
}

}  // namespace dlsched::policy
