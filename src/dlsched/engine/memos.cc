#include "dlsched/engine/memos.h"

#include <algorithm>
#include <atomic>

namespace dlsched::engine {

Memos::Memos() {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id.fetch_add(1, std::memory_order_relaxed);
}

void Memos::Claim(uint64_t engine, ClusterState& state) {
  // Room for every job's memos at once (a trace adds them all before the
  // first cycle), growing by half when jobs keep coming (an operator).
  const auto jobs = static_cast<size_t>(state.NumJobs());
  if (jobs_.capacity() < jobs) jobs_.reserve(std::max(jobs, jobs_.capacity() * 3 / 2));
  const bool other_store = state.ClaimMemos(id_);
  if (!other_store && engine == engine_ && state.Id() == state_) return;
  Drop();
  engine_ = engine;
  state_ = state.Id();
  state.NoteMemosDropped();
}

void Memos::Drop() {
  jobs_.clear();
  pending_order_.entries.clear();
  pending_order_.valid = false;
  last_order_ = LastOrder{};
  fits_empty_.clear();
  fits_empty_node_epoch_ = 0;  // epochs begin at 1: no state's
  node_scores_.clear();
}

size_t Memos::GangShapeHash::operator()(const GangShape& s) const {
  uint64_t h = s.exact ? 0x9e3779b97f4a7c15ULL : 0;
  auto mix = [&h](int64_t v) { h = (h ^ static_cast<uint64_t>(v)) * 0x100000001b3ULL; };
  for (int r = 0; r < core::kNumRoles; ++r) {
    mix(s.count[r]);
    for (const core::Resources* res : {&s.request[r], &s.scoring[r]}) {
      for (int64_t v : res->v) mix(v);
      for (const auto& [id, v] : res->more) {
        if (v != 0) mix(int64_t{id} << 48 ^ v);  // zeros are absent to ==: skip them here too
      }
    }
  }
  return static_cast<size_t>(h);
}

bool Memos::FitsEmpty(const ClusterState& state, const GangShape& shape) {
  const bool valid =
      fits_empty_node_epoch_ == state.NodeEpoch() &&
      (fits_empty_hold_epoch_ == state.HoldEpoch() || (fits_empty_no_holds_ && !state.HasHolds()));
  if (!valid) {
    fits_empty_.clear();
    fits_empty_node_epoch_ = state.NodeEpoch();
    fits_empty_hold_epoch_ = state.HoldEpoch();
    fits_empty_no_holds_ = !state.HasHolds();
    return false;
  }
  return fits_empty_.contains(shape);
}

void Memos::NoteFitsEmpty(const ClusterState& state, const GangShape& shape) {
  if (!FitsEmpty(state, shape)) fits_empty_.insert(shape);
}

}  // namespace dlsched::engine
