#include "dlsched/policy/baselines/admission_gang.h"

#include <string>

#include <fmt/format.h>

#include "dlsched/policy/shared/admission_ordered.h"

namespace dlsched::policy {
namespace {

class GangHooks final : public OrderedAdmissionHooks {
 public:
  explicit GangHooks(const engine::ClusterState& st) : st_(st) {}
  bool MayPreempt(engine::JobIndex, double) override { return true; }
  std::string Started(engine::JobIndex, int workers, bool after_preemption) override {
    return fmt::format("started with {} worker{}{}", workers, workers == 1 ? "" : "s",
                       after_preemption ? " after preemption" : "");
  }
  std::string IdleRoomOnly(const std::string& reason) override { return "waiting: " + reason; }
  std::string Waiting(const std::string& reason, const std::string& preempt_reason) override {
    return "waiting: " + reason + (preempt_reason.empty() ? "" : "; " + preempt_reason);
  }
  std::string NeverFits(const std::string& never) override {
    return "waiting: can never fit in this cluster: " + never;
  }
  std::string Behind(engine::JobIndex blocker, bool traced) override {
    if (!traced)
      return "waiting: behind an earlier job that cannot start (strict order, no backfill)";
    return fmt::format("waiting: behind {}, which cannot start (strict order, no backfill)",
                       st_.Job(blocker).spec->name);
  }

 private:
  const engine::ClusterState& st_;
};

}  // namespace

void GangAdmission::Admit(engine::CycleContext& ctx, const engine::Profile& profile) const {
  GangHooks hooks(ctx.state());
  // Only a strict queue needs the exact never-fits answer (the packer on
  // the empty cluster); with backfill it only words the reason.
  AdmitInOrder(ctx, profile, {.exact_never_fits = !backfill_, .failure_blocks = !backfill_}, hooks);
}

}  // namespace dlsched::policy
