#pragma once

// A Kubernetes API server for the operator's tests (test-only code, never
// linked into dlsched): loopback HTTP, one process, in memory. It honours
// what a controller relies on, with the documented semantics of the real
// server: discovery; CRDs served from their manifest; list and watch with
// resourceVersion (one global counter), bookmarks, 410 Gone for a version
// older than the kept history; 409 Conflict on a stale write and on
// AlreadyExists; status and binding subresources; graceful pod deletion;
// garbage collection by ownerReferences (background, foreground, orphan,
// dangling owners); label (equality and set-based) and field selectors;
// paged lists (limit, continue); namespaces that must exist and are
// emptied when deleted; merge, strategic-merge (as merge) and JSON
// patches; every object written checked against Kubernetes' OpenAPI
// schemas (testing/k8s/openapi/) or its CRD's, unknown fields dropped with
// a warning or refused when Strict; pod defaulting; the name rules of the
// kinds the operator creates (a Service's name a DNS-1035 label, a Pod's a
// DNS-1123 subdomain, its spec.hostname and spec.subdomain DNS-1123
// labels: else 422 Invalid with details.causes naming the field).
// docs/operator.md has the table of what it models and what not.
// Faults can be injected: 500s and timeouts on a fraction of requests,
// watches cut, a 410 on resume, a 409 on every first write of an object,
// and a given answer to the next requests of one kind (FailNext); a
// latency on every write, as an etcd commit adds (SetWriteLatency).
//
// At scale (thousands of objects, several watches): the HTTP server keeps
// a connection alive for any number of requests, answers without Nagle's
// delay (TCP_NODELAY) and listens with the system's largest backlog; each
// resource has its own event log, and a watch wakes only for its
// resource's changes and reads the events after its position, outside the
// store's lock; garbage collection finds an owner's dependants by an
// index (owner uid -> dependants), not by a scan of every object.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dlsched/core/error.h"

namespace httplib {
class Server;
struct Request;
struct Response;
class DataSink;
}  // namespace httplib

namespace dlsched::testing {

struct ApiFaults {
  double error_rate = 0;    // non-watch requests answered 500 InternalError
  double timeout_rate = 0;  // non-watch requests that stall, then answer 504
  double timeout_delay_seconds = 1;
  double watch_cut_seconds = 0;          // watches closed after this long (0: never)
  bool gone_on_resume = false;           // a watch from a version > 0 gets 410 once per resource
  bool conflict_on_first_write = false;  // first PUT/PATCH of each object: 409
  uint64_t seed = 1;
};

class TestApiServer {
 public:
  struct Options {
    size_t history = 1000;  // events kept for watches
    double bookmark_interval_seconds = 1;
    std::string token = "test-token";
    // Namespaced objects may be created in a namespace that does not exist
    // (it is created then). Off: as a real server, 404 NotFound; the
    // server starts with default, kube-system, kube-public and
    // kube-node-lease, as a real cluster does.
    bool auto_create_namespaces = false;
    // The OwnerReferencesPermissionEnforcement admission plugin: a write
    // that sets blockOwnerDeletion on an ownerReference is refused 403
    // unless its requester may update the owner's finalizers. The
    // requester is the bearer token of the request; the tokens listed here
    // may (an RBAC rule on */finalizers, simply). Calls on the store
    // itself (Create, Update...) are the cluster's own and may.
    bool owner_references_permission_enforcement = false;
    std::vector<std::string> finalizers_tokens = {"test-token"};
    // Every write over HTTP (POST, PUT, PATCH, DELETE) waits this long
    // before it is applied and answered, as a real server's etcd commit
    // (SetWriteLatency changes it).
    double write_latency_seconds = 0;
  };
  TestApiServer();
  explicit TestApiServer(Options options);
  ~TestApiServer();

  core::Status Start();
  void Stop();
  std::string Url() const;
  void WriteKubeconfig(const std::string& path) const;
  // Runs the real kubectl with that kubeconfig, HOME and its cache under
  // `home` (a fresh cache each time), at most 60 s: its exit status (-1 if
  // killed) and its output (stdout and stderr).
  static std::pair<int, std::string> Kubectl(const std::string& kubeconfig, const std::string& home,
                                             const std::string& args);
  void SetFaults(const ApiFaults& faults);
  // The next `times` requests `request` ("VERB resource[/sub]" as
  // RequestCounts names them, e.g. "POST pods", "POST services") are
  // answered `status` with a Status body, without reaching the store; a
  // 429 carries `Retry-After: retry_after_seconds` when that is > 0.
  void FailNext(const std::string& request, int status, int times = 1, int retry_after_seconds = 0);
  // The latency every write over HTTP waits before it is applied and
  // answered (Options::write_latency_seconds); reads and watches wait none.
  void SetWriteLatency(double seconds);
  // Writes that waited the latency (those made while it was > 0).
  int DelayedWrites() const;

  // The store, bypassing faults; the same code as HTTP writes. `resource`
  // is "pods", "nodes", "trainingjobs.dlsched.io" (plural[.group]); `ns`
  // "" for cluster-scoped ones.
  core::Result<nlohmann::json> Create(const std::string& resource, const std::string& ns,
                                      nlohmann::json object);
  core::Result<nlohmann::json> Get(const std::string& resource, const std::string& ns,
                                   const std::string& name) const;
  // Every object of the resource (ns "": all namespaces), by namespace/name.
  std::vector<nlohmann::json> List(const std::string& resource, const std::string& ns = "") const;
  // How many objects of the resource there are (all namespaces), without
  // copying them.
  size_t Count(const std::string& resource) const;
  core::Result<nlohmann::json> Update(const std::string& resource, const std::string& ns,
                                      nlohmann::json object);
  core::Result<nlohmann::json> UpdateStatus(const std::string& resource, const std::string& ns,
                                            nlohmann::json object);
  core::Status Delete(const std::string& resource, const std::string& ns, const std::string& name,
                      std::optional<int64_t> grace = std::nullopt);
  // Creates every document of a YAML or JSON text (e.g. deploy/crd.yaml).
  core::Status ApplyManifest(const std::string& text);
  int64_t ResourceVersion() const;
  // The version of the resource's latest change (0 if none).
  int64_t LatestResourceVersion(const std::string& resource) const;
  // Drops the event history: watches and lists from older versions get 410.
  void Compact();
  // Ends every open watch at once, without sending what it has not sent
  // yet, as a dropped connection.
  void DropWatches();
  // Requests served, by "VERB resource[/sub]" ("POST pods", "POST
  // pods/binding", "WATCH pods").
  std::map<std::string, int> RequestCounts() const;
  // Every write served (any verb but GET), in the order served, with the
  // client's User-Agent (which names an operator replica).
  struct Write {
    std::string method, path, user_agent;
    int status = 0;
    std::vector<std::string> warnings;  // e.g. unknown fields dropped
  };
  std::vector<Write> Writes() const;
  // The distinct client connections (address and port) requests came
  // from: with connections kept alive, one per client.
  size_t Connections() const;

  struct Type;  // a resource type (built in, or from a CRD)
  struct Watch;

 private:
  struct Reply {
    Reply(int s = 200, nlohmann::json b = nullptr, int retry = 0, std::vector<std::string> w = {})
        : status(s), body(std::move(b)), retry_after(retry), warnings(std::move(w)) {}
    int status = 200;
    nlohmann::json body;
    int retry_after = 0;                // seconds, sent as Retry-After when > 0
    std::vector<std::string> warnings;  // sent as Warning: 299 headers
  };
  // A request on a resource, its path taken apart (apiserver_http.cc).
  struct Call {
    std::string method{};
    const Type* type = nullptr;
    std::string ns{};  // from the path ("" for all namespaces or cluster-scoped)
    std::string name{};
    std::string sub{};  // "status", "binding" or ""
    const std::multimap<std::string, std::string>* params = nullptr;
    nlohmann::json input{};  // the body (null when empty)
    std::string content_type{};
    bool table = false;  // answer with a meta.k8s.io Table
  };
  void Route();
  void Serve(const std::string& method, const void* req, void* res);
  // Answers 500 or (after a stall) 504 when the faults draw one; true then.
  bool InjectFault(httplib::Response& res);
  Reply Handle(const std::string& method, const std::string& path,
               const std::multimap<std::string, std::string>& params, const std::string& body,
               const std::string& content_type, bool count, bool table,
               const std::string& token = "");
  // /version, /api, /apis and /openapi/v3[/...]; nullopt for another path.
  std::optional<Reply> DiscoveryLocked(const std::string& path) const;
  nlohmann::json Discovery(const std::string& group, const std::string& version) const;
  Reply CallLocked(const Call& c);
  Reply ListLocked(const Call& c);
  Reply BindLocked(const Call& c);
  Reply PatchLocked(const Call& c);
  // The store (apiserver_store.cc).
  Reply CreateLocked(const Type& type, const std::string& ns, nlohmann::json object);
  // The checks of a write a real server makes before it stores `object`
  // (its schema, unknown fields by the request's fieldValidation, owner
  // references' permissions); nullopt when it may be stored.
  std::optional<Reply> AdmitLocked(const Type& type, const std::string& name,
                                   nlohmann::json& object, std::vector<std::string>& warnings);
  // Deletes the objects of namespace `ns` being deleted, then, once none is
  // left, the namespace.
  void FinishNamespaceLocked(const std::string& ns);
  // Owners being deleted in the foreground whose blocking dependants are
  // gone: their foregroundDeletion finalizer goes, and so do they.
  void FinishForegroundLocked();
  // Adds (`add`) or removes what `object`, stored under `key` of
  // `resource`, contributes to the indexes: its uid, its ownerReferences,
  // its foregroundDeletion finalizer. Every change of a stored object
  // removes the old one's entries before it and adds the new one's after.
  void IndexLocked(const std::string& resource, const std::string& key,
                   const nlohmann::json& object, bool add);
  // The objects with an ownerReference to `uid`, as (type, key), in the
  // order of the types and keys (from the index: what the owner has).
  std::vector<std::pair<const Type*, std::string>> DependantsLocked(const std::string& uid);
  // Drops those ownerReferences from `dependants` (orphaning them).
  void OrphanLocked(const std::vector<std::pair<const Type*, std::string>>& dependants,
                    const std::string& uid);
  // An object with a uid, anywhere in the store; null if none.
  const nlohmann::json* FindUidLocked(const std::string& uid) const;
  // Whether the owner an ownerReference names exists (by its uid).
  bool OwnerExistsLocked(const nlohmann::json& ref) const;
  Reply UpdateLocked(const Type& type, const std::string& ns, const std::string& name,
                     nlohmann::json object, bool status, bool patch_conflicts);
  Reply DeleteLocked(const Type& type, const std::string& ns, const std::string& name,
                     std::optional<int64_t> grace, const std::string& propagation);
  void RemoveLocked(const Type& type, const std::string& key, const std::string& propagation);
  void RecordLocked(const Type& type, const std::string& event, const nlohmann::json& object);
  const Type* FindType(const std::string& resource) const;
  const Type* FindType(const std::string& group, const std::string& version,
                       const std::string& plural) const;
  void RegisterCrd(const nlohmann::json& crd);
  // Watches (apiserver_watch.cc): opened, then streamed.
  void ServeWatch(const httplib::Request& req, httplib::Response& res);
  // The watch's first lines and what it has seen, from version `rv` ("": 0).
  void StartWatchLocked(Watch& w, const std::string& rv);
  // Sends what is pending and waits for more; false when the client left.
  bool StreamWatch(Watch& w, httplib::DataSink& sink);

  Options options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Type>> types_;
  // resource id -> key ("ns/name" or "name") -> object
  std::map<std::string, std::map<std::string, nlohmann::json>> objects_;
  // One change, as the watches send it; shared by its resource's log and
  // the watches reading it, never changed once recorded.
  struct Event {
    Event(int64_t v, std::string t, nlohmann::json o)
        : rv(v), type(std::move(t)), object(std::move(o)) {}
    int64_t rv;
    std::string type;
    nlohmann::json object;
    // object.dump(), made once, by the first watch that sends it.
    const std::string& Text() const;

   private:
    mutable std::once_flag once_;
    mutable std::string text_;
  };
  // A resource's kept events, in version order, and its watches' wake-up.
  struct Log {
    std::deque<std::shared_ptr<const Event>> events;
    int64_t trimmed_through = 0;  // the newest event dropped from `events` (0: none)
    std::condition_variable changed;
  };
  std::map<std::string, Log> logs_;  // by resource id; never erased
  // Every kept event's version and log, in version order: the bound on
  // the events kept (Options::history) holds over all resources.
  std::deque<std::pair<int64_t, Log*>> history_;
  int64_t oldest_kept_ = 1;  // events at or after this version are kept
  // Garbage collection's indexes (apiserver_store.cc, IndexLocked): every
  // object by uid; the dependants of each owner uid, by its
  // ownerReferences; the objects with the foregroundDeletion finalizer.
  // Each as (resource id, key).
  using Ref = std::pair<std::string, std::string>;
  std::unordered_map<std::string, Ref> by_uid_;
  std::unordered_map<std::string, std::set<Ref>> dependants_;
  std::map<std::string, std::set<std::string>> foreground_;  // resource id -> keys
  double write_latency_ = 0;
  int delayed_writes_ = 0;
  std::set<std::pair<std::string, int>> connections_;  // client address and port
  int64_t rv_ = 1;
  std::map<std::string, int64_t> latest_;  // resource id -> last change's version
  ApiFaults faults_;
  std::mt19937_64 rng_{1};
  struct Injected {
    int status = 500;
    int times = 0;
    int retry_after = 0;
  };
  std::map<std::string, Injected> fail_next_;  // by "VERB resource[/sub]"
  std::map<std::string, bool> written_once_;   // for conflict_on_first_write
  std::map<std::string, bool> gone_sent_;      // for gone_on_resume
  std::map<std::string, int> counts_;
  std::vector<Write> writes_;
  bool stopping_ = false;
  uint64_t drop_epoch_ = 0;  // bumped by DropWatches
  uint64_t uid_seq_ = 0;
  // The request being served (Handle sets them under mu_): its bearer
  // token ("" for calls on the store itself) and fieldValidation.
  std::string requester_;
  bool from_http_ = false;
  std::string field_validation_;
  bool finishing_ = false;  // in FinishForegroundLocked or FinishNamespaceLocked
};

}  // namespace dlsched::testing
