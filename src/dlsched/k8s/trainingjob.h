#pragma once

// The TrainingJob custom resource (deploy/crd.yaml) and what the engine
// reads of it. Its replica section is Kubeflow's TFJob's: a TFJob manifest
// ports by changing apiVersion and kind (`tfReplicaSpecs` is read as
// `replicaSpecs`). A role's request, node selector, required node affinity
// and tolerations come from its pod template with kube-scheduler's rules,
// into the same core::RoleSpec the workload YAML gives the simulator, so a
// job is placed alike by both backends.

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

struct TrainingJob {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  // What the engine sees: roles (requests, constraints, elastic range),
  // scheduling inputs and, when given, throughput and steps.
  core::JobSpec job;
  // Each role's pod template, as given: pods are created from it.
  nlohmann::json templates[core::kNumRoles];
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
