#pragma once

// The Kubernetes objects the operator reads (Node, foreign Pods) and writes
// (the Pods, Service and Events of a TrainingJob), as JSON.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dlsched/core/error.h"
#include "dlsched/core/job.h"
#include "dlsched/core/node.h"
#include "dlsched/k8s/trainingjob.h"

namespace dlsched::k8s {

// Labels on every pod the operator creates.
inline constexpr std::string_view kJobLabel = "dlsched.io/job-name";
inline constexpr std::string_view kRoleLabel = "dlsched.io/role";    // ps, chief, worker
inline constexpr std::string_view kIndexLabel = "dlsched.io/index";  // replica index
// On a pod asking for a GPU share (dlsched.io/gpu-milli): the index of the
// node's GPU device its share is on, in decimal. Set on the Binding (the API
// server copies a Binding's annotations to the pod) or, binding by
// nodeName, on the pod; a device plugin advertising dlsched.io/gpu-milli
// reads it when it allocates the pod's share (docs/sharing.md).
inline constexpr std::string_view kGpuDeviceAnnotation = "dlsched.io/gpu-device";
inline constexpr int kTfPort = 2222;
// The role key of TFJob's Evaluator (outside the engine's roles).
inline constexpr std::string_view kEvaluatorKey = "evaluator";

// core::RoleKey ("ps", "chief", "worker") names the role in pod names,
// labels and TF_CONFIG.
// The deterministic pod name of a task: "<job>-<role>-<index>".
std::string PodName(std::string_view job, core::Role role, int index);
// An Evaluator's pod (TFJob's): "<job>-evaluator-<index>", role label
// "evaluator".
std::string EvaluatorPodName(std::string_view job, int index);

// The API server's name rules (apimachinery's validation), as the message
// it gives, or nullopt when `name` follows them:
//   DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters
//     (a pod's spec.hostname and spec.subdomain);
//   DNS-1035 label: [a-z]([-a-z0-9]*[a-z0-9])?, at most 63 (a Service's name);
//   DNS-1123 subdomain: DNS-1123 labels joined by '.', at most 253 (most
//     objects' names, a Pod's among them).
std::optional<std::string> Dns1123LabelProblem(std::string_view name);
std::optional<std::string> Dns1035LabelProblem(std::string_view name);
std::optional<std::string> Dns1123SubdomainProblem(std::string_view name);

// A Node as the engine sees it: allocatable (cpu, memory, hugepages and
// extended resources such as nvidia.com/gpu, any number of them; `pods` is
// not scheduled by dlsched and left out), labels, taints, and
// spec.unschedulable. Errors name the node and the field.
core::Result<core::NodeSpec> DecodeNode(const nlohmann::json& node);

// A pod dlsched does not own: what it requests (kube-scheduler's
// PodRequests) and what scoring counts for it.
struct PodRequest {
  core::Resources request;
  core::Resources scoring;
};
core::Result<PodRequest> DecodePodRequest(const nlohmann::json& pod);

// The task of a pod created by the operator, from its labels.
struct PodTask {
  std::string job;  // TrainingJob name (same namespace)
  core::Role role = core::Role::kWorker;
  int index = 0;
};
std::optional<PodTask> PodTaskOf(const nlohmann::json& pod);
// A pod's kGpuDeviceAnnotation: a device index 0..4095, or -1 when absent
// or not one.
int GpuDeviceOf(const nlohmann::json& pod);

// TF_CONFIG of one task of a job running `workers` workers: the cluster
// (PS, Chief, Worker addresses through the job's headless Service) and the
// task itself.
std::string TfConfig(const TrainingJob& tj, int workers, core::Role role, int index);

// The environment dlsched gives every container of one task, by the job's
// framework: TF_CONFIG; or, for PyTorch, PYTHONUNBUFFERED and with a Master
// MASTER_ADDR and MASTER_PORT (the master's pod and its pytorchjob-port),
// WORLD_SIZE (master + `workers`) and RANK (master 0, worker i: i + 1), and
// with an elasticPolicy torchrun's PET_RDZV_ENDPOINT (the first worker's
// pod unless rdzvHost), PET_RDZV_BACKEND, PET_NNODES ("min:max" of the
// Worker role), PET_MAX_RESTARTS, PET_NPROC_PER_NODE and PET_RDZV_ID when
// given, as Kubeflow's PyTorchJob controller sets them.
std::vector<std::pair<std::string, std::string>> PodEnv(const TrainingJob& tj, int workers,
                                                        core::Role role, int index);

// The pod of one task: the role's template with the job's labels, an
// ownerReference to the TrainingJob (controller, blockOwnerDeletion),
// schedulerName, hostname/subdomain for the headless Service, and PodEnv
// in every container (replacing a variable of the same name). `node` sets spec.nodeName (bind
// without the binding subresource); empty leaves the pod to be bound.
// `name` is metadata.name (default PodName; a later run of a task whose
// earlier pod keeps the name gets another: Operator::NameNewPod); the
// hostname is PodName whatever the name.
nlohmann::json MakePod(const TrainingJob& tj, core::Role role, int index, int workers,
                       std::string_view scheduler_name, std::string_view node,
                       std::string_view name = {});
// An Evaluator's pod (TFJob's): as MakePod from the Evaluator's template,
// TF_CONFIG's task {type: evaluator, index}, its cluster the gang's
// without the evaluator; never bound by dlsched (`scheduler_name` places it).
nlohmann::json MakeEvaluatorPod(const TrainingJob& tj, int index, int workers,
                                std::string_view scheduler_name);

// The job's headless Service (clusterIP None, selecting its pods).
nlohmann::json MakeService(const TrainingJob& tj);

// A core/v1 Event about a TrainingJob.
nlohmann::json MakeEvent(std::string_view namespace_name, std::string_view name,
                         std::string_view uid, std::string_view type, std::string_view reason,
                         std::string_view message, std::string_view now_rfc3339);

// What an object says, read leniently (absent or mistyped fields read as
// empty): metadata.<key> as a string ...
std::string Meta(const nlohmann::json& object, const char* key);
// ... a pod's status.phase and spec.nodeName ...
std::string PodPhase(const nlohmann::json& pod);
std::string NodeNameOf(const nlohmann::json& pod);
// ... whether it is done (Succeeded or Failed) or being deleted
// (metadata.deletionTimestamp set) ...
bool Terminated(const nlohmann::json& pod);
bool Terminating(const nlohmann::json& pod);
// ... and the uid of its controller owner, or "".
std::string ControllerUid(const nlohmann::json& pod);

// How a Failed pod failed: a disruption when its node put it out
// (status.reason Evicted, Preempting, Terminated or NodeShutdown, a kubelet
// admission refusal such as OutOf<resource> or UnexpectedAdmissionError,
// or a DisruptionTarget condition True), else with the exit code of the
// first container that ended non-zero, when one did.
core::TaskFailure PodFailure(const nlohmann::json& pod);
// "evicted (The node was low on resource: memory.)", "failed with exit
// code 137 (OOMKilled)", "failed (Error)": the failure in words.
std::string PodFailureText(const nlohmann::json& pod);

// Wall-clock time as RFC 3339 (seconds, UTC), as Kubernetes writes times.
std::string NowRfc3339();
// Seconds since the Unix epoch as RFC 3339 with microseconds (Kubernetes'
// MicroTime), e.g. "2026-11-26T16:00:00.250000Z".
std::string MicroTime(double unix_seconds);
// The wall clock in seconds since the Unix epoch.
double WallSeconds();

// Conditions as Kubernetes' API conventions and Kubeflow have them: sets
// condition `type` of the array `conditions` (appended if absent); its
// lastTransitionTime changes only when its status does, lastUpdateTime
// whenever it changes.
void SetCondition(nlohmann::json& conditions, std::string_view type, bool status,
                  std::string_view reason, std::string_view message);
bool ConditionTrue(const nlohmann::json& conditions, std::string_view type);
// Condition `type` of `conditions`, or null.
const nlohmann::json* FindCondition(const nlohmann::json& conditions, std::string_view type);

}  // namespace dlsched::k8s
