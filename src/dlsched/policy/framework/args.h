#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "dlsched/core/error.h"

namespace dlsched::policy {

// Reads a plugin's `args` map with errors that name the field:
//   "p.yaml: admission.args.backfill: expected true or false, got 'maybe'".
// Finish() rejects keys nobody asked for, so typos do not pass silently.
class ArgReader {
 public:
  ArgReader(const YAML::Node& args, std::string where);

  core::Result<bool> Bool(std::string_view key, bool fallback);
  core::Result<int64_t> Int(std::string_view key, int64_t fallback, int64_t min, int64_t max);
  core::Result<double> Double(std::string_view key, double fallback, double min, double max);
  bool Has(std::string_view key) const;
  const YAML::Node Node(std::string_view key);
  std::string Path(std::string_view key) const { return where_ + "." + std::string(key); }
  core::Status Finish() const;

 private:
  YAML::Node args_;
  std::string where_;
  std::vector<std::string> known_;
};

}  // namespace dlsched::policy
