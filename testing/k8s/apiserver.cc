#include "k8s/apiserver.h"

#include <httplib.h>

#include <sys/socket.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "k8s/apiserver_internal.h"

// The test API server's resource types (built in, or from a CRD), its
// start and stop, and the store's direct interface (Create, Get, ...).
// Requests: apiserver_http.cc; the store's writes: apiserver_store.cc;
// watches: apiserver_watch.cc; discovery: apiserver_discovery.cc.

namespace dlsched::testing {

namespace {

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

// cpp-httplib's server, with the listen backlog a real server has.
// Debian's libcpp-httplib (0.11.4) is built with a backlog of 5
// (CPPHTTPLIB_LISTEN_BACKLOG, compiled into the library): with more
// connections arriving at once the kernel drops their SYNs, and each such
// client waits a second for its retry. listen() again on the bound socket
// sets the backlog (Linux), here to SOMAXCONN (capped by
// net.core.somaxconn).
class HttpServer : public httplib::Server {
 public:
  bool ListenBacklog(int backlog) { return ::listen(svr_sock_, backlog) == 0; }
};

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

}  // namespace

TestApiServer::TestApiServer() : TestApiServer(Options{}) {}

TestApiServer::TestApiServer(Options options)
    : options_(std::move(options)), write_latency_(options_.write_latency_seconds) {
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
  // What a TrainingJob's runPolicy.schedulingPolicy.priorityClass names.
  types_.push_back(Builtin("scheduling.k8s.io", "v1", "priorityclasses", "priorityclass",
                           "PriorityClass", false, {}, {"pc"}));
  types_.push_back(Builtin("events.k8s.io", "v1", "events", "event", "Event", true, {}, {"ev"}));
  types_.push_back(Builtin("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                           "customresourcedefinition", "CustomResourceDefinition", false,
                           {"status"}, {"crd", "crds"}));
  // Kubernetes' own OpenAPI definitions of the built-in kinds
  // (openapi/definitions.json); a CRD's kinds get their openAPIV3Schema.
  const std::map<std::string, std::string> definitions = {
      {"pods", "io.k8s.api.core.v1.Pod"},
      {"nodes", "io.k8s.api.core.v1.Node"},
      {"services", "io.k8s.api.core.v1.Service"},
      {"events", "io.k8s.api.core.v1.Event"},
      {"namespaces", "io.k8s.api.core.v1.Namespace"},
      {"configmaps", "io.k8s.api.core.v1.ConfigMap"},
      {"bindings", "io.k8s.api.core.v1.Binding"},
      {"leases.coordination.k8s.io", "io.k8s.api.coordination.v1.Lease"},
      {"jobs.batch", "io.k8s.api.batch.v1.Job"},
      {"events.events.k8s.io", "io.k8s.api.events.v1.Event"}};
  for (auto& t : types_) {
    if (auto it = definitions.find(t->Id()); it != definitions.end()) t->definition = it->second;
  }
  // The namespaces a new cluster has.
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    CreateLocked(*FindType("namespaces"), "", {{"metadata", {{"name", ns}}}});
  }
}

TestApiServer::~TestApiServer() { Stop(); }

std::pair<int, std::string> TestApiServer::Kubectl(const std::string& kubeconfig,
                                                   const std::string& home,
                                                   const std::string& args) {
  const std::string cmd =
      fmt::format("HOME='{}' timeout 60 kubectl --kubeconfig '{}' --cache-dir '{}/cache' {} 2>&1",
                  home, kubeconfig, home, args);
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

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
    t->schema = v.value("schema", json::object()).value("openAPIV3Schema", json());
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

void TestApiServer::FailNext(const std::string& request, int status, int times,
                             int retry_after_seconds) {
  std::lock_guard lock(mu_);
  fail_next_[request] = Injected{status, times, retry_after_seconds};
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

void TestApiServer::SetWriteLatency(double seconds) {
  std::lock_guard lock(mu_);
  write_latency_ = seconds;
}

int TestApiServer::DelayedWrites() const {
  std::lock_guard lock(mu_);
  return delayed_writes_;
}

void TestApiServer::Compact() {
  std::lock_guard lock(mu_);
  for (auto& [id, log] : logs_) {
    if (!log.events.empty()) log.trimmed_through = log.events.back()->rv;
    log.events.clear();
  }
  history_.clear();
  oldest_kept_ = rv_ + 1;
}

void TestApiServer::DropWatches() {
  std::lock_guard lock(mu_);
  ++drop_epoch_;
  for (auto& [id, log] : logs_) log.changed.notify_all();
}

std::map<std::string, int> TestApiServer::RequestCounts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

std::vector<TestApiServer::Write> TestApiServer::Writes() const {
  std::lock_guard lock(mu_);
  return writes_;
}

size_t TestApiServer::Connections() const {
  std::lock_guard lock(mu_);
  return connections_.size();
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
  auto server = std::make_unique<HttpServer>();
  HttpServer& http = *server;
  server_ = std::move(server);
  // A thread serves one connection at a time, for as long as it is kept
  // alive (and a watch for as long as it streams).
  server_->new_task_queue = [] { return new httplib::ThreadPool(128); };
  // An answer's headers and body go in two writes: with Nagle's algorithm
  // the body waits for the client's delayed ACK, 40 ms a request. Set on
  // the listening socket, which the accepted ones inherit (Linux).
  server_->set_tcp_nodelay(true);
  // Any number of requests on a connection (cpp-httplib closes it after
  // 5 by default; a real server does not), until it is idle for the
  // keep-alive timeout.
  server_->set_keep_alive_max_count(std::numeric_limits<size_t>::max());
  Route();
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) return core::Errorf("test API server: cannot listen on 127.0.0.1");
  if (!http.ListenBacklog(SOMAXCONN)) {
    return core::Errorf("test API server: cannot set the listen backlog");
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return {};
}

void TestApiServer::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (auto& [id, log] : logs_) log.changed.notify_all();
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

size_t TestApiServer::Count(const std::string& resource) const {
  std::lock_guard lock(mu_);
  auto it = objects_.find(resource);
  return it == objects_.end() ? 0 : it->second.size();
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
    DLSCHED_TRY_LET(r,
                    Create(type->Id(), type->namespaced ? Meta(object, "namespace") : "", object));
  }
  return {};
}

}  // namespace dlsched::testing
