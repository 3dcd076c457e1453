#pragma once

// A test "kubelet" for the operator's tests (test-only code): an API client
// that plays every node. A pod bound to a node becomes Running; a pod being
// deleted is removed (a DELETE with grace 0, as the kubelet does once its
// containers stop). A node made unreachable (SetUnreachable) has no
// kubelet: its pods keep their last phase, and one being deleted stays
// Terminating until it is force-deleted or the node comes back. A TrainingJob trains while its
// status says it runs (RunningProtected or Running, the life cycle's phases after the launch
// delay), at the rate its throughput table gives for its running workers
// (times the locality factor when they span nodes), integrated over the
// test's clock as the simulator does; a restart after a lost task goes back
// to the progress at its last checkpoint. Once its steps are done, its
// worker and chief pods become Succeeded.
//
// It reacts to changes: its informers' handlers note the pods and jobs
// that changed, and a tick looks at those alone (and brings the jobs that
// train up to the clock), not at every pod: a tick costs what changed.
// Free-running (Start: a thread ticks as soon as something changed, and
// every few milliseconds besides, for the jobs that train) or driven (Tick from the
// test, with NextEvent telling when the next completion is due, for
// lock-step runs on a simulated clock).

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "dlsched/core/job.h"
#include "dlsched/k8s/informer.h"
#include "dlsched/k8s/rest_client.h"
#include "dlsched/k8s/rest_config.h"

namespace dlsched::testing {

class TestKubelet {
 public:
  // `clock` is the test's clock in seconds (the operator's too).
  TestKubelet(k8s::RestConfig config, std::function<double()> clock);
  ~TestKubelet();
  // Starts the informers (and, when `thread`, ticking on its own).
  void Start(bool thread = true);
  void Stop();
  // One pass at the clock's time over the pods and jobs that changed since
  // the last (a write that failed is tried again at the next), and the
  // jobs that train. Returns the number of writes made.
  int Tick();
  // The clock time of the next completion if nothing changes, or +inf.
  double NextEvent() const;
  // Marks `node` unreachable as the node lifecycle controller does when its
  // kubelet stops posting status: the NodeReady condition Unknown, taints
  // node.kubernetes.io/unreachable NoSchedule and NoExecute with their
  // timeAdded; from then on nothing of the node's pods changes here. With
  // `unreachable` false the node is back: Ready True, taints gone, its pods
  // handled again.
  core::Status SetUnreachable(const std::string& node, bool unreachable);
  // Steps trained so far by a job ("namespace/name").
  double Progress(const std::string& job) const;
  // Pods the ticks have looked at so far, each time one was.
  int64_t PodsVisited() const;
  const k8s::Informer& Pods() const { return *pods_; }
  const k8s::Informer& Jobs() const { return *jobs_; }

 private:
  k8s::RestConfig config_;
  std::function<double()> clock_;
  std::unique_ptr<k8s::Informer> pods_, jobs_;
  std::unique_ptr<k8s::RestClient> client_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  struct JobProgress {
    double steps = 0;
    double checkpoint = 0;  // steps at the last checkpoint
    double at = -1;         // clock time `steps` is exact at; -1: not training
    double rate = 0;
    double total = 0;
    std::string phase;
  };
  // What a job's object says, decoded when it changes.
  struct JobSpec {
    double total = 0;
    core::ThroughputProfile throughput;
    std::string phase;
  };
  // A running pod of a job (counted while it trains).
  struct RunningPod {
    std::string node;
    core::Role role = core::Role::kWorker;
  };
  // Noted by the informers' handlers (their threads), taken by Tick.
  void Changed(std::set<std::string> TestKubelet::*which, const nlohmann::json& object);
  // Looks at pod `key` as the informer has it; the jobs whose running pods
  // it changed join `jobs`, a write that failed puts it in `retry`.
  void SyncPod(const std::string& key, int& writes, std::set<std::string>& jobs,
               std::set<std::string>& retry);
  // Looks at job `key` (its object when `changed`) and its running pods.
  void SyncJob(const std::string& key, bool changed, double now, int& writes);
  // Marks the job's finishers Succeeded once its steps are done.
  void FinishIfDone(const std::string& key, const JobProgress& p, int& writes);

  // Under mu_ (Tick's state):
  std::map<std::string, JobProgress> progress_;
  std::set<std::string> unreachable_;  // nodes
  std::map<std::string, JobSpec> specs_;
  std::map<std::string, std::map<std::string, RunningPod>> running_;  // job -> its pods
  std::map<std::string, std::string> pod_job_;                        // pod -> job, while running
  std::map<std::string, std::string> pod_node_;                       // pod -> its node
  std::map<std::string, std::set<std::string>> node_pods_;            // node -> its pods
  std::set<std::string> training_;                                    // jobs with p.at >= 0
  int64_t pods_visited_ = 0;
  // Under changes_mu_ (after mu_ when both are taken):
  std::mutex changes_mu_;
  std::condition_variable changes_cv_;
  std::set<std::string> changed_pods_, changed_jobs_;
};

}  // namespace dlsched::testing
