// Parity: the same workload through the simulator and through the operator
// (against the test API server, with the test kubelet on the simulator's
// clock) gives the same placements and the same order of starts, for every
// built-in profile. The operator runs in lock step: the test owns the
// clock, lets the operator and the kubelet settle (every informer caught up
// with the server, nothing queued, nothing written), then advances the
// clock to the next thing due: an arrival, a life-cycle timer or pod retry
// of the operator, or a completion on the kubelet.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "dlsched/k8s/objects.h"
#include "dlsched/k8s/operator.h"
#include "dlsched/sim/generate.h"
#include "dlsched/sim/simulator.h"
#include "k8s/apiserver.h"
#include "k8s/test_kubelet.h"
#include "policy/profiles.h"

namespace dlsched::k8s {
namespace {

using nlohmann::json;
using testing::NewEngine;
using testing::ReadFile;
using testing::TestApiServer;
using testing::TestKubelet;

json Requests(const core::ContainerSpec& c) {
  json r = json::object();
  for (int id = 0; id < core::NumResources(); ++id) {
    const auto rid = static_cast<core::ResourceId>(id);
    if (core::ResourceName(rid).empty()) continue;
    const bool explicit_zero =
        (rid == core::kCpu && c.sets_cpu) || (rid == core::kMemory && c.sets_memory);
    if (c.requests[rid] == 0 && !explicit_zero) continue;
    r[std::string(core::ResourceName(rid))] = core::FormatResourceAmount(rid, c.requests[rid]);
  }
  return r;
}

// A workload job as a TrainingJob (what a user would submit for it).
json EncodeJob(const core::JobSpec& j) {
  json roles = json::object();
  for (int r = 0; r < core::kNumRoles; ++r) {
    const auto role = static_cast<core::Role>(r);
    const core::RoleSpec& spec = j.role(role);
    if (spec.replicas == 0) continue;
    // A role given by its total request is one container asking for it.
    std::vector<core::ContainerSpec> given = spec.containers;
    if (given.empty()) {
      given.push_back({"main", spec.resources, spec.resources[core::kCpu] != 0,
                       spec.resources[core::kMemory] != 0});
    }
    json containers = json::array();
    for (const core::ContainerSpec& c : given) {
      containers.push_back({{"name", c.name.empty() ? "main" : c.name},
                            {"image", "trainer:1"},
                            {"resources", {{"requests", Requests(c)}}}});
    }
    json pod_spec = {{"containers", containers}};
    if (!spec.constraints.node_selector.empty()) {
      pod_spec["nodeSelector"] = spec.constraints.node_selector;
    }
    json entry = {{"replicas", spec.replicas}, {"template", {{"spec", pod_spec}}}};
    if (role == core::Role::kWorker) {
      entry["minReplicas"] = spec.min_replicas;
      entry["maxReplicas"] = spec.max_replicas;
    }
    roles[std::string(core::RoleName(role))] = entry;
  }
  // A TrainingJob's throughput is a table: a job given by its duration
  // (a scaling curve) gives its rate at each size it may run at.
  json table = json::object();
  for (const auto& [n, rate] : j.throughput.steps_per_s) table[std::to_string(n)] = rate;
  if (const auto& curve = j.throughput.curve) {
    for (int n = curve->lo; n <= curve->hi; ++n) table[std::to_string(n)] = j.throughput.Rate(n);
  }
  json spec = {{"replicaSpecs", roles},
               {"scheduling",
                {{"priorityClass", j.priority == core::PriorityClass::kHigh  ? "high"
                                   : j.priority == core::PriorityClass::kLow ? "low"
                                                                             : "normal"},
                 {"queue", j.queue}}},
               {"totalSteps", j.total_steps},
               {"throughput",
                {{"table", table}, {"localitySensitivity", j.throughput.locality_sensitivity}}},
               {"launchDelay", j.launch_delay},
               {"checkpointDelay", j.checkpoint_delay}};
  if (j.max_wait_minutes) spec["scheduling"]["maxWaitMinutes"] = *j.max_wait_minutes;
  return {{"apiVersion", "dlsched.io/v1alpha1"},
          {"kind", "TrainingJob"},
          {"metadata", {{"name", j.name}, {"namespace", j.namespace_name}}},
          {"spec", spec}};
}

json EncodeNode(const core::NodeSpec& n) {
  json alloc = json::object();
  for (int id = 0; id < core::NumResources(); ++id) {
    const auto rid = static_cast<core::ResourceId>(id);
    if (core::ResourceName(rid).empty()) continue;
    alloc[std::string(core::ResourceName(rid))] =
        core::FormatResourceAmount(rid, n.allocatable[rid]);
  }
  json taints = json::array();
  for (const core::Taint& t : n.taints) {
    taints.push_back(
        {{"key", t.key}, {"value", t.value}, {"effect", core::TaintEffectName(t.effect)}});
  }
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", n.name}, {"labels", n.labels}}},
          {"spec", {{"unschedulable", !n.schedulable}, {"taints", taints}}},
          {"status", {{"allocatable", alloc}}}};
}

json Quantity(core::ResourceId id, int64_t amount) {
  return core::FormatResourceAmount(id, amount);
}

json Quota(const std::vector<core::QuotaLine>& lines) {
  json quota = json::object();
  for (const core::QuotaLine& l : lines) {
    json line = Quantity(l.id, l.nominal);
    if (l.borrowing_limit || l.lending_limit) {
      line = {{"nominal", line}};
      if (l.borrowing_limit) line["borrowingLimit"] = Quantity(l.id, *l.borrowing_limit);
      if (l.lending_limit) line["lendingLimit"] = Quantity(l.id, *l.lending_limit);
    }
    quota[std::string(core::ResourceName(l.id))] = line;
  }
  return quota;
}

// A cluster file's queue as a Queue object (what a platform team would
// create for it).
json EncodeQueue(const core::QueueSpec& q) {
  json spec = {{"weight", q.weight}, {"quota", Quota(q.quota)}, {"priority", q.priority}};
  if (!q.cohort.empty()) spec["cohort"] = q.cohort;
  json capability = json::object();
  for (const auto& [id, amount] : q.capability) {
    capability[std::string(core::ResourceName(id))] = Quantity(id, amount);
  }
  if (!capability.empty()) spec["capability"] = capability;
  for (const auto& [key, res] : {std::pair{"guarantee", &q.guarantee}, {"deserved", &q.deserved}}) {
    if (res->IsZero()) continue;
    json m = json::object();
    for (int id = 0; id < core::NumResources(); ++id) {
      const auto rid = static_cast<core::ResourceId>(id);
      if ((*res)[rid] != 0) m[std::string(core::ResourceName(rid))] = Quantity(rid, (*res)[rid]);
    }
    spec[key] = m;
  }
  for (core::PreemptionField f : core::kPreemptionFields) {
    if (const auto& p = q.preemption.Field(f)) {
      spec["preemption"][std::string(core::PreemptionFieldKey(f))] =
          std::string(core::PreemptionPolicyName(*p));
    }
  }
  return {{"apiVersion", "dlsched.io/v1alpha1"},
          {"kind", "Queue"},
          {"metadata", {{"name", q.name}}},
          {"spec", spec}};
}

json EncodeCohort(const core::CohortSpec& c) {
  json spec = {{"weight", c.weight}, {"quota", Quota(c.quota)}};
  if (!c.parent.empty()) spec["parent"] = c.parent;
  return {{"apiVersion", "dlsched.io/v1alpha1"},
          {"kind", "Cohort"},
          {"metadata", {{"name", c.name}}},
          {"spec", spec}};
}

// "t=<time> start <job> <workers>: <role>-<index>@<node>,..." for every
// start of a plan, with the binds of that job in the same plan; "resize"
// (scale-in, scale-out, with restart, shrunk for another job) and "stop"
// (whole-job preemption) lines for the other decisions.
void RecordStarts(double now, const engine::Plan& plan,
                  const std::function<std::string(engine::JobIndex)>& name,
                  const std::function<std::string(engine::NodeIndex)>& node,
                  std::vector<std::string>* out) {
  for (const engine::Action& a : plan.actions) {
    if (a.kind == engine::ActionKind::kResize) {
      out->push_back(fmt::format("t={:.3f} resize {} to {}{}{}", now, name(a.task.job), a.workers,
                                 a.restart ? " restart" : "", a.preempted ? " preempted" : ""));
    } else if (a.kind == engine::ActionKind::kStop) {
      out->push_back(fmt::format("t={:.3f} stop {}", now, name(a.task.job)));
    }
    if (a.kind != engine::ActionKind::kStart) continue;
    std::vector<std::string> binds;
    for (const engine::Action& b : plan.actions) {
      if (b.kind == engine::ActionKind::kBind && b.task.job == a.task.job) {
        binds.push_back(
            fmt::format("{}-{}@{}", core::RoleName(b.task.role), b.task.index, node(b.node)));
      }
    }
    std::sort(binds.begin(), binds.end());
    out->push_back(fmt::format("t={:.3f} start {} {}: {}", now, name(a.task.job), a.workers,
                               fmt::join(binds, ",")));
  }
}

std::vector<std::string> SimulatorStarts(const core::ClusterSpec& cluster,
                                         const config::WorkloadSpec& workload,
                                         const engine::Engine& engine) {
  std::vector<std::string> starts;
  core::ClusterSpec c = cluster;
  sim::SimOptions options;
  // The simulator's state is private: names come from the inputs, in the
  // order it indexes them (workload order; cluster order).
  options.on_plan = [&](core::Time now, const engine::Plan& plan) {
    RecordStarts(
        now, plan, [&](engine::JobIndex j) { return workload.jobs[j].name; },
        [&](engine::NodeIndex n) { return c.nodes[n].name; }, &starts);
  };
  auto r = sim::Simulate(c, workload, engine, options);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return starts;
}

// The operator and the kubelet on a clock the test advances.
class LockStep {
 public:
  LockStep(const core::ClusterSpec& cluster, const config::WorkloadSpec& workload,
           const engine::Engine& engine)
      : workload_(workload) {
    EXPECT_TRUE(server_.Start().has_value());
    EXPECT_TRUE(
        server_.ApplyManifest(ReadFile(std::string(DLSCHED_SOURCE_DIR) + "/deploy/crd.yaml"))
            .has_value());
    for (const core::NodeSpec& n : cluster.nodes) {
      EXPECT_TRUE(server_.Create("nodes", "", EncodeNode(n)).has_value());
    }
    for (const core::QueueSpec& q : cluster.queues) {
      EXPECT_TRUE(server_.Create("queues.dlsched.io", "", EncodeQueue(q)).has_value());
    }
    for (const core::CohortSpec& c : cluster.cohorts) {
      EXPECT_TRUE(server_.Create("cohorts.dlsched.io", "", EncodeCohort(c)).has_value());
    }
    config_.server = server_.Url();
    config_.timeout_seconds = 10;
    OperatorOptions o;
    o.clock = [this] { return now_; };
    o.resync_seconds = 1e9;  // cycles only when something changed, as the simulator
    // Never plan around releasing pods on a wall-clock timeout: Settle waits
    // for them to go, as the simulator frees them at once.
    o.release_wait_seconds = 1e9;
    o.log = [](const std::string& line) {
      if (line.find("error") != std::string::npos) ADD_FAILURE() << line;
    };
    o.on_plan = [this](double now, const engine::Plan& plan) {
      RecordStarts(
          now, plan, [&](engine::JobIndex j) { return op_->Job(j).name; },
          [&](engine::NodeIndex n) { return op_->State().NodeName(n); }, &starts_);
    };
    op_ = std::make_unique<Operator>(config_, engine, o);
    EXPECT_TRUE(op_->Start(10).has_value());
    kubelet_ = std::make_unique<TestKubelet>(config_, [this] { return now_; });
    kubelet_->Start(/*thread=*/false);
  }
  ~LockStep() {
    op_->Stop();
    kubelet_->Stop();
  }

  // Every informer has seen the server's latest change of its resource.
  bool CaughtUp() const {
    auto at = [](const Informer& inf) {
      const std::string rv = inf.LastResourceVersion();
      return rv.empty() ? int64_t{0} : std::stoll(rv);
    };
    const int64_t pods = server_.LatestResourceVersion("pods");
    const int64_t jobs = server_.LatestResourceVersion("trainingjobs.dlsched.io");
    const int64_t nodes = server_.LatestResourceVersion("nodes");
    return at(op_->PodInformer()) >= pods && at(kubelet_->Pods()) >= pods &&
           at(op_->JobInformer()) >= jobs && at(kubelet_->Jobs()) >= jobs &&
           at(op_->NodeInformer()) >= nodes;
  }

  void Settle() {
    for (int rounds = 0; rounds < 100000; ++rounds) {
      while (!CaughtUp()) std::this_thread::sleep_for(std::chrono::microseconds(200));
      op_->Step(0);
      const int writes = kubelet_->Tick();
      if (writes == 0 && op_->Idle() && CaughtUp()) return;
    }
    ADD_FAILURE() << "did not settle";
  }

  // A snapshot of the operator after it settles at each instant, with how
  // many decision lines it had made by then.
  struct Taken {
    OperatorSnapshot snapshot;
    size_t lines = 0;
  };
  void TakeSnapshots() { take_snapshots_ = true; }
  const std::vector<Taken>& Snapshots() const { return snapshots_; }

  std::vector<std::string> Run() {
    size_t next_job = 0;
    const auto& jobs = workload_.jobs;
    // The jobs' namespaces exist first, as a real cluster needs.
    for (const auto& job : jobs) {
      if (!server_.Get("namespaces", "", job.namespace_name)) {
        EXPECT_TRUE(
            server_.Create("namespaces", "", {{"metadata", {{"name", job.namespace_name}}}}));
      }
    }
    for (int steps = 0; steps < 100000; ++steps) {
      while (next_job < jobs.size() && jobs[next_job].submit_time <= now_) {
        EXPECT_TRUE(server_
                        .Create("trainingjobs.dlsched.io", jobs[next_job].namespace_name,
                                EncodeJob(jobs[next_job]))
                        .has_value());
        ++next_job;
      }
      Settle();
      if (take_snapshots_ && op_->Unfinished() > 0) {
        snapshots_.push_back({op_->Snapshot(), starts_.size()});
      }
      double next = std::numeric_limits<double>::infinity();
      if (next_job < jobs.size()) next = jobs[next_job].submit_time;
      const core::Time wake = op_->NextWakeup();
      if (wake != core::kNever) next = std::min(next, wake);
      next = std::min(next, kubelet_->NextEvent());
      if (!std::isfinite(next) || op_->Unfinished() == 0) break;
      now_ = std::max(now_, next);
    }
    return starts_;
  }

 private:
  const config::WorkloadSpec& workload_;
  TestApiServer server_;
  RestConfig config_;
  double now_ = 0;
  std::unique_ptr<Operator> op_;
  std::unique_ptr<TestKubelet> kubelet_;
  std::vector<std::string> starts_;
  bool take_snapshots_ = false;
  std::vector<Taken> snapshots_;
};

struct Case {
  std::string profile, cluster, workload;
  // Decisions the run must include (substrings of its lines), so the
  // scenario exercises what it is meant to.
  std::vector<std::string> must_see = {};
  std::string queue_order = {};  // replaces the profile's queueOrder
};

// The case's cluster. Queue and Cohort objects have no order: the
// operator takes them by name, where ties between queues fall to the
// first; so the simulator gets them in that order too.
core::Result<core::ClusterSpec> CaseCluster(const Case& c) {
  auto cluster = config::LoadCluster(std::string(DLSCHED_SOURCE_DIR) + "/examples/" + c.cluster);
  if (cluster) {
    std::sort(cluster->queues.begin(), cluster->queues.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    std::sort(cluster->cohorts.begin(), cluster->cohorts.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
  }
  return cluster;
}

std::unique_ptr<engine::Engine> CaseEngine(const Case& c) {
  std::string profile = c.profile;
  if (profile.ends_with(".yaml"))
    profile = std::string(DLSCHED_SOURCE_DIR) + "/examples/" + profile;
  return std::make_unique<engine::Engine>(
      testing::BuiltinProfile(profile, [&](config::ProfileSpec& p) {
        if (!c.queue_order.empty()) p.queue_order.name = c.queue_order;
      }));
}

class ParityTest : public ::testing::TestWithParam<Case> {};

std::string Example(const std::string& name) {
  return std::string(DLSCHED_SOURCE_DIR) + "/examples/" + name;
}

TEST_P(ParityTest, OperatorPlacesAndStartsJobsAsTheSimulator) {
  const Case& c = GetParam();
  auto cluster = CaseCluster(c);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  auto workload = sim::LoadWorkload(Example(c.workload));
  ASSERT_TRUE(workload.has_value()) << workload.error().message;
  auto engine = CaseEngine(c);
  const std::vector<std::string> expected = SimulatorStarts(*cluster, *workload, *engine);
  ASSERT_FALSE(expected.empty());
  LockStep run(*cluster, *workload, *engine);
  const std::vector<std::string> got = run.Run();
  for (const std::string& want : c.must_see) {
    EXPECT_TRUE(
        std::any_of(expected.begin(), expected.end(),
                    [&](const std::string& line) { return line.find(want) != std::string::npos; }))
        << "the scenario has no '" << want << "':\n"
        << fmt::format("{}", fmt::join(expected, "\n"));
  }
  EXPECT_EQ(got, expected) << "simulator:\n"
                           << fmt::format("{}", fmt::join(expected, "\n")) << "\noperator:\n"
                           << fmt::format("{}", fmt::join(got, "\n"));
}

// `dlsched snapshot` at every instant of the run, written as the files it
// writes, plus the jobs still to be submitted, replayed by the simulator
// under the same profile: the replay makes exactly the decisions the
// operator made from there on.
TEST_P(ParityTest, SnapshotReplayedByTheSimulatorMakesTheOperatorsNextDecisions) {
  const Case& c = GetParam();
  auto cluster = CaseCluster(c);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  auto workload = sim::LoadWorkload(Example(c.workload));
  ASSERT_TRUE(workload.has_value()) << workload.error().message;
  auto engine = CaseEngine(c);
  LockStep run(*cluster, *workload, *engine);
  run.TakeSnapshots();
  const std::vector<std::string> got = run.Run();
  ASSERT_FALSE(run.Snapshots().empty());
  int placed = 0;
  for (const LockStep::Taken& taken : run.Snapshots()) {
    const OperatorSnapshot& snap = taken.snapshot;
    SCOPED_TRACE(fmt::format("snapshot at t={}", snap.workload.start));
    EXPECT_TRUE(snap.without_progress.empty());
    config::WorkloadSpec w = snap.workload;
    for (const core::JobSpec& job : workload->jobs) {
      if (job.submit_time > w.start) w.jobs.push_back(job);
    }
    for (const core::JobSpec& job : w.jobs) placed += job.initial ? 1 : 0;
    const std::string cluster_yaml = sim::ClusterToYaml(snap.cluster);
    const std::string workload_yaml = sim::WorkloadToYaml(w);
    auto replay_cluster = config::ParseCluster(cluster_yaml, "cluster.yaml");
    ASSERT_TRUE(replay_cluster.has_value()) << replay_cluster.error().message;
    auto replay_workload = config::ParseWorkload(workload_yaml, "workload.yaml");
    ASSERT_TRUE(replay_workload.has_value()) << replay_workload.error().message << "\n"
                                             << workload_yaml;
    ASSERT_TRUE(sim::ResolveWorkload(*replay_workload).has_value());
    const std::vector<std::string> replay =
        SimulatorStarts(*replay_cluster, *replay_workload, *engine);
    const std::vector<std::string> next(got.begin() + static_cast<std::ptrdiff_t>(taken.lines),
                                        got.end());
    ASSERT_EQ(replay, next) << "operator from here:\n"
                            << fmt::format("{}", fmt::join(next, "\n")) << "\nreplay:\n"
                            << fmt::format("{}", fmt::join(replay, "\n")) << "\n"
                            << cluster_yaml << workload_yaml;
  }
  EXPECT_GT(placed, 0);  // the snapshots caught jobs running
}

INSTANTIATE_TEST_SUITE_P(
    EveryBuiltInProfile, ParityTest,
    ::testing::Values(
        Case{"k8s-default", "cluster-2x4gpu.yaml", "workload-binpack.yaml"},
        Case{"gang-binpack", "cluster-2x4gpu.yaml", "workload-binpack.yaml"},
        Case{"kod2", "cluster-3node.yaml", "workload-kod2-seed.yaml", {"resize resnet50-6 to 6"}},
        Case{"kod2",
             "cluster-kod2-elastic.yaml",
             "workload-kod2-elastic.yaml",
             {"t=0.000 start e 8", "t=100.000 resize e to 4 preempted", "t=200.000 resize e to 8"}},
        // inception-a starts at 105, when resnet50-a's checkpoint (100..105)
        // that gave it its GPUs is done: on the operator, when those pods
        // are gone.
        Case{"fsched",
             "cluster-1x6gpu.yaml",
             "workload-fsched-seed.yaml",
             {" restart", "t=100.000 resize resnet50-a to 2 restart preempted",
              "t=105.000 start inception-a 4"}},
        Case{"static-3", "cluster-1x6gpu.yaml", "workload-fsched-seed.yaml"},
        Case{"volcano-priority", "cluster-cps-group.yaml", "workload-cps-group.yaml"},
        Case{"volcano-priority", "cluster-2x4gpu.yaml", "workload-preempt.yaml", {"stop batch"}},
        Case{"cps", "cluster-cps-group.yaml", "workload-cps-group.yaml"},
        Case{"las", "cluster-2x4gpu.yaml", "workload-las.yaml", {"stop a", "stop d"}},
        Case{"fifo", "cluster-2x4gpu.yaml", "workload-las.yaml"},
        Case{"sjf", "cluster-2x4gpu.yaml", "workload-las.yaml", {"stop a"}},
        Case{"srtf", "cluster-2x4gpu.yaml", "workload-las.yaml", {"stop a"}},
        Case{"pollux-tiresias",
             "cluster-2x4gpu.yaml",
             "workload-pollux-tiresias.yaml",
             {"t=1140.000 stop f", "t=17100.000 stop g"}},
        // Teams' queues as Queue objects, under every discipline: Kueue's
        // (borrowing, a lending limit, reclaim), Kueue's fair sharing,
        // Volcano's proportion and reclaim, DRF.
        Case{"queue-reclaim", "cluster-queues.yaml", "workload-queues.yaml"},
        Case{"queue-reclaim", "cluster-reclaim.yaml", "workload-reclaim.yaml", {"preempted"}},
        Case{"queue-reclaim", "cluster-queues.yaml", "workload-queues.yaml", {}, "Drf"},
        Case{"profile-queue-fair-sharing.yaml",
             "cluster-teams.yaml",
             "workload-teams-reclaim.yaml",
             {"t=100.000 stop "}},
        Case{"profile-volcano-queues.yaml",
             "cluster-teams.yaml",
             "workload-teams-reclaim.yaml",
             {"t=100.000 stop "}}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = info.param.profile + "_" + info.param.workload +
                         (info.param.queue_order.empty() ? "" : "_" + info.param.queue_order);
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

}  // namespace
}  // namespace dlsched::k8s
