#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace dlsched::k8s {

// Per-item exponential backoff, as client-go's ItemExponentialFailureRateLimiter:
// the n-th consecutive failure of an item waits base x 2^(n-1), at most max.
// Forget resets an item. Not thread-safe (WorkQueue guards it).
class ItemBackoff {
 public:
  using Duration = std::chrono::steady_clock::duration;
  explicit ItemBackoff(Duration base = std::chrono::milliseconds(5),
                       Duration max = std::chrono::seconds(1000))
      : base_(base), max_(max) {}
  // The delay before the item's next try; counts a failure.
  Duration When(const std::string& item);
  void Forget(const std::string& item) { failures_.erase(item); }
  int NumRequeues(const std::string& item) const;

 private:
  Duration base_, max_;
  std::unordered_map<std::string, int> failures_;
};

// A queue of keys ("kind/namespace/name") for a reconciler, with client-go's
// workqueue semantics:
//   - an item is queued at most once however often it is added (dirty set);
//   - an item being processed (between Get and Done) is not handed out
//     again; added meanwhile, it is queued once Done is called;
//   - AddAfter delays an item; AddRateLimited delays it by its backoff,
//     Forget resets the backoff once the item succeeded.
// Thread-safe: informers add from their threads, the reconciler gets.
class WorkQueue {
 public:
  using Clock = std::chrono::steady_clock;
  explicit WorkQueue(ItemBackoff backoff = ItemBackoff()) : backoff_(std::move(backoff)) {}

  void Add(const std::string& item);
  void AddAfter(const std::string& item, Clock::duration delay);
  // Delays the item by its backoff, and by at least `at_least` (a
  // server's Retry-After).
  void AddRateLimited(const std::string& item, Clock::duration at_least = Clock::duration::zero());
  void Forget(const std::string& item);
  int NumRequeues(const std::string& item) const;

  // The next item, waiting until one is ready, `deadline` passes (nullopt)
  // or the queue shuts down (nullopt).
  std::optional<std::string> Get(Clock::time_point deadline = Clock::time_point::max());
  void Done(const std::string& item);
  // Items queued and ready (not counting delayed or processing ones).
  size_t Len() const;
  // Wakes every Get; later Gets return nullopt at once.
  void ShutDown();
  bool ShuttingDown() const;

 private:
  void AddLocked(const std::string& item);
  void PromoteDueLocked(Clock::time_point now);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<Clock::time_point, std::string> delayed_;
  std::map<std::string, Clock::time_point> delayed_at_;  // earliest due per item
  std::deque<std::string> queue_;                        // each item once (dirty_)
  std::unordered_set<std::string> dirty_, processing_;
  ItemBackoff backoff_;
  bool shutting_down_ = false;
};

}  // namespace dlsched::k8s
