#include "dlsched/k8s/leader.h"

#include <ctime>

#include <fmt/format.h>

namespace dlsched::k8s {

using nlohmann::json;

std::string NowMicroTime() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
      1000000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:06d}Z", buf, micros);
}

LeaderElector::LeaderElector(RestClient& client, LeaderOptions options)
    : client_(client), options_(std::move(options)) {}

std::string LeaderElector::Path() const {
  return fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases", options_.namespace_name);
}

json LeaderElector::Record(const json& old_spec, bool taking) const {
  json spec = old_spec.is_object() ? old_spec : json::object();
  const std::string now = NowMicroTime();
  spec["holderIdentity"] = options_.identity;
  spec["leaseDurationSeconds"] = static_cast<int>(options_.lease_duration_seconds);
  spec["renewTime"] = now;
  if (taking) {
    spec["acquireTime"] = now;
    spec["leaseTransitions"] = spec.value("leaseTransitions", 0) + (old_spec.is_object() ? 1 : 0);
  }
  return spec;
}

bool LeaderElector::TryAcquireOrRenew() {
  const Clock::time_point now = Clock::now();
  auto r = client_.Request("GET", Path() + "/" + options_.lease_name);
  if (!r || (r->status != 200 && r->status != 404)) {
    // Cannot tell: a leader keeps leading until its renew deadline.
    return IsLeader();
  }
  if (r->status == 404) {
    const json lease = {
        {"apiVersion", "coordination.k8s.io/v1"},
        {"kind", "Lease"},
        {"metadata", {{"name", options_.lease_name}, {"namespace", options_.namespace_name}}},
        {"spec", Record(nullptr, true)}};
    auto c = client_.Request("POST", Path(), lease.dump());
    const bool won = c && c->status == 201;
    if (won) Renewed(now);
    leading_ = won;
    return won;
  }
  json lease = json::parse(r->body, nullptr, false);
  if (!lease.is_object()) return IsLeader();
  const json spec = lease.value("spec", json::object());
  const std::string holder = spec.is_object() ? spec.value("holderIdentity", "") : "";
  const std::string renew = spec.is_object() ? spec.value("renewTime", "") : "";
  if (holder != observed_holder_ || renew != observed_renew_) {
    observed_holder_ = holder;
    observed_renew_ = renew;
    observed_at_ = now;
  }
  const int duration = spec.is_object() ? spec.value("leaseDurationSeconds", 15) : 15;
  const bool mine = holder == options_.identity;
  const bool expired = now - observed_at_ > std::chrono::duration<double>(duration);
  if (!mine && !holder.empty() && !expired) {
    leading_ = false;
    return false;
  }
  lease["spec"] = Record(spec, /*taking=*/!mine);
  // The write carries the resourceVersion read: a concurrent candidate's
  // write makes ours fail with 409 Conflict.
  auto u = client_.Request("PUT", Path() + "/" + options_.lease_name, lease.dump());
  if (u && u->status == 200) {
    Renewed(now);
    leading_ = true;
    const json written = json::parse(u->body, nullptr, false);
    if (written.is_object() && written.contains("spec")) {
      observed_holder_ = options_.identity;
      observed_renew_ = written["spec"].value("renewTime", "");
      observed_at_ = now;
    }
    return true;
  }
  if (u && u->status == 409) leading_ = false;
  return IsLeader();
}

bool LeaderElector::IsLeader() const {
  const Clock::time_point renewed{Clock::duration(renewed_at_.load())};
  return leading_ &&
         Clock::now() - renewed < std::chrono::duration<double>(options_.renew_deadline_seconds);
}

void LeaderElector::Release() {
  if (!leading_) return;
  leading_ = false;
  auto r = client_.Request("GET", Path() + "/" + options_.lease_name);
  if (!r || r->status != 200) return;
  json lease = json::parse(r->body, nullptr, false);
  if (!lease.is_object() || !lease.contains("spec") ||
      lease["spec"].value("holderIdentity", "") != options_.identity) {
    return;
  }
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  lease["spec"]["renewTime"] = NowMicroTime();
  client_.Request("PUT", Path() + "/" + options_.lease_name, lease.dump());
}

namespace {

core::Status PatchLabel(RestClient& client, const std::string& ns, const std::string& name,
                        bool on) {
  const json patch = {{"metadata", {{"labels", {{kLeaderLabel, on ? json("true") : json()}}}}}};
  const std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}", ns, name);
  auto r = client.Request("PATCH", path, patch.dump(), "application/merge-patch+json");
  if (!r) return std::unexpected(r.error());
  if (r->status != 200) return core::Errorf("PATCH {}: status {}", path, r->status);
  return {};
}

}  // namespace

core::Status MarkLeaderPod(RestClient& client, const std::string& ns, const std::string& name,
                           bool leading) {
  if (leading) {
    const std::string path =
        fmt::format("/api/v1/namespaces/{}/pods?labelSelector={}%3Dtrue", ns, kLeaderLabel);
    auto r = client.Request("GET", path);
    if (!r) return std::unexpected(r.error());
    if (r->status != 200) return core::Errorf("GET {}: status {}", path, r->status);
    const json list = json::parse(r->body, nullptr, false);
    if (list.is_object() && list.contains("items") && list["items"].is_array()) {
      for (const json& pod : list["items"]) {
        const std::string other = pod.value("metadata", json::object()).value("name", "");
        if (!other.empty() && other != name) DLSCHED_TRY(PatchLabel(client, ns, other, false));
      }
    }
  }
  return PatchLabel(client, ns, name, leading);
}

}  // namespace dlsched::k8s
