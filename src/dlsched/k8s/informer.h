#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "dlsched/k8s/rest_config.h"

namespace dlsched::k8s {

// "namespace/name", or "name" for a cluster-scoped object (client-go's
// MetaNamespaceKeyFunc).
std::string ObjectKey(const nlohmann::json& object);

struct InformerHandlers {
  std::function<void(const nlohmann::json& object)> on_add;
  std::function<void(const nlohmann::json& old_object, const nlohmann::json& object)> on_update;
  // The object as last seen (after a relist, possibly not its final state).
  std::function<void(const nlohmann::json& object)> on_delete;
};

struct InformerOptions {
  // Appended to the list and watch URLs ("labelSelector=...").
  std::string selector;
  // A watch asks the server to end it after this long (client-go: 5 to 10
  // minutes, randomised); the informer then watches again from where it was.
  int watch_timeout_seconds = 300;
  // A watch with no byte for this long is treated as dropped.
  double idle_timeout_seconds = 120;
  // Backoff between failed lists or watches: initial, doubling up to max
  // (client-go's reflector: 800 ms to 30 s).
  double backoff_initial_seconds = 0.8;
  double backoff_max_seconds = 30;
};

// Counters, for tests and /metrics.
struct InformerStats {
  int lists = 0;      // successful lists
  int watches = 0;    // watches opened
  int expired = 0;    // 410 Gone answers (each leads to a relist)
  int failures = 0;   // failed lists or watches (transport or HTTP error)
  int bookmarks = 0;  // BOOKMARK events
};

// One resource's informer, as client-go's Reflector + Indexer: lists, then
// watches from the list's resourceVersion (with bookmarks, so a quiet
// resource's version stays fresh); a watch that ends or drops is resumed
// from the last version seen; a 410 Gone (an expired version) relists, and
// a relist reports objects gone meanwhile as deleted. The local cache is
// updated before the handlers run; handlers run on the informer's thread
// and must not block for long.
class Informer {
 public:
  // `list_path`: "/api/v1/nodes", "/apis/dlsched.io/v1alpha1/trainingjobs"...
  Informer(RestConfig config, std::string list_path, InformerHandlers handlers,
           InformerOptions options = {});
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;
  ~Informer();

  void Start();
  void Stop();
  // True once the first list has been delivered to the handlers.
  bool HasSynced() const { return synced_.load(); }
  // Blocks until synced, failed or `seconds` pass; returns HasSynced().
  bool WaitForSync(double seconds) const;
  // What ended the informer's thread, thrown again here, on the caller's:
  // anything its list, watch or handlers throw (std::bad_alloc above all)
  // is caught where the thread starts, so that the operator's main thread
  // reports it as every other thread's (exit 1, "out of memory"), where
  // it used to end the process with std::terminate. Nothing when none.
  void RethrowFailure() const;

  std::optional<nlohmann::json> Get(const std::string& key) const;
  std::vector<nlohmann::json> List() const;
  // The keys of List's objects ("namespace/name", or "name" for a
  // cluster-scoped kind), in order.
  std::vector<std::string> Keys() const;
  std::string LastResourceVersion() const;
  InformerStats Stats() const;

 private:
  void Run();
  // Returns false when stopping.
  bool ListOnce(class RestClient& client);
  enum class WatchEnd { kResume, kRelist, kFailed };
  // Watches until the stream ends: resume from the last version, relist
  // (410 Gone), or back off first (an error).
  WatchEnd WatchOnce(class RestClient& client);
  void Upsert(const nlohmann::json& object);
  void Remove(const nlohmann::json& object);
  void Backoff(double& seconds);

  RestConfig config_;
  std::string list_path_;
  InformerHandlers handlers_;
  InformerOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, nlohmann::json> cache_;
  std::string resource_version_;
  InformerStats stats_;
  std::atomic<bool> stop_{false};
  std::condition_variable stop_cv_;  // wakes a backoff when stopping
  std::atomic<bool> synced_{false};
  std::thread thread_;
  std::exception_ptr failure_;  // under mu_
  std::atomic<bool> failed_{false};
  class RestClient* client_ = nullptr;  // Run's, while it runs (under mu_)
};

}  // namespace dlsched::k8s
