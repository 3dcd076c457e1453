#include "dlsched/k8s/work_queue.h"

#include <algorithm>

namespace dlsched::k8s {

ItemBackoff::Duration ItemBackoff::When(const std::string& item) {
  const int n = failures_[item]++;
  // base x 2^n without overflow: stop doubling once past max.
  Duration d = base_;
  for (int i = 0; i < n && d < max_; ++i) d *= 2;
  return std::min(d, max_);
}

int ItemBackoff::NumRequeues(const std::string& item) const {
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second;
}

void WorkQueue::AddLocked(const std::string& item) {
  if (shutting_down_ || dirty_.contains(item)) return;
  dirty_.insert(item);
  if (processing_.contains(item)) return;  // queued again by Done
  queue_.push_back(item);
  cv_.notify_one();
}

void WorkQueue::Add(const std::string& item) {
  std::lock_guard lock(mu_);
  AddLocked(item);
}

void WorkQueue::AddAfter(const std::string& item, Clock::duration delay) {
  if (delay <= Clock::duration::zero()) return Add(item);
  std::lock_guard lock(mu_);
  if (shutting_down_) return;
  const Clock::time_point due = Clock::now() + delay;
  // An item waits once, for the earliest of its delays (client-go keeps
  // the earlier ready time too).
  auto it = delayed_at_.find(item);
  if (it != delayed_at_.end()) {
    if (it->second <= due) return;
    auto range = delayed_.equal_range(it->second);
    for (auto d = range.first; d != range.second; ++d) {
      if (d->second == item) {
        delayed_.erase(d);
        break;
      }
    }
    it->second = due;
  } else {
    delayed_at_.emplace(item, due);
  }
  delayed_.emplace(due, item);
  cv_.notify_all();  // a Get may need to wake earlier
}

void WorkQueue::AddRateLimited(const std::string& item, Clock::duration at_least) {
  Clock::duration delay;
  {
    std::lock_guard lock(mu_);
    delay = std::max(backoff_.When(item), at_least);
  }
  AddAfter(item, delay);
}

void WorkQueue::Forget(const std::string& item) {
  std::lock_guard lock(mu_);
  backoff_.Forget(item);
}

int WorkQueue::NumRequeues(const std::string& item) const {
  std::lock_guard lock(mu_);
  return backoff_.NumRequeues(item);
}

void WorkQueue::PromoteDueLocked(Clock::time_point now) {
  while (!delayed_.empty() && delayed_.begin()->first <= now) {
    const std::string item = delayed_.begin()->second;
    delayed_.erase(delayed_.begin());
    delayed_at_.erase(item);
    AddLocked(item);
  }
}

std::optional<std::string> WorkQueue::Get(Clock::time_point deadline) {
  std::unique_lock lock(mu_);
  for (;;) {
    if (shutting_down_) return std::nullopt;
    const Clock::time_point now = Clock::now();
    PromoteDueLocked(now);
    if (!queue_.empty()) {
      std::string item = std::move(queue_.front());
      queue_.pop_front();
      dirty_.erase(item);
      processing_.insert(item);
      return item;
    }
    if (now >= deadline) return std::nullopt;
    Clock::time_point wake = deadline;
    if (!delayed_.empty()) wake = std::min(wake, delayed_.begin()->first);
    if (wake == Clock::time_point::max()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, wake);
    }
  }
}

void WorkQueue::Done(const std::string& item) {
  std::lock_guard lock(mu_);
  processing_.erase(item);
  if (dirty_.contains(item)) {
    queue_.push_back(item);
    cv_.notify_one();
  }
}

size_t WorkQueue::Len() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void WorkQueue::ShutDown() {
  std::lock_guard lock(mu_);
  shutting_down_ = true;
  cv_.notify_all();
}

bool WorkQueue::ShuttingDown() const {
  std::lock_guard lock(mu_);
  return shutting_down_;
}

}  // namespace dlsched::k8s
