#include "dlsched/config/job_decoder.h"

#include <string>
#include <string_view>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "dlsched/config/yaml_util.h"

namespace dlsched::config {
namespace {

using Decoder = JobDecoder<internal::YamlFields>;

std::string KeyWords(std::string_view got) { return fmt::format("bad key {}", got); }
std::string RateWords(std::string_view got) { return fmt::format("bad rate {}", got); }

// Two formats' words over one tree: the decoder reads what they name and
// words what it finds as they say.
const JobWording kStrict{.min_above_max_only_when_both_given = true,
                         .replicas_above_max_on_max = false,
                         .priority_expected = "one of high, normal, low",
                         .priority_key = "priority",
                         .queue_expected = "a name",
                         .default_replicas = std::nullopt,
                         .bad_table_key = KeyWords,
                         .bad_table_rate = RateWords,
                         .duplicate_worker_counts_refused = true};
const JobWording kLenient{.min_above_max_only_when_both_given = false,
                          .replicas_above_max_on_max = true,
                          .priority_expected = "high, normal or low",
                          .priority_key = "priorityClass",
                          .queue_expected = "a queue name",
                          .default_replicas = 1,
                          .bad_table_key = [](std::string_view) { return std::string("no key"); },
                          .bad_table_rate = [](std::string_view) { return std::string("no rate"); },
                          .duplicate_worker_counts_refused = false};

std::string Error(const core::Status& st) { return st ? "ok" : st.error().message; }

TEST(JobDecoderTest, SchedulingUnderTheFormatsKeys) {
  const internal::Reader r("w.yaml");
  const YAML::Node n =
      YAML::Load("{priority: high, priorityClass: low, maxWaitMinutes: 30, queue: team-a}");
  core::JobSpec job;
  ASSERT_EQ(Error(Decoder(r, kStrict).Scheduling(n, "jobs[0]", job)), "ok");
  EXPECT_EQ(job.priority, core::PriorityClass::kHigh);
  EXPECT_EQ(job.max_wait_minutes, 30);
  EXPECT_EQ(job.queue, "team-a");
  ASSERT_EQ(Error(Decoder(r, kLenient).Scheduling(n, "spec.scheduling", job)), "ok");
  EXPECT_EQ(job.priority, core::PriorityClass::kLow);

  EXPECT_EQ(Error(Decoder(r, kLenient)
                      .Scheduling(YAML::Load("{priorityClass: [high]}"), "spec.scheduling", job)),
            "w.yaml: spec.scheduling.priorityClass: expected high, normal or low, got a list");
  EXPECT_EQ(Error(Decoder(r, kStrict).Scheduling(YAML::Load("{queue: {a: 1}}"), "jobs[0]", job)),
            "w.yaml: jobs[0].queue: expected a name, got a map");
  EXPECT_EQ(Error(Decoder(r, kStrict).Scheduling(YAML::Load("{maxWaitMinutes: 0}"), "j", job)),
            "w.yaml: j.maxWaitMinutes: expected a number in (0, " +
                fmt::format("{}", core::kMaxWaitMinutes) + "], got '0'");
}

TEST(JobDecoderTest, ReplicasMissingOrDefaulted) {
  const internal::Reader r("w.yaml");
  core::RoleSpec ps;
  EXPECT_EQ(
      Error(Decoder(r, kStrict).Replicas(YAML::Load("{replicas: ~}"), "ps", core::Role::kPS, ps)),
      "w.yaml: ps.replicas: missing, expected an integer >= 0");
  ASSERT_EQ(Error(Decoder(r, kLenient).Replicas(YAML::Load("{}"), "PS", core::Role::kPS, ps)),
            "ok");
  EXPECT_EQ(ps.replicas, 1);
  EXPECT_EQ(ps.max_replicas, 1);
  core::RoleSpec chief;
  EXPECT_EQ(Error(Decoder(r, kStrict)
                      .Replicas(YAML::Load("{replicas: 2}"), "chief", core::Role::kChief, chief)),
            "w.yaml: chief.replicas: expected 0 or 1, got '2'");

  core::RoleSpec w;
  ASSERT_EQ(Error(Decoder(r, kStrict)
                      .Replicas(YAML::Load("{replicas: 4, minReplicas: 2, maxReplicas: 8}"),
                                "worker", core::Role::kWorker, w)),
            "ok");
  EXPECT_EQ(w.replicas, 4);
  EXPECT_EQ(w.min_replicas, 2);
  EXPECT_EQ(w.max_replicas, 8);
  // Only maxReplicas given, below replicas: the workload names replicas
  // (minReplicas, not given, is replicas); the TrainingJob looks at
  // minReplicas against maxReplicas first.
  const YAML::Node low_max = YAML::Load("{replicas: 4, maxReplicas: 2}");
  EXPECT_EQ(Error(Decoder(r, kStrict).Replicas(low_max, "worker", core::Role::kWorker, w)),
            "w.yaml: worker.replicas: 4 is greater than maxReplicas 2");
  EXPECT_EQ(Error(Decoder(r, kLenient).Replicas(low_max, "Worker", core::Role::kWorker, w)),
            "w.yaml: Worker.minReplicas: 4 is greater than maxReplicas 2");
}

TEST(JobDecoderTest, RateTableWordsAndDuplicates) {
  const internal::Reader r("w.yaml");
  const YAML::Node twice = YAML::Load("{'1': 2.5, '01': 3, '4': 0}");
  core::ThroughputProfile strict, lenient;
  EXPECT_EQ(Error(Decoder(r, kStrict).RateTable(twice, "t", strict)),
            "w.yaml: t.01: duplicate worker count 1");
  ASSERT_EQ(Error(Decoder(r, kLenient).RateTable(twice, "t", lenient)), "ok");
  EXPECT_EQ(lenient.steps_per_s.at(1), 3);  // the last one read
  EXPECT_EQ(lenient.steps_per_s.at(4), 0);

  core::ThroughputProfile out;
  EXPECT_EQ(Error(Decoder(r, kStrict).RateTable(YAML::Load("{x: 1}"), "t", out)),
            "w.yaml: t.x: bad key 'x'");
  EXPECT_EQ(Error(Decoder(r, kLenient).RateTable(YAML::Load("{'2': 1e-9}"), "t", out)),
            "w.yaml: t.2: no rate");
  EXPECT_EQ(Error(Decoder(r, kStrict).RateTable(YAML::Load("{'2': 1e-9}"), "t", out)),
            "w.yaml: t.2: bad rate '1e-9'");
  EXPECT_EQ(
      Error(Decoder(r, kStrict).RateTable(YAML::Load("{'2': -1}"), "t", out)),
      "w.yaml: t.2: expected a number in [0, " + fmt::format("{}", core::kMaxRate) + "], got '-1'");
}

TEST(JobDecoderTest, NumbersKeptWhenNotGiven) {
  const internal::Reader r("w.yaml");
  core::JobSpec job;
  job.total_steps = 7;
  job.launch_delay = 3;
  const YAML::Node n = YAML::Load("{totalSteps: ~, checkpointDelay: 12, localitySensitivity: 0.5}");
  ASSERT_EQ(Error(Decoder(r, kStrict).TotalSteps(n, "j", job)), "ok");
  ASSERT_EQ(Error(Decoder(r, kStrict).Delays(n, "j", job)), "ok");
  ASSERT_EQ(Error(Decoder(r, kStrict).Locality(n, "j", job.throughput)), "ok");
  EXPECT_EQ(job.total_steps, 7);
  EXPECT_EQ(job.launch_delay, 3);
  EXPECT_EQ(job.checkpoint_delay, 12);
  EXPECT_EQ(job.throughput.locality_sensitivity, 0.5);
  EXPECT_EQ(Error(Decoder(r, kStrict).Delays(YAML::Load("{launchDelay: -1}"), "spec", job)),
            "w.yaml: spec.launchDelay: expected a number in [0, 1000000000], got '-1'");
  EXPECT_EQ(Error(Decoder(r, kStrict)
                      .Locality(YAML::Load("{localitySensitivity: 2}"), "t", job.throughput)),
            "w.yaml: t.localitySensitivity: expected a number in [0, 1], got '2'");
}

}  // namespace
}  // namespace dlsched::config
