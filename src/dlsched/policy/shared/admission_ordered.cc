#include "dlsched/policy/shared/admission_ordered.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "dlsched/engine/placement.h"

namespace dlsched::policy {
namespace {

// One cycle's pass of AdmitInOrder over the pending jobs.
class OrderedPass {
 public:
  OrderedPass(engine::CycleContext& ctx, const engine::Profile& profile,
              const OrderedAdmissionOptions& options, OrderedAdmissionHooks& hooks)
      : ctx_(ctx),
        profile_(profile),
        options_(options),
        hooks_(hooks),
        st_(ctx.state()),
        memos_(ctx.memos),
        kept_(profile.order->StaticKeys()),
        standing_(!profile.sizer->ReadsVerdicts()),
        order_(memos_.pending_order()),
        lanes_(st_.Quotas().NumQueues() + 1),
        marks_(kept_ && standing_ && lanes_ == 1),
        blockers_(lanes_, -1),
        behind_(lanes_) {}

  void Run() {
    Order();
    const size_t n = kept_ ? entries_.size() : jobs_.size();
    if (lanes_ > 1 && profile_.queue_order != nullptr && profile_.queue_order->Interleaves()) {
      Interleave(n);
      return;
    }
    for (size_t i = 0; i < n; ++i) {
      if (marks_ && blockers_[0] >= 0) {
        i = PassStanding(i, n);
        if (i == n) break;
      }
      Visit(i);
    }
  }

 private:
  // The jobs in order: the engine's kept order (a JobOrder of static
  // keys), or sorted for this cycle; their keys go to the cycle state.
  void Order() {
    if (!kept_) {
      engine::OrderPending(ctx_, &jobs_, &keys_);
      ctx_.decisions.SetPendingKeys(jobs_, keys_);
      return;
    }
    entries_ = engine::UpdatePendingOrder(ctx_);
    // A Standby job holding its whole gang may be among the kept entries.
    skip_unpending_ = !st_.JobsInPhase(core::JobPhase::kStandby).empty();
    if (!skip_unpending_) {
      ctx_.decisions.SetPendingOrder(entries_);
      return;
    }
    for (const auto& e : entries_) {
      if (!st_.Job(e.job).IsPending()) continue;
      jobs_.push_back(e.job);
      keys_.push_back(e.key);
    }
    ctx_.decisions.SetPendingKeys(jobs_, keys_);
  }

  // In the kept order, the jobs behind a blocker that already stand on the
  // same verdict are marked (Memos::PendingOrder) and passed over without
  // reading their state: a long strict queue behind a blocked head costs a
  // few bytes a job per cycle. Returns the first entry from `i` on that is
  // not passed over (or `n`).
  size_t PassStanding(size_t i, size_t n) {
    size_t next = i;
    while (next < n && order_.Marked(entries_[next]) && entries_[next].job != ctx_.trace_job) {
      assert(!profile_.order->IsStarving(st_, entries_[next].job, ctx_.now));
      ++next;
      // Positions count pending jobs only (a Standby one may hold its gang).
      if (!skip_unpending_ || st_.Job(entries_[next - 1].job).IsPending()) ++pos_;
    }
    return next;
  }

  engine::JobIndex JobAt(size_t i) const { return kept_ ? entries_[i].job : jobs_[i]; }

  // The jobs of each queue in the profile's order, the queues' heads taken
  // in ascending (QueueOrder::Key, position) order, again after every
  // visit; a lane held up by its blocker passes its jobs the blocker's
  // verdict. The heads wait in a heap, one entry a lane: a visit computes
  // the key of its lane's next head only, since a key reads its own
  // queue's usage alone; a visit that changed another queue's usage (a
  // preemptor's evictions) keys every head again.
  void Interleave(size_t n) {
    std::vector<std::vector<size_t>> items(lanes_);
    for (size_t i = 0; i < n; ++i) {
      const engine::JobIndex j = JobAt(i);
      if (skip_unpending_ && !st_.Job(j).IsPending()) continue;
      items[Lane(j)].push_back(i);
    }
    std::vector<size_t> cursor(lanes_, 0);
    struct Entry {
      engine::QueueKey key;
      size_t item;
      int lane;
    };
    auto later = [](const Entry& a, const Entry& b) {
      return a.key != b.key ? a.key > b.key : a.item > b.item;
    };
    std::vector<Entry> heap;
    const engine::QuotaBook& book = st_.Quotas();
    // Lane `l`'s head into the heap, once its blocked jobs are passed.
    auto push = [&](int l) {
      while (blockers_[l] >= 0 && cursor[l] < items[l].size()) Visit(items[l][cursor[l]++]);
      if (cursor[l] == items[l].size()) return;
      const size_t i = items[l][cursor[l]];
      const engine::JobIndex j = JobAt(i);
      const engine::QueueHead head{
          l - 1, j, st_.Job(j).spec->Demand(profile_.sizer->StartWorkers(st_, j)), i};
      heap.push_back({profile_.queue_order->Key(st_, head), i, l});
      std::push_heap(heap.begin(), heap.end(), later);
    };
    auto rebuild = [&] {
      heap.clear();
      for (int l = 0; l < lanes_; ++l) push(l);
    };
    rebuild();
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), later);
      const int l = heap.back().lane;
      heap.pop_back();
      const int q = l - 1;
      const uint64_t total = book.TotalVersion();
      const uint64_t own = q >= 0 ? book.Version(q) : 0;
      Visit(items[l][cursor[l]++]);
      if (book.TotalVersion() - total != (q >= 0 ? book.Version(q) : 0) - own) {
        rebuild();
      } else {
        push(l);
      }
    }
  }

  // The job at position `i` of the order.
  struct Visited {
    engine::JobIndex job = -1;
    engine::Memos::OrderEntry* entry = nullptr;  // in the kept order
    engine::JobTrace* trace = nullptr;
    int workers = 0;
    bool memo = false;  // its wait memo is read and written
  };

  void Visit(size_t i) {
    Visited v;
    v.entry = kept_ ? &entries_[i] : nullptr;
    v.job = kept_ ? v.entry->job : jobs_[i];
    const engine::JobIndex j = v.job;
    if (skip_unpending_ && !st_.Job(j).IsPending()) return;
    ++pos_;
    const double key = kept_ ? v.entry->key : keys_[i];
    v.trace = ctx_.BeginTrace(j, pos_);
    if (st_.Job(j).phase == core::JobPhase::kWaiting &&
        profile_.order->IsStarving(st_, j, ctx_.now)) {
      ctx_.AddAction(engine::ActionKind::kStarve, j, "waited past the starvation limit");
    }
    if (const engine::JobIndex blocker = blockers_[Lane(j)]; blocker >= 0) {
      Wait(v, behind_[Lane(j)], engine::WaitStatus::kUnschedulable, true);
      if (v.trace != nullptr) v.trace->outcome = hooks_.Behind(blocker, true);
      return;
    }
    const bool may_preempt = hooks_.MayPreempt(j, key);
    v.workers = profile_.sizer->StartWorkers(st_, j);
    // A gang that failed with no room freed since fails again (less room
    // cannot help), unless a preemptor could evict for it: with a profile
    // that never evicts, its remembered verdict stands without visiting a
    // node (kube-scheduler leaves an unschedulable pod aside until a
    // cluster event may make it fit). The traced job is always tried, so
    // `explain` shows the attempt.
    v.memo = v.trace == nullptr && !profile_.preemptor->MayEvict();
    if (v.memo) {
      const engine::Memos::WaitMemo& m = memos_.Job(j).wait;
      if (m.epoch == st_.RoomEpoch() && m.workers == v.workers) {
        const auto status = static_cast<engine::WaitStatus>(m.status);
        Wait(v, m.reason, status);
        if (options_.failure_blocks && status == engine::WaitStatus::kUnschedulable) Block(j);
        return;
      }
    }
    Try(v, may_preempt);
  }

  // Places the job's gang in idle room, else (if allowed) through the
  // preemptor, else gives its wait.
  void Try(const Visited& v, bool may_preempt) {
    const engine::JobIndex j = v.job;
    reason_.clear();
    if (profile_.packer->PlaceGang(ctx_, j, v.workers, &reason_)) {
      Start(v, false);
      return;
    }
    if (!may_preempt) {
      Wait(v, hooks_.IdleRoomOnly(reason_));
      return;
    }
    std::string preempt_reason;
    if (profile_.preemptor->Preempt(ctx_, j, v.workers, *profile_.packer, &preempt_reason)) {
      Start(v, true);
      return;
    }
    // A job that can never fit must not hold up the queue for ever.
    const std::optional<std::string> never =
        engine::NeverFits(ctx_, j, v.workers, *profile_.packer, options_.exact_never_fits);
    if (never) {
      std::string why = hooks_.NeverFits(*never);
      Wait(v, why, engine::WaitStatus::kUnschedulableUnresolvable);
      Remember(v, std::move(why), engine::WaitStatus::kUnschedulableUnresolvable);
      return;
    }
    std::string why = hooks_.Waiting(reason_, preempt_reason);
    Wait(v, why);
    Remember(v, std::move(why), engine::WaitStatus::kUnschedulable);
    if (options_.failure_blocks) Block(j);
  }

  // A verdict the job already stands on is not given again, unless the
  // sizer reads verdicts or the job is traced.
  void Wait(const Visited& v, const std::string& why,
            engine::WaitStatus status = engine::WaitStatus::kUnschedulable,
            bool behind_verdict = false) {
    if (v.trace != nullptr) v.trace->outcome = why;
    if (standing_) {
      engine::Memos::StandingWait& w = memos_.Job(v.job).standing_wait;
      const uint32_t seq = st_.Job(v.job).reason_seq;
      const bool stands = w.given && w.reason_seq == seq &&
                          w.status == static_cast<uint8_t>(status) && w.reason == why;
      if (marks_) order_.Mark(*v.entry, behind_verdict);
      if (v.trace == nullptr && stands) return;
      w = {true, seq, static_cast<uint8_t>(status), why};
    }
    ctx_.decisions.Wait(v.job, why, status);
  }

  void Start(const Visited& v, bool after_preemption) {
    std::string outcome = hooks_.Started(v.job, v.workers, after_preemption);
    if (v.trace != nullptr) v.trace->outcome = outcome;
    ctx_.decisions.Start(v.job, v.workers, std::move(outcome));
    hooks_.OnStarted(v.job);
  }

  // Which jobs a blocked job holds up: those of its queue (Kueue's
  // StrictFIFO queues), or every job when the cluster declares no queues.
  int Lane(engine::JobIndex j) const { return lanes_ == 1 ? 0 : st_.Job(j).queue + 1; }

  // Job `j` holds up every later one of its lane in this cycle (strict order).
  void Block(engine::JobIndex j) {
    const int lane = Lane(j);
    blockers_[lane] = j;
    behind_[lane] = hooks_.Behind(j, false);
    // Marks given for another wording no longer say what a job stands on.
    if (marks_ && behind_[lane] != order_.behind_text) {
      order_.behind_text = behind_[lane];
      ++order_.behind_epoch;
    }
  }

  // A failure remembered until room is freed (its wait memo).
  void Remember(const Visited& v, std::string why, engine::WaitStatus status) {
    if (!v.memo) return;
    engine::Memos::WaitMemo& m = memos_.Job(v.job).wait;
    m.epoch = st_.RoomEpoch();
    m.workers = v.workers;
    m.status = static_cast<uint8_t>(status);
    m.reason = std::move(why);
  }

  engine::CycleContext& ctx_;
  const engine::Profile& profile_;
  const OrderedAdmissionOptions& options_;
  OrderedAdmissionHooks& hooks_;
  const engine::ClusterState& st_;
  engine::Memos& memos_;
  const bool kept_;
  const bool standing_;
  engine::Memos::PendingOrder& order_;
  // One lane per queue and one for the jobs of none; a single lane when
  // the cluster declares no queues.
  const int lanes_;
  const bool marks_;
  std::span<engine::Memos::OrderEntry> entries_;
  std::vector<engine::JobIndex> jobs_;
  std::vector<double> keys_;
  bool skip_unpending_ = false;
  std::vector<engine::JobIndex> blockers_;  // per lane, -1 when none
  std::vector<std::string> behind_;         // hooks.Behind(blocker), worded once
  std::string reason_;
  int pos_ = -1;
};

}  // namespace

void AdmitInOrder(engine::CycleContext& ctx, const engine::Profile& profile,
                  const OrderedAdmissionOptions& options, OrderedAdmissionHooks& hooks) {
  OrderedPass(ctx, profile, options, hooks).Run();
}

}  // namespace dlsched::policy
