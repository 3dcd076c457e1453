// Shared GPUs' plugins (docs/sharing.md): the FGD node scorer.

#include "dlsched/policy/framework/plugins.h"
#include "dlsched/policy/sharing/scorer_fgd.h"

namespace dlsched::policy {
namespace {

void RegisterSharing(PluginTable& t) { t.scorers.emplace("FragmentationGradient", MakeFgdScorer); }

}  // namespace

DLSCHED_REGISTER_UNIT(sharing, RegisterSharing);

}  // namespace dlsched::policy
