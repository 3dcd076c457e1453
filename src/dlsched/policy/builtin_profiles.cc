#include <array>

#include "dlsched/policy/registry.h"

namespace dlsched::policy {
namespace {

constexpr std::string_view kK8sDefault =
    R"(# The Kubernetes default scheduler, as a dlsched profile: pods are scheduled
# one at a time in creation order, spread with LeastAllocated, with no gang:
# a job runs only once all its pods are bound, and bound pods hold their
# resources while the rest wait (how per-pod scheduling deadlocks).
name: k8s-default
description: Kubernetes default - pods one at a time, LeastAllocated spread, no gang
admission: PerPod
order: FIFO
packer: TaskByTask
scorers:
  - name: LeastAllocated
    weight: 1
    args:
      resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
preemptor: None
sizer: Fixed
)";

constexpr std::string_view kGangBinpack =
    R"(# Gang scheduling (all of a job's minimum or nothing) in FIFO order with
# backfill, binpacking GPUs with kube-scheduler's RequestedToCapacityRatio
# (shape 0->0, 100->10: fuller nodes score higher).
name: gang-binpack
description: Gang scheduling in FIFO order with backfill, GPUs binpacked (RequestedToCapacityRatio)
admission:
  name: Gang
  args: {backfill: true}
order: FIFO
packer: TaskByTask
scorers:
  - name: RequestedToCapacityRatio
    weight: 1
    args:
      shape:
        - {utilization: 0, score: 0}
        - {utilization: 100, score: 10}
      resources:
        - {name: nvidia.com/gpu, weight: 5}
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
preemptor: None
sizer: Fixed
)";

constexpr std::string_view kStaticN =
    R"(# Static partitioning: the GPUs are cut into fixed slots of slotGpus GPUs on
# one node; each job takes one free slot in FIFO order and keeps it to the
# end. `dlsched simulate --profile static-<n>` builds this with slotGpus n.
name: static-n
description: Static partitioning - FIFO, one slot of n GPUs per job (static-<n> for any n; here n = 2)
admission:
  name: Gang
  args: {backfill: false}
order: FIFO
packer: SingleNode
scorers:
  - name: MostAllocated
    weight: 1
    args:
      resources: [{name: nvidia.com/gpu, weight: 1}]
preemptor: None
sizer:
  name: StaticPartition
  args: {slotGpus: 2}
)";

constexpr std::string_view kCps =
    R"(# Combined priority scheduling (CPS): jobs go by V = k * (m_norm + e_norm),
# where e = namespace weight + priority-class value + ceil(100 / maxWait
# minutes) and m = the job's workers, both min-max normalised over the
# waiting jobs. Always gang-scheduled; workers lean to their PS's node and
# the PS of one job keep apart (both soft); otherwise spread like Volcano's
# nodeorder (LeastAllocated). The paper's experiment used priority values
# 100/50/1.
name: cps
description: Combined priority (namespace weight, priority class, max wait, parallelism), gang, PS/worker affinity
admission:
  name: Gang
  args: {backfill: true}
order:
  name: CombinedPriority
  args:
    k: 1
    defaultUserPriority: 5
    namespaceWeights: {}
    priorityValues: {high: 10, normal: 5, low: 1}
packer: TaskByTask
scorers:
  - name: PsWorkerAffinity
    weight: 1
  - name: PsAntiAffinity
    weight: 1
  - name: LeastAllocated
    weight: 1
    args:
      resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
preemptor: None
sizer: Fixed
)";

constexpr std::string_view kVolcanoPriority =
    R"(# Volcano-like baseline: jobs by priority class (high, normal, low; then
# submit time) as Volcano's priority plugin orders them, gang-scheduled
# without blocking the queue (Volcano's allocate action), spread like
# Volcano's nodeorder (LeastAllocated). A job that does not fit may evict
# whole running jobs of strictly lower priority, lowest first.
name: volcano-priority
description: Volcano-like - priority-class order, gang, eviction of lower-priority jobs, LeastAllocated
admission:
  name: Gang
  args: {backfill: true}
order: Priority
packer: TaskByTask
scorers:
  - name: LeastAllocated
    weight: 1
    args:
      resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
preemptor:
  name: PriorityEviction
  args: {skipFrozen: true}
sizer: Fixed
)";

constexpr std::string_view kFsched =
    R"(# F-scheduling (docs/policies/fsched.md): jobs start at minReplicas (gang,
# FIFO with backfill); every cycle the GPUs are re-divided greedily, one
# worker at a time, to the job that adds the most throughput while the
# variance of the slowdowns f(n)/f_best stays under vBound. A running job that
# is resized checkpoints and relaunches (restart), so a reallocation must add
# minGain steps/s or start a waiting job, and a job restarted to grow must
# finish sooner for it (payBack); GPUs a shrinking job gives up reach their
# new owner when its checkpoint is done (holdUntilCheckpoint); after each
# launch a job is frozen (RunningProtected) for protectFactor x its launch
# time (protect: RelaunchOnly spares first launches).
name: fsched
description: F-scheduling - elastic GPUs by throughput under a slowdown-variance bound
protectFactor: 3
protect: EveryLaunch
admission:
  name: Gang
  args: {backfill: true}
order: FIFO
packer: TaskByTask
scorers:
  - name: MostAllocated
    weight: 1
    args:
      resources: [{name: nvidia.com/gpu, weight: 1}]
preemptor: None
sizer:
  name: FScheduling
  args: {vBound: 0.5, minGain: 1, restart: true, holdUntilCheckpoint: true, payBack: true}
)";

constexpr std::string_view kKod2 =
    R"(# KOD2 (docs/policies/kod2.md): jobs are weighed by w = sigmoid(kappa *
# minWorkers / sum of resource shares), so jobs that train with many workers
# on few resources go first; a job that waits past starveLimit seconds is
# raised above every waiting job. The heaviest waiting job, if at least as
# heavy as every running job, may shrink lighter running jobs (never below
# minReplicas) to fit; lighter jobs only take idle room. Jobs start at
# minReplicas and idle room goes to running jobs as extra workers, heaviest
# first, up to maxReplicas. A gang goes on one node if one has room, else on
# as few nodes as possible, most idle first.
name: kod2
description: KOD2 - weight order with starvation aging, fewest-nodes packing, elastic scale-in and scale-out
admission: Kod2
order:
  name: Kod2Weight
  args:
    kappa: 0.5
    scale: node
    starveLimit: 600
    resources: [cpu, memory, nvidia.com/gpu]
packer: FewestNodes
scorers:
  - name: MostAllocated
    weight: 1
    args:
      resources: [{name: nvidia.com/gpu, weight: 1}, {name: cpu, weight: 1}, {name: memory, weight: 1}]
preemptor:
  name: Kod2ScaleIn
  args: {restartOnResize: false}
sizer:
  name: Kod2ScaleOut
  args: {restartOnResize: false}
)";

constexpr std::string_view kFifo =
    R"(# Strict first-come-first-served, the FIFO baseline of YARN's capacity
# scheduler and of Tiresias' simulator (`fifo`): whole jobs in arrival
# order; the head of the queue blocks every job behind it (no backfill);
# nothing is preempted. GPUs are packed (MostAllocated).
name: fifo
description: Strict FIFO - arrival order, the head blocks the queue (no backfill), no preemption
admission:
  name: Gang
  args: {backfill: false}
order: FIFO
packer: TaskByTask
scorers:
  - name: MostAllocated
    weight: 1
    args:
      resources: [{name: nvidia.com/gpu, weight: 1}]
preemptor: None
sizer: Fixed
)";

constexpr std::string_view kSjf =
    R"(# Smallest job first as Tiresias' simulator implements `sjf`: at every
# event all jobs, running and pending, are re-planned in order of the GPUs
# they ask for (fewest first; ties by arrival), each taking its GPUs while
# the cluster's total lasts; a running job that no longer makes the cut is
# preempted (back to the queue, keeping its progress). No backfill block:
# a job that does not fit is skipped. GPUs are packed (MostAllocated).
name: sjf
description: Smallest (fewest GPUs) job first, re-planned at every event, preemptive (Tiresias sjf)
admission: Replan
order: GpuDemand
packer: TaskByTask
scorers:
  - name: MostAllocated
    weight: 1
    args:
      resources: [{name: nvidia.com/gpu, weight: 1}]
preemptor: None
sizer: Fixed
)";

constexpr std::string_view kSrtf =
    R"(# Shortest remaining time first with oracle durations, as Tiresias'
# simulator implements `shortest`: at every event all jobs, running and
# pending, are re-planned in order of the running time they have left at
# their size (ties by arrival); a running job that no longer makes the cut
# is preempted (back to the queue, keeping its progress). GPUs are packed
# (MostAllocated).
name: srtf
description: Shortest remaining time first (oracle durations), preemptive (Tiresias shortest)
admission: Replan
order: RemainingTime
packer: TaskByTask
scorers:
  - name: MostAllocated
    weight: 1
    args:
      resources: [{name: nvidia.com/gpu, weight: 1}]
preemptor: None
sizer: Fixed
)";

constexpr std::string_view kLas =
    R"(# Tiresias' discretised two-dimensional least-attained-service, as its
# simulator implements `dlas-gpu`: a job's queue is how many thresholds its
# attained service (GPU-seconds run) has passed (3250 and 7200, the
# simulator's defaults; its README says otherwise); lower queues go first,
# within a queue the order of the simulator's list for it (running jobs,
# then pending ones, each where its history put it; then the ones that
# just entered; `queueOrder: entry` orders by entry instead); every
# arrival, completion and threshold crossing re-plans all jobs, preempting
# running jobs of lower queues (back to the queue, keeping their
# progress). GPUs are packed.
name: las
description: Tiresias 2D-LAS - queues by attained GPU-service, demotion, preemption by higher queues
admission: Replan
order:
  name: Las
  args: {thresholds: [3250, 7200], queueOrder: list}
packer: TaskByTask
scorers:
  - name: MostAllocated
    weight: 1
    args:
      resources: [{name: nvidia.com/gpu, weight: 1}]
preemptor: None
sizer: Fixed
)";

constexpr std::string_view kPolluxTiresias =
    R"(# Tiresias as Pollux's simulator runs it, the baseline of the Pollux paper
# (petuum/adaptdl, osdi21-artifact, simulator/tiresias.py): two queues split
# at 57,600 GPU-seconds (16 GPU-hours) of service, counted from each
# placement on (launches included); within a queue, jobs strictly in the
# order they entered it; decisions only every 60 s, when all jobs are
# re-planned and running jobs that lose their place are preempted (back to
# the queue, keeping their progress); a job's GPUs taken from the nodes
# with the most free GPUs first, each filled before the next.
name: pollux-tiresias
description: Tiresias as Pollux's simulator ports it - 2 queues at 57,600 GPU-s, entry order, 60 s rounds, most-free nodes first
admission:
  name: Replan
  args: {interval: 60}
order:
  name: Las
  args: {thresholds: [57600], queueOrder: strictEntry, countLaunching: true}
packer: FewestNodes
scorers:
  - name: LeastAllocated
    weight: 1
    args:
      resources: [{name: nvidia.com/gpu, weight: 1}]
preemptor: None
sizer: Fixed
)";

constexpr std::array<BuiltinProfile, 12> kBuiltins = {{
    {"k8s-default", "Kubernetes default: pods one at a time, LeastAllocated spread, no gang",
     kK8sDefault},
    {"gang-binpack", "Gang scheduling, FIFO with backfill, GPUs binpacked", kGangBinpack},
    {"static-n", "Static partitioning into slots of n GPUs, FIFO (static-1, static-2, ...)",
     kStaticN},
    {"cps", "Combined priority (CPS): user, job, time and parallelism; gang; PS affinity", kCps},
    {"volcano-priority", "Volcano-like: priority-class order, gang, lower-priority jobs evicted",
     kVolcanoPriority},
    {"fsched", "F-scheduling: elastic GPUs by throughput, slowdown-variance bound", kFsched},
    {"kod2", "KOD2: weight order with aging, fewest nodes, elastic scale-in/scale-out", kKod2},
    {"fifo", "Strict FIFO: the head of the queue blocks it, no backfill (YARN-CS, Tiresias fifo)",
     kFifo},
    {"sjf", "Fewest-GPUs job first, preemptive re-plan at every event (Tiresias sjf)", kSjf},
    {"srtf", "Shortest remaining time first, oracle durations, preemptive (Tiresias shortest)",
     kSrtf},
    {"las", "Tiresias 2D-LAS: queues by attained GPU-seconds, demotion, preemption", kLas},
    {"pollux-tiresias",
     "Tiresias as Pollux's simulator ports it: 2 queues, entry order, 60 s rounds",
     kPolluxTiresias},
}};

}  // namespace

std::span<const BuiltinProfile> BuiltinProfiles() { return kBuiltins; }

}  // namespace dlsched::policy
