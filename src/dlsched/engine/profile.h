#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "dlsched/engine/extension_points.h"

namespace dlsched::engine {

// What happens to a job that loses a task it did not give up (its node
// failed or was removed, or a NoExecute taint evicted it).
enum class TaskLossPolicy : uint8_t {
  kRestart,  // stop the rest, go back to the last checkpoint, wait to be placed again
  kFail,     // the job fails
};

// One implementation per extension point, built by the policy registry.
class Profile {
 public:
  std::string name;
  std::string description;
  std::unique_ptr<Admission> admission;
  std::unique_ptr<JobOrder> order;
  // Across the cluster's queues; null orders them as None does.
  std::unique_ptr<QueueOrder> queue_order;
  // Checked in this order for every node before any scorer runs.
  std::vector<std::unique_ptr<NodeFilter>> filters;
  std::unique_ptr<Packer> packer;
  std::vector<std::unique_ptr<NodeScorer>> scorers;
  std::vector<double> scorer_weights;  // same length as scorers
  std::unique_ptr<Preemptor> preemptor;
  std::unique_ptr<Sizer> sizer;
  // kube-scheduler's percentageOfNodesToScore (SelectNode): 100 scores
  // every feasible node; 0 is kube's adaptive default.
  int percentage_of_nodes_to_score = 100;
  // Life cycle: RunningProtected lasts protect_factor x the last launch.
  double protect_factor = 0;
  // Life cycle: only relaunches are protected (a first launch goes straight
  // to Running); false protects every launch.
  bool protect_relaunch_only = false;
  // Life cycle: a job started with room taken from others launches once
  // their checkpoints are done (LifecycleOptions::hand_over_after_checkpoint).
  bool hand_over_after_checkpoint = false;
  // Life cycle: a job that loses a task restarts from its checkpoint or fails.
  TaskLossPolicy task_loss = TaskLossPolicy::kRestart;

  // The fields of the job record its pieces keep (the order's, then the
  // admission's; a field two pieces share counted once).
  std::vector<const RecordField*> RecordFields() const {
    std::vector<const RecordField*> fields;
    auto add = [&](std::span<const RecordField* const> piece) {
      for (const RecordField* f : piece) {
        if (std::find(fields.begin(), fields.end(), f) == fields.end()) fields.push_back(f);
      }
    };
    if (order) add(order->RecordFields());
    if (admission) add(admission->RecordFields());
    return fields;
  }
};

}  // namespace dlsched::engine
