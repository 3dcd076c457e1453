#pragma once

#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// Every job runs with its initial `replicas` workers, start to end.
class FixedSizer final : public engine::Sizer {
 public:
  int StartWorkers(const engine::ClusterState& state, engine::JobIndex j) const override {
    return state.Job(j).spec->role(core::Role::kWorker).replicas;
  }
};

// Static partitioning: the GPUs are cut into fixed slots of `slot_gpus`; a
// job takes one slot (with SingleNodePacker the slot lives on one node) and
// keeps it to the end. A job gets slot_gpus / (GPUs per worker) workers,
// clamped to its [minReplicas, maxReplicas] (a job whose range excludes the
// slot size runs at the nearest size it accepts).
class StaticPartitionSizer final : public engine::Sizer {
 public:
  explicit StaticPartitionSizer(int slot_gpus) : slot_gpus_(slot_gpus) {}
  int StartWorkers(const engine::ClusterState& state, engine::JobIndex j) const override;
  int slot_gpus() const { return slot_gpus_; }

 private:
  int slot_gpus_;
};

}  // namespace dlsched::policy
