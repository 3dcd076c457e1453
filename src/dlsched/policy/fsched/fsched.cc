// F-scheduling as one unit (docs/policies/fsched.md): the FScheduling sizer
// (throughput-aware fair reallocation, fsched_allocation.h) and its
// arguments.
#include "dlsched/policy/framework/plugins.h"
#include "dlsched/policy/fsched/sizer_fsched.h"

namespace dlsched::policy {
namespace {

void RegisterFsched(PluginTable& t) {
  t.sizers.emplace(
      "FScheduling",
      [](const YAML::Node& args,
         const std::string& where) -> core::Result<std::unique_ptr<engine::Sizer>> {
        // The slowdown S is in [0, 1], so its variance is at most 0.25 and a
        // vBound above that never binds; 1 is accepted for the paper's 0.5.
        ArgReader reader(args, where);
        FSchedulingSizer::Options o;
        DLSCHED_TRY_LET(v_bound, reader.Double("vBound", o.v_bound, 0, 1));
        DLSCHED_TRY_LET(min_gain, reader.Double("minGain", o.min_gain, 0, 1e9));
        DLSCHED_TRY_LET(restart, reader.Bool("restart", o.restart));
        DLSCHED_TRY_LET(hold, reader.Bool("holdUntilCheckpoint", o.hold_until_checkpoint));
        DLSCHED_TRY_LET(pay_back, reader.Bool("payBack", o.pay_back));
        DLSCHED_TRY_LET(aware, reader.Either("heterogeneity", "aware", "agnostic", o.aware));
        DLSCHED_TRY(reader.Finish());
        o.v_bound = *v_bound;
        o.min_gain = *min_gain;
        o.restart = *restart;
        o.hold_until_checkpoint = *hold;
        o.pay_back = *pay_back;
        o.aware = *aware;
        return std::make_unique<FSchedulingSizer>(o);
      });
}

}  // namespace

DLSCHED_REGISTER_UNIT(fsched, RegisterFsched);

}  // namespace dlsched::policy
