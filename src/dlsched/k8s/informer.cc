#include "dlsched/k8s/informer.h"

#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/format.h>

#include "dlsched/k8s/rest_client.h"

namespace dlsched::k8s {

using nlohmann::json;

std::string ObjectKey(const json& object) {
  const json& meta = object.value("metadata", json::object());
  const std::string name = meta.value("name", "");
  const std::string ns = meta.value("namespace", "");
  return ns.empty() ? name : ns + "/" + name;
}

namespace {

std::string ResourceVersionOf(const json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  return meta->value("resourceVersion", "");
}

}  // namespace

Informer::Informer(RestConfig config, std::string list_path, InformerHandlers handlers,
                   InformerOptions options)
    : config_(std::move(config)),
      list_path_(std::move(list_path)),
      handlers_(std::move(handlers)),
      options_(std::move(options)) {}

Informer::~Informer() { Stop(); }

void Informer::Start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    try {
      Run();
    } catch (...) {
      std::lock_guard lock(mu_);
      failure_ = std::current_exception();
      failed_ = true;
    }
  });
}

void Informer::RethrowFailure() const {
  if (!failed_.load()) return;
  std::lock_guard lock(mu_);
  std::rethrow_exception(failure_);
}

void Informer::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    if (client_ != nullptr) client_->Abort();  // a blocked watch returns now
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool Informer::WaitForSync(double seconds) const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!synced_ && !failed_ && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return synced_;
}

std::optional<json> Informer::Get(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = cache_.find(key);
  if (it == cache_.end()) return std::nullopt;
  return it->second;
}

std::vector<json> Informer::List() const {
  std::lock_guard lock(mu_);
  std::vector<json> out;
  out.reserve(cache_.size());
  for (const auto& [key, object] : cache_) out.push_back(object);
  return out;
}

std::vector<std::string> Informer::Keys() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  out.reserve(cache_.size());
  for (const auto& [key, object] : cache_) out.push_back(key);
  return out;
}

std::string Informer::LastResourceVersion() const {
  std::lock_guard lock(mu_);
  return resource_version_;
}

InformerStats Informer::Stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void Informer::Backoff(double& seconds) {
  std::unique_lock lock(mu_);
  ++stats_.failures;
  stop_cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stop_.load(); });
  seconds = std::min(seconds * 2, options_.backoff_max_seconds);
}

void Informer::Run() {
  RestClient client(config_);
  {
    std::lock_guard lock(mu_);
    client_ = &client;
    if (stop_) return;
  }
  struct Forget {
    Informer* self;
    ~Forget() {
      std::lock_guard lock(self->mu_);
      self->client_ = nullptr;
    }
  } forget{this};
  double backoff = options_.backoff_initial_seconds;
  while (!stop_) {
    if (!ListOnce(client)) {
      Backoff(backoff);
      continue;
    }
    backoff = options_.backoff_initial_seconds;
    // Watch, resuming from the last version, until a 410 asks for a relist.
    while (!stop_) {
      const WatchEnd end = WatchOnce(client);
      if (end == WatchEnd::kRelist) break;
      if (end == WatchEnd::kFailed) {
        Backoff(backoff);
      } else {
        backoff = options_.backoff_initial_seconds;
      }
    }
  }
}

bool Informer::ListOnce(RestClient& client) {
  std::string path = list_path_;
  if (!options_.selector.empty()) path += "?" + options_.selector;
  auto r = client.Request("GET", path);
  if (!r || r->status != 200) return false;
  json list = json::parse(r->body, nullptr, false);
  if (list.is_discarded() || !list.contains("items") || !list["items"].is_array()) return false;
  // Replace the cache: new and changed objects first, then the ones gone.
  std::set<std::string> seen;
  for (const json& item : list["items"]) {
    seen.insert(ObjectKey(item));
    Upsert(item);
  }
  std::vector<json> gone;
  {
    std::lock_guard lock(mu_);
    for (const auto& [key, object] : cache_) {
      if (!seen.contains(key)) gone.push_back(object);
    }
    resource_version_ = ResourceVersionOf(list);
    ++stats_.lists;
  }
  for (const json& object : gone) Remove(object);
  synced_ = true;
  return true;
}

Informer::WatchEnd Informer::WatchOnce(RestClient& client) {
  std::string path =
      fmt::format("{}?watch=1&allowWatchBookmarks=true&timeoutSeconds={}&resourceVersion={}",
                  list_path_, options_.watch_timeout_seconds, LastResourceVersion());
  if (!options_.selector.empty()) path += "&" + options_.selector;
  {
    std::lock_guard lock(mu_);
    ++stats_.watches;
  }
  bool relist = false;
  bool failed = false;
  auto on_line = [&](std::string_view line) {
    json event = json::parse(line, nullptr, false);
    if (event.is_discarded() || !event.is_object()) {
      failed = true;  // a torn stream: resume from the last good version
      return false;
    }
    const std::string type = event.value("type", "");
    const json& object = event.contains("object") ? event["object"] : json();
    if (type == "ERROR") {
      if (object.is_object() && object.value("code", 0) == 410) {
        relist = true;
      } else {
        failed = true;
      }
      return false;
    }
    const std::string rv = object.is_object() ? ResourceVersionOf(object) : "";
    if (type == "ADDED" || type == "MODIFIED") {
      Upsert(object);
    } else if (type == "DELETED") {
      Remove(object);
    } else if (type == "BOOKMARK") {
      std::lock_guard lock(mu_);
      ++stats_.bookmarks;
    } else {
      failed = true;
      return false;
    }
    if (!rv.empty()) {
      std::lock_guard lock(mu_);
      resource_version_ = rv;
    }
    return !stop_;
  };
  auto status = client.Stream(path, on_line, options_.idle_timeout_seconds, &stop_);
  if (status && *status == 410) relist = true;
  if (relist) {
    std::lock_guard lock(mu_);
    ++stats_.expired;
    return WatchEnd::kRelist;
  }
  if (!stop_ && (failed || !status || *status != 200)) return WatchEnd::kFailed;
  return WatchEnd::kResume;
}

void Informer::Upsert(const json& object) {
  const std::string key = ObjectKey(object);
  std::optional<json> old;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      // An unchanged object (a relist) is not news.
      if (ResourceVersionOf(it->second) == ResourceVersionOf(object)) return;
      old = std::move(it->second);
      it->second = object;
    } else {
      cache_.emplace(key, object);
    }
  }
  if (old) {
    if (handlers_.on_update) handlers_.on_update(*old, object);
  } else if (handlers_.on_add) {
    handlers_.on_add(object);
  }
}

void Informer::Remove(const json& object) {
  const std::string key = ObjectKey(object);
  json last;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(key);
    if (it == cache_.end()) return;
    last = std::move(it->second);
    cache_.erase(it);
  }
  // The DELETED event carries the final state; a relist only knows the last.
  if (handlers_.on_delete) handlers_.on_delete(object.contains("metadata") ? object : last);
}

}  // namespace dlsched::k8s
