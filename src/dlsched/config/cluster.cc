#include <map>
#include <string>

#include <fmt/format.h>

#include "dlsched/config/constraints.h"
#include "dlsched/config/specs.h"
#include "dlsched/config/yaml_util.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/text.h"

namespace dlsched::config {
namespace {

using internal::Given;
using internal::Index;
using internal::Key;
using internal::Reader;

// What the entries parsed so far add up to, to keep the cluster within
// core::kMaxNodes and core::kMaxTotalAmount.
struct Totals {
  int64_t nodes = 0;
  // Each amount <= kMaxAmount (2^50) times at most kMaxNodes copies: 128
  // bits cannot overflow.
  __int128 amount[core::kMaxResources] = {};
};

// Parses one entry of `nodes` and appends its expansion (count copies) to
// `out`. `owner` remembers which entry produced each name, for the duplicate
// message.
core::Status ParseNodeEntry(const Reader& r, const YAML::Node& n, const std::string& path,
                            std::vector<core::NodeSpec>& out,
                            std::map<std::string, std::string>& owner, Totals& totals) {
  if (auto st = r.CheckMap(n, path, "a map",
                           {"name", "count", "resources", "labels", "taints", "schedulable"});
      !st) {
    return st;
  }
  core::NodeSpec node;

  std::string name_path = Key(path, "name");
  if (!Given(n["name"])) return r.Missing(name_path, "a non-empty string");
  auto name = r.Name(n["name"], name_path);
  if (!name) return std::unexpected(name.error());

  int64_t count = 1;
  const std::string count_path = Key(path, "count");
  if (Given(n["count"])) {
    auto c = r.Int(n["count"], count_path, 1, core::kMaxNodes);
    if (!c) return std::unexpected(c.error());
    count = *c;
  }
  if (totals.nodes + count > core::kMaxNodes) {
    return r.Fail(Given(n["count"]) ? count_path : path,
                  fmt::format("the cluster would have {} nodes; at most {} are supported",
                              totals.nodes + count, core::kMaxNodes));
  }
  totals.nodes += count;

  std::string res_path = Key(path, "resources");
  if (!Given(n["resources"])) return r.Missing(res_path, "a map of resource name to quantity");
  auto res = r.Resources(n["resources"], res_path);
  if (!res) return std::unexpected(res.error());
  node.allocatable = *res;
  if (node.allocatable[core::kGpu] > core::kMaxGpusPerNode) {
    return r.Fail(Key(res_path, core::ResourceName(core::kGpu)),
                  fmt::format("{} GPUs on one node is more than the limit of {}",
                              node.allocatable[core::kGpu], core::kMaxGpusPerNode));
  }
  for (int i = 0; i < core::kMaxResources; ++i) {
    const auto id = static_cast<core::ResourceId>(i);
    totals.amount[i] += static_cast<__int128>(node.allocatable[id]) * count;
    if (totals.amount[i] > core::kMaxTotalAmount) {
      return r.Fail(
          Key(res_path, core::ResourceName(id)),
          fmt::format("the cluster's total {} would exceed the limit of {}", core::ResourceName(id),
                      core::FormatResourceAmount(id, core::kMaxTotalAmount)));
    }
  }

  if (Given(n["labels"])) {
    std::string labels_path = Key(path, "labels");
    const YAML::Node& labels = n["labels"];
    if (auto st = r.CheckAnyMap(labels, labels_path, "a map of label name to value"); !st) {
      return st;
    }
    for (const auto& kv : labels) {
      std::string label_path = Key(labels_path, kv.first.Scalar());
      if (auto problem = core::NameProblem(kv.first.Scalar())) return r.Fail(label_path, *problem);
      if (!kv.second.IsScalar()) return r.Expected(label_path, "a string", kv.second);
      // Kubernetes allows an empty label value.
      const std::string& value = kv.second.Scalar();
      if (auto problem = core::NameProblem(value); problem && !value.empty()) {
        return r.Fail(label_path, *problem);
      }
      node.labels[kv.first.Scalar()] = value;
    }
  }

  if (Given(n["taints"])) {
    if (auto st = internal::ParseTaints(r, n["taints"], Key(path, "taints"), node.taints); !st) {
      return st;
    }
  }

  if (Given(n["schedulable"])) {
    auto s = r.Bool(n["schedulable"], Key(path, "schedulable"));
    if (!s) return std::unexpected(s.error());
    node.schedulable = *s;
  }

  for (int64_t i = 0; i < count; ++i) {
    node.name = count == 1 ? *name : fmt::format("{}-{}", *name, i);
    if (auto problem = core::NameProblem(node.name)) return r.Fail(name_path, *problem);
    auto [it, inserted] = owner.emplace(node.name, path);
    if (!inserted) {
      return r.Fail(name_path,
                    fmt::format("node name '{}' is already used by {}", node.name, it->second));
    }
    out.push_back(node);
  }
  return {};
}

core::Result<core::ClusterSpec> ParseClusterNode(const Reader& r, const YAML::Node& root) {
  if (auto st = r.CheckMap(root, "", "a map with 'nodes'", {"nodes"}); !st) {
    return std::unexpected(st.error());
  }
  const YAML::Node& nodes = root["nodes"];
  if (!Given(nodes)) return r.Missing("nodes", "a non-empty list of nodes");
  if (!nodes.IsSequence() || nodes.size() == 0) {
    return r.Expected("nodes", "a non-empty list of nodes", nodes);
  }
  core::ClusterSpec cluster;
  std::map<std::string, std::string> owner;
  Totals totals;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (auto st = ParseNodeEntry(r, nodes[i], Index("nodes", i), cluster.nodes, owner, totals);
        !st) {
      return std::unexpected(st.error());
    }
  }
  return cluster;
}

}  // namespace

core::Result<core::ClusterSpec> ParseCluster(const std::string& text, const std::string& source) {
  return internal::ParseText(text, source, ParseClusterNode);
}

core::Result<core::ClusterSpec> LoadCluster(const std::string& path) {
  return internal::LoadFile(path, ParseCluster);
}

}  // namespace dlsched::config
