#pragma once

// The TrainingJob custom resource (deploy/crd.yaml) and what the engine
// reads of it. Its replica section is Kubeflow's TFJob's or PyTorchJob's: a
// TFJob or PyTorchJob manifest ports by changing apiVersion and kind
// (`tfReplicaSpecs` is read as `replicaSpecs`; `pytorchReplicaSpecs` and
// `elasticPolicy` as PyTorchJob has them). A role's request, node selector, required node affinity
// and tolerations come from its pod template with kube-scheduler's rules,
// into the same core::RoleSpec the workload YAML gives the simulator, so a
// job is placed alike by both backends.

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "dlsched/core/error.h"
#include "dlsched/core/job.h"

namespace dlsched::k8s {

inline constexpr std::string_view kGroup = "dlsched.io";
inline constexpr std::string_view kVersion = "v1alpha1";
inline constexpr std::string_view kApiVersion = "dlsched.io/v1alpha1";
inline constexpr std::string_view kKind = "TrainingJob";
inline constexpr std::string_view kPlural = "trainingjobs";

// Whose replica section a TrainingJob uses: TFJob's (replicaSpecs, or
// tfReplicaSpecs: PS, Chief, Worker) or PyTorchJob's (pytorchReplicaSpecs:
// Master, which runs as the job's chief, and Worker). It decides the
// environment its pods get (TF_CONFIG, or MASTER_ADDR, RANK, ...).
enum class Framework : uint8_t { kTensorFlow, kPyTorch };

// A PyTorchJob's spec.elasticPolicy: torchrun's rendezvous for elastic
// workers (its minReplicas and maxReplicas are the Worker role's range).
struct ElasticPolicy {
  std::string rdzv_backend = "c10d";  // c10d, etcd or etcd-v2
  std::string rdzv_host;              // empty: the first worker's pod
  int rdzv_port = 0;                  // 0: the worker's pytorchjob-port
  std::string rdzv_id;                // empty: torchrun's default
  int n_proc_per_node = 0;            // 0: not set
  int max_restarts = -1;              // -1: not set
};

// What pods a finished job's cleanup deletes (Kubeflow's runPolicy
// .cleanPodPolicy): every pod of the job, the running ones (and pending),
// or none. Kubeflow's default is Running for a TFJob, None for a PyTorchJob.
enum class CleanPodPolicy : uint8_t { kAll, kRunning, kNone };
std::string_view CleanPodPolicyName(CleanPodPolicy p);  // "All", "Running", "None"

// Kubeflow's spec.runPolicy, as far as dlsched honours it (the rest is
// refused when decoded): its schedulingPolicy's minAvailable and queue are
// read into the job (the gang's minimum, spec.scheduling.queue).
struct RunPolicy {
  // Kubeflow's default for the framework (see CleanPodPolicy).
  CleanPodPolicy clean_pod_policy = CleanPodPolicy::kRunning;
  std::optional<int64_t> ttl_seconds_after_finished;
  std::optional<int64_t> active_deadline_seconds;
  bool suspend = false;
  // schedulingPolicy.priorityClass: a PriorityClass's name, read from the
  // cluster by the operator (empty: not given).
  std::string priority_class;
};

// PyTorchJob's default port (its container port named pytorchjob-port).
inline constexpr int kPyTorchPort = 23456;

struct TrainingJob {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  // What the engine sees: roles (requests, constraints, elastic range),
  // scheduling inputs and, when given, throughput and steps.
  core::JobSpec job;
  // Whether the job names its queue; when not, job.queue is "default" as
  // decoded and the operator puts it in its namespace's default queue
  // (a Queue's spec.namespaces).
  bool queue_given = false;
  // Each role's pod template, as given: pods are created from it.
  nlohmann::json templates[core::kNumRoles];
  Framework framework = Framework::kTensorFlow;
  std::optional<ElasticPolicy> elastic;  // PyTorch, when given
  RunPolicy run_policy;
  // TFJob's Evaluator replicas (0 or 1) and their pod template: pods the
  // operator creates outside the gang (docs/operator.md).
  int evaluators = 0;
  nlohmann::json evaluator_template;

  // The key of `role` in the job's replica section ("Master" for a
  // PyTorch job's chief).
  std::string_view ReplicaName(core::Role role) const;
};

// Decodes a TrainingJob as the API server returns it. Every error is one
// line naming the object and the field, e.g.
//   "TrainingJob team-a/mnist: spec.replicaSpecs.Worker.minReplicas: 5 is
//    greater than replicas 4".
core::Result<TrainingJob> DecodeTrainingJob(const nlohmann::json& object);

// Reads a pod template (a PodTemplateSpec) into `role`: the containers'
// requests (a key given only under limits is requested at its limit, as
// the API server defaults it), init containers (a replica requests the
// larger of the containers' sum and each init container), nodeSelector,
// required node affinity and tolerations. Errors are "<source>: <path>...".
core::Status DecodePodTemplate(const nlohmann::json& tmpl, const std::string& source,
                               const std::string& path, core::RoleSpec& role);

}  // namespace dlsched::k8s
