#include "k8s/apiserver.h"

#include <httplib.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "k8s/apiserver_internal.h"

// The test API server's requests: authorization, injected faults and
// write latency (Serve), then discovery, or a verb on a resource (Handle):
// list, get, bind, create, update, patch, delete. Watches:
// apiserver_watch.cc.

namespace dlsched::testing {

TestApiServer::Reply TestApiServer::Handle(const std::string& method, const std::string& path,
                                           const std::multimap<std::string, std::string>& params,
                                           const std::string& body, const std::string& content_type,
                                           bool count, bool table, const std::string& token) {
  std::lock_guard lock(mu_);
  // Who asks, and how unknown fields are treated (a client that does not
  // say gets the server's default, Warn; kubectl says Strict).
  requester_ = token;
  from_http_ = true;
  field_validation_ = Param(params, "fieldValidation");
  struct Reset {
    TestApiServer* s;
    ~Reset() {
      s->from_http_ = false;
      s->requester_.clear();
      s->field_validation_.clear();
    }
  } reset{this};
  if (std::optional<Reply> r = DiscoveryLocked(path)) return *r;
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
  Call c{.method = method, .params = &params, .content_type = content_type, .table = table};
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    c.ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  const std::string plural = rest[0];
  c.name = rest.size() > 1 ? rest[1] : "";
  c.sub = rest.size() > 2 ? rest[2] : "";
  c.type = FindType(group, version, plural);
  if (c.type == nullptr) {
    return {404, Status(404, "NotFound", "the server could not find the requested resource")};
  }
  const std::string request =
      fmt::format("{} {}{}", method == "GET" && c.name.empty() ? "LIST" : method, c.type->Id(),
                  c.sub.empty() ? "" : "/" + c.sub);
  if (count) ++counts_[request];
  if (auto it = fail_next_.find(request); count && it != fail_next_.end() && it->second.times > 0) {
    --it->second.times;
    const int code = it->second.status;
    return {code,
            Status(code, code == 429 ? "TooManyRequests" : "InternalError", "injected answer"),
            code == 429 ? it->second.retry_after : 0};
  }
  if (!body.empty()) {
    c.input = json::parse(body, nullptr, false);
    if (c.input.is_discarded()) return {400, Status(400, "BadRequest", "the body is not JSON")};
  }
  return CallLocked(c);
}

TestApiServer::Reply TestApiServer::CallLocked(const Call& c) {
  const Type& type = *c.type;
  const std::string& method = c.method;
  const std::string& name = c.name;
  const std::string ns = type.namespaced ? c.ns : "";
  if (method == "GET" && name.empty()) return ListLocked(c);
  if (method == "GET") {
    auto& bucket = objects_[type.Id()];
    auto it = bucket.find(KeyOf(ns, name));
    if (it == bucket.end()) {
      return {404, Status(404, "NotFound", fmt::format("{} \"{}\" not found", type.Id(), name))};
    }
    if (c.table) return {200, TableOf(type, {it->second}, std::to_string(rv_))};
    return {200, it->second};
  }
  const bool binding = (type.kind == "Pod" && c.sub == "binding") || type.kind == "Binding";
  if (method == "POST" && binding) return BindLocked(c);
  if (method == "POST") {
    if (!name.empty()) return {405, Status(405, "MethodNotAllowed", "POST to an object")};
    return CreateLocked(type, ns, c.input);
  }
  if (!c.sub.empty() && c.sub != "status") {
    return {404, Status(404, "NotFound", "the server could not find the requested resource")};
  }
  if (method == "PUT") {
    if (Meta(c.input, "name") != name) {
      return {400, Status(400, "BadRequest", "the name of the object does not match the URL")};
    }
    return UpdateLocked(type, ns, name, c.input, c.sub == "status", true);
  }
  if (method == "PATCH") return PatchLocked(c);
  if (method == "DELETE") {
    std::optional<int64_t> grace;
    std::string propagation = "Background";
    const json& input = c.input;
    if (input.is_object()) {
      if (input.contains("gracePeriodSeconds") && input["gracePeriodSeconds"].is_number_integer()) {
        grace = input["gracePeriodSeconds"].get<int64_t>();
      }
      propagation = input.value("propagationPolicy", propagation);
    }
    if (!Param(*c.params, "gracePeriodSeconds").empty()) {
      grace = std::stoll(Param(*c.params, "gracePeriodSeconds"));
    }
    if (!Param(*c.params, "propagationPolicy").empty())
      propagation = Param(*c.params, "propagationPolicy");
    return DeleteLocked(type, ns, name, grace, propagation);
  }
  return {405, Status(405, "MethodNotAllowed", method + " is not supported")};
}

TestApiServer::Reply TestApiServer::ListLocked(const Call& c) {
  const Type& type = *c.type;
  // Pagination: `limit` items a page; the continue token names the list's
  // version and the key after which the next page starts. A token whose
  // version is older than the kept history is 410 Expired, as a compacted
  // etcd revision.
  const std::string label_selector = Param(*c.params, "labelSelector");
  const std::string field_selector = Param(*c.params, "fieldSelector");
  const std::string limit_param = Param(*c.params, "limit");
  const int64_t limit = limit_param.empty() ? 0 : std::stoll(limit_param);
  std::string after;
  int64_t list_rv = rv_;
  if (const std::string token = Param(*c.params, "continue"); !token.empty()) {
    const json t = json::parse(token, nullptr, false);
    if (!t.is_object() || !t.contains("rv") || !t.contains("start")) {
      return {400, Status(400, "BadRequest", "continue key is not valid")};
    }
    list_rv = t["rv"].get<int64_t>();
    after = t["start"].get<std::string>();
    if (list_rv < oldest_kept_) {
      return {410, Status(410, "Expired",
                          "The provided continue parameter is too old to display a consistent "
                          "list result. You can start a new list without the continue "
                          "parameter.")};
    }
  }
  json items = json::array();
  std::string last;
  int64_t remaining = 0;
  for (auto it = objects_[type.Id()].upper_bound(after); it != objects_[type.Id()].end(); ++it) {
    const json& o = it->second;
    if (!c.ns.empty() && Meta(o, "namespace") != c.ns) continue;
    if (!LabelsMatch(o, label_selector) || !FieldsMatch(o, field_selector)) continue;
    if (limit > 0 && static_cast<int64_t>(items.size()) == limit) {
      ++remaining;
      continue;
    }
    items.push_back(o);
    last = it->first;
  }
  json meta = {{"resourceVersion", std::to_string(list_rv)}};
  if (remaining > 0) {
    meta["continue"] = json{{"rv", list_rv}, {"start", last}}.dump();
    // Known only without selectors, as a real server says.
    if (label_selector.empty() && field_selector.empty()) meta["remainingItemCount"] = remaining;
  }
  if (c.table) {
    json table = TableOf(type, items.get<std::vector<json>>(), std::to_string(list_rv));
    table["metadata"] = meta;
    return {200, table};
  }
  return {200,
          {{"kind", type.kind + "List"},
           {"apiVersion", type.ApiVersion()},
           {"metadata", meta},
           {"items", items}}};
}

TestApiServer::Reply TestApiServer::BindLocked(const Call& c) {
  const std::string pod = c.type->kind == "Binding" ? Meta(c.input, "name") : c.name;
  if (!c.input.is_object()) return {400, Status(400, "BadRequest", "the body is not an object")};
  json binding = c.input;
  if (SchemaCheck check = CheckObject(*FindType("bindings"), binding); !check.causes.empty()) {
    return {422, Invalid("Binding", pod, check.causes)};
  }
  const std::string node = binding.value("target", json::object()).value("name", "");
  auto& pods = objects_["pods"];
  auto it = pods.find(KeyOf(c.ns, pod));
  if (it == pods.end()) {
    return {404, Status(404, "NotFound", fmt::format("pods \"{}\" not found", pod))};
  }
  const std::string bound = it->second.value("spec", json::object()).value("nodeName", "");
  if (!bound.empty()) {
    return {409, Status(409, "Conflict",
                        fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": pod {} "
                                    "is already assigned to node \"{}\"",
                                    pod, pod, bound))};
  }
  if (node.empty()) return {422, Status(422, "Invalid", "target.name: Required value")};
  it->second["spec"]["nodeName"] = node;
  // As the API server's setPodHostAndAnnotations: the Binding's annotations
  // are copied onto the pod.
  if (const json& ann = binding.value("metadata", json::object()).value("annotations", json());
      ann.is_object()) {
    for (const auto& [k, v] : ann.items()) it->second["metadata"]["annotations"][k] = v;
  }
  json& conds = it->second["status"]["conditions"];
  if (!conds.is_array()) conds = json::array();
  conds.push_back({{"type", "PodScheduled"}, {"status", "True"}});
  it->second["metadata"]["resourceVersion"] = std::to_string(++rv_);
  RecordLocked(*FindType("pods"), "MODIFIED", it->second);
  return {201, {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Success"}, {"code", 201}}};
}

TestApiServer::Reply TestApiServer::PatchLocked(const Call& c) {
  const Type& type = *c.type;
  const std::string ns = type.namespaced ? c.ns : "";
  auto& bucket = objects_[type.Id()];
  auto it = bucket.find(KeyOf(ns, c.name));
  if (it == bucket.end()) {
    return {404, Status(404, "NotFound", fmt::format("{} \"{}\" not found", type.Id(), c.name))};
  }
  const json& input = c.input;
  json patched;
  if (c.content_type.find("json-patch") != std::string::npos) {
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
  return UpdateLocked(type, ns, c.name, patched, c.sub == "status", true);
}

bool TestApiServer::InjectFault(httplib::Response& res) {
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
    return true;
  }
  if (draw_timeout < f.timeout_rate) {
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    res.status = 504;
    res.set_content(Status(504, "Timeout", "injected timeout").dump(), "application/json");
    return true;
  }
  return false;
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
      Split(req.path).size() > (req.path.starts_with("/api/") ? 2u : 3u) && InjectFault(res)) {
    return;
  }
  double latency = 0;
  {
    std::lock_guard lock(mu_);
    connections_.emplace(req.remote_addr, req.remote_port);
    if (method != "GET" && write_latency_ > 0) {
      latency = write_latency_;
      ++delayed_writes_;
    }
  }
  // The write waits, outside the store's lock (other requests go on), then
  // is applied and answered: its watch event comes no earlier than its
  // answer, as after a real server's etcd commit.
  if (latency > 0) std::this_thread::sleep_for(std::chrono::duration<double>(latency));
  if (!is_watch) {
    const std::string token = auth.starts_with("Bearer ") ? auth.substr(7) : "";
    Reply r =
        Handle(method, req.path, req.params, req.body, req.get_header_value("Content-Type"), true,
               req.get_header_value("Accept").find("as=Table") != std::string::npos, token);
    res.status = r.status;
    for (const std::string& w : r.warnings) {
      res.set_header("Warning", fmt::format("299 - {}", json(w).dump()));
    }
    if (r.retry_after > 0) res.set_header("Retry-After", std::to_string(r.retry_after));
    res.set_content(r.body.dump(), "application/json");
    if (method != "GET") {
      std::lock_guard lock(mu_);
      writes_.push_back(
          {method, req.path, req.get_header_value("User-Agent"), r.status, r.warnings});
    }
    return;
  }
  ServeWatch(req, res);
}

}  // namespace dlsched::testing
