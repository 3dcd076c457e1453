// F-scheduling as one unit (docs/policies/fsched.md): the FScheduling sizer
// (throughput-aware fair reallocation, fsched_allocation.h) and its
// arguments.
#include "dlsched/policy/fsched/sizer_fsched.h"
#include "dlsched/policy/plugins.h"

namespace dlsched::policy {
namespace {

void RegisterFsched(PluginTable& t) {
  t.sizers.emplace("FScheduling",
                   [](const YAML::Node& args,
                      const std::string& where) -> core::Result<std::unique_ptr<engine::Sizer>> {
                     // The slowdown S is in [0, 1], so its variance is at most 0.25 and a
                     // vBound above that never binds; 1 is accepted for the paper's 0.5.
                     ArgReader reader(args, where);
                     FSchedulingSizer::Options o;
                     auto v_bound = reader.Double("vBound", o.v_bound, 0, 1);
                     if (!v_bound) return std::unexpected(v_bound.error());
                     auto min_gain = reader.Double("minGain", o.min_gain, 0, 1e9);
                     if (!min_gain) return std::unexpected(min_gain.error());
                     auto restart = reader.Bool("restart", o.restart);
                     if (!restart) return std::unexpected(restart.error());
                     auto hold = reader.Bool("holdUntilCheckpoint", o.hold_until_checkpoint);
                     if (!hold) return std::unexpected(hold.error());
                     auto pay_back = reader.Bool("payBack", o.pay_back);
                     if (!pay_back) return std::unexpected(pay_back.error());
                     if (auto st = reader.Finish(); !st) return std::unexpected(st.error());
                     o.v_bound = *v_bound;
                     o.min_gain = *min_gain;
                     o.restart = *restart;
                     o.hold_until_checkpoint = *hold;
                     o.pay_back = *pay_back;
                     return std::make_unique<FSchedulingSizer>(o);
                   });
}

}  // namespace

DLSCHED_REGISTER_UNIT(fsched, RegisterFsched);

}  // namespace dlsched::policy
