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
// Free-running (Start: a thread ticks every few milliseconds) or driven
// (Tick from the test, with NextEvent telling when the next completion is
// due, for lock-step runs on a simulated clock).

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

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
  // One pass over every pod and job at the clock's time. Returns the number
  // of writes made.
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
  std::map<std::string, JobProgress> progress_;
  std::set<std::string> unreachable_;  // nodes, under mu_
};

}  // namespace dlsched::testing
