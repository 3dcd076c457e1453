#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "dlsched/config/fields.h"
#include "dlsched/config/yaml_util.h"
#include "dlsched/core/error.h"

namespace dlsched::policy {

// Plugin arguments as the field reader reads them (config/fields.h): YAML
// scalars as yaml-cpp converts them, shown quoted as written ('a
// non-scalar' for a map or list; a bad boolean's map or list by its kind),
// expectations worded "an integer in 1..9", "a number in 0..1".
struct ArgFields {
  using Value = YAML::Node;
  static constexpr config::FieldWording kWording{config::IntegerInDots, config::NumberInDots};
  static std::string Describe(const YAML::Node& n);
  static std::string DescribeBool(const YAML::Node& n);
  static std::optional<int64_t> ToInt(const YAML::Node& n);
  static std::optional<double> ToNumber(const YAML::Node& n);
  static std::optional<bool> ToBool(const YAML::Node& n) {
    return config::internal::YamlFields::ToBool(n);
  }
};

// Reads a plugin's `args` map with errors that name the field:
//   "p.yaml: admission.args.backfill: expected true or false, got 'maybe'".
// Finish() rejects keys nobody asked for, so typos do not pass silently.
class ArgReader {
 public:
  ArgReader(const YAML::Node& args, std::string where);

  core::Result<bool> Bool(std::string_view key, bool fallback);
  core::Result<int64_t> Int(std::string_view key, int64_t fallback, int64_t min, int64_t max);
  core::Result<double> Double(std::string_view key, double fallback, double min, double max);
  // A word that must be `first` or `second`: true for `first`; `fallback`
  // when absent.
  core::Result<bool> Either(std::string_view key, std::string_view first, std::string_view second,
                            bool fallback);
  bool Has(std::string_view key) const;
  const YAML::Node Node(std::string_view key);
  std::string Path(std::string_view key) const { return where_ + "." + std::string(key); }
  // "<where>.<key>: expected <expected>, got <the value, as ArgFields shows it>".
  std::unexpected<core::Error> Expected(std::string_view key, std::string_view expected,
                                        const YAML::Node& got) const {
    return fields_.Expected(Path(key), expected, got);
  }
  core::Status Finish() const;

 private:
  YAML::Node args_;
  std::string where_;
  std::vector<std::string> known_;
  config::FieldReader<ArgFields> fields_{""};  // the paths name the input
};

}  // namespace dlsched::policy
