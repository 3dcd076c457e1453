#include "k8s/apiserver.h"

#include <fmt/format.h>

#include "dlsched/k8s/objects.h"
#include "k8s/apiserver_internal.h"

// The test API server's store: objects created, updated and deleted under
// one resourceVersion counter, each change recorded for the watches;
// graceful deletion, finalizers, and garbage collection by
// ownerReferences.

namespace dlsched::testing {

namespace {

// The name rules the real server applies to the kinds the operator
// creates, as details.causes (empty when the names are valid): a
// Service's name is a DNS-1035 label; a Pod's name a DNS-1123 subdomain,
// its spec.hostname and spec.subdomain DNS-1123 labels.
json NameCauses(const std::string& kind, const json& object) {
  json causes = json::array();
  auto check = [&](const std::string& field, const std::string& value,
                   std::optional<std::string> (*rule)(std::string_view)) {
    if (auto problem = rule(value)) {
      causes.push_back({{"reason", "FieldValueInvalid"}, {"message", *problem}, {"field", field}});
    }
  };
  const std::string name = Meta(object, "name");
  if (kind == "Service") check("metadata.name", name, k8s::Dns1035LabelProblem);
  if (kind != "Pod") return causes;
  check("metadata.name", name, k8s::Dns1123SubdomainProblem);
  const json spec = object.value("spec", json::object());
  for (const char* field : {"hostname", "subdomain"}) {
    if (spec.is_object() && spec.contains(field) && spec[field].is_string()) {
      check(std::string("spec.") + field, spec[field].get<std::string>(), k8s::Dns1123LabelProblem);
    }
  }
  return causes;
}

}  // namespace

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
  if (json causes = NameCauses(type.kind, object); !causes.empty()) {
    return {422, Invalid(type.kind, name, causes)};
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

}  // namespace dlsched::testing
