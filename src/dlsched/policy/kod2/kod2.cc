// KOD2 as one unit (docs/policies/kod2.md): the Kod2Weight order (weight
// with starvation aging), Kod2 admission (steps 2 and 3), the Kod2ScaleIn
// preemptor, the Kod2ScaleOut sizer and the FewestNodes packer, with their
// arguments and the rules they impose on a profile.
#include "dlsched/policy/framework/plugins.h"
#include "dlsched/policy/kod2/admission_kod2.h"
#include "dlsched/policy/kod2/order_kod2.h"
#include "dlsched/policy/kod2/packer_fewest_nodes.h"
#include "dlsched/policy/kod2/preemptor_kod2.h"
#include "dlsched/policy/kod2/sizer_kod2.h"

namespace dlsched::policy {
namespace {

void RegisterKod2(PluginTable& t) {
  t.orders.emplace("Kod2Weight", MakeKod2Weight);
  t.admissions.emplace("Kod2", NoArgs<engine::Admission, Kod2Admission>());
  t.preemptors.emplace("Kod2ScaleIn", MakeKod2ScaleIn);
  t.sizers.emplace("Kod2ScaleOut", MakeKod2ScaleOut);
  t.packers.emplace("FewestNodes", NoArgs<engine::Packer, FewestNodesPacker>());
  t.requirements.push_back(
      {"admission",
       "Kod2",
       "order",
       {"Kod2Weight"},
       "it takes each job's weight from the order's key and compares waiting with running jobs "
       "by it"});
  t.requirements.push_back(
      {"preemptor",
       "Kod2ScaleIn",
       "order",
       {"Kod2Weight"},
       "it shrinks only jobs of a lower KOD2 weight, read from the order's keys"});
}

}  // namespace

DLSCHED_REGISTER_UNIT(kod2, RegisterKod2);

}  // namespace dlsched::policy
