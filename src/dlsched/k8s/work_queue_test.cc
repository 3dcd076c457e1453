// The work queue's client-go semantics: de-duplication, no item handed out
// twice while processed, delays, per-item exponential backoff.
#include "dlsched/k8s/work_queue.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

namespace dlsched::k8s {
namespace {

using std::chrono::milliseconds;
using Clock = WorkQueue::Clock;

// Get without blocking.
std::optional<std::string> Poll(WorkQueue& q) { return q.Get(Clock::now()); }

TEST(WorkQueueTest, AddingTwiceQueuesOnce) {
  WorkQueue q;
  q.Add("pod/a");
  q.Add("pod/b");
  q.Add("pod/a");
  EXPECT_EQ(q.Len(), 2u);
  EXPECT_EQ(Poll(q), "pod/a");
  EXPECT_EQ(Poll(q), "pod/b");
  EXPECT_EQ(Poll(q), std::nullopt);
}

TEST(WorkQueueTest, ItemAddedWhileProcessingComesBackAfterDone) {
  WorkQueue q;
  q.Add("tj/x");
  ASSERT_EQ(Poll(q), "tj/x");
  q.Add("tj/x");  // changed again while being reconciled
  q.Add("tj/x");
  EXPECT_EQ(Poll(q), std::nullopt) << "never handed out while processing";
  q.Done("tj/x");
  EXPECT_EQ(Poll(q), "tj/x") << "queued once Done";
  q.Done("tj/x");
  EXPECT_EQ(Poll(q), std::nullopt);
}

TEST(WorkQueueTest, DelayedItemWaitsAndKeepsItsEarliestTime) {
  WorkQueue q;
  q.AddAfter("a", std::chrono::hours(1));
  q.AddAfter("b", milliseconds(20));
  q.AddAfter("b", std::chrono::hours(2));  // a later time does not push it back
  EXPECT_EQ(Poll(q), std::nullopt);
  // Blocks until "b" is due (20 ms), not until the hour of "a".
  EXPECT_EQ(q.Get(), "b");
  EXPECT_EQ(Poll(q), std::nullopt);
}

TEST(WorkQueueTest, BackoffDoublesPerItemUpToMaxAndForgetResets) {
  // Hand-worked: base 5 ms -> 5, 10, 20, 40, then capped at 30 ms.
  ItemBackoff b(milliseconds(5), milliseconds(30));
  EXPECT_EQ(b.When("x"), milliseconds(5));
  EXPECT_EQ(b.When("x"), milliseconds(10));
  EXPECT_EQ(b.When("y"), milliseconds(5)) << "per item";
  EXPECT_EQ(b.When("x"), milliseconds(20));
  EXPECT_EQ(b.When("x"), milliseconds(30));
  EXPECT_EQ(b.When("x"), milliseconds(30));
  EXPECT_EQ(b.NumRequeues("x"), 5);
  b.Forget("x");
  EXPECT_EQ(b.NumRequeues("x"), 0);
  EXPECT_EQ(b.When("x"), milliseconds(5));
}

TEST(WorkQueueTest, RateLimitedAddUsesTheBackoff) {
  WorkQueue q(ItemBackoff(milliseconds(1), milliseconds(1)));
  q.AddRateLimited("k");
  EXPECT_EQ(q.NumRequeues("k"), 1);
  EXPECT_EQ(q.Get(), "k");
  q.Done("k");
  q.Forget("k");
  EXPECT_EQ(q.NumRequeues("k"), 0);
}

TEST(WorkQueueTest, ShutDownWakesAWaitingGet) {
  WorkQueue q;
  std::optional<std::string> got = "unset";
  std::thread t([&] { got = q.Get(); });
  std::this_thread::sleep_for(milliseconds(10));
  q.ShutDown();
  t.join();
  EXPECT_EQ(got, std::nullopt);
  q.Add("late");
  EXPECT_EQ(Poll(q), std::nullopt);
}

TEST(WorkQueueTest, ItemsAddedFromManyThreadsAreEachHandedOutOnce) {
  WorkQueue q;
  std::vector<std::thread> adders;
  for (int t = 0; t < 4; ++t) {
    adders.emplace_back([&q] {
      for (int i = 0; i < 100; ++i) q.Add("item-" + std::to_string(i));
    });
  }
  for (auto& t : adders) t.join();
  std::set<std::string> seen;
  while (auto item = Poll(q)) {
    EXPECT_TRUE(seen.insert(*item).second) << *item;
    q.Done(*item);
  }
  EXPECT_EQ(seen.size(), 100u);
}

// A server's Retry-After holds an item back longer than its backoff; it
// still counts a failure, and Forget resets it.
TEST(WorkQueueTest, RateLimitedAddWaitsAtLeastTheRetryAfter) {
  WorkQueue q(ItemBackoff(std::chrono::milliseconds(1), std::chrono::milliseconds(1)));
  q.AddRateLimited("a", std::chrono::hours(1));
  EXPECT_EQ(q.NumRequeues("a"), 1);
  EXPECT_FALSE(q.Get(WorkQueue::Clock::now() + std::chrono::milliseconds(20)).has_value());
  q.Forget("a");
  EXPECT_EQ(q.NumRequeues("a"), 0);
}

}  // namespace
}  // namespace dlsched::k8s
