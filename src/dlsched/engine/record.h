#pragma once

#include <string_view>

#include "dlsched/core/policy_state.h"
#include "dlsched/core/time.h"

namespace dlsched::engine {

// A field of what a policy keeps about each job between cycles (its
// record): Tiresias keeps a job's queue level, since when, its place in
// that queue's list and what starvation promotion needs. The policy's unit
// declares its fields as constants of this type and names them in its
// pieces' RecordFields(); the engine keeps one value per declared field
// in every JobState (JobState::record), sets it only as the policy's plans
// ask (ActionKind::kSetRecord) or as the field says below, and carries it
// by name through snapshots and the operator's restarts. A policy reads
// its fields with ClusterState::Record. Fields are told apart by address:
// pieces that share a field name the same constant.
struct RecordField {
  // Its name and bounds in the job formats (one of core::kStateFields).
  core::StateField state;
  // Its value for a new job without one, or the job's arrival time.
  double initial = 0;
  bool initial_is_arrival = false;
  // Set to the time the job begins to launch when it is kNever (the time
  // the job first ran since the policy last reset the field).
  bool stamped_at_launch = false;
  // Kept in a TrainingJob's status (under status.progress) when it differs
  // from `initial`, for a restarted operator to restore.
  bool in_status = false;
  // Shown on the job's timeline when it changes, as "<shown> <value>"
  // (a "level" event); empty: not shown.
  std::string_view shown;

  double InitialFor(core::Time arrival) const { return initial_is_arrival ? arrival : initial; }
};

}  // namespace dlsched::engine
