#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "dlsched/core/error.h"
#include "dlsched/k8s/rest_client.h"

namespace dlsched::k8s {

struct LeaderOptions {
  std::string namespace_name = "default";
  std::string lease_name = "dlsched";
  std::string identity;  // unique per replica (the pod name)
  // client-go's defaults (and kube-scheduler's): a leader that has not
  // renewed for lease_duration may be replaced; it gives up itself if it
  // cannot renew within renew_deadline; everyone retries every retry_period.
  double lease_duration_seconds = 15;
  double renew_deadline_seconds = 10;
  double retry_period_seconds = 2;
};

// Leader election over a coordination.k8s.io/v1 Lease, as client-go's
// leaderelection package: a candidate takes the lease when it is absent or
// when its holder has not renewed it for leaseDurationSeconds *as observed
// on the candidate's own clock* (so clock skew between replicas does not
// matter); the holder renews it every retry period. Every write carries the
// resourceVersion it read, so two candidates never both win: the loser gets
// 409 Conflict. TryAcquireOrRenew and Release run on one thread (the
// renewal's own, apart from the API work, so a busy leader still renews);
// IsLeader may be asked from any thread, before every write: a leader that
// has not renewed within renew_deadline (< lease_duration) stops writing
// before any other replica can take the lease over.
class LeaderElector {
 public:
  using Clock = std::chrono::steady_clock;
  LeaderElector(RestClient& client, LeaderOptions options);

  // One attempt: true if this replica holds the lease afterwards.
  bool TryAcquireOrRenew();
  // Leading and renewed within the renew deadline.
  bool IsLeader() const;
  // Gives the lease up (an update with an empty holder), as client-go's
  // ReleaseOnCancel, so a successor need not wait for it to expire.
  void Release();
  const LeaderOptions& options() const { return options_; }

 private:
  std::string Path() const;
  nlohmann::json Record(const nlohmann::json& old_spec, bool taking) const;

  RestClient& client_;
  LeaderOptions options_;
  // The last record seen and when (our clock) it was seen to change.
  std::string observed_holder_;
  std::string observed_renew_;
  Clock::time_point observed_at_{};
  std::atomic<bool> leading_{false};
  // Clock::time_point of the last renewal, as its count since the epoch.
  std::atomic<Clock::rep> renewed_at_{0};
  void Renewed(Clock::time_point at) { renewed_at_.store(at.time_since_epoch().count()); }
};

// The label the leading replica puts on its own pod, so that a Service
// selecting it (deploy/service.yaml, and `kubectl port-forward svc/...`)
// reaches the leader alone: a standby answers /snapshot with 503.
inline constexpr const char* kLeaderLabel = "dlsched.io/leader";

// Labels pod `name` of namespace `ns` as the leader (`leading`) or takes
// the label off; when leading, also takes it off every other pod of `ns`
// that has it (a former leader that stalled and has not yet exited).
core::Status MarkLeaderPod(RestClient& client, const std::string& ns, const std::string& name,
                           bool leading);

// A Kubernetes MicroTime ("2026-11-24T03:50:00.123456Z") for now.
std::string NowMicroTime();

}  // namespace dlsched::k8s
