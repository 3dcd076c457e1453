#include "k8s/apiserver.h"

#include <set>

#include <fmt/format.h>

#include "k8s/apiserver_internal.h"

// The test API server's discovery: the version, the API groups and their
// resources, and OpenAPI v3 as far as kubectl's default validation asks.

namespace dlsched::testing {

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

std::optional<TestApiServer::Reply> TestApiServer::DiscoveryLocked(const std::string& path) const {
  if (path == "/version") {
    return Reply{
        200,
        {{"major", "1"}, {"minor", "32"}, {"gitVersion", "v1.32.0"}, {"platform", "linux/amd64"}}};
  }
  if (path == "/api") {
    return Reply{
        200,
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
    return Reply{200, {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}}};
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
    return Reply{200, {{"paths", paths}}};
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
    if (paths.empty()) return Reply{404, Status(404, "NotFound", "no such group version")};
    return Reply{200,
                 {{"openapi", "3.0.0"},
                  {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
                  {"paths", paths},
                  {"components", {{"schemas", json::object()}}}}};
  }
  return std::nullopt;
}

}  // namespace dlsched::testing
