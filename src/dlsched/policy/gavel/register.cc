#include <memory>
#include <string>

#include <yaml-cpp/yaml.h>

#include "dlsched/core/error.h"
#include "dlsched/core/limits.h"
#include "dlsched/policy/framework/args.h"
#include "dlsched/policy/framework/plugins.h"
#include "dlsched/policy/gavel/clp.h"
#include "dlsched/policy/gavel/gavel.h"

namespace dlsched::policy {
namespace {

// Gavel's policies (docs/policies/gavel.md).
void RegisterGavel(PluginTable& t) {
  t.admissions.emplace(
      "Gavel",
      [](const YAML::Node& args,
         const std::string& where) -> core::Result<std::unique_ptr<engine::Admission>> {
        ArgReader reader(args, where);
        GavelAdmission::Options o;
        DLSCHED_TRY_LET(max_min, reader.Either("policy", "maxMinFairness", "fifo", true));
        o.policy =
            *max_min ? GavelAdmission::Policy::kMaxMinFairness : GavelAdmission::Policy::kFifo;
        DLSCHED_TRY_LET(aware, reader.Either("heterogeneity", "aware", "agnostic", true));
        o.aware = *aware;
        DLSCHED_TRY_LET(round, reader.Double("round", 360, 1, core::kMaxTime));
        o.round = *round;
        DLSCHED_TRY_LET(reset, reader.Int("resetRounds", 6, 1, 1000000));
        o.reset_rounds = static_cast<int>(*reset);
        DLSCHED_TRY_LET(seed, reader.Int("seed", 0, 0, int64_t{1} << 53));
        o.seed = static_cast<uint64_t>(*seed);
        const YAML::Node weights = reader.Node("weights");
        if (weights.IsDefined() && !weights.IsNull()) {
          ArgReader w(weights, reader.Path("weights"));
          const char* names[] = {"low", "normal", "high"};
          for (size_t k = 0; k < 3; ++k) {
            DLSCHED_TRY_LET(v, w.Double(names[k], 1, 1e-6, 1e6));
            o.weights[k] = *v;
          }
          DLSCHED_TRY(w.Finish());
        }
        DLSCHED_TRY(reader.Finish());
        return std::make_unique<GavelAdmission>(o);
      });
  t.requirements.push_back(
      {"admission",
       "Gavel",
       "order",
       {"FIFO"},
       "Gavel orders jobs by its own priorities (arrival order breaks ties); a job order would "
       "be ignored"});
  t.requirements.push_back(
      {"admission",
       "Gavel",
       "preemptor",
       {"None"},
       "Gavel preempts by its rounds' priorities; a preemptor would be ignored"});
  t.requirements.push_back({"admission",
                            "Gavel",
                            "sizer",
                            {"Fixed"},
                            "a Gavel job runs at its own size (its scale factor), never resized"});
}

}  // namespace

DLSCHED_REGISTER_UNIT(gavel, RegisterGavel);

}  // namespace dlsched::policy
