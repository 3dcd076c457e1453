#include "k8s/apiserver.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "dlsched/k8s/objects.h"

namespace dlsched::testing {

using nlohmann::json;

struct TestApiServer::Type {
  std::string group, version, plural, singular, kind;
  bool namespaced = true;
  bool has_status = false;
  bool custom = false;  // from a CRD
  std::vector<std::string> short_names;
  std::vector<std::string> subresources;  // "status", "binding"
  json columns = json::array();           // additionalPrinterColumns of a CRD
  std::string Id() const { return group.empty() ? plural : plural + "." + group; }
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
};

namespace {

using Type = TestApiServer::Type;

json Status(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
          {"status", "Failure"}, {"message", message}, {"reason", reason},
          {"code", code}};
}

std::string KeyOf(const std::string& ns, const std::string& name) {
  return ns.empty() ? name : ns + "/" + name;
}

std::string Meta(const json& o, const char* k) {
  if (!o.is_object() || !o.contains("metadata") || !o["metadata"].is_object()) return "";
  return o["metadata"].value(k, std::string());
}

// A label selector: "a=b,c!=d,e,!f" (equality and existence forms).
bool LabelsMatch(const json& object, const std::string& selector) {
  if (selector.empty()) return true;
  json labels = json::object();
  if (object.contains("metadata") && object["metadata"].contains("labels") &&
      object["metadata"]["labels"].is_object()) {
    labels = object["metadata"]["labels"];
  }
  std::stringstream ss(selector);
  std::string term;
  while (std::getline(ss, term, ',')) {
    if (term.empty()) continue;
    size_t p;
    if ((p = term.find("!=")) != std::string::npos) {
      const std::string k = term.substr(0, p), v = term.substr(p + 2);
      if (labels.contains(k) && labels[k] == v) return false;
    } else if ((p = term.find("==")) != std::string::npos ||
               (p = term.find('=')) != std::string::npos) {
      const size_t skip = term.compare(p, 2, "==") == 0 ? 2 : 1;
      const std::string k = term.substr(0, p), v = term.substr(p + skip);
      if (!labels.contains(k) || labels[k] != v) return false;
    } else if (term[0] == '!') {
      if (labels.contains(term.substr(1))) return false;
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

std::unique_ptr<Type> Builtin(std::string group, std::string version, std::string plural,
                              std::string singular, std::string kind, bool namespaced,
                              std::vector<std::string> subresources,
                              std::vector<std::string> short_names = {}) {
  auto t = std::make_unique<Type>();
  t->group = std::move(group);
  t->version = std::move(version);
  t->plural = std::move(plural);
  t->singular = std::move(singular);
  t->kind = std::move(kind);
  t->namespaced = namespaced;
  t->subresources = std::move(subresources);
  t->has_status =
      std::find(t->subresources.begin(), t->subresources.end(), "status") != t->subresources.end();
  t->short_names = std::move(short_names);
  return t;
}

json YamlToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = YamlToJson(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& v : n) a.push_back(YamlToJson(v));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const std::string s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted
      if (s == "true") return true;
      if (s == "false") return false;
      if (s == "null" || s == "~") return nullptr;
      char* end = nullptr;
      const long long i = std::strtoll(s.c_str(), &end, 10);
      if (!s.empty() && *end == '\0') return i;
      const double d = std::strtod(s.c_str(), &end);
      if (!s.empty() && *end == '\0' && s.find_first_of("0123456789") != std::string::npos)
        return d;
      return s;
    }
    default:
      return nullptr;
  }
}

// A simple JSONPath (".status.phase") into an object; null if absent.
json Lookup(const json& object, const std::string& path) {
  const json* at = &object;
  std::stringstream ss(path);
  std::string key;
  while (std::getline(ss, key, '.')) {
    if (key.empty()) continue;
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
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

// A meta.k8s.io/v1 Table of objects, as the server prints for `kubectl
// get`: Name, a CRD's additionalPrinterColumns (date columns as ages), and
// Age for types without columns; each row carries the object's metadata.
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

// One open watch.
struct TestApiServer::Watch {
  const Type* type = nullptr;
  std::string ns;
  std::string labels, fields;
  int64_t cursor = 0;
  bool bookmarks = false;
  std::chrono::steady_clock::time_point deadline;
  std::chrono::steady_clock::time_point last_sent;
  std::set<std::string> visible;     // keys of objects the watcher was shown
  std::vector<std::string> pending;  // lines to send first
  bool end_after_pending = false;
  bool table = false;  // objects as meta.k8s.io Tables (kubectl get -w)
  uint64_t drop_epoch = 0;
};

TestApiServer::TestApiServer() : TestApiServer(Options{}) {}

TestApiServer::TestApiServer(Options options) : options_(std::move(options)) {
  types_.push_back(Builtin("", "v1", "pods", "pod", "Pod", true, {"status", "binding"}, {"po"}));
  types_.push_back(Builtin("", "v1", "nodes", "node", "Node", false, {"status"}, {"no"}));
  types_.push_back(Builtin("", "v1", "services", "service", "Service", true, {"status"}, {"svc"}));
  types_.push_back(Builtin("", "v1", "events", "event", "Event", true, {}, {"ev"}));
  types_.push_back(
      Builtin("", "v1", "namespaces", "namespace", "Namespace", false, {"status"}, {"ns"}));
  types_.push_back(Builtin("", "v1", "configmaps", "configmap", "ConfigMap", true, {}, {"cm"}));
  types_.push_back(Builtin("", "v1", "bindings", "binding", "Binding", true, {}));
  types_.push_back(Builtin("coordination.k8s.io", "v1", "leases", "lease", "Lease", true, {}));
  // For kubectl's client-side dry run of the Indexed Job `dlsched sweep`
  // writes (kubectl maps the kind through discovery even then).
  types_.push_back(Builtin("batch", "v1", "jobs", "job", "Job", true, {"status"}));
  types_.push_back(Builtin("events.k8s.io", "v1", "events", "event", "Event", true, {}, {"ev"}));
  types_.push_back(Builtin("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                           "customresourcedefinition", "CustomResourceDefinition", false,
                           {"status"}, {"crd", "crds"}));
}

TestApiServer::~TestApiServer() { Stop(); }

const Type* TestApiServer::FindType(const std::string& resource) const {
  for (const auto& t : types_) {
    if (t->Id() == resource) return t.get();
  }
  return nullptr;
}

const Type* TestApiServer::FindType(const std::string& group, const std::string& version,
                                    const std::string& plural) const {
  for (const auto& t : types_) {
    if (t->group == group && t->version == version && t->plural == plural) return t.get();
  }
  return nullptr;
}

void TestApiServer::RegisterCrd(const json& crd) {
  const json spec = crd.value("spec", json::object());
  const json names = spec.value("names", json::object());
  for (const json& v : spec.value("versions", json::array())) {
    if (!v.value("served", true)) continue;
    auto t = std::make_unique<Type>();
    t->group = spec.value("group", "");
    t->version = v.value("name", "");
    t->plural = names.value("plural", "");
    t->singular = names.value("singular", "");
    t->kind = names.value("kind", "");
    t->namespaced = spec.value("scope", "Namespaced") == "Namespaced";
    t->custom = true;
    for (const json& s : names.value("shortNames", json::array())) t->short_names.push_back(s);
    if (v.contains("subresources") && v["subresources"].contains("status")) {
      t->has_status = true;
      t->subresources.push_back("status");
    }
    t->columns = v.value("additionalPrinterColumns", json::array());
    types_.push_back(std::move(t));
  }
}

std::string TestApiServer::Url() const { return fmt::format("http://127.0.0.1:{}", port_); }

void TestApiServer::WriteKubeconfig(const std::string& path) const {
  std::ofstream out(path);
  out << fmt::format(
      "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: {}\n"
      "users:\n- name: test\n  user:\n    token: {}\ncontexts:\n- name: test\n  context:\n"
      "    cluster: test\n    user: test\n    namespace: default\ncurrent-context: test\n",
      Url(), options_.token);
}

void TestApiServer::SetFaults(const ApiFaults& faults) {
  std::lock_guard lock(mu_);
  faults_ = faults;
  rng_.seed(faults.seed);
}

int64_t TestApiServer::ResourceVersion() const {
  std::lock_guard lock(mu_);
  return rv_;
}

int64_t TestApiServer::LatestResourceVersion(const std::string& resource) const {
  std::lock_guard lock(mu_);
  auto it = latest_.find(resource);
  return it == latest_.end() ? 0 : it->second;
}

void TestApiServer::Compact() {
  std::lock_guard lock(mu_);
  history_.clear();
  oldest_kept_ = rv_ + 1;
}

void TestApiServer::DropWatches() {
  std::lock_guard lock(mu_);
  ++drop_epoch_;
  changed_.notify_all();
}

std::map<std::string, int> TestApiServer::RequestCounts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

void TestApiServer::RecordLocked(const Type& type, const std::string& event, const json& object) {
  const int64_t rv = std::stoll(Meta(object, "resourceVersion"));
  history_.push_back({rv, type.Id(), event, object});
  while (history_.size() > options_.history) history_.pop_front();
  oldest_kept_ = history_.front().rv;
  latest_[type.Id()] = rv;
  changed_.notify_all();
}

TestApiServer::Reply TestApiServer::CreateLocked(const Type& type, const std::string& path_ns,
                                                 json object) {
  if (!object.is_object()) return {400, Status(400, "BadRequest", "the body is not an object")};
  json& meta = object["metadata"];
  if (!meta.is_object()) meta = json::object();
  std::string ns = path_ns;
  if (type.namespaced) {
    const std::string given = meta.value("namespace", "");
    if (!given.empty() && !ns.empty() && given != ns) {
      return {400, Status(400, "BadRequest",
                          "the namespace of the provided object does not match the namespace "
                          "sent on the request")};
    }
    if (ns.empty()) ns = given.empty() ? "default" : given;
    meta["namespace"] = ns;
  } else {
    ns.clear();
    meta.erase("namespace");
  }
  std::string name = meta.value("name", "");
  if (name.empty() && !meta.value("generateName", "").empty()) {
    static const char* kChars = "bcdfghjklmnpqrstvwxz2456789";
    name = meta.value("generateName", "");
    for (int i = 0; i < 5; ++i) name += kChars[rng_() % 27];
    meta["name"] = name;
  }
  if (name.empty()) {
    return {422,
            Status(422, "Invalid",
                   fmt::format("{} \"\" is invalid: metadata.name: Required value", type.kind))};
  }
  auto& bucket = objects_[type.Id()];
  const std::string key = KeyOf(ns, name);
  if (bucket.contains(key)) {
    return {409,
            Status(409, "AlreadyExists", fmt::format("{} \"{}\" already exists", type.Id(), name))};
  }
  object["apiVersion"] = type.ApiVersion();
  object["kind"] = type.kind;
  char uid[40];
  const uint64_t n = ++uid_seq_;
  std::snprintf(uid, sizeof uid, "%08llx-0000-4000-8000-%012llx",
                static_cast<unsigned long long>(port_), static_cast<unsigned long long>(n));
  meta["uid"] = uid;
  meta["resourceVersion"] = std::to_string(++rv_);
  meta["creationTimestamp"] = k8s::NowRfc3339();
  meta["generation"] = 1;
  meta.erase("deletionTimestamp");
  if (type.kind == "Pod") {
    if (!object.contains("status") || !object["status"].is_object())
      object["status"] = json::object();
    if (object["status"].value("phase", "").empty()) object["status"]["phase"] = "Pending";
  } else if (type.has_status && type.custom) {
    object.erase("status");  // set only through /status
  }
  if (type.kind == "CustomResourceDefinition") {
    RegisterCrd(object);
    object["status"] = {
        {"conditions", json::array({{{"type", "Established"}, {"status", "True"}},
                                    {{"type", "NamesAccepted"}, {"status", "True"}}})},
        {"acceptedNames", object["spec"].value("names", json::object())}};
  }
  bucket[key] = object;
  RecordLocked(type, "ADDED", object);
  return {201, object};
}

TestApiServer::Reply TestApiServer::UpdateLocked(const Type& type, const std::string& ns,
                                                 const std::string& name, json object, bool status,
                                                 bool faults) {
  auto& bucket = objects_[type.Id()];
  const std::string key = KeyOf(ns, name);
  auto it = bucket.find(key);
  if (it == bucket.end()) {
    return {404, Status(404, "NotFound", fmt::format("{} \"{}\" not found", type.Id(), name))};
  }
  if (!object.is_object()) return {400, Status(400, "BadRequest", "the body is not an object")};
  const json& stored = it->second;
  const std::string want = Meta(object, "resourceVersion");
  const std::string conflict = fmt::format(
      "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply "
      "your changes to the latest version and try again",
      type.Id(), name);
  if (!want.empty() && want != Meta(stored, "resourceVersion")) {
    return {409, Status(409, "Conflict", conflict)};
  }
  if (want.empty() && type.custom) {
    return {422,
            Status(422, "Invalid",
                   fmt::format("{} \"{}\" is invalid: metadata.resourceVersion: Invalid value: "
                               "0x0: must be specified for an update",
                               type.kind, name))};
  }
  if (faults && faults_.conflict_on_first_write && !written_once_[type.Id() + "/" + key]) {
    written_once_[type.Id() + "/" + key] = true;
    return {409, Status(409, "Conflict", conflict)};
  }
  json updated;
  if (status) {
    updated = stored;
    updated["status"] = object.value("status", json::object());
  } else {
    updated = object;
    updated["apiVersion"] = type.ApiVersion();
    updated["kind"] = type.kind;
    json& meta = updated["metadata"];
    for (const char* k : {"uid", "creationTimestamp", "name", "namespace", "deletionTimestamp",
                          "deletionGracePeriodSeconds", "generation"}) {
      if (stored["metadata"].contains(k)) {
        meta[k] = stored["metadata"][k];
      } else {
        meta.erase(k);
      }
    }
    if (type.has_status) {
      if (stored.contains("status")) {
        updated["status"] = stored["status"];
      } else {
        updated.erase("status");
      }
    }
    if (updated.value("spec", json()) != stored.value("spec", json())) {
      meta["generation"] = stored["metadata"].value("generation", 1) + 1;
    }
  }
  updated["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"];
  if (updated == stored) return {200, stored};  // a no-op write changes nothing
  updated["metadata"]["resourceVersion"] = std::to_string(++rv_);
  it->second = updated;
  RecordLocked(type, "MODIFIED", updated);
  // Finalizers all gone from an object being deleted: it goes.
  if (updated["metadata"].contains("deletionTimestamp") &&
      updated["metadata"].value("finalizers", json::array()).empty()) {
    RemoveLocked(type, key, "Background");
  }
  return {200, updated};
}

TestApiServer::Reply TestApiServer::DeleteLocked(const Type& type, const std::string& ns,
                                                 const std::string& name,
                                                 std::optional<int64_t> grace,
                                                 const std::string& propagation) {
  auto& bucket = objects_[type.Id()];
  const std::string key = KeyOf(ns, name);
  auto it = bucket.find(key);
  if (it == bucket.end()) {
    return {404, Status(404, "NotFound", fmt::format("{} \"{}\" not found", type.Id(), name))};
  }
  json& object = it->second;
  json& meta = object["metadata"];
  const bool finalizers = !meta.value("finalizers", json::array()).empty();
  const std::string phase = object.value("status", json::object()).value("phase", "");
  const bool graceful = type.kind == "Pod" &&
                        !object.value("spec", json::object()).value("nodeName", "").empty() &&
                        phase != "Succeeded" && phase != "Failed";
  const int64_t period = grace.value_or(
      object.value("spec", json::object()).value("terminationGracePeriodSeconds", 30));
  if (finalizers || (graceful && period > 0)) {
    if (!meta.contains("deletionTimestamp")) {
      meta["deletionTimestamp"] = k8s::NowRfc3339();
      if (graceful) meta["deletionGracePeriodSeconds"] = period;
      meta["resourceVersion"] = std::to_string(++rv_);
      RecordLocked(type, "MODIFIED", object);
    }
    return {200, object};
  }
  json last = object;
  RemoveLocked(type, key, propagation);
  return {200, last};
}

void TestApiServer::RemoveLocked(const Type& type, const std::string& key,
                                 const std::string& propagation) {
  auto& bucket = objects_[type.Id()];
  auto it = bucket.find(key);
  if (it == bucket.end()) return;
  json object = std::move(it->second);
  bucket.erase(it);
  object["metadata"]["resourceVersion"] = std::to_string(++rv_);
  RecordLocked(type, "DELETED", object);
  const std::string uid = Meta(object, "uid");
  if (type.kind == "CustomResourceDefinition") {
    const json spec = object.value("spec", json::object());
    const std::string group = spec.value("group", "");
    const std::string plural = spec.value("names", json::object()).value("plural", "");
    objects_.erase(plural + "." + group);
    std::erase_if(types_, [&](const auto& t) {
      return t->custom && t->group == group && t->plural == plural;
    });
  }
  // Garbage collection of dependents (background), or orphaning.
  for (const auto& t : types_) {
    std::vector<std::string> dependents;
    for (auto& [k, o] : objects_[t->Id()]) {
      for (const json& ref : o["metadata"].value("ownerReferences", json::array())) {
        if (ref.value("uid", "") == uid) dependents.push_back(k);
      }
    }
    for (const std::string& k : dependents) {
      json& o = objects_[t->Id()][k];
      if (propagation == "Orphan") {
        json refs = json::array();
        for (const json& ref : o["metadata"]["ownerReferences"]) {
          if (ref.value("uid", "") != uid) refs.push_back(ref);
        }
        o["metadata"]["ownerReferences"] = refs;
        o["metadata"]["resourceVersion"] = std::to_string(++rv_);
        RecordLocked(*t, "MODIFIED", o);
      } else {
        const std::string ns = Meta(o, "namespace");
        DeleteLocked(*t, ns, Meta(o, "name"), std::nullopt, "Background");
      }
    }
  }
}

json TestApiServer::Discovery(const std::string& group, const std::string& version) const {
  json resources = json::array();
  for (const auto& t : types_) {
    if (t->group != group || t->version != version) continue;
    json r = {{"name", t->plural},
              {"singularName", t->singular},
              {"namespaced", t->namespaced},
              {"kind", t->kind},
              {"verbs", t->kind == "Binding" ? json::array({"create"})
                                             : json::array({"create", "delete", "get", "list",
                                                            "patch", "update", "watch"})}};
    if (!t->short_names.empty()) r["shortNames"] = t->short_names;
    resources.push_back(r);
    for (const std::string& sub : t->subresources) {
      resources.push_back({{"name", t->plural + "/" + sub},
                           {"singularName", ""},
                           {"namespaced", t->namespaced},
                           {"kind", sub == "binding" ? "Binding" : t->kind},
                           {"verbs", sub == "binding" ? json::array({"create"})
                                                      : json::array({"get", "patch", "update"})}});
    }
  }
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group.empty() ? version : group + "/" + version},
          {"resources", resources}};
}

TestApiServer::Reply TestApiServer::Handle(const std::string& method, const std::string& path,
                                           const std::multimap<std::string, std::string>& params,
                                           const std::string& body, const std::string& content_type,
                                           bool count, bool table) {
  std::lock_guard lock(mu_);
  if (path == "/version") {
    return {
        200,
        {{"major", "1"}, {"minor", "32"}, {"gitVersion", "v1.32.0"}, {"platform", "linux/amd64"}}};
  }
  if (path == "/api") {
    return {200,
            {{"kind", "APIVersions"},
             {"versions", json::array({"v1"})},
             {"serverAddressByClientCIDRs",
              json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", Url().substr(7)}}})}}};
  }
  if (path == "/apis") {
    json groups = json::array();
    std::set<std::string> seen;
    for (const auto& t : types_) {
      if (t->group.empty() || !seen.insert(t->group).second) continue;
      json gv = {{"groupVersion", t->ApiVersion()}, {"version", t->version}};
      groups.push_back(
          {{"name", t->group}, {"versions", json::array({gv})}, {"preferredVersion", gv}});
    }
    return {200, {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}}};
  }
  // OpenAPI v3, as far as kubectl's default validation needs it: each
  // group-version's document declares the fieldValidation parameter on the
  // PATCH of every kind, so kubectl leaves validation to the server
  // (fieldValidation=Strict) instead of validating against schemas.
  if (path == "/openapi/v3") {
    json paths = json::object();
    for (const auto& t : types_) {
      const std::string gv = t->group.empty() ? "api/" + t->version : "apis/" + t->ApiVersion();
      paths[gv] = {{"serverRelativeURL", fmt::format("/openapi/v3/{}?hash={}", gv, rv_)}};
    }
    return {200, {{"paths", paths}}};
  }
  if (path.starts_with("/openapi/v3/")) {
    const std::string gv = path.substr(std::string("/openapi/v3/").size());
    json paths = json::object();
    for (const auto& t : types_) {
      if ((t->group.empty() ? "api/" + t->version : "apis/" + t->ApiVersion()) != gv) continue;
      const std::string item = fmt::format(
          "/{}/{}{}/{{name}}", gv, t->namespaced ? "namespaces/{namespace}/" : "", t->plural);
      json op = {
          {"x-kubernetes-group-version-kind",
           {{"group", t->group}, {"version", t->version}, {"kind", t->kind}}},
          {"parameters",
           json::array(
               {{{"name", "fieldValidation"}, {"in", "query"}, {"schema", {{"type", "string"}}}}})},
          {"responses", {{"200", {{"description", "OK"}}}}}};
      paths[item] = {{"patch", op}};
    }
    if (paths.empty()) return {404, Status(404, "NotFound", "no such group version")};
    return {200,
            {{"openapi", "3.0.0"},
             {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
             {"paths", paths},
             {"components", {{"schemas", json::object()}}}}};
  }
  std::vector<std::string> segs = Split(path);
  std::string group, version;
  size_t at = 0;
  if (segs.size() >= 2 && segs[0] == "api") {
    version = segs[1];
    at = 2;
  } else if (segs.size() >= 3 && segs[0] == "apis") {
    group = segs[1];
    version = segs[2];
    at = 3;
  } else {
    return {404, Status(404, "NotFound", "the server could not find the requested resource")};
  }
  if (segs.size() == at) {
    json d = Discovery(group, version);
    if (d["resources"].empty()) return {404, Status(404, "NotFound", "no such group version")};
    return {200, d};
  }
  std::vector<std::string> rest(segs.begin() + static_cast<long>(at), segs.end());
  std::string ns;
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  const std::string plural = rest[0];
  const std::string name = rest.size() > 1 ? rest[1] : "";
  const std::string sub = rest.size() > 2 ? rest[2] : "";
  const Type* type = FindType(group, version, plural);
  if (type == nullptr) {
    return {404, Status(404, "NotFound", "the server could not find the requested resource")};
  }
  if (count)
    ++counts_[fmt::format("{} {}{}", method == "GET" && name.empty() ? "LIST" : method, type->Id(),
                          sub.empty() ? "" : "/" + sub)];
  json input;
  if (!body.empty()) {
    input = json::parse(body, nullptr, false);
    if (input.is_discarded()) return {400, Status(400, "BadRequest", "the body is not JSON")};
  }
  auto& bucket = objects_[type->Id()];
  if (method == "GET" && name.empty()) {
    json items = json::array();
    for (const auto& [k, o] : bucket) {
      if (!ns.empty() && Meta(o, "namespace") != ns) continue;
      if (!LabelsMatch(o, Param(params, "labelSelector")) ||
          !FieldsMatch(o, Param(params, "fieldSelector"))) {
        continue;
      }
      items.push_back(o);
    }
    if (table) return {200, TableOf(*type, items.get<std::vector<json>>(), std::to_string(rv_))};
    return {200,
            {{"kind", type->kind + "List"},
             {"apiVersion", type->ApiVersion()},
             {"metadata", {{"resourceVersion", std::to_string(rv_)}}},
             {"items", items}}};
  }
  const std::string key = KeyOf(type->namespaced ? ns : "", name);
  if (method == "GET") {
    auto it = bucket.find(key);
    if (it == bucket.end()) {
      return {404, Status(404, "NotFound", fmt::format("{} \"{}\" not found", type->Id(), name))};
    }
    if (table) return {200, TableOf(*type, {it->second}, std::to_string(rv_))};
    return {200, it->second};
  }
  const bool binding = (type->kind == "Pod" && sub == "binding") || type->kind == "Binding";
  if (method == "POST" && binding) {
    const std::string pod = type->kind == "Binding" ? Meta(input, "name") : name;
    const std::string node = input.value("target", json::object()).value("name", "");
    auto& pods = objects_["pods"];
    auto it = pods.find(KeyOf(ns, pod));
    if (it == pods.end()) {
      return {404, Status(404, "NotFound", fmt::format("pods \"{}\" not found", pod))};
    }
    const std::string bound = it->second.value("spec", json::object()).value("nodeName", "");
    if (!bound.empty()) {
      return {409,
              Status(409, "Conflict",
                     fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": pod {} "
                                 "is already assigned to node \"{}\"",
                                 pod, pod, bound))};
    }
    if (node.empty()) return {422, Status(422, "Invalid", "target.name: Required value")};
    it->second["spec"]["nodeName"] = node;
    json& conds = it->second["status"]["conditions"];
    if (!conds.is_array()) conds = json::array();
    conds.push_back({{"type", "PodScheduled"}, {"status", "True"}});
    it->second["metadata"]["resourceVersion"] = std::to_string(++rv_);
    RecordLocked(*FindType("pods"), "MODIFIED", it->second);
    return {201, {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Success"}, {"code", 201}}};
  }
  if (method == "POST") {
    if (!name.empty()) return {405, Status(405, "MethodNotAllowed", "POST to an object")};
    return CreateLocked(*type, type->namespaced ? ns : "", input);
  }
  if (!sub.empty() && sub != "status") {
    return {404, Status(404, "NotFound", "the server could not find the requested resource")};
  }
  if (method == "PUT") {
    if (Meta(input, "name") != name) {
      return {400, Status(400, "BadRequest", "the name of the object does not match the URL")};
    }
    return UpdateLocked(*type, type->namespaced ? ns : "", name, input, sub == "status", true);
  }
  if (method == "PATCH") {
    auto it = bucket.find(key);
    if (it == bucket.end()) {
      return {404, Status(404, "NotFound", fmt::format("{} \"{}\" not found", type->Id(), name))};
    }
    json patched;
    if (content_type.find("json-patch") != std::string::npos) {
      try {
        patched = it->second.patch(input);
      } catch (const json::exception& e) {
        return {422, Status(422, "Invalid", e.what())};
      }
    } else {
      patched = it->second;
      patched.merge_patch(input);  // merge and strategic merge (as merge)
    }
    // A patch conflicts only if it names a resourceVersion.
    const std::string given = input.is_object() ? Meta(input, "resourceVersion") : "";
    patched["metadata"]["resourceVersion"] =
        given.empty() ? Meta(it->second, "resourceVersion") : given;
    return UpdateLocked(*type, type->namespaced ? ns : "", name, patched, sub == "status", true);
  }
  if (method == "DELETE") {
    std::optional<int64_t> grace;
    std::string propagation = "Background";
    if (input.is_object()) {
      if (input.contains("gracePeriodSeconds") && input["gracePeriodSeconds"].is_number_integer()) {
        grace = input["gracePeriodSeconds"].get<int64_t>();
      }
      propagation = input.value("propagationPolicy", propagation);
    }
    if (!Param(params, "gracePeriodSeconds").empty()) {
      grace = std::stoll(Param(params, "gracePeriodSeconds"));
    }
    if (!Param(params, "propagationPolicy").empty())
      propagation = Param(params, "propagationPolicy");
    return DeleteLocked(*type, type->namespaced ? ns : "", name, grace, propagation);
  }
  return {405, Status(405, "MethodNotAllowed", method + " is not supported")};
}

void TestApiServer::Serve(const std::string& method, const void* request, void* response) {
  const auto& req = *static_cast<const httplib::Request*>(request);
  auto& res = *static_cast<httplib::Response*>(response);
  const bool resource_path = req.path.starts_with("/api/") || req.path.starts_with("/apis/");
  const std::string watch = Param(req.params, "watch");
  const bool is_watch = method == "GET" && (watch == "true" || watch == "1");
  // kubectl sends no credentials over plain HTTP (client-go keeps tokens
  // for TLS): an absent header is the insecure local port, a wrong one is
  // refused.
  const std::string auth = req.get_header_value("Authorization");
  if (!auth.empty() && auth != "Bearer " + options_.token) {
    res.status = 401;
    res.set_content(Status(401, "Unauthorized", "Unauthorized").dump(), "application/json");
    return;
  }
  // Faults, on resource requests other than discovery and watches.
  if (resource_path && !is_watch &&
      Split(req.path).size() > (req.path.starts_with("/api/") ? 2u : 3u)) {
    double draw_error = 0, draw_timeout = 0, delay = 0;
    ApiFaults f;
    {
      std::lock_guard lock(mu_);
      f = faults_;
      std::uniform_real_distribution<double> u(0, 1);
      draw_error = u(rng_);
      draw_timeout = u(rng_);
      delay = f.timeout_delay_seconds;
    }
    if (draw_error < f.error_rate) {
      res.status = 500;
      res.set_content(Status(500, "InternalError", "injected fault").dump(), "application/json");
      return;
    }
    if (draw_timeout < f.timeout_rate) {
      std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      res.status = 504;
      res.set_content(Status(504, "Timeout", "injected timeout").dump(), "application/json");
      return;
    }
  }
  if (!is_watch) {
    Reply r = Handle(method, req.path, req.params, req.body, req.get_header_value("Content-Type"),
                     true, req.get_header_value("Accept").find("as=Table") != std::string::npos);
    res.status = r.status;
    res.set_content(r.body.dump(), "application/json");
    return;
  }
  // A watch: resolve the type, then stream.
  std::vector<std::string> segs = Split(req.path);
  std::string group, version;
  size_t at = 2;
  if (segs.size() >= 2 && segs[0] == "api") {
    version = segs[1];
  } else if (segs.size() >= 3) {
    group = segs[1];
    version = segs[2];
    at = 3;
  }
  std::vector<std::string> rest(segs.begin() + static_cast<long>(std::min(at, segs.size())),
                                segs.end());
  auto w = std::make_shared<Watch>();
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    w->ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  {
    std::lock_guard lock(mu_);
    w->type = rest.size() == 1 ? FindType(group, version, rest[0]) : nullptr;
    if (w->type == nullptr) {
      res.status = 404;
      res.set_content(Status(404, "NotFound", "no such resource").dump(), "application/json");
      return;
    }
    ++counts_["WATCH " + w->type->Id()];
    w->labels = Param(req.params, "labelSelector");
    w->fields = Param(req.params, "fieldSelector");
    w->bookmarks = Param(req.params, "allowWatchBookmarks") == "true";
    w->table = req.get_header_value("Accept").find("as=Table") != std::string::npos;
    w->drop_epoch = drop_epoch_;
    const auto now = std::chrono::steady_clock::now();
    double limit = 1800;
    if (!Param(req.params, "timeoutSeconds").empty())
      limit = std::stod(Param(req.params, "timeoutSeconds"));
    if (faults_.watch_cut_seconds > 0) limit = std::min(limit, faults_.watch_cut_seconds);
    w->deadline = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(limit));
    w->last_sent = now;
    const std::string rv = Param(req.params, "resourceVersion");
    const int64_t from = rv.empty() ? 0 : std::stoll(rv);
    const bool gone_fault = faults_.gone_on_resume && from > 0 && !gone_sent_[w->type->Id()];
    if (gone_fault) gone_sent_[w->type->Id()] = true;
    if (from > 0 && (from < oldest_kept_ - 1 || gone_fault)) {
      w->pending.push_back(json({{"type", "ERROR"},
                                 {"object", Status(410, "Expired",
                                                   fmt::format("too old resource version: {} ({})",
                                                               from, oldest_kept_ - 1))}})
                               .dump());
      w->end_after_pending = true;
    } else if (from == 0) {
      for (const auto& [k, o] : objects_[w->type->Id()]) {
        if (!w->ns.empty() && Meta(o, "namespace") != w->ns) continue;
        if (!LabelsMatch(o, w->labels) || !FieldsMatch(o, w->fields)) continue;
        w->visible.insert(k);
        w->pending.push_back(
            json({{"type", "ADDED"},
                  {"object", w->table ? TableOf(*w->type, {o}, Meta(o, "resourceVersion")) : o}})
                .dump());
      }
      w->cursor = rv_;
    } else {
      w->cursor = from;
      // What the watcher saw at `from` is what matched then: objects not
      // changed since as they are now; for the others, the first event
      // after `from` tells (ADDED: absent then; else its object, as close
      // to that state as the history goes).
      std::map<std::string, const Event*> first;
      for (const Event& e : history_) {
        if (e.rv <= from || e.resource != w->type->Id()) continue;
        first.emplace(KeyOf(Meta(e.object, "namespace"), Meta(e.object, "name")), &e);
      }
      auto matches = [&](const json& o) {
        return (w->ns.empty() || Meta(o, "namespace") == w->ns) && LabelsMatch(o, w->labels) &&
               FieldsMatch(o, w->fields);
      };
      for (const auto& [k, o] : objects_[w->type->Id()]) {
        if (!first.contains(k) && matches(o)) w->visible.insert(k);
      }
      for (const auto& [k, e] : first) {
        if (e->type != "ADDED" && matches(e->object)) w->visible.insert(k);
      }
    }
  }
  res.status = 200;
  // "stream=watch" as the real server; it also keeps cpp-httplib from
  // gzipping the stream for clients that accept gzip (Go's do), which would
  // hold events back in the compressor.
  res.set_chunked_content_provider("application/json;stream=watch", [this, w](
                                                                        size_t,
                                                                        httplib::DataSink& sink) {
    auto send = [&](const std::string& line) {
      return sink.write(line.data(), line.size()) && sink.write("\n", 1);
    };
    for (const std::string& line : w->pending) {
      if (!send(line)) return false;
    }
    w->pending.clear();
    if (w->end_after_pending) {
      sink.done();
      return true;
    }
    std::vector<std::string> lines;
    bool end = false;
    {
      std::unique_lock lock(mu_);
      const auto bookmark_at =
          w->last_sent + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(options_.bookmark_interval_seconds));
      changed_.wait_until(lock, std::min(w->deadline, bookmark_at), [&] {
        return stopping_ || drop_epoch_ != w->drop_epoch ||
               (!history_.empty() && history_.back().rv > w->cursor);
      });
      if (drop_epoch_ != w->drop_epoch) {
        sink.done();
        return true;
      }
      if (stopping_ || std::chrono::steady_clock::now() >= w->deadline) end = true;
      if (w->cursor < oldest_kept_ - 1) {
        // Fell behind the kept history while connected.
        lines.push_back(json({{"type", "ERROR"},
                              {"object", Status(410, "Expired", "too old resource version")}})
                            .dump());
        end = true;
      } else {
        for (const Event& e : history_) {
          if (e.rv <= w->cursor) continue;
          w->cursor = e.rv;
          if (e.resource != w->type->Id()) continue;
          if (!w->ns.empty() && Meta(e.object, "namespace") != w->ns) continue;
          const std::string k = KeyOf(Meta(e.object, "namespace"), Meta(e.object, "name"));
          const bool match = LabelsMatch(e.object, w->labels) && FieldsMatch(e.object, w->fields);
          std::string type = e.type;
          if (type == "DELETED") {
            if (!w->visible.erase(k)) continue;
          } else if (match) {
            type = w->visible.insert(k).second ? "ADDED" : "MODIFIED";
          } else if (w->visible.erase(k)) {
            type = "DELETED";
          } else {
            continue;
          }
          lines.push_back(
              json({{"type", type},
                    {"object",
                     w->table ? TableOf(*w->type, {e.object}, std::to_string(e.rv)) : e.object}})
                  .dump());
        }
        if (lines.empty() && !end && w->bookmarks &&
            std::chrono::steady_clock::now() >= bookmark_at) {
          lines.push_back(json({{"type", "BOOKMARK"},
                                {"object",
                                 {{"kind", w->type->kind},
                                  {"apiVersion", w->type->ApiVersion()},
                                  {"metadata", {{"resourceVersion", std::to_string(w->cursor)}}}}}})
                              .dump());
        }
      }
    }
    if (!lines.empty()) w->last_sent = std::chrono::steady_clock::now();
    for (const std::string& line : lines) {
      if (!send(line)) return false;
    }
    if (end || !sink.is_writable()) {
      sink.done();
    }
    return true;
  });
}

void TestApiServer::Route() {
  const char* pattern = R"((/.*))";
  server_->Get(pattern,
               [this](const httplib::Request& q, httplib::Response& r) { Serve("GET", &q, &r); });
  server_->Post(pattern,
                [this](const httplib::Request& q, httplib::Response& r) { Serve("POST", &q, &r); });
  server_->Put(pattern,
               [this](const httplib::Request& q, httplib::Response& r) { Serve("PUT", &q, &r); });
  server_->Patch(
      pattern, [this](const httplib::Request& q, httplib::Response& r) { Serve("PATCH", &q, &r); });
  server_->Delete(pattern, [this](const httplib::Request& q, httplib::Response& r) {
    Serve("DELETE", &q, &r);
  });
}

core::Status TestApiServer::Start() {
  server_ = std::make_unique<httplib::Server>();
  server_->new_task_queue = [] { return new httplib::ThreadPool(64); };
  Route();
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) return core::Errorf("test API server: cannot listen on 127.0.0.1");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return {};
}

void TestApiServer::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    changed_.notify_all();
  }
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

core::Result<json> TestApiServer::Create(const std::string& resource, const std::string& ns,
                                         json object) {
  std::lock_guard lock(mu_);
  const Type* t = FindType(resource);
  if (t == nullptr) return core::Errorf("no resource {}", resource);
  Reply r = CreateLocked(*t, ns, std::move(object));
  if (r.status >= 300) return core::Errorf("{}", r.body.value("message", ""));
  return r.body;
}

core::Result<json> TestApiServer::Get(const std::string& resource, const std::string& ns,
                                      const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = objects_.find(resource);
  if (it == objects_.end() || !it->second.contains(KeyOf(ns, name))) {
    return core::Errorf("{} {} not found", resource, KeyOf(ns, name));
  }
  return it->second.at(KeyOf(ns, name));
}

std::vector<json> TestApiServer::List(const std::string& resource, const std::string& ns) const {
  std::lock_guard lock(mu_);
  std::vector<json> out;
  auto it = objects_.find(resource);
  if (it == objects_.end()) return out;
  for (const auto& [k, o] : it->second) {
    if (ns.empty() || Meta(o, "namespace") == ns) out.push_back(o);
  }
  return out;
}

core::Result<json> TestApiServer::Update(const std::string& resource, const std::string& ns,
                                         json object) {
  std::lock_guard lock(mu_);
  const Type* t = FindType(resource);
  if (t == nullptr) return core::Errorf("no resource {}", resource);
  const std::string name = Meta(object, "name");
  if (Meta(object, "resourceVersion").empty() && objects_[t->Id()].contains(KeyOf(ns, name))) {
    object["metadata"]["resourceVersion"] =
        Meta(objects_[t->Id()][KeyOf(ns, name)], "resourceVersion");
  }
  Reply r = UpdateLocked(*t, ns, name, std::move(object), false, false);
  if (r.status >= 300) return core::Errorf("{}", r.body.value("message", ""));
  return r.body;
}

core::Result<json> TestApiServer::UpdateStatus(const std::string& resource, const std::string& ns,
                                               json object) {
  std::lock_guard lock(mu_);
  const Type* t = FindType(resource);
  if (t == nullptr) return core::Errorf("no resource {}", resource);
  const std::string name = Meta(object, "name");
  object["metadata"]["resourceVersion"] = "";
  if (objects_[t->Id()].contains(KeyOf(ns, name))) {
    object["metadata"]["resourceVersion"] =
        Meta(objects_[t->Id()][KeyOf(ns, name)], "resourceVersion");
  }
  Reply r = UpdateLocked(*t, ns, name, std::move(object), true, false);
  if (r.status >= 300) return core::Errorf("{}", r.body.value("message", ""));
  return r.body;
}

core::Status TestApiServer::Delete(const std::string& resource, const std::string& ns,
                                   const std::string& name, std::optional<int64_t> grace) {
  std::lock_guard lock(mu_);
  const Type* t = FindType(resource);
  if (t == nullptr) return core::Errorf("no resource {}", resource);
  Reply r = DeleteLocked(*t, ns, name, grace, "Background");
  if (r.status >= 300) return core::Errorf("{}", r.body.value("message", ""));
  return {};
}

core::Status TestApiServer::ApplyManifest(const std::string& text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    return core::Errorf("manifest: {}", e.what());
  }
  for (const YAML::Node& doc : docs) {
    if (!doc || doc.IsNull()) continue;
    json object = YamlToJson(doc);
    const std::string api = object.value("apiVersion", "");
    const std::string kind = object.value("kind", "");
    const Type* type = nullptr;
    {
      std::lock_guard lock(mu_);
      for (const auto& t : types_) {
        if (t->ApiVersion() == api && t->kind == kind) type = t.get();
      }
    }
    if (type == nullptr) return core::Errorf("manifest: no resource for {} {}", api, kind);
    auto r = Create(type->Id(), type->namespaced ? Meta(object, "namespace") : "", object);
    if (!r) return std::unexpected(r.error());
  }
  return {};
}

}  // namespace dlsched::testing
