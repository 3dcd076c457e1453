#include "dlsched/report/provenance.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>
#include <tuple>

#include <fmt/format.h>

namespace dlsched::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void StringOrNull(JsonWriter& w, const std::string& s) {
  if (s.empty()) {
    w.Null();
  } else {
    w.String(s);
  }
}

void Strings(JsonWriter& w, const std::vector<std::string>& list) {
  w.BeginArray();
  for (const auto& s : list) w.String(s);
  w.EndArray();
}

std::unexpected<core::Error> Expected(std::string_view key, std::string_view what) {
  return core::Errorf("provenance.{}: expected {}", key, what);
}

// A string member of `o`; `nullable`: null reads as "".
core::Result<std::string> GetString(const json& o, const std::string& key, bool nullable = false) {
  const auto it = o.find(key);
  if (it != o.end() && it->is_string()) return it->get<std::string>();
  if (nullable && (it == o.end() || it->is_null())) return std::string();
  return Expected(key, nullable ? "a string or null" : "a string");
}

core::Result<std::vector<std::string>> GetStrings(const json& o, const std::string& key) {
  const auto it = o.find(key);
  if (it == o.end() || !it->is_array()) return Expected(key, "a list of strings");
  std::vector<std::string> out;
  for (const auto& s : *it) {
    if (!s.is_string()) return Expected(key, "a list of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

core::Result<std::string> ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in) return core::Errorf("{}: cannot read file", p.string());
  return ss.str();
}

// A shell word that needs no quotes.
bool PlainWord(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("-_./:=,+@%").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

}  // namespace

void WriteProvenance(JsonWriter& w, const Provenance& p) {
  w.BeginObject();
  w.Key("dlsched_version");
  w.String(p.version);
  w.Key("command");
  Strings(w, p.command);
  w.Key("inputs");
  w.BeginArray();
  for (const auto& in : p.inputs) {
    w.BeginObject();
    w.Key("role");
    w.String(in.role);
    w.Key("format");
    StringOrNull(w, in.format);
    w.Key("path");
    w.String(in.path);
    w.Key("sha256");
    w.String(in.sha256);
    w.EndObject();
  }
  w.EndArray();
  w.Key("profiles");
  w.BeginArray();
  for (const auto& pr : p.profiles) {
    w.BeginObject();
    w.Key("name");
    w.String(pr.name);
    w.Key("builtin");
    StringOrNull(w, pr.builtin);
    w.Key("file");
    StringOrNull(w, pr.file);
    w.Key("set");
    Strings(w, pr.set);
    w.Key("yaml");
    w.String(pr.yaml);
    w.EndObject();
  }
  w.EndArray();
  w.Key("seeds");
  if (p.seeds) {
    w.BeginArray();
    for (uint64_t s : *p.seeds) w.UInt(s);
    w.EndArray();
  } else {
    w.Null();
  }
  w.Key("window");
  if (p.window) {
    w.String(*p.window);
  } else {
    w.Null();
  }
  w.EndObject();
}

std::string ProvenanceFileText(const Provenance& p) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("provenance");
  WriteProvenance(w, p);
  w.EndObject();
  return out + "\n";
}

core::Result<Provenance> ParseProvenance(const json& v) {
  if (!v.is_object()) return core::MakeError("provenance: expected an object");
  Provenance p;
  DLSCHED_TRY_LET(version, GetString(v, "dlsched_version"));
  p.version = std::move(*version);
  DLSCHED_TRY_LET(command, GetStrings(v, "command"));
  if (command->empty()) return Expected("command", "a non-empty list of strings");
  p.command = std::move(*command);

  const auto inputs = v.find("inputs");
  if (inputs == v.end() || !inputs->is_array()) return Expected("inputs", "a list");
  for (size_t i = 0; i < inputs->size(); ++i) {
    const json& o = (*inputs)[i];
    const std::string at = fmt::format("inputs[{}]", i);
    if (!o.is_object()) return Expected(at, "an object");
    Provenance::Input in;
    for (auto [key, out, nullable] :
         {std::tuple{"role", &in.role, false}, std::tuple{"format", &in.format, true},
          std::tuple{"path", &in.path, false}, std::tuple{"sha256", &in.sha256, false}}) {
      auto s = GetString(o, key, nullable);
      if (!s) return Expected(at + "." + key, nullable ? "a string or null" : "a string");
      *out = std::move(*s);
    }
    p.inputs.push_back(std::move(in));
  }

  const auto profiles = v.find("profiles");
  if (profiles == v.end() || !profiles->is_array()) return Expected("profiles", "a list");
  for (size_t i = 0; i < profiles->size(); ++i) {
    const json& o = (*profiles)[i];
    const std::string at = fmt::format("profiles[{}]", i);
    if (!o.is_object()) return Expected(at, "an object");
    Provenance::Profile pr;
    for (auto [key, out, nullable] :
         {std::tuple{"name", &pr.name, false}, std::tuple{"builtin", &pr.builtin, true},
          std::tuple{"file", &pr.file, true}, std::tuple{"yaml", &pr.yaml, false}}) {
      auto s = GetString(o, key, nullable);
      if (!s) return Expected(at + "." + key, nullable ? "a string or null" : "a string");
      *out = std::move(*s);
    }
    auto set = GetStrings(o, "set");
    if (!set) return Expected(at + ".set", "a list of strings");
    pr.set = std::move(*set);
    p.profiles.push_back(std::move(pr));
  }

  const auto seeds = v.find("seeds");
  if (seeds != v.end() && !seeds->is_null()) {
    if (!seeds->is_array()) return Expected("seeds", "a list of seeds or null");
    p.seeds.emplace();
    for (const auto& s : *seeds) {
      if (!s.is_number_unsigned()) return Expected("seeds", "a list of seeds or null");
      p.seeds->push_back(s.get<uint64_t>());
    }
  }
  const auto window = v.find("window");
  if (window != v.end() && !window->is_null()) {
    if (!window->is_string()) return Expected("window", "a string or null");
    p.window = window->get<std::string>();
  }
  return p;
}

core::Result<json> ParseJsonFile(const std::string& text, const std::string& path, bool skip_jobs) {
  const json::parser_callback_t skip = [](int depth, json::parse_event_t event, json& parsed) {
    return !(event == json::parse_event_t::key && depth == 1 && parsed == schema::summary::kJobs);
  };
  const auto line_at = [&](size_t byte) {
    const auto end = text.begin() + static_cast<std::ptrdiff_t>(std::min(byte, text.size()));
    return 1 + static_cast<int>(std::count(text.begin(), end, '\n'));
  };
  // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..."
  // without its prefix.
  const auto reason = [](std::string what, std::string_view after) {
    if (const size_t at = what.find(after); at != std::string::npos) {
      what.erase(0, at + after.size());
    }
    return what;
  };
  try {
    return json::parse(text, skip_jobs ? skip : nullptr);
  } catch (const json::parse_error& e) {
    return core::Errorf("{}:{}: invalid JSON: {}", path, line_at(e.byte > 0 ? e.byte - 1 : 0),
                        reason(e.what(), ": "));
  } catch (const json::exception& e) {
    // out_of_range.406, "number overflow parsing '1e400'": a number beyond
    // the range of a double, found on the line of its first occurrence.
    const std::string what = reason(e.what(), "] ");
    size_t at = 0;
    if (const size_t open = what.find('\''), close = what.rfind('\'');
        open != std::string::npos && close > open + 1) {
      at = std::min(text.find(what.substr(open + 1, close - open - 1)), text.size());
    }
    return core::Errorf("{}:{}: invalid JSON: {}", path, line_at(at), what);
  }
}

core::Result<std::optional<FoundProvenance>> ReadProvenance(const std::string& dir) {
  for (std::string_view name : {kProvenanceFile, schema::kCompareJson, schema::kSummaryJson}) {
    const fs::path file = fs::path(dir) / name;
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) continue;
    DLSCHED_TRY_LET(text, ReadText(file));
    // summary.json's per-job array can be most of the file: dropped unbuilt.
    DLSCHED_TRY_LET(root, ParseJsonFile(*text, file.string(), /*skip_jobs=*/true));
    if (!root->is_object()) return core::Errorf("{}: not a JSON object", file.string());
    const auto it = root->find(schema::summary::kProvenance);
    if (it == root->end()) return std::nullopt;
    auto p = ParseProvenance(*it);
    if (!p) return core::Errorf("{}: {}", file.string(), p.error().message);
    return FoundProvenance{file.string(), std::move(*p)};
  }
  return std::nullopt;
}

std::string ShellCommand(std::span<const std::string> command) {
  std::string out = "dlsched";
  for (const auto& word : command) {
    out += ' ';
    if (PlainWord(word)) {
      out += word;
      continue;
    }
    out += '\'';
    for (char c : word) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

}  // namespace dlsched::report
