#include "k8s/apiserver_internal.h"

#include <algorithm>
#include <ctime>
#include <optional>
#include <sstream>

#include <fmt/format.h>

// The test API server's objects as JSON: Status replies, keys, metadata,
// selectors, request paths, and the Tables `kubectl get` asks for.

namespace dlsched::testing::apiserver {
namespace {

// A simple JSONPath (".status.phase", ".status.conditions[0].status")
// into an object; null if absent.
json Lookup(const json& object, const std::string& path) {
  const json* at = &object;
  std::stringstream ss(path);
  std::string key;
  while (std::getline(ss, key, '.')) {
    if (key.empty()) continue;
    std::optional<size_t> index;
    if (const size_t open = key.find('['); open != std::string::npos && key.back() == ']') {
      index = std::stoul(key.substr(open + 1, key.size() - open - 2));
      key.resize(open);
    }
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
    if (index) {
      if (!at->is_array() || *index >= at->size()) return nullptr;
      at = &(*at)[*index];
    }
  }
  return *at;
}

// An age as kubectl prints it: 45s, 3m12s, 25m, 2h5m, 30h, 3d4h, 12d.
std::string HumanAge(const std::string& rfc3339) {
  std::tm tm{};
  if (strptime(rfc3339.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) return "<unknown>";
  const int64_t s = std::max<int64_t>(0, std::time(nullptr) - timegm(&tm));
  const int64_t m = s / 60, h = s / 3600, d = s / 86400;
  if (s < 120) return fmt::format("{}s", s);
  if (m < 10) return fmt::format("{}m{}s", m, s % 60);
  if (h < 3) return fmt::format("{}m", m);
  if (h < 8) return fmt::format("{}h{}m", h, m % 60);
  if (h < 48) return fmt::format("{}h", h);
  if (d < 8) return fmt::format("{}d{}h", d, h % 24);
  return fmt::format("{}d", d);
}

}  // namespace

json Status(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
          {"status", "Failure"}, {"message", message}, {"reason", reason},
          {"code", code}};
}

json Invalid(const std::string& kind, const std::string& name, const json& causes) {
  std::string message = fmt::format("{} \"{}\" is invalid: ", kind, name);
  for (size_t i = 0; i < causes.size(); ++i) {
    message += fmt::format("{}{}: {}", i == 0 ? "" : ", ", causes[i].value("field", ""),
                           causes[i].value("message", ""));
  }
  json status = Status(422, "Invalid", message);
  status["details"] = {{"name", name}, {"kind", kind}, {"causes", causes}};
  return status;
}

std::string KeyOf(const std::string& ns, const std::string& name) {
  return ns.empty() ? name : ns + "/" + name;
}

std::string Meta(const json& o, const char* k) {
  if (!o.is_object() || !o.contains("metadata") || !o["metadata"].is_object()) return "";
  return o["metadata"].value(k, std::string());
}

namespace {

std::string Trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// The terms of a selector: split at the commas outside parentheses.
std::vector<std::string> Terms(const std::string& selector) {
  std::vector<std::string> terms;
  std::string term;
  int depth = 0;
  for (char ch : selector) {
    if (ch == '(') ++depth;
    if (ch == ')') --depth;
    if (ch == ',' && depth == 0) {
      terms.push_back(Trim(term));
      term.clear();
    } else {
      term += ch;
    }
  }
  terms.push_back(Trim(term));
  return terms;
}

// "key in (a, b)" or "key notin (a,b)": the key, the operator and the set;
// nullopt when the term is of another form.
struct SetTerm {
  std::string key, op;
  std::vector<std::string> values;
};
std::optional<SetTerm> ParseSetTerm(const std::string& term) {
  const size_t open = term.find('(');
  if (open == std::string::npos || term.back() != ')') return std::nullopt;
  std::stringstream head(term.substr(0, open));
  SetTerm t;
  head >> t.key >> t.op;
  if (t.op != "in" && t.op != "notin") return std::nullopt;
  std::stringstream values(term.substr(open + 1, term.size() - open - 2));
  std::string v;
  while (std::getline(values, v, ',')) t.values.push_back(Trim(v));
  return t;
}

}  // namespace

// A label selector, as labels.Parse reads one: equality ("a=b", "a==b",
// "a!=b"), set-based ("a in (x,y)", "a notin (x,y)") and existence ("a",
// "!a") terms, all of which must hold.
bool LabelsMatch(const json& object, const std::string& selector) {
  if (Trim(selector).empty()) return true;
  json labels = json::object();
  if (object.contains("metadata") && object["metadata"].contains("labels") &&
      object["metadata"]["labels"].is_object()) {
    labels = object["metadata"]["labels"];
  }
  auto value = [&](const std::string& k) -> std::optional<std::string> {
    if (!labels.contains(k) || !labels[k].is_string()) return std::nullopt;
    return labels[k].get<std::string>();
  };
  for (const std::string& term : Terms(selector)) {
    if (term.empty()) continue;
    size_t p;
    if (auto set = ParseSetTerm(term)) {
      const auto have = value(set->key);
      const bool in =
          have && std::find(set->values.begin(), set->values.end(), *have) != set->values.end();
      if (in != (set->op == "in")) return false;
    } else if ((p = term.find("!=")) != std::string::npos) {
      if (value(Trim(term.substr(0, p))) == Trim(term.substr(p + 2))) return false;
    } else if ((p = term.find('=')) != std::string::npos) {
      const size_t skip = term.compare(p, 2, "==") == 0 ? 2 : 1;
      if (value(Trim(term.substr(0, p))) != Trim(term.substr(p + skip))) return false;
    } else if (term[0] == '!') {
      if (labels.contains(Trim(term.substr(1)))) return false;
    } else if (!labels.contains(term)) {
      return false;
    }
  }
  return true;
}

// A field selector over metadata.name, metadata.namespace, spec.nodeName,
// status.phase: "f=v,g!=w".
bool FieldsMatch(const json& object, const std::string& selector) {
  if (selector.empty()) return true;
  std::stringstream ss(selector);
  std::string term;
  while (std::getline(ss, term, ',')) {
    if (term.empty()) continue;
    const bool negate = term.find("!=") != std::string::npos;
    const size_t p = negate ? term.find("!=") : term.find('=');
    if (p == std::string::npos) return false;
    std::string field = term.substr(0, p);
    std::string want = term.substr(p + (negate ? 2 : (term.compare(p, 2, "==") == 0 ? 2 : 1)));
    std::string have;
    const size_t dot = field.find('.');
    if (dot != std::string::npos) {
      const std::string a = field.substr(0, dot), b = field.substr(dot + 1);
      if (object.contains(a) && object[a].is_object() && object[a].contains(b) &&
          object[a][b].is_string()) {
        have = object[a][b].get<std::string>();
      }
    }
    if ((have == want) == negate) return false;
  }
  return true;
}

std::string Param(const std::multimap<std::string, std::string>& params, const std::string& k) {
  auto it = params.find(k);
  return it == params.end() ? "" : it->second;
}

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> out;
  std::stringstream ss(path);
  std::string s;
  while (std::getline(ss, s, '/')) {
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

json TableOf(const Type& type, const std::vector<json>& items, const std::string& rv) {
  json columns = json::array({{{"name", "Name"},
                               {"type", "string"},
                               {"format", "name"},
                               {"description", "Name of the object"},
                               {"priority", 0}}});
  json printer = type.columns;
  if (printer.empty()) {
    printer = json::array(
        {{{"name", "Age"}, {"type", "date"}, {"jsonPath", ".metadata.creationTimestamp"}}});
  }
  for (const json& c : printer) {
    columns.push_back(
        {{"name", c.value("name", "")},
         {"type", c.value("type", "string") == "date" ? "string" : c.value("type", "string")},
         {"format", ""},
         {"description", c.value("description", "")},
         {"priority", c.value("priority", 0)}});
  }
  json rows = json::array();
  for (const json& o : items) {
    json cells = json::array({Meta(o, "name")});
    for (const json& c : printer) {
      json v = Lookup(o, c.value("jsonPath", ""));
      if (c.value("type", "") == "date" && v.is_string()) v = HumanAge(v.get<std::string>());
      cells.push_back(v);
    }
    rows.push_back({{"cells", cells},
                    {"object",
                     {{"kind", "PartialObjectMetadata"},
                      {"apiVersion", "meta.k8s.io/v1"},
                      {"metadata", o.value("metadata", json::object())}}}});
  }
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", {{"resourceVersion", rv}}},
          {"columnDefinitions", columns},
          {"rows", rows}};
}

}  // namespace dlsched::testing::apiserver
