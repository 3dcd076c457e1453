#pragma once

#include <string>

#include "dlsched/engine/cycle_context.h"
#include "dlsched/engine/profile.h"

namespace dlsched::policy {

// What an ordered gang admission decides for itself; AdmitInOrder does the
// rest. One Hooks object lives for one cycle, so it may keep what it learns
// on the way (KOD2: the heaviest running job) without any state in the
// policy itself.
class OrderedAdmissionHooks {
 public:
  virtual ~OrderedAdmissionHooks() = default;
  // Called before job `j` (ordered by `key`) is tried: may it take room
  // from others (the profile's preemptor) when idle room is not enough?
  virtual bool MayPreempt(engine::JobIndex j, double key) = 0;
  // Outcome texts.
  virtual std::string Started(engine::JobIndex j, int workers, bool after_preemption) = 0;
  // It did not fit in idle room and MayPreempt said no.
  virtual std::string IdleRoomOnly(const std::string& reason) = 0;
  // It did not fit, even after the preemptor (whose reason may be empty).
  virtual std::string Waiting(const std::string& reason, const std::string& preempt_reason) = 0;
  // It can never fit on this cluster (engine::NeverFits's reason).
  virtual std::string NeverFits(const std::string& never) = 0;
  // An earlier job that cannot start holds up the queue. The verdict
  // (`traced` false) should not change with the blocker when the profile
  // gives a verdict only as it changes (Sizer::ReadsVerdicts false):
  // otherwise every start at the head words again the verdict of every
  // job behind it (and an operator writes each one's status). `traced`:
  // the outcome `dlsched explain` shows, which may name the blocker.
  virtual std::string Behind(engine::JobIndex blocker, bool traced) = 0;
  // After job `j` started.
  virtual void OnStarted(engine::JobIndex /*j*/) {}
};

struct OrderedAdmissionOptions {
  // engine::NeverFits's `exact`: also try the packer on the empty cluster.
  bool exact_never_fits = false;
  // A job that cannot start (and could some day) holds up every later one
  // of its queue in this cycle (strict order); every later one when the
  // cluster declares no queues.
  bool failure_blocks = false;
};

// The ordered admission loop shared by Gang and Kod2 admission: the pending
// jobs in the profile's JobOrder (keys recorded in the cycle state), taken
// queue by queue in the profile's QueueOrder when the cluster declares
// queues and the order interleaves them; for
// each, the starvation mark, then - unless an earlier job blocks - the
// sizer's starting gang through the packer, else (if the hooks allow) the
// preemptor, else a wait with its status: UnschedulableAndUnresolvable when
// it can never fit (it then blocks nothing), Unschedulable otherwise.
void AdmitInOrder(engine::CycleContext& ctx, const engine::Profile& profile,
                  const OrderedAdmissionOptions& options, OrderedAdmissionHooks& hooks);

}  // namespace dlsched::policy
