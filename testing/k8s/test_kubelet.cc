#include "k8s/test_kubelet.h"

#include <chrono>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dlsched/k8s/objects.h"
#include "dlsched/k8s/trainingjob.h"

namespace dlsched::testing {

using nlohmann::json;

TestKubelet::TestKubelet(k8s::RestConfig config, std::function<double()> clock)
    : config_(std::move(config)), clock_(std::move(clock)) {}

TestKubelet::~TestKubelet() { Stop(); }

void TestKubelet::Start(bool thread) {
  k8s::InformerOptions o;
  o.backoff_initial_seconds = 0.05;
  o.backoff_max_seconds = 0.2;
  pods_ = std::make_unique<k8s::Informer>(config_, "/api/v1/pods", k8s::InformerHandlers{}, o);
  jobs_ = std::make_unique<k8s::Informer>(
      config_, fmt::format("/apis/{}/{}/{}", k8s::kGroup, k8s::kVersion, k8s::kPlural),
      k8s::InformerHandlers{}, o);
  client_ = std::make_unique<k8s::RestClient>(config_);
  pods_->Start();
  jobs_->Start();
  pods_->WaitForSync(10);
  jobs_->WaitForSync(10);
  if (!thread) return;
  thread_ = std::thread([this] {
    while (!stop_) {
      Tick();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
}

void TestKubelet::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (pods_) pods_->Stop();
  if (jobs_) jobs_->Stop();
}

core::Status TestKubelet::SetUnreachable(const std::string& node, bool unreachable) {
  const std::string path = "/api/v1/nodes/" + node;
  // A client of its own: the kubelet's thread uses client_ (one curl
  // handle, not to be shared between threads).
  k8s::RestClient client(config_);
  DLSCHED_TRY_LET(got, client.Request("GET", path));
  if (got->status != 200) return core::Errorf("GET {}: {} {}", path, got->status, got->body);
  json object = json::parse(got->body);
  // The taints, in the spec.
  json taints = json::array();
  if (!object["spec"].is_object()) object["spec"] = json::object();
  if (!object["status"].is_object()) object["status"] = json::object();
  for (const json& t : object["spec"].value("taints", json::array())) {
    if (t.value("key", "") != "node.kubernetes.io/unreachable") taints.push_back(t);
  }
  if (unreachable) {
    for (const char* effect : {"NoSchedule", "NoExecute"}) {
      taints.push_back({{"key", "node.kubernetes.io/unreachable"},
                        {"effect", effect},
                        {"timeAdded", k8s::NowRfc3339()}});
    }
  }
  object["spec"]["taints"] = taints;
  DLSCHED_TRY_LET(put, client.Request("PUT", path, object.dump()));
  if (put->status != 200) return core::Errorf("PUT {}: {} {}", path, put->status, put->body);
  // The Ready condition, in the status.
  object = json::parse(put->body);
  if (!object["status"].is_object()) object["status"] = json::object();
  json conditions = json::array();
  for (const json& c : object["status"].value("conditions", json::array())) {
    if (c.value("type", "") != "Ready") conditions.push_back(c);
  }
  const std::string now = k8s::NowRfc3339();
  conditions.push_back({{"type", "Ready"},
                        {"status", unreachable ? "Unknown" : "True"},
                        {"reason", unreachable ? "NodeStatusUnknown" : "KubeletReady"},
                        {"message", unreachable ? "Kubelet stopped posting node status."
                                                : "kubelet is posting ready status"},
                        {"lastHeartbeatTime", now},
                        {"lastTransitionTime", now}});
  object["status"]["conditions"] = conditions;
  DLSCHED_TRY_LET(status, client.Request("PUT", path + "/status", object.dump()));
  if (status->status != 200) {
    return core::Errorf("PUT {}/status: {} {}", path, status->status, status->body);
  }
  std::lock_guard lock(mu_);
  if (unreachable) {
    unreachable_.insert(node);
  } else {
    unreachable_.erase(node);
  }
  return {};
}

double TestKubelet::Progress(const std::string& job) const {
  std::lock_guard lock(mu_);
  auto it = progress_.find(job);
  return it == progress_.end() ? 0 : it->second.steps;
}

double TestKubelet::NextEvent() const {
  std::lock_guard lock(mu_);
  double next = std::numeric_limits<double>::infinity();
  for (const auto& [key, p] : progress_) {
    if (p.at >= 0 && p.rate > 0 && p.steps < p.total) {
      next = std::min(next, p.at + (p.total - p.steps) / p.rate);
    }
  }
  return next;
}

int TestKubelet::Tick() {
  const double now = clock_();
  int writes = 0;
  // Running workers (and their nodes) of each job.
  struct Running {
    int workers = 0;
    std::set<std::string> nodes;
    std::vector<json> finishers;  // worker and chief pods
  };
  std::map<std::string, Running> running;
  std::set<std::string> unreachable;
  {
    std::lock_guard lock(mu_);
    unreachable = unreachable_;
  }
  for (const json& pod : pods_->List()) {
    const json& meta = pod["metadata"];
    const std::string ns = meta.value("namespace", "");
    const std::string name = meta.value("name", "");
    const std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}", ns, name);
    const std::string node = pod.value("spec", json::object()).value("nodeName", "");
    const std::string phase = pod.value("status", json::object()).value("phase", "");
    // No kubelet runs on an unreachable node: nothing of its pods changes.
    if (unreachable.contains(node)) continue;
    if (meta.contains("deletionTimestamp")) {
      client_->Request("DELETE", path,
                       R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})");
      ++writes;
      continue;
    }
    if (node.empty() || phase == "Succeeded" || phase == "Failed") continue;
    if (phase != "Running") {
      json updated = pod;
      updated["status"]["phase"] = "Running";
      updated["status"]["startTime"] = k8s::NowRfc3339();
      client_->Request("PUT", path + "/status", updated.dump());
      ++writes;
      continue;
    }
    auto task = k8s::PodTaskOf(pod);
    if (!task) continue;
    Running& r = running[ns + "/" + task->job];
    r.nodes.insert(node);
    if (task->role == core::Role::kWorker) ++r.workers;
    if (task->role != core::Role::kPS) r.finishers.push_back(pod);
  }
  std::lock_guard lock(mu_);
  for (const json& object : jobs_->List()) {
    const std::string key = k8s::ObjectKey(object);
    auto tj = k8s::DecodeTrainingJob(object);
    if (!tj) continue;
    JobProgress& p = progress_[key];
    p.total = tj->job.total_steps;
    // Bring the progress up to now at the rate it had.
    if (p.at >= 0) p.steps = std::min(p.total, p.steps + p.rate * (now - p.at));
    const std::string phase = object.value("status", json::object()).value("phase", "");
    if (phase != p.phase) {
      if (phase == "Stopping" || phase == "Standby") {
        // Restarted: a checkpoint just taken is kept, a lost task is not.
        if (p.phase != "Checkpointing") p.steps = p.checkpoint;
      }
      if (phase == "Checkpointing") p.checkpoint = p.steps;
      p.phase = phase;
    }
    auto it = running.find(key);
    const bool training = (phase == "Running" || phase == "RunningProtected") &&
                          it != running.end() && it->second.workers > 0;
    if (!training) {
      p.at = -1;
      p.rate = 0;
      continue;
    }
    const Running& r = it->second;
    p.rate = tj->job.throughput.Rate(r.workers);
    if (r.nodes.size() > 1) p.rate *= 1.0 - tj->job.throughput.locality_sensitivity;
    p.at = now;
    if (p.steps + 1e-9 < p.total) continue;
    for (const json& pod : r.finishers) {
      json updated = pod;
      updated["status"]["phase"] = "Succeeded";
      client_->Request(
          "PUT",
          fmt::format("/api/v1/namespaces/{}/pods/{}/status",
                      pod["metadata"].value("namespace", ""), pod["metadata"].value("name", "")),
          updated.dump());
      ++writes;
    }
  }
  return writes;
}

}  // namespace dlsched::testing
