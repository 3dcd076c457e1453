#pragma once

// A cluster, its jobs' specs and the engine's state of them, for tests that
// drive the engine's pieces (the state, a session, placement, a policy's
// hooks) directly:
//
//   ClusterWithJobs w(Nodes(2, 8, 32, 4));
//   const engine::JobIndex a = w.Add(Job("a", 0, 1, 2, 2, 2), core::JobPhase::kWaiting);
//   ... w.state ...
//
// The specs sit in a deque, so the pointers the state keeps stay valid as
// jobs are added. Neither copied nor moved (the state points into it).
// Test-only code.

#include <deque>
#include <optional>

#include "dlsched/core/job.h"
#include "dlsched/core/lifecycle.h"
#include "dlsched/core/node.h"
#include "dlsched/engine/cluster_state.h"

namespace dlsched::testing {

struct ClusterWithJobs {
  explicit ClusterWithJobs(core::ClusterSpec spec);
  ClusterWithJobs(const ClusterWithJobs&) = delete;
  ClusterWithJobs& operator=(const ClusterWithJobs&) = delete;

  // `spec` added to the state at its submit time.
  engine::JobIndex Add(core::JobSpec spec);
  // The same, then put in `phase` at its submit time.
  engine::JobIndex Add(core::JobSpec spec, core::JobPhase phase);
  // `spec` added at `now` (whatever its submit time) and, if given, put in
  // `phase` at `now`.
  engine::JobIndex AddAt(core::Time now, core::JobSpec spec,
                         std::optional<core::JobPhase> phase = std::nullopt);

  core::ClusterSpec cluster;
  std::deque<core::JobSpec> specs;
  engine::ClusterState state;
};

}  // namespace dlsched::testing
