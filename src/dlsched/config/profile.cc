#include <algorithm>
#include <charconv>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/config/specs.h"
#include "dlsched/config/yaml_util.h"
#include "dlsched/core/quantity.h"

namespace dlsched::config {
namespace {

using internal::Given;
using internal::Index;
using internal::Key;
using internal::NumberRange;
using internal::Reader;

constexpr std::string_view kPluginExpected = "a plugin name or a map with 'name'";
constexpr size_t kMaxProfileName = 63;
// --set PATH=VALUE: the keys of PATH. yaml-cpp writes and reads a map in a
// map by recursion: a path 60,000 keys deep overflowed the stack
// (SIGSEGV); no profile nests deeper than a few levels.
constexpr size_t kMaxSetKeys = 64;
constexpr size_t kMaxFlowKeyBytes = 1024;

// A profile's name becomes a directory (out/<name>), so it may not hold a
// path separator, start with a dot or be long.
bool IsProfileName(std::string_view name) {
  if (name.empty() || name.size() > kMaxProfileName) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(name[0])) return false;
  for (char c : name) {
    if (!alnum(c) && c != '.' && c != '-' && c != '_') return false;
  }
  return true;
}

PluginSpec DefaultPlugin(const Reader& r, std::string_view path, std::string name) {
  PluginSpec p;
  p.name = std::move(name);
  p.args = YAML::Node(YAML::NodeType::Map);
  p.where = fmt::format("{}: {}", r.source(), Key(path, "args"));
  return p;
}

// One extension point: either a bare name ("FIFO") or {name, args} (plus
// weight for scorers). Plugin names are checked by the policy registry.
core::Result<PluginSpec> ParsePlugin(const Reader& r, const YAML::Node& n, const std::string& path,
                                     bool scorer) {
  if (n.IsScalar()) {
    DLSCHED_TRY_LET(name, r.String(n, path));
    return DefaultPlugin(r, path, *name);
  }
  if (!n.IsMap()) return r.Expected(path, kPluginExpected, n);
  core::Status st = scorer ? r.CheckMap(n, path, kPluginExpected, {"name", "weight", "args"})
                           : r.CheckMap(n, path, kPluginExpected, {"name", "args"});
  DLSCHED_TRY(st);

  if (!Given(n["name"])) return r.Missing(Key(path, "name"), "a plugin name");
  DLSCHED_TRY_LET(name, r.String(n["name"], Key(path, "name")));
  PluginSpec p = DefaultPlugin(r, path, *name);

  if (scorer && Given(n["weight"])) {
    DLSCHED_TRY_LET(w, r.Number(n["weight"], Key(path, "weight"), NumberRange{0, true, 1e6}));
    p.weight = *w;
  }
  const YAML::Node& args = n["args"];
  if (Given(args)) {
    if (!args.IsMap()) return r.Expected(Key(path, "args"), "a map", args);
    // reset, not assignment: assigning a node of the document to the map
    // DefaultPlugin made apart merges the document's set of every node
    // into that map's, a copy per plugin (2,000 scorers took 3.1 GB);
    // reset makes `args` a handle on the document's node.
    p.args.reset(args);
  }
  return p;
}

// Sets `out` from `root[key]` when present, else to the default `name`.
core::Status ParsePoint(const Reader& r, const YAML::Node& root, const std::string& key,
                        std::string default_name, PluginSpec& out) {
  if (!Given(root[key])) {
    out = DefaultPlugin(r, key, std::move(default_name));
    return {};
  }
  DLSCHED_TRY_LET(p, ParsePlugin(r, root[key], key, /*scorer=*/false));
  out = std::move(*p);
  return {};
}

// A key that is one of two words, if given: `second` sets `out`, `first`
// clears it.
core::Status Choice(const Reader& r, const YAML::Node& root, const char* key, const char* first,
                    const char* second, bool& out) {
  if (!Given(root[key])) return {};
  const YAML::Node& n = root[key];
  const std::string v = n.IsScalar() ? n.Scalar() : "";
  if (v != first && v != second) {
    return r.Expected(key, fmt::format("{} or {}", first, second), n);
  }
  out = v == second;
  return {};
}

core::Result<ProfileSpec> ParseProfileNode(const Reader& r, const YAML::Node& root) {
  DLSCHED_TRY(r.CheckMap(root, "", "a map with 'name' and extension points",
                         {"name", "description", "admission", "order", "filters", "packer",
                          "scorers", "preemptor", "sizer", "queueOrder", "protectFactor", "protect",
                          "taskLoss", "handOver", "percentageOfNodesToScore"}));
  ProfileSpec prof;
  prof.source = r.source();

  if (!Given(root["name"])) return r.Missing("name", "a non-empty string");
  DLSCHED_TRY_LET(name, r.String(root["name"], "name"));
  if (!IsProfileName(*name)) {
    return r.Expected("name",
                      fmt::format("a profile name: 1 to {} letters, digits, '.', '-' or '_', "
                                  "starting with a letter or digit (it names the output directory)",
                                  kMaxProfileName),
                      root["name"]);
  }
  prof.name = *name;

  if (Given(root["description"])) {
    if (!root["description"].IsScalar()) {
      return r.Expected("description", "a string", root["description"]);
    }
    prof.description = root["description"].Scalar();
  }

  if (Given(root["protectFactor"])) {
    DLSCHED_TRY_LET(f,
                    r.Number(root["protectFactor"], "protectFactor", NumberRange{0, false, 1000}));
    prof.protect_factor = *f;
  }

  DLSCHED_TRY(
      Choice(r, root, "protect", "EveryLaunch", "RelaunchOnly", prof.protect_relaunch_only));

  DLSCHED_TRY(
      Choice(r, root, "handOver", "Immediate", "AfterCheckpoint", prof.hand_over_after_checkpoint));

  if (Given(root["percentageOfNodesToScore"])) {
    DLSCHED_TRY_LET(v, r.Int(root["percentageOfNodesToScore"], "percentageOfNodesToScore", 0, 100));
    prof.percentage_of_nodes_to_score = static_cast<int>(*v);
  }

  bool fail_on_task_loss = false;
  DLSCHED_TRY(Choice(r, root, "taskLoss", "Restart", "Fail", fail_on_task_loss));
  prof.restart_on_task_loss = !fail_on_task_loss;

  struct Point {
    const char* key;
    const char* default_name;
    PluginSpec* out;
  };
  for (const Point& pt :
       {Point{"admission", "Gang", &prof.admission}, Point{"order", "FIFO", &prof.order},
        Point{"packer", "TaskByTask", &prof.packer}, Point{"preemptor", "None", &prof.preemptor},
        Point{"sizer", "Fixed", &prof.sizer}, Point{"queueOrder", "None", &prof.queue_order}}) {
    DLSCHED_TRY(ParsePoint(r, root, pt.key, pt.default_name, *pt.out));
  }

  const YAML::Node& filters = root["filters"];
  if (!Given(filters)) {
    // kube-scheduler's filters for node taints and labels, in its order;
    // the engine itself checks the schedulable flag first and the free
    // resources last.
    prof.filters.push_back(DefaultPlugin(r, Index("filters", 0), "TaintToleration"));
    prof.filters.push_back(DefaultPlugin(r, Index("filters", 1), "NodeAffinity"));
  } else {
    // An explicit empty list is allowed: labels and taints are ignored.
    if (!filters.IsSequence()) return r.Expected("filters", "a list of filters", filters);
    for (size_t i = 0; i < filters.size(); ++i) {
      DLSCHED_TRY_LET(p, ParsePlugin(r, filters[i], Index("filters", i), /*scorer=*/false));
      prof.filters.push_back(std::move(*p));
    }
  }

  const YAML::Node& scorers = root["scorers"];
  if (!Given(scorers)) {
    prof.scorers.push_back(DefaultPlugin(r, Index("scorers", 0), "LeastAllocated"));
  } else {
    // An explicit empty list is allowed: no scoring, first feasible node.
    if (!scorers.IsSequence()) return r.Expected("scorers", "a list of scorers", scorers);
    for (size_t i = 0; i < scorers.size(); ++i) {
      DLSCHED_TRY_LET(p, ParsePlugin(r, scorers[i], Index("scorers", i), /*scorer=*/true));
      prof.scorers.push_back(std::move(*p));
    }
  }
  return prof;
}

}  // namespace

core::Result<ProfileSpec> ParseProfile(const std::string& text, const std::string& source) {
  return internal::ParseText(text, source, ParseProfileNode);
}

core::Result<std::string> ApplyProfileOverrides(const std::string& text, const std::string& source,
                                                std::span<const std::string> overrides) {
  DLSCHED_TRY_LET(root, internal::ParseYaml(text, source));
  YAML::Node doc = *root;
  if (!doc.IsMap()) return core::Errorf("{}: a profile is a map", source);
  for (const std::string& o : overrides) {
    const size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0) {
      return core::Errorf("--set: '{}': expected PATH=VALUE, e.g. order.args.kappa=2", o);
    }
    const std::string path = o.substr(0, eq);
    YAML::Node value;
    try {
      value = YAML::Load(o.substr(eq + 1));
    } catch (const YAML::Exception& e) {
      return core::Errorf("--set: '{}': the value is not YAML: {}", o, e.msg);
    }
    std::vector<std::string> keys;
    for (size_t pos = 0; pos <= path.size();) {
      const size_t dot = std::min(path.find('.', pos), path.size());
      keys.push_back(path.substr(pos, dot - pos));
      if (keys.back().empty()) return core::Errorf("--set: '{}': empty key in '{}'", o, path);
      if (keys.size() > kMaxSetKeys) {
        return core::Errorf("--set: {}: more than {} keys in the path",
                            core::internal::QuoteInput(o), kMaxSetKeys);
      }
      pos = dot + 1;
    }
    // yaml-cpp writes a key over 1,024 bytes in a flow map (`{a: 1}`) as
    // `?key`, which it cannot read back: the maps on the path of such a key
    // are written as blocks.
    const bool long_key =
        std::ranges::any_of(keys, [](const std::string& k) { return k.size() > kMaxFlowKeyBytes; });
    // Walk down, creating maps; a sequence takes an index.
    YAML::Node at = doc;
    for (size_t i = 0; i < keys.size(); ++i) {
      const std::string& key = keys[i];
      const bool last = i + 1 == keys.size();
      if (long_key) at.SetStyle(YAML::EmitterStyle::Block);
      if (at.IsSequence()) {
        size_t index = 0;
        auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), index);
        if (ec != std::errc() || ptr != key.data() + key.size() || index >= at.size()) {
          return core::Errorf("--set: '{}': '{}' is a list of {}; '{}' is not an index in it", o,
                              fmt::join(keys.begin(), keys.begin() + static_cast<long>(i), "."),
                              at.size(), key);
        }
        if (last) {
          at[index] = value;
        } else {
          at.reset(at[index]);
        }
        continue;
      }
      if (!at.IsMap()) {
        return core::Errorf("--set: '{}': '{}' is not a map", o,
                            fmt::join(keys.begin(), keys.begin() + static_cast<long>(i), "."));
      }
      if (last) {
        at[key] = value;
        break;
      }
      YAML::Node next = at[key];
      if (next.IsScalar()) {
        // A plugin given by its bare name: `order: FIFO` -> {name: FIFO}.
        YAML::Node plugin(YAML::NodeType::Map);
        plugin["name"] = next.Scalar();
        at[key] = plugin;
        next = at[key];
      } else if (!next.IsDefined() || next.IsNull()) {
        at[key] = YAML::Node(YAML::NodeType::Map);
        next = at[key];
      }
      at.reset(next);
    }
  }
  YAML::Emitter out;
  out << doc;
  return std::string(out.c_str()) + "\n";
}

core::Result<ProfileSpec> LoadProfile(const std::string& path) {
  return internal::LoadFile(path, ParseProfile);
}

}  // namespace dlsched::config
