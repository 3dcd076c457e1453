#pragma once

// What the test API server's files share (apiserver*.cc): a resource type,
// and the server's helpers on objects as JSON (apiserver_json.cc): Status
// replies, keys and metadata, label and field selectors, request paths and
// parameters, and meta.k8s.io Tables, named in dlsched::testing for those
// files alone. Test-only, as apiserver.h.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k8s/apiserver.h"

namespace dlsched::testing {

struct TestApiServer::Type {
  std::string group, version, plural, singular, kind;
  bool namespaced = true;
  bool has_status = false;
  bool custom = false;  // from a CRD
  std::vector<std::string> short_names;
  std::vector<std::string> subresources;             // "status", "binding"
  nlohmann::json columns = nlohmann::json::array();  // additionalPrinterColumns of a CRD
  // What its objects are checked against (apiserver_schema.cc): a built-in
  // kind's OpenAPI definition ("io.k8s.api.core.v1.Pod"; "" for none), a
  // custom resource's openAPIV3Schema (null for none).
  std::string definition;
  nlohmann::json schema;
  std::string Id() const { return group.empty() ? plural : plural + "." + group; }
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
};

namespace apiserver {

using nlohmann::json;
using Type = TestApiServer::Type;

// What a schema check found: causes as Invalid takes them (empty when the
// object is valid), and the unknown fields it dropped ("spec.foo").
struct SchemaCheck {
  json causes = json::array();
  std::vector<std::string> unknown;
};

// Checks `object` of `type` against its schema (apiserver_schema.cc),
// dropping what a real server's decoding drops: unknown fields (pruned),
// and null members.
SchemaCheck CheckObject(const Type& type, json& object);

// A Status object: the body of an error reply.
json Status(int code, const std::string& reason, const std::string& message);

// A 422 Invalid Status for object `name` of `kind`: the message lists the
// causes; details carry name, kind and causes ({reason, message, field}).
json Invalid(const std::string& kind, const std::string& name, const json& causes);

// An object's key in the store: "ns/name", or "name" when cluster-scoped.
std::string KeyOf(const std::string& ns, const std::string& name);

// metadata.<k> of `o` as a string, "" when absent.
std::string Meta(const json& o, const char* k);

// A label selector: "a=b,c!=d,e,!f,g in (x,y),h notin (z)" (equality,
// existence and set-based forms).
bool LabelsMatch(const json& object, const std::string& selector);

// A field selector over metadata.name, metadata.namespace, spec.nodeName,
// status.phase: "f=v,g!=w".
bool FieldsMatch(const json& object, const std::string& selector);

// A query parameter's first value, "" when absent.
std::string Param(const std::multimap<std::string, std::string>& params, const std::string& k);

// A path's segments, without empty ones.
std::vector<std::string> Split(const std::string& path);

// A meta.k8s.io/v1 Table of objects, as the server prints for `kubectl
// get`: Name, a CRD's additionalPrinterColumns (date columns as ages), and
// Age for types without columns; each row carries the object's metadata.
json TableOf(const Type& type, const std::vector<json>& items, const std::string& rv);

}  // namespace apiserver

using apiserver::CheckObject;
using apiserver::FieldsMatch;
using apiserver::Invalid;
using apiserver::json;
using apiserver::KeyOf;
using apiserver::LabelsMatch;
using apiserver::Meta;
using apiserver::Param;
using apiserver::SchemaCheck;
using apiserver::Split;
using apiserver::Status;
using apiserver::TableOf;
using apiserver::Type;

}  // namespace dlsched::testing
