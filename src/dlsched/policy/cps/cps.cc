// The combined priority of CPS as one unit (docs/policies/cps-volcano-affinity.md):
// the CombinedPriority order and the PS/worker affinity scorers.
#include "dlsched/policy/cps/order_cps.h"
#include "dlsched/policy/cps/scorers_affinity.h"
#include "dlsched/policy/framework/plugins.h"

namespace dlsched::policy {
namespace {

void RegisterCps(PluginTable& t) {
  t.orders.emplace("CombinedPriority", MakeCombinedPriority);
  t.scorers.emplace("PsWorkerAffinity", NoArgs<engine::NodeScorer, PsWorkerAffinity>());
  t.scorers.emplace("PsAntiAffinity", NoArgs<engine::NodeScorer, PsAntiAffinity>());
}

}  // namespace

DLSCHED_REGISTER_UNIT(cps, RegisterCps);

}  // namespace dlsched::policy
