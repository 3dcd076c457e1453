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

core::Result<bool> ArgReader::Bool(std::string_view key, bool fallback) {
  const YAML::Node n = Node(key);
  if (!n.IsDefined() || n.IsNull()) return fallback;
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
    return core::Errorf("{}: expected true or false, got '{}'", Path(key),
                        n.IsScalar() ? n.Scalar() : "a " + std::string(n.IsMap() ? "map" : "list"));
  }
  return v;
}

core::Result<int64_t> ArgReader::Int(std::string_view key, int64_t fallback, int64_t min,
                                     int64_t max) {
  const YAML::Node n = Node(key);
  if (!n.IsDefined() || n.IsNull()) return fallback;
  int64_t v = 0;
  if (!n.IsScalar() || !YAML::convert<int64_t>::decode(n, v) || v < min || v > max) {
    return core::Errorf("{}: expected an integer in {}..{}, got '{}'", Path(key), min, max,
                        n.IsScalar() ? n.Scalar() : "a non-scalar");
  }
  return v;
}

core::Result<double> ArgReader::Double(std::string_view key, double fallback, double min,
                                       double max) {
  const YAML::Node n = Node(key);
  if (!n.IsDefined() || n.IsNull()) return fallback;
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !(v >= min && v <= max)) {
    return core::Errorf("{}: expected a number in {}..{}, got '{}'", Path(key), min, max,
                        n.IsScalar() ? n.Scalar() : "a non-scalar");
  }
  return v;
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
