#include <array>

#include "dlsched/policy/framework/registry.h"

namespace dlsched::policy {
namespace {

// The text of each built-in profile: examples/profiles/<name>.yaml,
// embedded at build time (cmake/embed_profiles.cmake), sorted by name.
struct ProfileText {
  std::string_view name;
  std::string_view yaml;
};
constexpr ProfileText kTexts[] = {
#include "dlsched/policy/builtin_profiles.inc"
};

// The embedded text of `name`; a name without a file fails the build.
consteval std::string_view Yaml(std::string_view name) {
  for (const ProfileText& t : kTexts) {
    if (t.name == name) return t.yaml;
  }
  throw "no examples/profiles/<name>.yaml for a built-in profile";
}

constexpr std::array<BuiltinProfile, 15> kBuiltins = {{
    {"k8s-default", "Kubernetes default: pods one at a time, LeastAllocated spread, no gang",
     Yaml("k8s-default")},
    {"gang-binpack", "Gang scheduling, FIFO with backfill, GPUs binpacked", Yaml("gang-binpack")},
    {"static-n", "Static partitioning into slots of n GPUs, FIFO (static-1, static-2, ...)",
     Yaml("static-n")},
    {"cps", "Combined priority (CPS): user, job, time and parallelism; gang; PS affinity",
     Yaml("cps")},
    {"volcano-priority", "Volcano-like: priority-class order, gang, lower-priority jobs evicted",
     Yaml("volcano-priority")},
    {"fsched", "F-scheduling: elastic GPUs by throughput, slowdown-variance bound", Yaml("fsched")},
    {"kod2", "KOD2: weight order with aging, fewest nodes, elastic scale-in/scale-out",
     Yaml("kod2")},
    {"fifo", "Strict FIFO: the head of the queue blocks it, no backfill (YARN-CS, Tiresias fifo)",
     Yaml("fifo")},
    {"sjf", "Fewest-GPUs job first, preemptive re-plan at every event (Tiresias sjf)", Yaml("sjf")},
    {"srtf", "Shortest remaining time first, oracle durations, preemptive (Tiresias shortest)",
     Yaml("srtf")},
    {"las", "Tiresias 2D-LAS: queues by attained GPU-seconds, demotion, preemption", Yaml("las")},
    {"pollux-tiresias",
     "Tiresias as Pollux's simulator ports it: 2 queues, entry order, 60 s rounds",
     Yaml("pollux-tiresias")},
    {"gavel-las",
     "Gavel's heterogeneity-aware LAS: max-min fair shares of each GPU type (an LP), 360 s rounds",
     Yaml("gavel-las")},
    {"gavel-fifo",
     "Gavel's heterogeneity-aware FIFO: arrival order, each job on its fastest type with room",
     Yaml("gavel-fifo")},
    {"queue-reclaim",
     "Teams' queues: Kueue's order and preemption, elastic borrowers shrunk before jobs stop",
     Yaml("queue-reclaim")},
}};
// Every file in examples/profiles/ is a built-in profile.
static_assert(std::size(kTexts) == kBuiltins.size(),
              "examples/profiles/ holds a file that is not a built-in profile");

}  // namespace

std::span<const BuiltinProfile> BuiltinProfiles() { return kBuiltins; }

}  // namespace dlsched::policy
