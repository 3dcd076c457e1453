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

void TestKubelet::Changed(std::set<std::string> TestKubelet::*which, const json& object) {
  {
    std::lock_guard lock(changes_mu_);
    (this->*which).insert(k8s::ObjectKey(object));
  }
  changes_cv_.notify_one();
}

void TestKubelet::Start(bool thread) {
  k8s::InformerOptions o;
  o.backoff_initial_seconds = 0.05;
  o.backoff_max_seconds = 0.2;
  auto handlers = [this](std::set<std::string> TestKubelet::*which) {
    k8s::InformerHandlers h;
    h.on_add = [this, which](const json& object) { Changed(which, object); };
    h.on_update = [this, which](const json&, const json& object) { Changed(which, object); };
    h.on_delete = [this, which](const json& object) { Changed(which, object); };
    return h;
  };
  pods_ = std::make_unique<k8s::Informer>(config_, "/api/v1/pods",
                                          handlers(&TestKubelet::changed_pods_), o);
  jobs_ = std::make_unique<k8s::Informer>(
      config_, fmt::format("/apis/{}/{}/{}", k8s::kGroup, k8s::kVersion, k8s::kPlural),
      handlers(&TestKubelet::changed_jobs_), o);
  client_ = std::make_unique<k8s::RestClient>(config_);
  pods_->Start();
  jobs_->Start();
  pods_->WaitForSync(10);
  jobs_->WaitForSync(10);
  if (!thread) return;
  // A tick as soon as something changed; every 5 ms besides, for the jobs
  // that train (their completion is a matter of the clock).
  thread_ = std::thread([this] {
    while (!stop_) {
      Tick();
      std::unique_lock lock(changes_mu_);
      changes_cv_.wait_for(lock, std::chrono::milliseconds(5), [this] {
        return stop_ || !changed_pods_.empty() || !changed_jobs_.empty();
      });
    }
  });
}

void TestKubelet::Stop() {
  {
    std::lock_guard lock(changes_mu_);
    stop_ = true;
  }
  changes_cv_.notify_all();
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
  // Its pods looked at again: left alone from now on, or handled again.
  if (auto it = node_pods_.find(node); it != node_pods_.end()) {
    std::lock_guard changes(changes_mu_);
    changed_pods_.insert(it->second.begin(), it->second.end());
  }
  return {};
}

int64_t TestKubelet::PodsVisited() const {
  std::lock_guard lock(mu_);
  return pods_visited_;
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

namespace {

// Whether a write succeeded (or found its pod gone, which is as good).
bool Done(const core::Result<k8s::Response>& r) {
  return r && ((r->status >= 200 && r->status < 300) || r->status == 404);
}

}  // namespace

int TestKubelet::Tick() {
  const double now = clock_();
  int writes = 0;
  std::lock_guard lock(mu_);
  std::set<std::string> pods, jobs;
  {
    std::lock_guard changes(changes_mu_);
    pods.swap(changed_pods_);
    jobs.swap(changed_jobs_);
  }
  std::set<std::string> retry;
  std::set<std::string> touched;  // jobs whose running pods changed
  for (const std::string& key : pods) SyncPod(key, writes, touched, retry);
  if (!retry.empty()) {
    std::lock_guard changes(changes_mu_);
    changed_pods_.insert(retry.begin(), retry.end());
  }
  // The jobs that changed or whose pods did, looked at whole; the others
  // that train brought up to now at the rate they had.
  touched.insert(jobs.begin(), jobs.end());
  for (const std::string& key : touched) SyncJob(key, jobs.contains(key), now, writes);
  for (const std::string& key : std::vector<std::string>(training_.begin(), training_.end())) {
    if (touched.contains(key)) continue;
    JobProgress& p = progress_[key];
    p.steps = std::min(p.total, p.steps + p.rate * (now - p.at));
    p.at = now;
    FinishIfDone(key, p, writes);
  }
  return writes;
}

void TestKubelet::SyncPod(const std::string& key, int& writes, std::set<std::string>& jobs,
                          std::set<std::string>& retry) {
  ++pods_visited_;
  // Forget what the pod was; what it is now follows.
  if (auto it = pod_job_.find(key); it != pod_job_.end()) {
    jobs.insert(it->second);
    running_[it->second].erase(key);
    if (running_[it->second].empty()) running_.erase(it->second);
    pod_job_.erase(it);
  }
  if (auto it = pod_node_.find(key); it != pod_node_.end()) {
    node_pods_[it->second].erase(key);
    if (node_pods_[it->second].empty()) node_pods_.erase(it->second);
    pod_node_.erase(it);
  }
  const std::optional<json> got = pods_->Get(key);
  if (!got) return;  // gone
  const json& pod = *got;
  const json& meta = pod["metadata"];
  const std::string ns = meta.value("namespace", "");
  const std::string name = meta.value("name", "");
  const std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}", ns, name);
  const std::string node = pod.value("spec", json::object()).value("nodeName", "");
  const std::string phase = pod.value("status", json::object()).value("phase", "");
  if (!node.empty()) {
    pod_node_[key] = node;
    node_pods_[node].insert(key);
  }
  // No kubelet runs on an unreachable node: nothing of its pods changes
  // (SetUnreachable has them looked at again when it is back).
  if (unreachable_.contains(node)) return;
  if (meta.contains("deletionTimestamp")) {
    ++writes;
    if (!Done(client_->Request(
            "DELETE", path,
            R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})"))) {
      retry.insert(key);
    }
    return;
  }
  if (node.empty() || phase == "Succeeded" || phase == "Failed") return;
  if (phase != "Running") {
    json updated = pod;
    updated["status"]["phase"] = "Running";
    updated["status"]["startTime"] = k8s::NowRfc3339();
    ++writes;
    if (!Done(client_->Request("PUT", path + "/status", updated.dump()))) retry.insert(key);
    return;
  }
  auto task = k8s::PodTaskOf(pod);
  if (!task) return;
  const std::string job = ns + "/" + task->job;
  running_[job][key] = RunningPod{node, task->role};
  pod_job_[key] = job;
  jobs.insert(job);
}

void TestKubelet::SyncJob(const std::string& key, bool changed, double now, int& writes) {
  if (changed) {
    const std::optional<json> object = jobs_->Get(key);
    if (!object) {
      // Gone: it trains no more.
      specs_.erase(key);
      training_.erase(key);
      if (auto it = progress_.find(key); it != progress_.end()) {
        it->second.at = -1;
        it->second.rate = 0;
      }
      return;
    }
    auto tj = k8s::DecodeTrainingJob(*object);
    if (!tj) return;
    specs_[key] = JobSpec{tj->job.total_steps, tj->job.throughput,
                          object->value("status", json::object()).value("phase", "")};
  }
  const auto spec = specs_.find(key);
  if (spec == specs_.end()) return;  // not seen yet, or not a valid job
  JobProgress& p = progress_[key];
  p.total = spec->second.total;
  // Bring the progress up to now at the rate it had.
  if (p.at >= 0) p.steps = std::min(p.total, p.steps + p.rate * (now - p.at));
  const std::string& phase = spec->second.phase;
  if (phase != p.phase) {
    if (phase == "Stopping" || phase == "Standby") {
      // Restarted: a checkpoint just taken is kept, a lost task is not.
      if (p.phase != "Checkpointing") p.steps = p.checkpoint;
    }
    if (phase == "Checkpointing") p.checkpoint = p.steps;
    p.phase = phase;
  }
  int workers = 0;
  std::set<std::string> nodes;
  if (auto it = running_.find(key); it != running_.end()) {
    for (const auto& [pod, r] : it->second) {
      nodes.insert(r.node);
      if (r.role == core::Role::kWorker) ++workers;
    }
  }
  const bool training = (phase == "Running" || phase == "RunningProtected") && workers > 0;
  if (!training) {
    p.at = -1;
    p.rate = 0;
    training_.erase(key);
    return;
  }
  const core::ThroughputProfile& throughput = spec->second.throughput;
  p.rate = throughput.Rate(workers);
  if (nodes.size() > 1) p.rate *= 1.0 - throughput.locality_sensitivity;
  p.at = now;
  training_.insert(key);
  FinishIfDone(key, p, writes);
}

void TestKubelet::FinishIfDone(const std::string& key, const JobProgress& p, int& writes) {
  if (p.steps + 1e-9 < p.total) return;
  const auto it = running_.find(key);
  if (it == running_.end()) return;
  for (const auto& [pod_key, r] : it->second) {
    if (r.role == core::Role::kPS) continue;
    const std::optional<json> pod = pods_->Get(pod_key);
    if (!pod) continue;
    json updated = *pod;
    updated["status"]["phase"] = "Succeeded";
    client_->Request("PUT",
                     fmt::format("/api/v1/namespaces/{}/pods/{}/status",
                                 (*pod)["metadata"].value("namespace", ""),
                                 (*pod)["metadata"].value("name", "")),
                     updated.dump());
    ++writes;
  }
}

}  // namespace dlsched::testing
