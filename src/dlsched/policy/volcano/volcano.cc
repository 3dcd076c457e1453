// Volcano-like priority scheduling as one unit
// (docs/policies/cps-volcano-affinity.md): the Priority order and the
// PriorityEviction preemptor.
#include "dlsched/policy/plugins.h"
#include "dlsched/policy/volcano/order_priority.h"
#include "dlsched/policy/volcano/preemptor_priority.h"

namespace dlsched::policy {
namespace {

void RegisterVolcano(PluginTable& t) {
  t.orders.emplace("Priority", NoArgs<engine::JobOrder, PriorityOrder>());
  t.preemptors.emplace(
      "PriorityEviction",
      [](const YAML::Node& args,
         const std::string& where) -> core::Result<std::unique_ptr<engine::Preemptor>> {
        ArgReader reader(args, where);
        auto skip_frozen = reader.Bool("skipFrozen", true);
        if (!skip_frozen) return std::unexpected(skip_frozen.error());
        if (auto st = reader.Finish(); !st) return std::unexpected(st.error());
        return std::make_unique<PriorityEvictionPreemptor>(*skip_frozen);
      });
}

}  // namespace

DLSCHED_REGISTER_UNIT(volcano, RegisterVolcano);

}  // namespace dlsched::policy
