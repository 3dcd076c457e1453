#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "dlsched/config/specs.h"
#include "dlsched/core/spec_limits.h"
#include "dlsched/engine/engine.h"
#include "dlsched/engine/lifecycle.h"
#include "dlsched/engine/scheduler.h"
#include "dlsched/k8s/informer.h"
#include "dlsched/k8s/rest_client.h"
#include "dlsched/k8s/trainingjob.h"
#include "dlsched/k8s/work_queue.h"

namespace dlsched::k8s {

struct OperatorOptions {
  // Watch TrainingJobs of this namespace only; empty: all namespaces.
  std::string namespace_name;
  // spec.schedulerName of the pods it creates.
  std::string scheduler_name = "dlsched";
  // spec.schedulerName of a TFJob's Evaluator pods, which run outside the
  // gang and which dlsched does not place.
  std::string evaluator_scheduler_name = "default-scheduler";
  // Set spec.nodeName at creation instead of binding through the
  // pods/binding subresource (as the KOD2 operator did).
  bool bind_with_node_name = false;
  // At most this long between scheduling cycles while jobs wait (a cycle
  // also runs at once after any change).
  double resync_seconds = 5;
  // A cycle waits up to this long (wall clock) for the pods the operator
  // deleted to be gone, so the resources they free are placed as freed
  // (the simulator frees them at once); after that it runs regardless and
  // those resources count as still in use.
  double release_wait_seconds = 5;
  InformerOptions informer;
  // Called after every cycle with the cycle's plan (tests, logs).
  std::function<void(double now, const engine::Plan& plan)> on_plan;
  // Structured log lines (one JSON object each); default: stderr.
  std::function<void(const std::string& line)> log;
  // Test hook: after this many API requests the operator acts as if killed
  // there: no further request reaches the server (0: never).
  int64_t crash_after_calls = 0;
  // Asked before every write (any request but a GET): false withholds it
  // (the request fails at once, reaching no server). With leader election,
  // whether this replica still holds the lease within its renew deadline:
  // a leader stalled past it never writes again. Default: always write.
  std::function<bool()> may_write;
  // The operator's clock in seconds (life-cycle timers, job ages); default:
  // seconds since Start on the steady clock. Tests put it on a simulated
  // clock.
  std::function<double()> clock;
};

// The cluster and the queue as the operator sees them, as the inputs of a
// simulation that continues from now (`dlsched snapshot`): present nodes
// in the engine's order, each with `reserved` = what pods of other owners
// request there; unfinished jobs in the engine's order with their progress
// and, when placed, `initial` (their tasks' nodes and phase); `start` is
// the operator's clock now, arrivals are on that clock.
struct OperatorSnapshot {
  core::ClusterSpec cluster;
  config::WorkloadSpec workload;
  // Jobs without totalSteps or a throughput table: written to train one
  // step per second for as long as time allows (they never finish).
  std::vector<std::string> without_progress;
};

// Counters for /metrics and tests.
struct OperatorStats {
  int64_t cycles = 0;
  int64_t api_calls = 0;  // requests sent (reads and writes)
  // Cycle latency histogram: counts of cycles at most each bound (seconds).
  static constexpr double kCycleBuckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                             0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  int64_t cycle_bucket[std::size(kCycleBuckets)] = {};
  double cycle_seconds_sum = 0;
  int64_t binds = 0;
  int64_t pods_created = 0;
  int64_t pods_deleted = 0;
  int64_t preemptions = 0;
  int64_t scale_events = 0;
  int64_t conflicts_retried = 0;
  std::map<long, int64_t> api_errors;            // by HTTP status (0: transport)
  std::map<std::string, int64_t> jobs_by_phase;  // jobs now in each phase
  bool synced = false;                           // informers listed, jobs adopted
};

// The Prometheus text exposition format (version 0.0.4) of the counters.
std::string PrometheusText(const OperatorStats& stats, bool leader);

// The Kubernetes backend of the engine: the same scheduler loop
// (engine::Scheduler: Engine, profile, JobLifecycle) as the simulator,
// acting on an API server. Informers for Nodes, Pods and TrainingJobs feed
// a work queue of keys; each Step tells the loop what changed (nodes, the
// pods of other owners as foreign tasks, releasing pods gone), fires due
// life-cycle timers, runs a scheduling cycle when anything changed or the
// loop is due, and acts out its Plan: pods named <job>-<role>-<index> created
// with an ownerReference and bound through pods/binding, a headless Service
// per job, TrainingJob status and Events. A restarted operator adopts what
// exists (see docs/operator.md).
class Operator final : public engine::Backend {
 public:
  Operator(RestConfig config, const engine::Engine& engine, OperatorOptions options = {});
  Operator(const Operator&) = delete;
  Operator& operator=(const Operator&) = delete;
  ~Operator() override;

  // Starts the informers, waits up to `sync_seconds` for their first list,
  // and adopts the pods and jobs that exist.
  core::Status Start(double sync_seconds = 30);
  // One round: waits up to `max_wait_seconds` for a change or a timer, syncs
  // every queued key, fires due timers, runs a cycle if needed.
  void Step(double max_wait_seconds);
  // Steps until `stop` is set.
  void Run(const std::atomic<bool>& stop);
  void Stop();

  // A snapshot, safe to take from another thread (the /metrics server).
  OperatorStats Stats() const;
  // The live queue as simulation inputs. On the operator's thread only.
  OperatorSnapshot Snapshot();
  const engine::ClusterState& State() const { return state_; }
  const engine::JobLifecycle& Lifecycle() const { return scheduler_.lifecycle(); }
  // The TrainingJob of job index j.
  const TrainingJob& Job(engine::JobIndex j) const { return tjs_[j]; }
  // Jobs neither Completed nor Failed.
  int Unfinished() const { return scheduler_.Unfinished(); }
  // The clock time of the next life-cycle timer or pod retry, or
  // core::kNever (lock-step tests advance a simulated clock to it).
  core::Time NextWakeup() const;
  // True when nothing is queued, no cycle is due and nothing waits for an
  // API call; with the informers caught up, the operator is at rest.
  bool Idle() const {
    return !dirty_ && queue_.Len() == 0 && releasing_.empty() && retry_.empty() &&
           status_dirty_.empty();
  }
  // The informers, for tests that wait for them to catch up.
  const Informer& NodeInformer() const { return *nodes_; }
  const Informer& PodInformer() const { return *pods_; }
  const Informer& JobInformer() const { return *jobs_; }

  // engine::Backend
  core::Time Now() const override;
  void SetTimer(core::Time at, engine::TimerKind kind, engine::JobIndex j, uint64_t epoch) override;
  void Bind(engine::TaskRef t, engine::NodeIndex n) override;
  void Unbind(engine::TaskRef t, engine::NodeIndex n) override;
  void CreateTask(engine::TaskRef t) override;
  void DeleteTask(engine::TaskRef t) override;
  // Estimates training progress as the simulator does (the placement's
  // rate since the last change): the engine and the status read it.
  void OnProgressChange(engine::JobIndex j) override;
  void OnPhase(engine::JobIndex j, core::JobPhase from) override;

 private:
  struct Timer {
    core::Time at;
    engine::TimerKind kind;
    engine::JobIndex job;
    uint64_t epoch;
    bool operator>(const Timer& o) const { return at > o.at; }
  };

  void Adopt();
  void SyncKey(const std::string& key);
  void SyncNode(const std::string& name);
  void SyncPod(const std::string& key);
  void SyncJob(const std::string& key);
  // `submitted`: when an operator before saw it arrive (SubmittedWall), for
  // one adopted at a start.
  void NewJob(const nlohmann::json& object, bool adopting,
              std::optional<double> submitted = std::nullopt);
  // False when the status could not be written (tried again, rate limited).
  bool ReportInvalid(const nlohmann::json& object, const std::string& error);
  // Job j refused by the API server (400, 403, 404 on create, 422): it
  // fails with `why` (the field), and is tried again only when its spec
  // changes (a new metadata.generation).
  void Reject(engine::JobIndex j, const std::string& why);
  // The rejections found inside the life cycle's calls, acted on after.
  void ApplyRejects();
  // The job's reconciliation at every resync and after a transient error:
  // its headless Service while it holds pods.
  void ReconcileJob(engine::JobIndex j, const nlohmann::json& object);
  bool AdoptJob(engine::JobIndex j, const nlohmann::json& object);
  struct FoundPods;
  FoundPods FindPods(engine::JobIndex j) const;
  // Deletes the pod of task `t` (in the background: its dependants go too).
  void DeletePodOf(engine::TaskRef t);
  void CheckCompletion(engine::JobIndex j);
  // A restarted operator's estimates of a job's progress and attained
  // service, and what a levelled order needs (las with starvation), from
  // status.progress as last written.
  void RestoreService(engine::JobIndex j, const nlohmann::json& progress);
  void Cycle();
  void FlushBinds();
  void BindOne(engine::TaskRef t, engine::NodeIndex n);
  void CreateOne(engine::TaskRef t);
  void Gone(const std::string& key);
  void FlushStatus();
  // False when it could not be written (and should be tried again).
  bool WriteStatus(engine::JobIndex j);
  // What status keeps beside the life cycle's phase (conditions, startTime,
  // completionTime), read back from the object's status when the job is
  // decoded, so a restarted operator goes on from it.
  void ReadBackStatus(engine::JobIndex j, const nlohmann::json& object);
  // An RFC 3339 time on the operator's clock (Now()), or Now().
  core::Time ClockAt(const std::string& rfc3339) const;

  // runPolicy (operator_runpolicy.cc). Timers of the operator's own, beside
  // the life cycle's: a job's active deadline, a finished job's TTL.
  enum class JobTimerKind : uint8_t { kDeadline, kTtl };
  struct JobTimer {
    core::Time at;
    JobTimerKind kind;
    engine::JobIndex job;
    bool operator>(const JobTimer& o) const { return at > o.at; }
  };
  // startTime set (now, or as read back) and its deadline timer.
  void StartClock(engine::JobIndex j);
  void ScheduleTtl(engine::JobIndex j);
  void FireJobTimers();
  // Job j is its TrainingJob's index now, in the engine (not deleted,
  // replaced, suspended).
  bool Live(engine::JobIndex j) const;
  // cleanPodPolicy: whether a finished job's live pods stay (None) ...
  bool KeepsLivePods(engine::JobIndex j) const;
  // ... and the pods the engine does not hold (Evaluators) deleted at the
  // finish unless None, its finished pods too for All.
  void CleanPods(engine::JobIndex j);
  // Deletes the job's pods the engine does not hold, live ones (and
  // finished ones with `finished_too`).
  void DeleteOtherPods(engine::JobIndex j, bool finished_too);
  // TFJob's Evaluator pods, created once the job first launches (outside
  // the gang: placed by options_.evaluator_scheduler_name).
  void EnsureEvaluators(engine::JobIndex j);
  // suspend: a running job checkpoints first (JobLifecycle::Suspend); the
  // others, or it once in Standby, leave the engine keeping their progress.
  void Suspend(engine::JobIndex j);
  void FinishSuspensions();
  // suspend back to false: the job enters the engine anew from `object`,
  // with the progress it had.
  void Resume(engine::JobIndex j, const nlohmann::json& object);
  // schedulingPolicy.priorityClass: the PriorityClass read from the cluster
  // into the job's priority; false when the job cannot be taken now.
  bool ResolvePriority(TrainingJob& tj, const nlohmann::json& object);
  // The Worker role's elastic range edited on a known job: applied when the
  // new range is valid, within the worker slots the job was accepted with
  // and not below its placed workers; else the refusal, one line.
  std::string ApplyBounds(engine::JobIndex j, const nlohmann::json& object);
  // A known job's object seen again: suspend as it says now; an edit of
  // anything else is refused (a condition and a Warning Event). False when
  // the job left for another index (resumed).
  bool ReconcileSpec(engine::JobIndex j, const nlohmann::json& object);

  // The job's conditions brought up to date with its phase (Kubeflow's
  // types; a lastTransitionTime moves only when its condition's status does).
  const nlohmann::json& UpdateConditions(engine::JobIndex j);
  void Event(engine::JobIndex j, std::string_view type, std::string_view reason,
             std::string_view message);
  // Creates the job's headless Service unless done; a transient failure
  // queues the job's key again with its backoff, a permanent one rejects
  // the job.
  void EnsureService(engine::JobIndex j);
  // API calls that count errors.
  core::Result<Response> Call(std::string_view method, const std::string& path,
                              const nlohmann::json& body = nullptr,
                              std::string_view content_type = "application/json");
  std::string PodsPath(const std::string& ns) const;
  std::string JobPath(const TrainingJob& tj) const;
  // The name of task t's pod: PodName (<job>-<role>-<index>), or
  // <that>-<n> once an earlier pod of the task kept the name ...
  std::string PodNameOf(engine::TaskRef t) const;
  std::string PodKey(engine::TaskRef t) const;  // "<namespace>/<PodNameOf>"
  // ... chosen before the task's next pod is made: the name stays while no
  // pod has it or the one that has it lives (adopted); a finished or
  // terminating pod keeps it (its logs; a pod on an unreachable node stays
  // Terminating), and the task's next pod takes the next free <base>-<n>,
  // so it never waits for its predecessor. Finished pods of the task older
  // than that predecessor are deleted.
  void NameNewPod(engine::TaskRef t);
  void Log(std::string_view level, std::string_view msg, const nlohmann::json& fields = {});

  // Queues (operator_queues.cc). Informers on Queue and Cohort objects when
  // the cluster serves those kinds.
  void StartQueueInformers(const std::function<InformerHandlers(std::string)>& enqueue);
  // The Queue and Cohort objects read again: each spec decoded (an edit
  // refused keeps what was accepted before), the set checked as a whole,
  // the namespaces' default queues; then ApplyQueues.
  void ReadQueueObjects();
  // Every job in its queue (a job naming none: its namespace's default
  // queue, else "default"); queues jobs name and nothing declares added as
  // quotas of nothing; the engine's queues replaced when any of it changed.
  void ApplyQueues();
  // The queue of a job in `namespace_name` that names none: the Queue
  // listing the namespace, else "default".
  const std::string& DefaultQueue(const std::string& namespace_name) const;
  // A new job's queue, before it enters the engine.
  void PlaceInQueue(TrainingJob& tj);
  // Job j names a queue that no Queue declares.
  bool QueueMissing(engine::JobIndex j) const;
  // Each Queue's status (usage, borrowed, pending and admitted jobs,
  // condition Active), written where it changed.
  void WriteQueueStatus();

  RestConfig config_;
  const engine::Engine& engine_;
  OperatorOptions options_;
  RestClient client_;
  WorkQueue queue_;
  std::unique_ptr<Informer> nodes_, pods_, jobs_;
  // Queue and Cohort objects; null when the cluster does not serve them
  // (then no job has a queue).
  std::unique_ptr<Informer> queue_objects_, cohort_objects_;
  // The queues and cohorts accepted (the last valid spec of each), and
  // each namespace's default queue (a Queue's spec.namespaces).
  struct AcceptedQueues {
    std::vector<core::QueueSpec> queues;
    std::vector<core::CohortSpec> cohorts;
    std::map<std::string, std::vector<std::string>> namespaces;  // queue -> its namespaces
    std::map<std::string, std::string> namespace_default;        // namespace -> queue
  };
  AcceptedQueues accepted_;
  // What the engine has: the accepted queues and placeholders for the
  // names in missing_queues_.
  std::vector<core::QueueSpec> engine_queues_;
  std::vector<core::CohortSpec> engine_cohorts_;
  std::set<std::string> missing_queues_;
  // "Queue a" / "Cohort b" -> why its spec (or the set) was refused.
  std::map<std::string, std::string> queue_problems_;
  std::map<std::string, nlohmann::json> queue_status_;  // last written, by queue (no times)
  bool queues_changed_ = false;                         // queue status to look at
  bool queue_news_ = false;  // a Queue or Cohort object changed: read them again
  // Jobs told (an Event) that their queue is missing or over its quota.
  std::unordered_set<engine::JobIndex> queue_told_;
  core::ClusterSpec empty_cluster_;
  // The scheduler loop (the cache, the life cycle, the progress estimate,
  // the cycle), and its cache read-only.
  engine::Scheduler scheduler_;
  const engine::ClusterState& state_;
  // The limits every cluster keeps (core/spec_limits.h) as Nodes come, change
  // and go: a Node that would break one is ignored, as one that does not decode.
  core::ClusterLimits node_limits_;
  std::chrono::steady_clock::time_point start_;
  std::deque<TrainingJob> tjs_;                               // by JobIndex
  std::unordered_map<std::string, engine::JobIndex> by_key_;  // "ns/name" of live jobs
  // "ns/<PodName>" -> the name of the task's pod, when not PodName.
  std::unordered_map<std::string, std::string> pod_names_;
  std::unordered_map<std::string, int64_t> invalid_;  // uid -> generation reported invalid
  std::unordered_set<engine::JobIndex> rejected_;     // refused by the API server
  std::unordered_set<engine::JobIndex> service_ok_;   // their Service exists
  std::unordered_set<engine::JobIndex> never_fits_;   // reported once
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::priority_queue<JobTimer, std::vector<JobTimer>, std::greater<>> job_timers_;
  std::vector<engine::JobIndex> suspend_done_;  // in Standby, to leave the engine
  // Pods deleted and not gone yet: pod key -> (task, uid).
  std::unordered_map<std::string, std::pair<engine::TaskRef, std::string>> releasing_;
  // Pods of other owners counted on nodes: pod key -> node.
  std::unordered_map<std::string, std::string> foreign_;
  // Pods the engine holds as placed tasks: pod key -> the task, the uid of
  // the pod bound for it, and whether the pod cache has shown that pod yet.
  struct Owned {
    engine::TaskRef task;
    std::string uid;
    bool seen = false;
  };
  std::unordered_map<std::string, Owned> owned_;
  // Work the life cycle asked for, done after it returns (API calls).
  std::vector<std::pair<engine::TaskRef, engine::NodeIndex>> pending_binds_;
  std::vector<engine::TaskRef> pending_creates_;
  std::vector<std::pair<engine::TaskRef, std::string>> failed_binds_;
  std::vector<std::pair<engine::JobIndex, std::string>> rejects_;  // refused creates
  std::vector<engine::JobIndex> status_dirty_;
  // API writes that failed and are tried again at every step until done.
  std::vector<std::function<bool()>> retry_;
  std::vector<nlohmann::json> last_status_;  // by JobIndex: what was last written
  // By JobIndex: when the job was submitted, wall clock (status.submitTime).
  std::vector<std::string> submitted_;
  // Added to the clock so that jobs submitted before this operator started
  // (adopted from an earlier one) have times >= 0 on it.
  double clock_offset_ = 0;
  // Within Adopt: nodes are added before the jobs whose pods run on them,
  // so their pods are synced once the jobs are adopted, not with the node
  // (they would count as another owner's until then).
  bool adopting_ = false;
  // By JobIndex: the Kubernetes-style status kept beside the phase.
  struct Kept {
    nlohmann::json conditions = nlohmann::json::array();
    std::string start_time, completion_time;  // RFC 3339, empty until set
    int64_t observed_generation = 0;
    int task_losses = 0;      // JobHistory::task_losses as last seen
    bool restarting = false;  // lost tasks, not running again yet
    bool suspended = false;   // runPolicy.suspend acted on: out of the engine
    bool suspending = false;  // checkpointing on its way to suspended
    std::string fail_reason;  // a condition's reason for Failed (DeadlineExceeded)
    core::Time start_clock = 0, completion_clock = 0;  // those times on Now()'s clock
    core::Time deadline_at = core::kNever;             // activeDeadlineSeconds, on it
    nlohmann::json spec;  // as accepted: the edits it cannot apply are refused
  };
  std::vector<Kept> kept_;
  // Steps done and service attained by job j up to now.
  void Advance(engine::JobIndex j) { scheduler_.Advance(j, Now()); }
  bool dirty_ = true;
  std::chrono::steady_clock::time_point last_cycle_, last_resync_;
  // When the current wait for releasing pods began (a cycle was due).
  std::optional<std::chrono::steady_clock::time_point> release_wait_since_;
  OperatorStats stats_;
  mutable std::mutex snapshot_mu_;
  OperatorStats snapshot_;  // stats_ as of the end of the last Step
  int64_t cycle_seq_ = 0;
};

}  // namespace dlsched::k8s
