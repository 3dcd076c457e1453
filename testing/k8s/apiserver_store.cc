#include "k8s/apiserver.h"

#include <algorithm>

#include <fmt/format.h>

#include "dlsched/k8s/objects.h"
#include "k8s/apiserver_internal.h"

// The test API server's store: objects created, updated and deleted under
// one resourceVersion counter, each change recorded for the watches;
// graceful deletion, finalizers, and garbage collection by
// ownerReferences, through indexes kept with every change (IndexLocked):
// objects by uid, each owner's dependants, the objects being deleted in
// the foreground. Deleting an owner costs its dependants, not the store.

namespace dlsched::testing {

namespace {

// The name rules the real server applies, as details.causes (empty when
// the names are valid): a Service's name is a DNS-1035 label, a
// Namespace's a DNS-1123 label, any other object's a DNS-1123 subdomain; a
// Pod's spec.hostname and spec.subdomain are DNS-1123 labels.
json NameCauses(const std::string& kind, const json& object) {
  json causes = json::array();
  auto check = [&](const std::string& field, const std::string& value,
                   std::optional<std::string> (*rule)(std::string_view)) {
    if (auto problem = rule(value)) {
      causes.push_back({{"reason", "FieldValueInvalid"}, {"message", *problem}, {"field", field}});
    }
  };
  const std::string name = Meta(object, "name");
  if (kind == "Service") {
    check("metadata.name", name, k8s::Dns1035LabelProblem);
  } else if (kind == "Namespace") {
    check("metadata.name", name, k8s::Dns1123LabelProblem);
  } else if (kind != "CustomResourceDefinition") {  // <plural>.<group>, checked by its own rules
    check("metadata.name", name, k8s::Dns1123SubdomainProblem);
  }
  if (kind != "Pod") return causes;
  const json spec = object.value("spec", json::object());
  for (const char* field : {"hostname", "subdomain"}) {
    if (spec.is_object() && spec.contains(field) && spec[field].is_string()) {
      check(std::string("spec.") + field, spec[field].get<std::string>(), k8s::Dns1123LabelProblem);
    }
  }
  return causes;
}

// Sets what a real server defaults on a new pod (SetDefaults_Pod,
// SetDefaults_PodSpec, SetDefaults_Container, and the admission plugins
// Priority, ServiceAccount and DefaultTolerationSeconds) where unset.
void DefaultPod(json& pod) {
  json& spec = pod["spec"];
  if (!spec.is_object()) spec = json::object();
  auto set = [](json& o, const char* k, json v) {
    if (!o.contains(k)) o[k] = std::move(v);
  };
  set(spec, "restartPolicy", "Always");
  set(spec, "dnsPolicy", "ClusterFirst");
  set(spec, "terminationGracePeriodSeconds", 30);
  set(spec, "schedulerName", "default-scheduler");
  set(spec, "securityContext", json::object());
  set(spec, "enableServiceLinks", true);
  set(spec, "serviceAccountName", "default");
  set(spec, "serviceAccount", spec["serviceAccountName"]);
  set(spec, "priority", 0);
  set(spec, "preemptionPolicy", "PreemptLowerPriority");
  for (const char* key : {"containers", "initContainers"}) {
    if (!spec.contains(key) || !spec[key].is_array()) continue;
    for (json& c : spec[key]) {
      if (!c.is_object()) continue;
      const std::string image = c.value("image", "");
      const size_t slash = image.rfind('/');
      const std::string last = slash == std::string::npos ? image : image.substr(slash + 1);
      const bool latest = image.find('@') == std::string::npos &&
                          (last.find(':') == std::string::npos || last.ends_with(":latest"));
      set(c, "imagePullPolicy", latest ? "Always" : "IfNotPresent");
      set(c, "terminationMessagePath", "/dev/termination-log");
      set(c, "terminationMessagePolicy", "File");
      set(c, "resources", json::object());
      if (c.contains("ports") && c["ports"].is_array()) {
        for (json& port : c["ports"]) {
          if (port.is_object()) set(port, "protocol", "TCP");
        }
      }
    }
  }
  json& tolerations = spec["tolerations"];
  if (!tolerations.is_array()) tolerations = json::array();
  for (const char* taint : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
    bool has = false;
    for (const json& t : tolerations) has = has || t.value("key", "") == taint;
    if (!has) {
      tolerations.push_back({{"key", taint},
                             {"operator", "Exists"},
                             {"effect", "NoExecute"},
                             {"tolerationSeconds", 300}});
    }
  }
}

// What a real server defaults on a new Service: ClusterIP, no session
// affinity, each port TCP to the same target port.
void DefaultService(json& service) {
  json& spec = service["spec"];
  if (!spec.is_object()) spec = json::object();
  if (!spec.contains("type")) spec["type"] = "ClusterIP";
  if (!spec.contains("sessionAffinity")) spec["sessionAffinity"] = "None";
  if (spec.contains("ports") && spec["ports"].is_array()) {
    for (json& port : spec["ports"]) {
      if (!port.is_object()) continue;
      if (!port.contains("protocol")) port["protocol"] = "TCP";
      if (!port.contains("targetPort") && port.contains("port")) port["targetPort"] = port["port"];
    }
  }
}

// A Status as kube-apiserver writes one for a field.ErrorList: 403
// Forbidden or 404 NotFound with the object's details.
json Refusal(int code, const std::string& reason, const std::string& message,
             const std::string& kind, const std::string& name, json causes = nullptr) {
  json status = Status(code, reason, message);
  status["details"] = {{"name", name}, {"kind", kind}};
  if (!causes.is_null()) status["details"]["causes"] = std::move(causes);
  return status;
}

}  // namespace

namespace {

// metadata.<k> of `object` if it is an array, else null.
const json* MetaArray(const json& object, const char* k) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return nullptr;
  const auto it = meta->find(k);
  return it == meta->end() || !it->is_array() ? nullptr : &*it;
}

bool HasForegroundFinalizer(const json& object) {
  const json* f = MetaArray(object, "finalizers");
  return f != nullptr && std::find(f->begin(), f->end(), "foregroundDeletion") != f->end();
}

// The owners' uids an object's ownerReferences name.
std::vector<std::string> OwnerUids(const json& object) {
  std::vector<std::string> uids;
  if (const json* refs = MetaArray(object, "ownerReferences")) {
    for (const json& ref : *refs) {
      if (ref.is_object()) uids.push_back(ref.value("uid", ""));
    }
  }
  return uids;
}

}  // namespace

void TestApiServer::IndexLocked(const std::string& resource, const std::string& key,
                                const json& object, bool add) {
  if (!object.is_object()) return;
  const Ref ref{resource, key};
  if (const std::string uid = Meta(object, "uid"); !uid.empty()) {
    if (add) {
      by_uid_[uid] = ref;
    } else if (auto it = by_uid_.find(uid); it != by_uid_.end() && it->second == ref) {
      by_uid_.erase(it);
    }
  }
  for (const std::string& owner : OwnerUids(object)) {
    if (add) {
      dependants_[owner].insert(ref);
    } else if (auto it = dependants_.find(owner); it != dependants_.end()) {
      it->second.erase(ref);
      if (it->second.empty()) dependants_.erase(it);
    }
  }
  if (HasForegroundFinalizer(object)) {
    if (add) {
      foreground_[resource].insert(key);
    } else if (auto it = foreground_.find(resource); it != foreground_.end()) {
      it->second.erase(key);
      if (it->second.empty()) foreground_.erase(it);
    }
  }
}

const json* TestApiServer::FindUidLocked(const std::string& uid) const {
  const auto it = by_uid_.find(uid);
  if (it == by_uid_.end()) return nullptr;
  const auto bucket = objects_.find(it->second.first);
  if (bucket == objects_.end()) return nullptr;
  const auto o = bucket->second.find(it->second.second);
  return o == bucket->second.end() ? nullptr : &o->second;
}

bool TestApiServer::OwnerExistsLocked(const json& ref) const {
  return FindUidLocked(ref.value("uid", "")) != nullptr;
}

std::optional<TestApiServer::Reply> TestApiServer::AdmitLocked(const Type& type,
                                                               const std::string& name,
                                                               json& object,
                                                               std::vector<std::string>& warnings) {
  SchemaCheck check = CheckObject(type, object);
  if (!check.causes.empty()) return Reply{422, Invalid(type.kind, name, check.causes)};
  if (!check.unknown.empty() && field_validation_ == "Strict") {
    std::string message = "strict decoding error: ";
    for (size_t i = 0; i < check.unknown.size(); ++i) {
      message += fmt::format("{}unknown field \"{}\"", i == 0 ? "" : ", ", check.unknown[i]);
    }
    return Reply{400, Status(400, "BadRequest", message)};
  }
  if (field_validation_ != "Ignore") {
    for (const std::string& f : check.unknown) {
      warnings.push_back(fmt::format("unknown field \"{}\"", f));
    }
  }
  // OwnerReferencesPermissionEnforcement: blockOwnerDeletion needs the
  // right to update the owner's finalizers.
  if (options_.owner_references_permission_enforcement && from_http_) {
    const auto& allowed = options_.finalizers_tokens;
    const bool may = std::find(allowed.begin(), allowed.end(), requester_) != allowed.end();
    for (const json& ref : object["metadata"].value("ownerReferences", json::array())) {
      if (!ref.value("blockOwnerDeletion", false) || may) continue;
      return Reply{
          403, Refusal(403, "Forbidden",
                       fmt::format("{} \"{}\" is forbidden: cannot set blockOwnerDeletion if an "
                                   "ownerReference refers to a resource you can't set finalizers "
                                   "on: , {}",
                                   type.Id(), name, ref.dump()),
                       type.Id(), name)};
    }
  }
  return std::nullopt;
}

void TestApiServer::RecordLocked(const Type& type, const std::string& event, const json& object) {
  const int64_t rv = std::stoll(Meta(object, "resourceVersion"));
  Log& log = logs_[type.Id()];
  log.events.push_back(std::make_shared<const Event>(rv, event, object));
  history_.emplace_back(rv, &log);
  while (history_.size() > options_.history) {
    Log& oldest = *history_.front().second;
    oldest.trimmed_through = oldest.events.front()->rv;
    oldest.events.pop_front();
    history_.pop_front();
  }
  oldest_kept_ = history_.empty() ? rv_ + 1 : history_.front().first;
  latest_[type.Id()] = rv;
  log.changed.notify_all();
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
    auto& namespaces = objects_["namespaces"];
    auto it = namespaces.find(ns);
    if (it == namespaces.end() && options_.auto_create_namespaces) {
      CreateLocked(*FindType("namespaces"), "", {{"metadata", {{"name", ns}}}});
      it = namespaces.find(ns);
    }
    if (it == namespaces.end()) {
      return {404, Refusal(404, "NotFound", fmt::format("namespaces \"{}\" not found", ns),
                           "namespaces", ns)};
    }
    if (it->second["metadata"].contains("deletionTimestamp")) {
      const std::string what = Meta(object, "name");
      return {
          403,
          Refusal(403, "Forbidden",
                  fmt::format("{} \"{}\" is forbidden: unable to create new content in "
                              "namespace {} because it is being terminated",
                              type.Id(), what, ns),
                  type.Id(), what,
                  json::array({{{"reason", "NamespaceTerminating"},
                                {"message", fmt::format("namespace {} is being terminated", ns)},
                                {"field", "metadata.namespace"}}}))};
    }
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
  if (type.kind == "Pod") DefaultPod(object);
  if (type.kind == "Service") DefaultService(object);
  if (type.kind == "Namespace") {
    object["spec"] = {{"finalizers", json::array({"kubernetes"})}};
    object["status"] = {{"phase", "Active"}};
    object["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
  }
  std::vector<std::string> warnings;
  if (auto refused = AdmitLocked(type, name, object, warnings)) return *refused;
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
  IndexLocked(type.Id(), key, object, true);
  RecordLocked(type, "ADDED", object);
  // The garbage collector deletes an object whose owners are all absent
  // (a dangling ownerReference), after its creation.
  const json refs = object["metadata"].value("ownerReferences", json::array());
  bool owned = refs.empty();
  for (const json& ref : refs) owned = owned || OwnerExistsLocked(ref);
  if (!owned) DeleteLocked(type, ns, name, std::nullopt, "Background");
  return {201, object, 0, warnings};
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
  std::vector<std::string> warnings;
  if (auto refused = AdmitLocked(type, name, updated, warnings)) return *refused;
  updated["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"];
  if (updated == stored) return {200, stored, 0, warnings};  // a no-op write changes nothing
  updated["metadata"]["resourceVersion"] = std::to_string(++rv_);
  IndexLocked(type.Id(), key, it->second, false);
  it->second = updated;
  IndexLocked(type.Id(), key, it->second, true);
  RecordLocked(type, "MODIFIED", updated);
  // Finalizers all gone from an object being deleted: it goes.
  if (updated["metadata"].contains("deletionTimestamp") &&
      updated["metadata"].value("finalizers", json::array()).empty()) {
    RemoveLocked(type, key, "Background");
  }
  return {200, updated, 0, warnings};
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
  auto mark = [&](const std::optional<int64_t>& period) {
    if (meta.contains("deletionTimestamp")) return;
    meta["deletionTimestamp"] = k8s::NowRfc3339();
    if (period) meta["deletionGracePeriodSeconds"] = *period;
    if (type.kind == "Namespace") object["status"]["phase"] = "Terminating";
    meta["resourceVersion"] = std::to_string(++rv_);
    RecordLocked(type, "MODIFIED", object);
  };
  // A namespace: Terminating, its objects deleted, then it goes.
  if (type.kind == "Namespace") {
    mark(std::nullopt);
    json last = object;
    FinishNamespaceLocked(name);
    auto left = objects_["namespaces"].find(name);
    return {200, left == objects_["namespaces"].end() ? last : left->second};
  }
  const std::string uid = Meta(object, "uid");
  auto dependants = DependantsLocked(uid);
  // Orphan: the dependants lose their ownerReferences to the object, and
  // keep running.
  if (propagation == "Orphan") {
    OrphanLocked(dependants, uid);
    dependants.clear();
  }
  // Foreground: the object stays, with the foregroundDeletion finalizer,
  // until its dependants with blockOwnerDeletion are gone.
  if (propagation == "Foreground" && !dependants.empty()) {
    if (!HasForegroundFinalizer(object)) {
      IndexLocked(type.Id(), key, object, false);
      json& finalizers = meta["finalizers"];
      if (!finalizers.is_array()) finalizers = json::array();
      finalizers.push_back("foregroundDeletion");
      IndexLocked(type.Id(), key, object, true);
      if (meta.contains("deletionTimestamp")) {
        meta["resourceVersion"] = std::to_string(++rv_);
        RecordLocked(type, "MODIFIED", object);
      }
    }
    mark(std::nullopt);
    const json last = object;
    for (const auto& [t, k] : dependants) {
      auto d = objects_[t->Id()].find(k);
      if (d == objects_[t->Id()].end()) continue;
      DeleteLocked(*t, Meta(d->second, "namespace"), Meta(d->second, "name"), std::nullopt,
                   "Foreground");
    }
    FinishForegroundLocked();
    auto left = objects_[type.Id()].find(key);
    return {200, left == objects_[type.Id()].end() ? last : left->second};
  }
  const bool finalizers = !meta.value("finalizers", json::array()).empty();
  const std::string phase = object.value("status", json::object()).value("phase", "");
  const bool graceful = type.kind == "Pod" &&
                        !object.value("spec", json::object()).value("nodeName", "").empty() &&
                        phase != "Succeeded" && phase != "Failed";
  const int64_t period = grace.value_or(
      object.value("spec", json::object()).value("terminationGracePeriodSeconds", 30));
  if (finalizers || (graceful && period > 0)) {
    mark(graceful ? std::optional<int64_t>(period) : std::nullopt);
    return {200, object};
  }
  json last = object;
  RemoveLocked(type, key, propagation);
  return {200, last};
}

std::vector<std::pair<const Type*, std::string>> TestApiServer::DependantsLocked(
    const std::string& uid) {
  std::vector<std::pair<const Type*, std::string>> dependants;
  const auto it = dependants_.find(uid);
  if (it == dependants_.end()) return dependants;
  // In the order of the types, then of the keys, as the store holds them.
  for (const auto& t : types_) {
    for (auto d = it->second.lower_bound({t->Id(), ""});
         d != it->second.end() && d->first == t->Id(); ++d) {
      dependants.emplace_back(t.get(), d->second);
    }
  }
  return dependants;
}

void TestApiServer::OrphanLocked(const std::vector<std::pair<const Type*, std::string>>& dependants,
                                 const std::string& uid) {
  for (const auto& [t, k] : dependants) {
    auto it = objects_[t->Id()].find(k);
    if (it == objects_[t->Id()].end()) continue;
    json& o = it->second;
    json refs = json::array();
    for (const json& ref : o["metadata"]["ownerReferences"]) {
      if (ref.value("uid", "") != uid) refs.push_back(ref);
    }
    IndexLocked(t->Id(), k, o, false);
    o["metadata"]["ownerReferences"] = refs;
    IndexLocked(t->Id(), k, o, true);
    o["metadata"]["resourceVersion"] = std::to_string(++rv_);
    RecordLocked(*t, "MODIFIED", o);
  }
}

void TestApiServer::FinishNamespaceLocked(const std::string& ns) {
  auto& namespaces = objects_["namespaces"];
  auto it = namespaces.find(ns);
  if (it == namespaces.end() || !it->second["metadata"].contains("deletionTimestamp")) return;
  std::vector<std::pair<const Type*, std::string>> contents;
  for (const auto& t : types_) {
    if (!t->namespaced) continue;
    for (const auto& [k, o] : objects_[t->Id()]) {
      if (Meta(o, "namespace") == ns && !o["metadata"].contains("deletionTimestamp")) {
        contents.emplace_back(t.get(), k);
      }
    }
  }
  for (const auto& [t, k] : contents) {
    auto o = objects_[t->Id()].find(k);
    if (o == objects_[t->Id()].end()) continue;
    DeleteLocked(*t, ns, Meta(o->second, "name"), std::nullopt, "Background");
  }
  for (const auto& t : types_) {
    if (!t->namespaced) continue;
    for (const auto& [k, o] : objects_[t->Id()]) {
      if (Meta(o, "namespace") == ns) return;  // still terminating
    }
  }
  if (namespaces.contains(ns)) RemoveLocked(*FindType("namespaces"), ns, "Background");
}

void TestApiServer::FinishForegroundLocked() {
  // Whether an object with `uid` still has a dependant that blocks its
  // deletion (blockOwnerDeletion), from the owner index.
  auto blocked = [&](const std::string& uid) {
    const auto it = dependants_.find(uid);
    if (it == dependants_.end()) return false;
    for (const auto& [resource, key] : it->second) {
      const auto bucket = objects_.find(resource);
      if (bucket == objects_.end()) continue;
      const auto d = bucket->second.find(key);
      if (d == bucket->second.end()) continue;
      for (const json& ref : d->second["metadata"].value("ownerReferences", json::array())) {
        if (ref.value("uid", "") == uid && ref.value("blockOwnerDeletion", false)) return true;
      }
    }
    return false;
  };
  // One owner at a time, in the order of the types and keys; each change
  // can unblock another (a chain), so look again after it.
  for (bool again = true; again;) {
    again = false;
    for (const auto& t : types_) {
      const auto owners = foreground_.find(t->Id());
      if (owners == foreground_.end()) continue;
      for (const std::string& owner : owners->second) {
        auto it = objects_[t->Id()].find(owner);
        if (it == objects_[t->Id()].end() || blocked(Meta(it->second, "uid"))) continue;
        const std::string key = owner;  // `owner` goes with the index entry
        json& o = it->second;
        IndexLocked(t->Id(), key, o, false);
        json& finalizers = o["metadata"]["finalizers"];
        finalizers.erase(std::find(finalizers.begin(), finalizers.end(), "foregroundDeletion"));
        if (finalizers.empty()) o["metadata"].erase("finalizers");
        IndexLocked(t->Id(), key, o, true);
        o["metadata"]["resourceVersion"] = std::to_string(++rv_);
        RecordLocked(*t, "MODIFIED", o);
        if (!o["metadata"].contains("finalizers")) RemoveLocked(*t, key, "Background");
        again = true;
        break;
      }
      if (again) break;
    }
  }
}

void TestApiServer::RemoveLocked(const Type& type, const std::string& key,
                                 const std::string& propagation) {
  auto& bucket = objects_[type.Id()];
  auto it = bucket.find(key);
  if (it == bucket.end()) return;
  IndexLocked(type.Id(), key, it->second, false);
  json object = std::move(it->second);
  bucket.erase(it);
  object["metadata"]["resourceVersion"] = std::to_string(++rv_);
  RecordLocked(type, "DELETED", object);
  const std::string uid = Meta(object, "uid");
  if (type.kind == "CustomResourceDefinition") {
    const json spec = object.value("spec", json::object());
    const std::string group = spec.value("group", "");
    const std::string plural = spec.value("names", json::object()).value("plural", "");
    const std::string id = plural + "." + group;
    for (const auto& [k, o] : objects_[id]) IndexLocked(id, k, o, false);
    objects_.erase(id);
    std::erase_if(types_, [&](const auto& t) {
      return t->custom && t->group == group && t->plural == plural;
    });
  }
  // Garbage collection of dependents (background), or orphaning.
  const auto dependants = DependantsLocked(uid);
  if (propagation == "Orphan") {
    OrphanLocked(dependants, uid);
  } else {
    for (const auto& [t, k] : dependants) {
      auto o = objects_[t->Id()].find(k);
      if (o == objects_[t->Id()].end()) continue;
      DeleteLocked(*t, Meta(o->second, "namespace"), Meta(o->second, "name"), std::nullopt,
                   "Background");
    }
  }
  if (!finishing_) {
    finishing_ = true;
    FinishForegroundLocked();
    if (type.namespaced) FinishNamespaceLocked(Meta(object, "namespace"));
    finishing_ = false;
  }
}

}  // namespace dlsched::testing
