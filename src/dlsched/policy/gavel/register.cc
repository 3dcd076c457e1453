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

// A string argument that must be one of two words: true for the first.
core::Result<bool> Either(ArgReader& reader, std::string_view key, std::string_view first,
                          std::string_view second) {
  const YAML::Node n = reader.Node(key);
  if (!n.IsDefined() || n.IsNull()) return true;
  const std::string s = n.IsScalar() ? n.Scalar() : "";
  if (s == first) return true;
  if (s == second) return false;
  return reader.Expected(key, fmt::format("{} or {}", first, second), n);
}

// Gavel's policies (docs/policies/gavel.md).
void RegisterGavel(PluginTable& t) {
  t.admissions.emplace(
      "Gavel",
      [](const YAML::Node& args,
         const std::string& where) -> core::Result<std::unique_ptr<engine::Admission>> {
        ArgReader reader(args, where);
        GavelAdmission::Options o;
        DLSCHED_TRY_LET(max_min, Either(reader, "policy", "maxMinFairness", "fifo"));
        o.policy =
            *max_min ? GavelAdmission::Policy::kMaxMinFairness : GavelAdmission::Policy::kFifo;
        DLSCHED_TRY_LET(aware, Either(reader, "heterogeneity", "aware", "agnostic"));
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
