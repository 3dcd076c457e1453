#pragma once

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
// 409 Conflict. Not thread-safe; call TryAcquireOrRenew from one thread.
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
  bool leading_ = false;
  Clock::time_point renewed_at_{};
};

// A Kubernetes MicroTime ("2026-11-24T03:50:00.123456Z") for now.
std::string NowMicroTime();

}  // namespace dlsched::k8s
