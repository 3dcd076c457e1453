#include "dlsched/engine/cycle_state.h"

#include <algorithm>
#include <cassert>
#include <cstdint>

namespace dlsched::engine {
namespace {

Action JobAction(ActionKind kind, JobIndex j, std::string reason, int workers) {
  return Action{kind, TaskRef{j, core::Role::kWorker, 0}, kNoNode, workers, std::move(reason)};
}

}  // namespace

void CycleState::Add(ActionKind kind, TaskRef task, std::string reason, int workers,
                     WaitStatus status, JobIndex by) {
  Action a{kind, task, kNoNode, workers, std::move(reason)};
  a.status = status;
  a.by = by;
  actions_.push_back(std::move(a));
}

void CycleState::SetRecord(JobIndex j, const RecordField& field, double value) {
  Action a = JobAction(ActionKind::kSetRecord, j, {}, 0);
  a.field = &field;
  a.value = value;
  actions_.push_back(std::move(a));
}

size_t CycleState::JobSlots::Home(JobIndex j, size_t mask) {
  // Fibonacci hashing spreads consecutive indices.
  return (static_cast<uint64_t>(static_cast<uint32_t>(j)) * 0x9E3779B97F4A7C15ull >> 20) & mask;
}

size_t& CycleState::JobSlots::Find(JobIndex j, size_t fresh_value, bool* inserted) {
  if ((used_ + 1) * 2 > table_.size()) Grow();
  const size_t mask = table_.size() - 1;
  size_t i = Home(j, mask);
  while (table_[i].first != -1 && table_[i].first != j) i = (i + 1) & mask;
  *inserted = table_[i].first == -1;
  if (*inserted) {
    table_[i] = {j, fresh_value};
    ++used_;
  }
  return table_[i].second;
}

const size_t* CycleState::JobSlots::Get(JobIndex j) const {
  if (table_.empty()) return nullptr;
  const size_t mask = table_.size() - 1;
  size_t i = Home(j, mask);
  while (table_[i].first != -1) {
    if (table_[i].first == j) return &table_[i].second;
    i = (i + 1) & mask;
  }
  return nullptr;
}

void CycleState::JobSlots::Grow() {
  std::vector<std::pair<JobIndex, size_t>> old = std::move(table_);
  table_.assign(std::max<size_t>(16, old.size() * 2), {-1, 0});
  used_ = 0;
  bool inserted = false;
  for (const auto& [j, v] : old) {
    if (j != -1) Find(j, v, &inserted);
  }
}

size_t CycleState::Put(JobSlots& index, Action action) {
  bool fresh = false;
  const size_t at = index.Find(action.task.job, actions_.size(), &fresh);
  if (fresh) {
    actions_.push_back(std::move(action));
  } else {
    actions_[at] = std::move(action);
  }
  return at;
}

void CycleState::Start(JobIndex j, int workers, std::string reason) {
  Put(verdict_of_, JobAction(ActionKind::kStart, j, std::move(reason), workers));
}

void CycleState::Wait(JobIndex j, std::string reason, WaitStatus status) {
  Action a = JobAction(ActionKind::kWait, j, std::move(reason), 0);
  a.status = status;
  Put(verdict_of_, std::move(a));
}

const Action* CycleState::VerdictOf(JobIndex j) const {
  const size_t* at = verdict_of_.Get(j);
  return at == nullptr ? nullptr : &actions_[*at];
}

void CycleState::ResizeStart(JobIndex j, int workers, std::string reason) {
  const size_t* at = verdict_of_.Get(j);
  assert(at != nullptr && actions_[*at].kind == ActionKind::kStart);
  Action& a = actions_[*at];
  a.workers = workers;
  a.reason = std::move(reason);
}

void CycleState::Resize(JobIndex j, int workers, std::string reason, bool restart, bool preempted,
                        JobIndex by, bool hold) {
  const size_t* at = resize_of_.Get(j);
  if (at == nullptr) {
    Action a = JobAction(ActionKind::kResize, j, std::move(reason), workers);
    a.restart = restart;
    a.preempted = preempted;
    a.by = by;
    a.hold = hold;
    Put(resize_of_, std::move(a));
    return;
  }
  Action& a = actions_[*at];
  a.workers = workers;
  a.reason += "; " + reason;
  a.restart = a.restart || restart;
  a.preempted = a.preempted || preempted;
  a.hold = a.hold || hold;
  if (a.by < 0) a.by = by;
}

const Action* CycleState::ResizeOf(JobIndex j) const {
  const size_t* at = resize_of_.Get(j);
  return at == nullptr ? nullptr : &actions_[*at];
}

void CycleState::SetPendingKeys(std::span<const JobIndex> jobs, std::span<const double> keys) {
  pending_jobs_.assign(jobs.begin(), jobs.end());
  pending_key_values_.assign(keys.begin(), keys.end());
  pending_entries_ = {};
  pending_paired_ = false;
}

void CycleState::SetPendingOrder(std::span<const Memos::OrderEntry> entries) {
  pending_jobs_.clear();
  pending_key_values_.clear();
  pending_entries_ = entries;
  pending_paired_ = false;
}

std::optional<double> CycleState::PendingKey(JobIndex j) const {
  // Paired and sorted by job on the first question: most cycles ask none.
  if (!pending_paired_) {
    pending_keys_.clear();
    for (size_t i = 0; i < pending_jobs_.size(); ++i) {
      pending_keys_.emplace_back(pending_jobs_[i], pending_key_values_[i]);
    }
    for (const Memos::OrderEntry& e : pending_entries_) {
      pending_keys_.emplace_back(e.job, e.key);
    }
    std::sort(pending_keys_.begin(), pending_keys_.end());
    pending_paired_ = true;
  }
  auto it = std::lower_bound(pending_keys_.begin(), pending_keys_.end(), j,
                             [](const auto& p, JobIndex key) { return p.first < key; });
  if (it == pending_keys_.end() || it->first != j) return std::nullopt;
  return it->second;
}

}  // namespace dlsched::engine
