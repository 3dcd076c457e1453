#pragma once

// Gavel's heterogeneity-aware policies and its round-based mechanism
// (D. Narayanan et al., OSDI 2020; stanford-futuredata/gavel;
// docs/policies/gavel.md): an allocation of each job's time over the GPU
// types (gavel_allocation.h), realised in rounds by priorities.

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "dlsched/engine/extension_points.h"
#include "dlsched/policy/shared/rounds.h"

namespace dlsched::policy {

// What the Gavel admission keeps about each job (its engine record): the
// start of the window its counts belong to (the counts are reset at each
// window: Gavel's reset of the time received), up to when its running has
// been counted, and the seconds it has run on each GPU type in the window
// (the cluster's types in name order; a ninth type and beyond share the
// eighth's count). A snapshot and a TrainingJob's status carry them.
struct GavelRecord {
  static constexpr int kTypeSlots = 8;
  static constexpr engine::RecordField kWindow{
      .state = core::CarriedField("gavelWindow"), .in_status = true, .shown = {}};
  static constexpr engine::RecordField kCounted{
      .state = core::CarriedField("gavelCounted"), .in_status = true, .shown = {}};
  static constexpr engine::RecordField kSeconds[kTypeSlots] = {
      {.state = core::CarriedField("gavelSeconds0"), .in_status = true, .shown = {}},
      {.state = core::CarriedField("gavelSeconds1"), .in_status = true, .shown = {}},
      {.state = core::CarriedField("gavelSeconds2"), .in_status = true, .shown = {}},
      {.state = core::CarriedField("gavelSeconds3"), .in_status = true, .shown = {}},
      {.state = core::CarriedField("gavelSeconds4"), .in_status = true, .shown = {}},
      {.state = core::CarriedField("gavelSeconds5"), .in_status = true, .shown = {}},
      {.state = core::CarriedField("gavelSeconds6"), .in_status = true, .shown = {}},
      {.state = core::CarriedField("gavelSeconds7"), .in_status = true, .shown = {}},
  };
  static constexpr const engine::RecordField* kFields[] = {
      &kWindow,     &kCounted,    &kSeconds[0], &kSeconds[1], &kSeconds[2],
      &kSeconds[3], &kSeconds[4], &kSeconds[5], &kSeconds[6], &kSeconds[7]};

  core::Time window = 0;
  core::Time counted = 0;
  std::array<double, kTypeSlots> seconds{};

  // Job `j`'s record (the initial values when the fields are not kept).
  static GavelRecord Of(const engine::ClusterState& state, engine::JobIndex j);
};

// Gavel's round-based mechanism over one of its allocations. Decisions
// are made in rounds, at every multiple of `round` seconds (0 included);
// a cycle between rounds decides nothing (a job that arrives waits for
// the next round) and asks for a cycle at the next one. At a round:
//  1. every unfinished job that needs GPUs is in the problem, at its size,
//     with its rate on each GPU type (ThroughputProfile::RateOn; aware or
//     not), on the GPUs of the schedulable nodes of each type;
//  2. the allocation X (kMaxMinFairness: gavel_allocation.h's
//     MaxMinFairness; kFifo: Fifo) is computed afresh;
//  3. each job's priority on type w is X[i][w] over its share of the time
//     received on w in the window (its seconds on w, plus half a round,
//     over the sum of every job's), Gavel's;
//  4. types in order (aware: the types jobs run fastest on first; not:
//     shuffled each round, seeded), jobs by priority, then allocation,
//     then arrival: a job takes its GPUs on the type while the type has
//     them (under kFifo only jobs with a positive priority);
//  5. a running job picked on the type it runs on keeps its placement; a
//     running job not picked, or picked on another type, is preempted; a
//     pending job picked is placed on nodes of its type (one node that
//     takes the whole gang, the fullest first; else each task on the node
//     of the type with the most free GPUs), or waits;
//  6. each running job's seconds on its type are counted up to now.
// Jobs that need no GPU are placed by the profile's packer, in arrival
// order, whenever they fit.
class GavelAdmission final : public engine::Admission {
 public:
  enum class Policy { kMaxMinFairness, kFifo };
  struct Options {
    Policy policy = Policy::kMaxMinFairness;
    bool aware = true;     // heterogeneity-aware (Gavel) or agnostic (its baselines)
    double round = 360;    // seconds
    int reset_rounds = 6;  // the window of time received, in rounds
    uint64_t seed = 0;     // the agnostic baselines' random type choices
    std::array<double, 3> weights{1, 1, 1};  // by priority class: low, normal, high
  };
  explicit GavelAdmission(const Options& options) : options_(options) {}
  void Admit(engine::CycleContext& ctx, const engine::Profile& profile) const override;
  std::span<const engine::RecordField* const> RecordFields() const override {
    return GavelRecord::kFields;
  }
  const Options& options() const { return options_; }

  // The round at or after `t`, and whether `t` is (within kRoundSlack
  // after) one.
  core::Time NextRound(core::Time t) const;
  bool AtRound(core::Time t) const;
  static constexpr double kRoundSlack = Rounds::kSlack;

 private:
  Options options_;
};

}  // namespace dlsched::policy
