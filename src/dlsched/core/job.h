#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dlsched/core/affinity.h"
#include "dlsched/core/lifecycle.h"
#include "dlsched/core/policy_state.h"
#include "dlsched/core/resources.h"
#include "dlsched/core/time.h"

namespace dlsched::core {

// Task roles of a parameter-server training job.
enum class Role : uint8_t { kPS = 0, kChief = 1, kWorker = 2 };
inline constexpr int kNumRoles = 3;
std::string_view RoleName(Role r);  // "PS", "Chief", "Worker"
std::string_view RoleKey(Role r);   // "ps", "chief", "worker": as in workload files

// kube-scheduler's scoring counts a container that sets no cpu or memory
// request as asking for this much (its "non-zero" requests).
inline constexpr int64_t kDefaultMilliCpuRequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

// One container of a task. A key left out of `requests` is unset: scoring
// then counts the defaults above for cpu and memory; an explicit 0 stays 0.
struct ContainerSpec {
  std::string name;
  Resources requests;
  bool sets_cpu = false;
  bool sets_memory = false;
  friend bool operator==(const ContainerSpec&, const ContainerSpec&) = default;
};

// What a failed task of a role does to its job, as Kubeflow's replica
// restartPolicy: kNever fails the job; kOnFailure and kAlways restart it
// from its last checkpoint; kExitCode restarts it only for an exit code
// Kubeflow counts as retryable (RetryableExitCode). A disruption (the task
// evicted or preempted by its node, not failed by its training) restarts
// the job whatever the policy. The workload file and the TrainingJob
// spell them Never, OnFailure, Always, ExitCode.
enum class RestartPolicy : uint8_t { kNever = 0, kOnFailure, kAlways, kExitCode };
std::string_view RestartPolicyName(RestartPolicy p);  // "Never", ...
// Parses RestartPolicyName's forms.
std::optional<RestartPolicy> ParseRestartPolicy(std::string_view text);

// Kubeflow's rule for kExitCode: exit codes 130 (SIGINT), 137 (SIGKILL),
// 143 (SIGTERM) and 138 (SIGUSR1, the one a trainer raises on purpose to
// ask for a retry) are transient; every other code is permanent (1, 2,
// 126, 127, 128, 139 are named so by Kubeflow, the rest have no promise).
bool RetryableExitCode(int exit_code);

// How a task failed (a pod that became Failed, or a failure a workload
// file schedules).
struct TaskFailure {
  // Evicted or preempted by its node (kubelet eviction, node shutdown,
  // preemption): not the training's fault.
  bool disruption = false;
  std::optional<int> exit_code;  // its main container's, when known
};
// Whether the job restarts from its checkpoint (true) or fails (false)
// after `failure` of a task whose role has `policy`.
bool FailureRestarts(RestartPolicy policy, const TaskFailure& failure);

// A failure a workload file schedules for a simulation: task `index` of
// `role` fails `after` seconds after the job's arrival (no effect if that
// task is not placed then).
struct ScheduledFailure {
  Time after = 0;
  Role role = Role::kWorker;
  int index = 0;
  TaskFailure failure;
};

struct RoleSpec {
  int replicas = 0;      // initial count
  int min_replicas = 0;  // elastic range (Worker only; equal to replicas otherwise)
  int max_replicas = 0;
  Resources resources;  // per replica: what it requests (the sum of its containers)
  // The containers of one replica, when the role lists them. Empty for a
  // role given as plain `resources` (and for specs built in code): it is
  // then one container whose cpu and memory count as unset when 0.
  std::vector<ContainerSpec> containers;
  // Init containers (pod templates only): they run one at a time before
  // the containers, so a replica requests, per resource, the larger of
  // the containers' sum and each init container's request, as
  // kube-scheduler's PodRequests.
  std::vector<ContainerSpec> init_containers;
  // Which nodes a replica may go to: nodeSelector, required node affinity,
  // tolerations.
  NodeConstraints constraints;
  // What a failed replica does to the job.
  RestartPolicy restart_policy = RestartPolicy::kNever;

  // Per replica, what kube-scheduler's scoring counts (NonZeroRequested):
  // the requests, with the defaults for cpu and memory in every container
  // that does not set them.
  Resources ScoringRequest() const;
  friend bool operator==(const RoleSpec&, const RoleSpec&) = default;
};

// A job's roles, indexed by Role.
using RoleSpecs = std::array<RoleSpec, kNumRoles>;

enum class PriorityClass : uint8_t { kLow = 0, kNormal = 1, kHigh = 2 };
std::string_view PriorityClassName(PriorityClass p);  // "low", "normal", "high"

// How a job known by its duration at one size (a trace job, or a workload
// job with `duration:`) runs at another size, for elastic policies that
// resize it: at m workers it does Speedup(m) / Speedup(size) seconds of its
// work per second. The curves (speedup over one worker):
//   linear     m                        (perfect data parallelism; default)
//   sqrt       sqrt(m)                  (diminishing returns)
//   amdahl:p   1 / ((1 - p) + p / m)    (a fraction p of the step is parallel)
//   none       1                        (resizing changes nothing)
struct ScalingCurve {
  enum class Kind : uint8_t { kLinear, kSqrt, kAmdahl, kNone };
  Kind kind = Kind::kLinear;
  double parallel = 1;  // p of amdahl:p, in (0, 1]

  double Speedup(int workers) const;
  std::string ToString() const;  // "linear", "sqrt", "amdahl:0.95", "none"
  // Parses ToString()'s forms; the error is the reason only.
  static Result<ScalingCurve> Parse(std::string_view text);
  friend bool operator==(const ScalingCurve&, const ScalingCurve&) = default;
};

// The node label naming a node's GPU type, as NVIDIA's GPU feature
// discovery sets it on a cluster ("Tesla-V100-SXM2-16GB"; a cluster file's
// `gpuType` sets it too).
inline constexpr std::string_view kGpuTypeLabel = "nvidia.com/gpu.product";

// The node labels naming a node's network switch and its rack (a cluster
// file's `switch` and `rack` set them; Tiresias' cluster shapes label the
// switch). Nodes under one switch talk at full bandwidth; a job whose tasks
// span switches trains at 1 - switchSensitivity of its speed
// (ThroughputProfile::switch_sensitivity). The rack is a failure domain:
// nothing but placement (TopologySpread) and the run's records reads it.
inline constexpr std::string_view kSwitchLabel = "dlsched.io/switch";
inline constexpr std::string_view kRackLabel = "dlsched.io/rack";

// Steps per second as a function of the number of workers: a table of
// measured points. Between points the rate is interpolated linearly; above
// the largest point it stays flat; below the smallest point (and at 0) it is
// 0, meaning the job cannot run with so few workers.
// Steps/s by workers on each GPU type.
using GpuTypeRates = std::map<std::string, std::map<int, double>, std::less<>>;

struct ThroughputProfile {
  std::string model;                  // e.g. "resnet50"; informational
  std::map<int, double> steps_per_s;  // workers -> steps/s, strictly positive keys
  double locality_sensitivity = 0;    // locality factor is 1 - this when spread over nodes
  // Further factor 1 - this when spread over network switches (nodes'
  // kSwitchLabel): the rate across switches is the table's times
  // (1 - locality_sensitivity) x (1 - switch_sensitivity).
  double switch_sensitivity = 0;
  // Steps/s at a placement, where the speed depends on how the workers sit
  // on nodes (Pollux's measurements: a step's time per placement), keyed by
  // the workers on each node, most first ({4, 2}: 4 workers on one node, 2
  // on another). A placement listed here runs at this rate; any other at
  // Rate(workers) times the locality factor.
  std::map<std::vector<int>, double> placements;
  // Instead of the table: a job given by its duration (DurationThroughput),
  // whose rate at every size in [lo, hi] follows from its scaling curve.
  // Computed when asked, so an elastic job of maxReplicas 100,000 costs a
  // few bytes, not a table of 100,000 entries (64 bytes each).
  struct DurationCurve {
    ScalingCurve scaling;
    int size = 1;        // the size the duration is measured at: 1 step/s
    int lo = 1;          // the smallest size with a rate
    int hi = 1;          // the largest; above it the rate stays flat
    double at_size = 1;  // scaling.Speedup(size)
    friend bool operator==(const DurationCurve&, const DurationCurve&) = default;
  };
  std::optional<DurationCurve> curve;
  // Steps/s by workers on each GPU type (a node's kGpuTypeLabel), a table
  // like `steps_per_s`; a worker on a node of a type not listed (or of
  // none) counts at Rate. A gang on nodes of several types runs at the
  // slowest of their rates (RateOn).
  // Shared: a model's tables are one copy, whatever the number of jobs.
  std::shared_ptr<const GpuTypeRates> by_gpu_type;
  const GpuTypeRates& GpuTypes() const;
  void SetGpuTypes(GpuTypeRates rates);  // none when empty

  double Rate(int workers) const;
  // Steps/s of `workers` workers on GPUs of `gpu_type`: its table when
  // by_gpu_type has one, else Rate.
  double RateOn(std::string_view gpu_type, int workers) const;
  // Whether there is a rate at all: a table or a curve (a model-zoo job
  // has neither until its model is resolved).
  bool HasRates() const { return curve.has_value() || !steps_per_s.empty(); }
  // The smallest worker count with a rate (HasRates() must hold).
  int FirstSize() const { return curve ? curve->lo : steps_per_s.begin()->first; }
};

// The throughput of a job that runs `duration` seconds at `size` workers,
// with one step = one second of work at that size (so totalSteps =
// duration): 1 step/s at `size` and Speedup(m) / Speedup(size) at every m in
// [max(1, min_workers), max(size, max_workers)], held as a DurationCurve.
ThroughputProfile DurationThroughput(int size, int min_workers, int max_workers,
                                     const ScalingCurve& curve);

// Where a job already is when a run begins: a workload that continues a
// live cluster (`dlsched snapshot`) lists its running jobs with this.
struct InitialState {
  // kRunning, kRunningProtected, kLaunching or kCheckpointing (placed,
  // gang whole), or kWaiting with some tasks bound (per-pod admission).
  JobPhase phase = JobPhase::kRunning;
  Time since = 0;              // when it entered `phase`
  Time first_start = 0;        // when it first began to launch
  Time last_launch = 0;        // seconds its last launch took (RunningProtected lasts a multiple)
  int64_t admission_seq = -1;  // order of first start, -1 if unknown
  struct Placed {
    Role role;
    int index;
    std::string node;
  };
  std::vector<Placed> tasks;
  // kCheckpointing: workers it gave up that hold their room until its
  // checkpoint is done (an F-scheduling hand-over), then go.
  std::vector<Placed> held;
  // Workers placed (the job's size when running).
  int Workers() const;
};

struct JobSpec {
  std::string name;
  std::string namespace_name = "default";
  Time submit_time = 0;

  // Scheduling inputs.
  PriorityClass priority = PriorityClass::kNormal;
  std::optional<double> max_wait_minutes;
  std::string queue = "default";

  // Workload inputs (simulation).
  double total_steps = 0;
  // Given instead of totalSteps and a throughput model: seconds of running
  // at `replicas` workers; the throughput is then DurationThroughput(replicas,
  // minReplicas, maxReplicas, scaling) and total_steps = *duration.
  std::optional<Time> duration;
  ScalingCurve scaling;
  double steps_done = 0;  // progress already made when the run begins (a snapshot)
  // Also from a snapshot: GPU-seconds already run (attained service) and
  // already spent launching (engine::JobState::attained, launch_attained),
  // and what the policy keeps about the job (its policy state, by field).
  double attained = 0;
  double launch_attained = 0;
  PolicyState policy_state;
  ThroughputProfile throughput;
  Time launch_delay = 0;         // seconds from allocation to training
  Time checkpoint_delay = 0;     // seconds to checkpoint before a reallocation
  std::optional<Time> deadline;  // seconds after submit; the job fails if not done by then
  // Kubeflow's runPolicy.backoffLimit: the job fails at the failure that
  // would be its (backoff_limit + 1)-th restart for a failure (disruptions
  // are not counted); none: no limit.
  std::optional<int> backoff_limit;
  std::vector<ScheduledFailure> failures;  // simulation only, by `after`
  std::optional<InitialState> initial;     // placed when the run begins

  // A role with replicas == 0 is absent. Copies of a job share its roles
  // until one is changed (the non-const role() copies them first when
  // they are shared), and a RolePool gives jobs of one shape one copy: a
  // trace's million jobs have a few dozen shapes, and a job's three roles
  // take 768 bytes. So a reference from the non-const role() is valid
  // until the job is copied; change a copy through the copy.
  const RoleSpec& role(Role r) const { return (*roles_)[static_cast<int>(r)]; }
  RoleSpec& role(Role r) { return Own()[static_cast<int>(r)]; }
  const RoleSpecs& roles() const { return *roles_; }

  // Gives the job as `seconds` of running at its `replicas` workers
  // (duration, scaling, totalSteps and the DurationThroughput table), once
  // its Worker role is set.
  void SetDuration(Time seconds, const ScalingCurve& curve);

  // Resources of the job with `workers` workers (all PS and Chief replicas).
  Resources Demand(int workers) const;
  // PS + Chief + minReplicas workers: what the gang needs to start.
  Resources MinDemand() const { return Demand(role(Role::kWorker).min_replicas); }
  // Total number of tasks with `workers` workers.
  int NumTasks(int workers) const;

 private:
  friend class RolePool;
  RoleSpecs& Own();
  std::shared_ptr<const RoleSpecs> roles_;  // never null
  static const std::shared_ptr<const RoleSpecs>& NoRoles();

 public:
  JobSpec() : roles_(NoRoles()) {}
};

// Gives jobs whose roles are equal one shared copy of them (a trace's
// importer passes every job it reads through one).
class RolePool {
 public:
  void Share(JobSpec& job);

 private:
  std::unordered_map<size_t, std::vector<std::shared_ptr<const RoleSpecs>>> by_hash_;
};

}  // namespace dlsched::core
