#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#define VALIJSON_USE_EXCEPTIONS 1
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "k8s/apiserver_internal.h"

// The test API server's schema checks: a built-in kind's object against
// Kubernetes' own OpenAPI definitions (openapi/definitions.json, extracted
// by openapi/extract.py), a custom resource against its CRD's
// openAPIV3Schema. Debian's valijson validates; the pruning of unknown
// fields, which no JSON schema validator does, is here.

namespace dlsched::testing::apiserver {
namespace {

const json& Definitions() {
  static const json defs = [] {
    std::ifstream in(DLSCHED_K8S_OPENAPI_DEFINITIONS);
    json doc = json::parse(in, nullptr, false);
    if (doc.is_discarded()) throw std::runtime_error("cannot read the OpenAPI definitions");
    json d = doc["definitions"];
    // Go's decoders take a number or a string for these two string types
    // (intstr.IntOrString, resource.Quantity): the schema says so the way
    // OpenAPI v3 does, with x-kubernetes-int-or-string.
    for (const char* name : {"io.k8s.apimachinery.pkg.util.intstr.IntOrString",
                             "io.k8s.apimachinery.pkg.api.resource.Quantity"}) {
      d[name] = {{"x-kubernetes-int-or-string", true}};
    }
    return d;
  }();
  return defs;
}

// A schema node with its $ref followed (built-in definitions only).
const json& Resolve(const json& schema) {
  static const json kEmpty = json::object();
  if (!schema.is_object()) return kEmpty;
  if (auto it = schema.find("$ref"); it != schema.end() && it->is_string()) {
    const std::string ref = it->get<std::string>();
    const std::string name = ref.substr(ref.rfind('/') + 1);
    const json& defs = Definitions();
    auto d = defs.find(name);
    return d == defs.end() ? kEmpty : *d;
  }
  return schema;
}

std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// Drops what a real server's decoding drops: null members (but where the
// schema says nullable) and fields the schema does not know, listed in
// `unknown`. A built-in type's object without properties is kept whole
// (Go types of their own decoding); a custom resource's is pruned unless
// x-kubernetes-preserve-unknown-fields.
void Prune(json& value, const json& node, bool custom, const std::string& path,
           std::vector<std::string>& unknown) {
  const json& schema = Resolve(node);
  if (schema.value("x-kubernetes-preserve-unknown-fields", false)) return;
  if (value.is_array() && schema.contains("items")) {
    for (size_t i = 0; i < value.size(); ++i) {
      Prune(value[i], schema["items"], custom, fmt::format("{}[{}]", path, i), unknown);
    }
    return;
  }
  if (!value.is_object()) return;
  const json props = schema.value("properties", json::object());
  const json additional = schema.value("additionalProperties", json());
  const bool prunes = !props.empty() || (custom && schema.value("type", "") == "object" &&
                                         !additional.is_object() && additional != true);
  for (auto it = value.begin(); it != value.end();) {
    const std::string key = it.key();
    const std::string at = Join(path, key);
    const json* sub = nullptr;
    if (props.contains(key)) {
      sub = &props[key];
    } else if (additional.is_object()) {
      sub = &additional;
    }
    const bool nullable = sub != nullptr && Resolve(*sub).value("nullable", false);
    if (it->is_null() && !nullable) {
      it = value.erase(it);
      continue;
    }
    if (sub == nullptr && prunes) {
      unknown.push_back(at);
      it = value.erase(it);
      continue;
    }
    if (sub != nullptr) Prune(*it, *sub, custom, at, unknown);
    ++it;
  }
}

// valijson's context ("<root>", "[spec]", "[containers]", "[0]") as a
// field path ("spec.containers[0]").
std::string FieldOf(const std::vector<std::string>& context) {
  std::string field;
  for (const std::string& c : context) {
    if (c.size() < 2 || c.front() != '[') continue;
    const std::string key = c.substr(1, c.size() - 2);
    if (!key.empty() && key.find_first_not_of("0123456789") == std::string::npos) {
      field += "[" + key + "]";
    } else {
      field = Join(field, key);
    }
  }
  return field;
}

json Lookup(const json& object, const std::vector<std::string>& context) {
  const json* at = &object;
  for (const std::string& c : context) {
    if (c.size() < 2 || c.front() != '[') continue;
    const std::string key = c.substr(1, c.size() - 2);
    if (at->is_array() && key.find_first_not_of("0123456789") == std::string::npos) {
      const size_t i = std::stoul(key);
      if (i >= at->size()) return nullptr;
      at = &(*at)[i];
    } else if (at->is_object() && at->contains(key)) {
      at = &(*at)[key];
    } else {
      return nullptr;
    }
  }
  return *at;
}

// Every error as a cause in the shape of kube-apiserver's field.ErrorList:
// Required value, Unsupported value (enum), Invalid value (type, bounds).
json CausesOf(const valijson::Subschema& root, const json& object) {
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(object);
  json causes = json::array();
  if (validator.validate(root, target, &results)) return causes;
  valijson::ValidationResults::Error e;
  std::set<std::string> seen;
  while (results.popError(e)) {
    std::string field = FieldOf(e.context);
    json cause;
    const std::string missing = "Missing required property '";
    if (e.description.starts_with(missing)) {
      const std::string prop =
          e.description.substr(missing.size(), e.description.rfind('\'') - missing.size());
      cause = {{"reason", "FieldValueRequired"},
               {"message", "Required value"},
               {"field", Join(field, prop)}};
    } else if (e.description.find("enum") != std::string::npos) {
      cause = {{"reason", "FieldValueNotSupported"},
               {"message", fmt::format("Unsupported value: {}", Lookup(object, e.context).dump())},
               {"field", field}};
    } else if (e.description.starts_with("Failed to validate")) {
      continue;  // a summary of the errors reported beside it (item #i, property, child)
    } else {
      cause = {{"reason", "FieldValueInvalid"},
               {"message", fmt::format("Invalid value: {}: {}", Lookup(object, e.context).dump(),
                                       e.description)},
               {"field", field}};
    }
    if (seen.insert(cause.dump()).second) causes.push_back(cause);
  }
  return causes;
}

struct Parsed {
  json doc;
  valijson::Schema schema;
};

std::unique_ptr<Parsed> Parse(json doc) {
  auto p = std::make_unique<Parsed>();
  p->doc = std::move(doc);
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft4);
  valijson::adapters::NlohmannJsonAdapter adapter(p->doc);
  parser.populateSchema(adapter, p->schema);
  return p;
}

// The schema `make` gives, parsed once for the process under `key`.
const valijson::Subschema& Compiled(const std::string& key, const std::function<json()>& make) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Parsed>> parsed;
  std::lock_guard lock(mu);
  auto& p = parsed[key];
  if (!p) p = Parse(make());
  return p->schema;
}

}  // namespace

SchemaCheck CheckObject(const Type& type, json& object) {
  SchemaCheck check;
  if (type.custom) {
    if (!type.schema.is_object()) return check;
    // apiVersion, kind and metadata are the server's, as ObjectMeta.
    json schema = type.schema;
    json& props = schema["properties"];
    if (!props.is_object()) props = json::object();
    for (const char* k : {"apiVersion", "kind", "metadata"}) props[k] = json::object();
    props["metadata"]["x-kubernetes-preserve-unknown-fields"] = true;
    Prune(object, schema, true, "", check.unknown);
    try {
      check.causes = CausesOf(Compiled(schema.dump(), [&] { return schema; }), object);
    } catch (const std::exception&) {
      // A schema valijson cannot read is not checked.
    }
    return check;
  }
  if (type.definition.empty()) return check;
  const json ref = {{"$ref", "#/definitions/" + type.definition}};
  Prune(object, ref, false, "", check.unknown);
  check.causes = CausesOf(Compiled(type.definition,
                                   [&] {
                                     json doc = ref;
                                     doc["definitions"] = Definitions();
                                     return doc;
                                   }),
                          object);
  return check;
}

}  // namespace dlsched::testing::apiserver
