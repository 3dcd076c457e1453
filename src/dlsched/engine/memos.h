#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "dlsched/engine/cluster_state.h"

namespace dlsched::engine {

// What the engine remembers from one cycle to the next so as not to redo
// work whose answer cannot have changed, as kube-scheduler leaves an
// unschedulable pod aside until a cluster event that may let it fit (its
// queueing hints). The store belongs to whoever runs the cycles (one per
// engine::Scheduler), not to the cache: ClusterState holds the cluster as
// observed and assumed, and counts the events that void a memo; each memo
// records the counts it was computed at and holds while they stay.
//
// A memo never changes a plan's placements: forgetting every memo (a new
// store) gives the same binds. Two of them keep a verdict from being given
// again while it stands (the standing wait, the per-pod wait text), so a
// plan may repeat a wait action a store would have left out.
//
//   memo                        voided by (the declared cluster events)
//   JobMemos::wait              room freed (ClusterState::RoomEpoch)
//   JobMemos::never_fits        a node changed (NodeEpoch); when exact, a
//   fits-empty shapes             foreign or releasing pod came or went
//                                 (HoldEpoch), unless there was no hold then
//                                 and is none now
//   node_scores (SelectNode)    nothing: brought up to date from the nodes
//                                 touched since; a node changed (a new
//                                 journal generation) rebuilds them
//   JobMemos::standing_wait     the job given another reason (reason_seq)
//   JobMemos::pod_wait_text     its reason, pods bound, phase start, or the
//                                 named pod's attempts or status changed
//   the pending order           jobs entering or leaving a pending phase
//                                 (EnteredPending, LeftPending), merged in
//                                 at each cycle
//   every memo                  a cycle of another engine, on another
//                                 state, or of another store on the state
//                                 (Claim)
class Memos {
 public:
  Memos();
  Memos(const Memos&) = delete;
  Memos& operator=(const Memos&) = delete;

  // The start of a cycle of engine `engine` on `state`. Memos another
  // engine wrote, or written for another state, or a state another store
  // cycled since, do not hold: they are all dropped, and the state counts
  // room freed and nodes changed, so what it keeps by those counts (its
  // parked pods) is tried again.
  void Claim(uint64_t engine, ClusterState& state);

  // A job's last failed admission: the verdict of a gang of `workers` that
  // could not start, valid while the state's RoomEpoch() is still `epoch`
  // (0: none). See AdmitInOrder.
  struct WaitMemo {
    uint64_t epoch = 0;
    int workers = 0;
    uint8_t status = 0;  // engine::WaitStatus
    std::string reason;
  };
  // Per-pod admission's last wait verdict on a job and what it was worded
  // from: the pods bound of `total`, and the pod the text names (its
  // failure at its `attempts`-th try), since the job entered its phase at
  // `since`. A queue that did not change is neither worded again nor given
  // a new verdict.
  struct PodWaitText {
    uint32_t reason_seq = 0;
    int placed = -1;
    int total = -1;
    core::Time since = -1;
    int role = -1;
    int index = -1;
    int attempts = 0;
    uint8_t status = 0;  // engine::WaitStatus
    std::string text;
  };
  // The last wait verdict given to a job by an admission that gives one
  // only when it changes (Sizer::ReadsVerdicts false): it stands while
  // `reason_seq` is the job's (given: false when none was).
  struct StandingWait {
    bool given = false;
    uint32_t reason_seq = 0;
    uint8_t status = 0;  // engine::WaitStatus
    std::string reason;
  };
  // engine::NeverFits for a gang of `workers` (`exact` or not): it depends
  // only on the nodes (and, when exact, on the holds of foreign and
  // releasing pods), so it holds while NodeEpoch() (and HoldEpoch(), or
  // the absence of any hold) stay as recorded (node_epoch 0: none).
  struct NeverFitsMemo {
    uint64_t node_epoch = 0;
    uint64_t hold_epoch = 0;
    int workers = 0;
    bool exact = false;
    bool no_holds = false;  // no hold was there when it was computed
    std::optional<std::string> never;
  };
  struct JobMemos {
    WaitMemo wait;
    PodWaitText pod_wait_text;
    StandingWait standing_wait;
    NeverFitsMemo never_fits;
    bool in_pending_order = false;  // among the pending order's entries
  };
  // Job `j`'s memos (none yet: empty ones).
  JobMemos& Job(JobIndex j) {
    if (static_cast<size_t>(j) >= jobs_.size()) jobs_.resize(static_cast<size_t>(j) + 1);
    return jobs_[static_cast<size_t>(j)];
  }

  // The jobs in a phase a pending job may be in (Waiting, Starving,
  // Standby) in the order of a JobOrder with static keys, as the engine
  // last sorted them (engine::OrderPending), updated at each cycle from the
  // jobs that entered and left such a phase since (ClusterState's
  // EnteredPending and LeftPending).
  struct OrderEntry {
    double key = 0;
    core::Time submit = 0;
    JobIndex job = -1;
    // PendingOrder::behind_epoch when the engine gave the job the order's
    // `behind_text` verdict (0: not given), see PendingOrder.
    uint32_t behind = 0;
  };
  struct PendingOrder {
    bool valid = false;
    std::vector<OrderEntry> entries;
    // A strict-order admission gives every job behind a blocked one the
    // same wait verdict, `behind_text`, and gives it again only when it
    // changes (StandingWait). An entry whose `behind` equals `behind_epoch`
    // stands on that verdict, so the admission passes over it without
    // reading its JobState. The epoch moves on, voiding every such mark,
    // when the text changes; a job that gets another reason
    // (ClusterState::BumpReason) or leaves and comes back gets a new,
    // unmarked entry.
    uint32_t behind_epoch = 1;
    std::string behind_text;

    bool Marked(const OrderEntry& e) const { return e.behind == behind_epoch; }
    void Mark(OrderEntry& e, bool on) { e.behind = on ? behind_epoch : 0; }
  };
  PendingOrder& pending_order() { return pending_order_; }

  // The order OrderJobs last sorted, a hint for its next sort (from one
  // cycle to the next most jobs keep their places): each job's place in
  // it, valid when stamped with the sort's generation.
  struct LastOrder {
    uint32_t generation = 0;
    std::vector<std::pair<uint32_t, uint32_t>> place;  // by job: (generation, place)
    uint32_t size = 0;                                 // jobs in the last order
  };
  LastOrder& last_order() { return last_order_; }

  // The shape of a gang of a job without node constraints: per role, how
  // many tasks and what each requests (and counts for scoring). Whether it
  // could ever fit (engine::NeverFits) depends on nothing else, so gangs of
  // one shape share the answer: as kube-scheduler's equivalence classes,
  // and since a trace holds thousands of jobs of a few shapes.
  struct GangShape {
    bool exact = false;
    std::array<int32_t, core::kNumRoles> count{};
    std::array<core::Resources, core::kNumRoles> request{};
    std::array<core::Resources, core::kNumRoles> scoring{};
    friend bool operator==(const GangShape&, const GangShape&) = default;
  };
  // True when gangs of `shape` were found to fit the empty cluster since
  // the nodes and the holds (foreign and releasing pods, if any) last
  // changed; NoteFitsEmpty records it.
  bool FitsEmpty(const ClusterState& state, const GangShape& shape);
  void NoteFitsEmpty(const ClusterState& state, const GangShape& shape);

  // SelectNode's scores of the feasible nodes for one kind of task, kept
  // from cycle to cycle while every scorer is node-local
  // (NodeScorer::NodeLocal): then only the nodes touched since
  // (ClusterState::TouchedNodes) can have changed, so the next task of the
  // same gang, or of any job asking the same resources without node
  // constraints, in this cycle or a later one, rescores those alone; a
  // new generation of the journal (a node itself changed) rebuilds them.
  // A few kinds are kept (a job's PS and workers, the shapes of a queue),
  // the least recently used making way. Like every memo, they change no
  // placement: the node chosen is the one a full scan chooses.
  static constexpr size_t kKeptNodeScores = 64;
  struct NodeScores {
    uint64_t used = 0;  // when last used (a counter), for least recently used
    JobIndex job = -1;  // -1: nothing kept
    core::Role role = core::Role::kWorker;
    bool unconstrained = false;  // the role has no node constraints
    core::Resources request;     // ClusterState::Request of the task
    core::Resources scoring;     // ClusterState::ScoringRequest of the task
    uint64_t generation = 0;     // ClusterState::TouchedGeneration() of `touched`
    size_t touched = 0;          // TouchedNodes().size() when last brought up to date
    // The weighted total of each node (read where it is feasible), and a
    // tournament over them: `best[leaves + n]` is n when node n is
    // feasible (else kNoNode), every other entry the better of its two
    // children (the higher total, the lower index on a tie), so best[1]
    // is the node a full scan picks; a rescored node updates its path.
    std::vector<double> totals;
    std::vector<NodeIndex> best;
    size_t leaves = 0;  // a power of two, at least the nodes
  };
  std::vector<NodeScores>& node_scores() { return node_scores_; }
  uint64_t NextNodeScoresUse() { return ++node_scores_uses_; }
  // A mark per node for one pass that visits each node once (a journal
  // names a node again at every change): Seen(n) is true from the second
  // time n is asked in the pass begun by NewPass.
  void NewPass(int nodes) {
    if (seen_.size() < static_cast<size_t>(nodes)) seen_.resize(static_cast<size_t>(nodes), 0);
    ++pass_;
  }
  bool Seen(NodeIndex n) { return std::exchange(seen_[static_cast<size_t>(n)], pass_) == pass_; }

  // Where the next sampled node search begins (kube-scheduler's
  // nextStartNodeIndex, see SelectNode). Not a memo: kept across claims.
  int next_start_node = 0;

 private:
  void Drop();

  uint64_t id_;          // process-unique: which store last cycled a state
  uint64_t engine_ = 0;  // the engine whose memos these are
  uint64_t state_ = 0;   // ClusterState::Id() of the state they are for
  std::vector<JobMemos> jobs_;
  PendingOrder pending_order_;
  LastOrder last_order_;
  struct GangShapeHash {
    size_t operator()(const GangShape& s) const;
  };
  std::unordered_set<GangShape, GangShapeHash> fits_empty_;
  uint64_t fits_empty_node_epoch_ = 0;
  uint64_t fits_empty_hold_epoch_ = 0;
  bool fits_empty_no_holds_ = false;
  std::vector<NodeScores> node_scores_;
  uint64_t node_scores_uses_ = 0;
  std::vector<uint64_t> seen_;
  uint64_t pass_ = 0;
};

}  // namespace dlsched::engine
