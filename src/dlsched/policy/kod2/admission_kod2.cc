#include "dlsched/policy/kod2/admission_kod2.h"

#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dlsched/engine/profile.h"
#include "dlsched/policy/kod2/order_kod2.h"
#include "dlsched/policy/shared/admission_ordered.h"

namespace dlsched::policy {
namespace {

using engine::ClusterState;
using engine::JobIndex;

// KOD2's side of the ordered loop: steps 2 and 3 against the heaviest
// running job, which a job started in this cycle may become.
class Kod2Hooks final : public OrderedAdmissionHooks {
 public:
  Kod2Hooks(const engine::CycleContext& ctx, const engine::Profile& profile)
      : ctx_(ctx), st_(ctx.state()), order_(*profile.order) {}

  bool MayPreempt(JobIndex j, double key) override {
    if (!running_known_) FindHeaviestRunning();
    const double w = -key;
    // Step 2 when J is at least as heavy as every running job, else step 3.
    const bool step2 = heaviest_ < 0 || w >= heaviest_w_;
    relation_ = heaviest_ < 0 ? fmt::format("weight {}, nothing running", FormatWeight(w))
                              : fmt::format("weight {} {} {} of running {}", FormatWeight(w),
                                            step2 ? ">=" : "<", FormatWeight(heaviest_w_),
                                            st_.Job(heaviest_).spec->name);
    (void)j;
    return step2;
  }
  std::string Started(JobIndex, int workers, bool after_preemption) override {
    return fmt::format("started with {}{} ({})", Workers(workers),
                       after_preemption ? " after scale-in" : "", relation_);
  }
  std::string IdleRoomOnly(const std::string& reason) override {
    return fmt::format("waiting: {} ({}: idle room only, no scale-in)", reason, relation_);
  }
  std::string Waiting(const std::string& reason, const std::string& scale_in) override {
    return fmt::format("waiting: {}{} ({}); no lighter job starts meanwhile", reason,
                       scale_in.empty() ? "" : "; " + scale_in, relation_);
  }
  std::string NeverFits(const std::string& never) override {
    return fmt::format(
        "waiting: {}; it can never start on this cluster, so it does not hold back lighter jobs",
        never);
  }
  // Named even in the verdict: KOD2 gives verdicts every cycle (its
  // scale-out reads them).
  std::string Behind(JobIndex blocker, bool /*traced*/) override {
    return fmt::format(
        "waiting: behind heavier {}, which cannot start even with scale-in (KOD2 starts no "
        "lighter job meanwhile)",
        st_.Job(blocker).spec->name);
  }
  void OnStarted(JobIndex j) override {
    // J now runs: later jobs compare against its plain (unaged) weight.
    double key = 0;
    order_.Keys(st_, std::span<const JobIndex>(&j, 1), ctx_.now, std::span<double>(&key, 1));
    ConsiderRunning(j, -key);
  }

 private:
  // The heaviest running job (no aging: every job here holds resources).
  void FindHeaviestRunning() {
    running_known_ = true;
    std::vector<JobIndex> running;
    ActiveJobs(st_, &running);
    std::vector<double> keys(running.size());
    order_.Keys(st_, running, ctx_.now, keys);
    for (size_t i = 0; i < running.size(); ++i) ConsiderRunning(running[i], -keys[i]);
  }
  void ConsiderRunning(JobIndex r, double w) {
    if (heaviest_ < 0 || Outranks(st_, r, w, heaviest_, heaviest_w_)) {
      heaviest_ = r;
      heaviest_w_ = w;
    }
  }

  const engine::CycleContext& ctx_;
  const ClusterState& st_;
  const engine::JobOrder& order_;
  bool running_known_ = false;
  JobIndex heaviest_ = -1;
  double heaviest_w_ = 0;
  std::string relation_;
};

}  // namespace

void Kod2Admission::Admit(engine::CycleContext& ctx, const engine::Profile& profile) const {
  Kod2Hooks hooks(ctx, profile);
  AdmitInOrder(ctx, profile, {.exact_never_fits = true, .failure_blocks = true}, hooks);
}

}  // namespace dlsched::policy
