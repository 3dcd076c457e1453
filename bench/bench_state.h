#pragma once

// Builds realistic engine states for the benchmarks: a homogeneous cluster
// (8 GPU / 64 cpu / 512Gi nodes) partly held by running jobs, and a queue of
// waiting jobs. Jobs come from the workload generator (sim/generate.h), so
// the shapes are the ones `dlsched generate` writes.

#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "dlsched/config/specs.h"
#include "dlsched/engine/cluster_state.h"
#include "dlsched/engine/memos.h"
#include "dlsched/engine/placement.h"
#include "dlsched/engine/pod_queue.h"
#include "dlsched/sim/generate.h"

namespace dlsched::bench {

inline core::ClusterSpec MakeCluster(int nodes) {
  sim::ClusterOptions o;
  o.nodes = nodes;
  auto text = sim::ClusterYaml(o);
  if (!text) throw std::runtime_error(text.error().message);
  auto cluster = config::ParseCluster(*text, "bench-cluster");
  if (!cluster) throw std::runtime_error(cluster.error().message);
  return std::move(*cluster);
}

inline std::vector<core::JobSpec> MakeJobs(int n, uint64_t seed, const std::string& prefix) {
  sim::GenerateOptions o;
  o.jobs = n;
  o.seed = seed;
  o.mean_interarrival = 10;
  o.name_prefix = prefix;
  auto w = sim::GenerateWorkload(o);
  if (!w) throw std::runtime_error(w.error().message);
  return std::move(w->jobs);
}

// A cluster with `running_gpu_share` of its GPUs held by running jobs placed
// on random nodes with room (so free GPUs are fragmented as in a cluster that
// has been running for a while), and `waiting` jobs in phase Waiting. When
// `pod_queue` is set, the waiting jobs' pods are in the per-pod queue in job
// order, as the simulator creates them for per-pod profiles.
struct BenchState {
  core::ClusterSpec cluster;
  std::vector<core::JobSpec> specs;  // never resized after the state is built
  std::unique_ptr<engine::ClusterState> state;
  // The per-pod queue (filled when `pod_queue`) and the engine's memos,
  // kept across the benchmark's cycles as a scheduler keeps them.
  engine::PodQueue pods;
  engine::Memos memos;
  int running_jobs = 0;
  int waiting_jobs = 0;
  core::Time now = 0;

  // `extra_names`: every node also lists that many more resource names
  // (100 of each), as a real GPU node lists ephemeral-storage, hugepages,
  // MIG profiles and device plugins' names; with `tasks_ask`, every task
  // also asks for 1 of the last of them (an id past the inline ones).
  // `queues`: the cluster declares that many queues q0, q1, ... in one
  // cohort, each with an equal share of the GPUs as its nominal quota, and
  // job i belongs to queue i % queues.
  BenchState(int nodes, int waiting, double running_gpu_share, bool pod_queue, int extra_names = 0,
             bool tasks_ask = false, int queues = 0) {
    cluster = MakeCluster(nodes);
    for (int q = 0; q < queues; ++q) {
      core::QueueSpec spec;
      spec.name = "q" + std::to_string(q);
      spec.cohort = "all";
      core::QuotaLine gpu;
      gpu.id = core::kGpu;
      gpu.nominal = int64_t{8} * nodes / queues;
      spec.quota.push_back(gpu);
      cluster.queues.push_back(spec);
    }
    core::ResourceId last = core::kGpu;
    for (int i = 0; i < extra_names; ++i) {
      auto id = core::InternResource("bench.example/resource-" + std::to_string(i));
      if (!id) throw std::runtime_error(id.error().message);
      for (core::NodeSpec& node : cluster.nodes) node.allocatable[*id] = 100;
      last = *id;
    }
    state = std::make_unique<engine::ClusterState>(cluster);
    const int64_t gpu_target = static_cast<int64_t>(
        running_gpu_share * static_cast<double>(state->Capacity()[core::kGpu]));
    // Enough candidates for the running set (each job takes >= 1 GPU).
    std::vector<core::JobSpec> running = MakeJobs(static_cast<int>(gpu_target) + 1, 1, "run");
    std::vector<core::JobSpec> queued;
    if (waiting > 0) queued = MakeJobs(waiting, 2, "wait");
    if (tasks_ask) {
      for (auto* jobs : {&running, &queued}) {
        for (core::JobSpec& spec : *jobs) {
          for (core::Role role : {core::Role::kPS, core::Role::kChief, core::Role::kWorker}) {
            spec.role(role).resources[last] = 1;
          }
        }
      }
    }
    if (queues > 0) {
      for (auto* jobs : {&running, &queued}) {
        for (size_t i = 0; i < jobs->size(); ++i) {
          (*jobs)[i].queue = "q" + std::to_string(i % static_cast<size_t>(queues));
        }
      }
    }
    specs.reserve(running.size() + queued.size());

    std::mt19937_64 rng(3);
    std::vector<engine::TaskRef> slots;
    int64_t gpus = 0;
    for (auto& spec : running) {
      if (gpus >= gpu_target) break;
      specs.push_back(std::move(spec));
      const engine::JobIndex j = state->AddJob(&specs.back(), 0);
      engine::JobState& js = state->MutableJob(j);
      engine::GangSlots(*state, j, js.target_workers, &slots);
      bool placed = true;
      for (const engine::TaskRef& t : slots) {
        const engine::NodeIndex n = RandomNodeWithRoom(rng, t);
        if (n == engine::kNoNode) {
          placed = false;
          break;
        }
        state->PlaceTask(t, n);
      }
      if (!placed) {  // cluster too full for this shape: undo and stop
        for (const engine::TaskRef& t : slots) {
          if (js.NodeOf(t.role, t.index) != engine::kNoNode) state->RemoveTask(t);
        }
        state->SetPhase(j, core::JobPhase::kCompleted, 0);
        break;
      }
      state->SetPhase(j, core::JobPhase::kRunning, 0);
      gpus += specs.back().Demand(js.target_workers)[core::kGpu];
      ++running_jobs;
    }
    // Waiting jobs arrive after the running ones.
    now = 1e6;
    for (auto& spec : queued) {
      spec.submit_time += now;
      specs.push_back(std::move(spec));
      const engine::JobIndex j = state->AddJob(&specs.back(), specs.back().submit_time);
      state->SetPhase(j, core::JobPhase::kWaiting, specs.back().submit_time);
      ++waiting_jobs;
      if (pod_queue) {
        engine::GangSlots(*state, j, state->Job(j).target_workers, &slots);
        for (const engine::TaskRef& t : slots) pods.Add(t, now);
      }
    }
    now = specs.back().submit_time + 1;
  }

 private:
  engine::NodeIndex RandomNodeWithRoom(std::mt19937_64& rng, engine::TaskRef t) const {
    const core::Resources& req = state->Request(t);
    const int n = state->NumNodes();
    for (int attempt = 0; attempt < 64; ++attempt) {
      const auto node = static_cast<engine::NodeIndex>(rng() % static_cast<uint64_t>(n));
      if (req.FitsIn(state->Free(node))) return node;
    }
    for (engine::NodeIndex node = 0; node < n; ++node) {
      if (req.FitsIn(state->Free(node))) return node;
    }
    return engine::kNoNode;
  }
};

}  // namespace dlsched::bench
