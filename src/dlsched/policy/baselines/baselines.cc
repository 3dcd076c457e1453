#include <memory>
#include <string>

#include <yaml-cpp/yaml.h>

#include "dlsched/core/error.h"
#include "dlsched/policy/baselines/admission_gang.h"
#include "dlsched/policy/baselines/admission_per_pod.h"
#include "dlsched/policy/framework/args.h"
#include "dlsched/policy/framework/plugins.h"
#include "dlsched/policy/shared/sizer_fixed.h"

namespace dlsched::policy {
namespace {

// The baselines' own pieces: the Kubernetes default scheduler's per-pod
// admission, gang admission and static partitioning (docs/policies.md);
// the pieces they share with other policies are in shared/.
void RegisterBaselines(PluginTable& t) {
  t.admissions.emplace(
      "Gang",
      [](const YAML::Node& args,
         const std::string& where) -> core::Result<std::unique_ptr<engine::Admission>> {
        ArgReader reader(args, where);
        DLSCHED_TRY_LET(backfill, reader.Bool("backfill", true));
        DLSCHED_TRY(reader.Finish());
        return std::make_unique<GangAdmission>(*backfill);
      });
  t.admissions.emplace("PerPod", NoArgs<engine::Admission, PerPodAdmission>());
  t.sizers.emplace("StaticPartition",
                   [](const YAML::Node& args,
                      const std::string& where) -> core::Result<std::unique_ptr<engine::Sizer>> {
                     ArgReader reader(args, where);
                     if (!reader.Has("slotGpus")) {
                       return core::Errorf("{}.slotGpus: required (the GPUs in one slot, e.g. 2)",
                                           where);
                     }
                     DLSCHED_TRY_LET(n, reader.Int("slotGpus", 1, 1, 1024));
                     DLSCHED_TRY(reader.Finish());
                     return std::make_unique<StaticPartitionSizer>(static_cast<int>(*n));
                   });
  // Per-pod admission is Kubernetes' default scheduler: pods one at a time.
  t.requirements.push_back(
      {"admission",
       "PerPod",
       "order",
       {"FIFO"},
       "pods are scheduled in the order they were created; a job order would be ignored"});
  t.requirements.push_back(
      {"admission",
       "PerPod",
       "packer",
       {"TaskByTask"},
       "pods are placed one at a time by the scorers; a packer would be ignored"});
  t.requirements.push_back(
      {"admission",
       "PerPod",
       "preemptor",
       {"None"},
       "per-pod scheduling here does not preempt; a preemptor would be ignored"});
  t.requirements.push_back(
      {"admission",
       "PerPod",
       "sizer",
       {"Fixed"},
       "a job's pods are created at its replicas and never resized; a sizer would be ignored"});
}

}  // namespace

DLSCHED_REGISTER_UNIT(baselines, RegisterBaselines);

}  // namespace dlsched::policy
