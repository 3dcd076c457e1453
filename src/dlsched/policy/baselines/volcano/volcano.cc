// Volcano-like priority scheduling as one unit
// (docs/policies/cps-volcano-affinity.md): the Priority order and the
// PriorityEviction preemptor.
#include "dlsched/policy/baselines/volcano/order_priority.h"
#include "dlsched/policy/baselines/volcano/preemptor_priority.h"
#include "dlsched/policy/framework/plugins.h"

namespace dlsched::policy {
namespace {

void RegisterVolcano(PluginTable& t) {
  t.orders.emplace("Priority", NoArgs<engine::JobOrder, PriorityOrder>());
  t.preemptors.emplace(
      "PriorityEviction",
      [](const YAML::Node& args,
         const std::string& where) -> core::Result<std::unique_ptr<engine::Preemptor>> {
        ArgReader reader(args, where);
        DLSCHED_TRY_LET(skip_frozen, reader.Bool("skipFrozen", true));
        DLSCHED_TRY(reader.Finish());
        return std::make_unique<PriorityEvictionPreemptor>(*skip_frozen);
      });
}

}  // namespace

DLSCHED_REGISTER_UNIT(volcano, RegisterVolcano);

}  // namespace dlsched::policy
