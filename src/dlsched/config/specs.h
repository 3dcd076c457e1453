#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "dlsched/core/error.h"
#include "dlsched/core/job.h"
#include "dlsched/core/node.h"

namespace dlsched::config {

// One implementation chosen for an extension point, with its arguments. The
// policy registry (policy/) interprets `args`; `where` is the prefix for its
// error messages, e.g. "gang.yaml: scorers[1].args".
struct PluginSpec {
  std::string name;
  double weight = 1;  // used for scorers only
  YAML::Node args;    // a map (possibly empty)
  std::string where;
};

// A scheduler profile: one implementation per extension point
// (docs/principles.md), like a KubeSchedulerConfiguration profile.
struct ProfileSpec {
  std::string name;
  std::string description;
  std::string source;               // file name, for messages
  PluginSpec admission;             // "Gang" (default) or "PerPod"
  PluginSpec order;                 // default "FIFO"
  std::vector<PluginSpec> filters;  // default: TaintToleration, NodeAffinity
  PluginSpec packer;                // default "TaskByTask"
  std::vector<PluginSpec> scorers;  // default: LeastAllocated weight 1
  PluginSpec preemptor;             // default "None"
  PluginSpec sizer;                 // default "Fixed"
  PluginSpec queue_order;           // default "None"
  // After each launch a job stays RunningProtected (frozen: its resources
  // are neither taken nor added to) for this many times its launch duration.
  // 0 (default) goes straight to Running.
  double protect_factor = 0;
  // `protect`: true (RelaunchOnly) protects relaunches only (a job's first
  // launch goes straight to Running); false (EveryLaunch, the default)
  // protects every launch.
  bool protect_relaunch_only = false;
  // `handOver`: true (AfterCheckpoint) makes a job started with room taken
  // from others (stopped, or shrunk with a restart, for it) launch only
  // once their checkpoints are done; false (Immediate) launches it at once.
  bool hand_over_after_checkpoint = false;
  // kube-scheduler's percentageOfNodesToScore, 0..100: on 100 nodes or
  // more, how many feasible nodes are enough to score (0: kube's adaptive
  // default). 100 (dlsched's default) scores every feasible node.
  int percentage_of_nodes_to_score = 100;
  // A job that loses a task (node failure or removal, NoExecute eviction):
  // true restarts it from its last checkpoint, false fails it.
  bool restart_on_task_loss = true;
};

struct WorkloadSpec {
  std::string source;
  std::vector<core::JobSpec> jobs;  // sorted by (submit_time, file order)
  // The run begins at this time (`start`, default 0): jobs that arrived
  // before it are there at once, those with JobSpec::initial placed.
  core::Time start = 0;
};

// Each Load* reads a YAML file; each Parse* parses YAML text where `source`
// is the name used in messages. Every error is one line:
//   "<source>: <field path>: <what is wrong / what was expected>".
core::Result<core::ClusterSpec> LoadCluster(const std::string& path);
core::Result<core::ClusterSpec> ParseCluster(const std::string& text, const std::string& source);
core::Result<WorkloadSpec> LoadWorkload(const std::string& path);
core::Result<WorkloadSpec> ParseWorkload(const std::string& text, const std::string& source);
core::Result<ProfileSpec> LoadProfile(const std::string& path);
core::Result<ProfileSpec> ParseProfile(const std::string& text, const std::string& source);

// Profile YAML `text` with each override "PATH=VALUE" applied: PATH is keys
// and sequence indexes joined by '.' (`order.args.kappa`, `scorers.0.weight`,
// `protectFactor`), VALUE a YAML value (`2`, `false`, `[a, b]`). A plugin
// written as a bare name (`order: FIFO`) becomes `{name: FIFO}` when a path
// goes into it. Missing keys are created; the result is checked by
// ParseProfile like any profile. Errors name the override.
core::Result<std::string> ApplyProfileOverrides(const std::string& text, const std::string& source,
                                                std::span<const std::string> overrides);

enum class FileKind { kCluster, kWorkload, kProfile };
// Fields of a Pod spec read with the workload's rules, for the Kubernetes
// backend's pod templates (JSON is YAML). `source` and `path` prefix the
// messages. ParsePodConstraints reads nodeSelector, affinity (required node
// affinity only; the caller drops what it does not enforce) and
// tolerations of `pod_spec`; ParseResourceList a map of resource name to
// quantity (a container's requests or limits).
core::Status ParsePodConstraints(const YAML::Node& pod_spec, const std::string& source,
                                 const std::string& path, core::NodeConstraints& out);
core::Result<core::Resources> ParseResourceList(const YAML::Node& list, const std::string& source,
                                                const std::string& path);

// A Kubernetes Queue or Cohort object's `spec`, read as an entry of a
// cluster file's `queues` or `cohorts` named `name` (its metadata.name);
// messages read "<source>: <path>.<field>: ...". CheckQueueObjects checks
// them as a whole as a cluster file's are (cohorts' parents free of
// cycles, every tree's quota within the limits), naming the object
// ("Cohort b.parent: ...").
core::Result<core::QueueSpec> ParseQueueObject(const YAML::Node& spec, const std::string& name,
                                               const std::string& source, const std::string& path);
core::Result<core::CohortSpec> ParseCohortObject(const YAML::Node& spec, const std::string& name,
                                                 const std::string& source,
                                                 const std::string& path);
core::Status CheckQueueObjects(const std::vector<core::QueueSpec>& queues,
                               const std::vector<core::CohortSpec>& cohorts);

// Tells a cluster (top-level "nodes"), workload ("jobs") and profile
// ("name" plus at least one extension point key) apart.
core::Result<FileKind> DetectKind(const std::string& path);

}  // namespace dlsched::config
