#pragma once

// Scenario tables: a test states a run as data (a cluster, jobs, a
// profile) and its expected outcome as a table of rows, one per job, and
// compares the whole table at once, so a failure shows every difference:
//
//   Scenario s{.name = "ShrinksForH", .cluster = Nodes(2, 8, 32, 4),
//              .jobs = {GpuJob("e", 0, 2, 8, 2000, 8, 4000), ...}, .profile = "kod2",
//              .expected = {"e start=0 end=550 Completed workers=8 scales=2 ...", ...}};
//   ExpectOutcome(s);
//
// A table of scenarios runs as a parameterised test:
//
//   class Kod2Scenarios : public ScenarioTest {};
//   TEST_P(Kod2Scenarios, Run) { ExpectOutcome(GetParam()); }
//   INSTANTIATE_TEST_SUITE_P(Kod2, Kod2Scenarios, ::testing::ValuesIn(Kod2Table()),
//                            ScenarioName);
//
// (ValuesIn of a function's result: gtest evaluates it when it registers
// the tests, after every static is built.) Test-only code.

#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dlsched/core/job.h"
#include "dlsched/core/node.h"
#include "dlsched/sim/simulator.h"
#include "policy/profiles.h"

namespace dlsched::testing {

// Every member has a default ({}), so a designated initializer names only
// what it sets.
struct Scenario {
  std::string name = {};  // the test's name: letters, digits and '_'
  core::ClusterSpec cluster = {};
  std::vector<core::JobSpec> jobs = {};
  std::string profile = {};  // a built-in profile or a profile file
  ProfileEdit edit = {};     // changes to the profile before it is built, if any
  // Rows of the time each job spent queueing, launching and running follow.
  bool phases = false;
  // Jobs whose timeline rows (Timeline) follow the job rows, in this order.
  std::vector<std::string> timelines = {};
  std::vector<std::string> expected = {};  // the outcome, as Outcome renders it
  // Expectations on the run beyond the table (its events' details, its
  // allocations, ...), if any; called after the table is compared.
  std::function<void(const sim::SimResult&)> checks = {};
};

// The scenario's run: sim::Simulate with the invariant checks and the
// timeline on.
core::Result<sim::SimResult> Run(const Scenario& s);

// The outcome of a run, one row per job in the workload's order:
//   <name> <first start>..<completion> <final phase> workers=<final size>
//       scales=<scale events> preempted=<n> reallocated=<n>[ stuck]
// (a time never reached is "-", others exact: the shortest text that reads
// back as the same double); with `s.phases`, then one row per job of the
// time it spent in each phase,
//   <name> queued=<s> launching=<s> running=<s>
// then the rows of each job of `s.timelines`, "<name>: <Timeline row>".
std::vector<std::string> Outcome(const Scenario& s, const sim::SimResult& r);
// Runs `s` and renders its outcome; a run that fails is one row,
// "error: <message>".
std::vector<std::string> Outcome(const Scenario& s);

// Rows as one text, a row a line: EXPECT_EQ on two tables prints a diff.
std::string Table(const std::vector<std::string>& rows);

// Runs `s`, expects its outcome to be `s.expected` (the whole table) and
// then runs `s.checks` on the run.
void ExpectOutcome(const Scenario& s);

// A parameterised test over a table of scenarios, named by ScenarioName.
class ScenarioTest : public ::testing::TestWithParam<Scenario> {};
std::string ScenarioName(const ::testing::TestParamInfo<Scenario>& info);
// How gtest prints a scenario: by its name.
void PrintTo(const Scenario& s, std::ostream* os);

// Job `name`'s timeline, one "<time> <event>[ <workers>][ by <job>]" a row,
// in order (events.csv without the detail).
inline std::vector<std::string> Timeline(const sim::SimResult& r, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& e : r.run.events) {
    if (r.run.jobs[e.job].name != name) continue;
    std::string row = fmt::format("{:g} {}", e.time, e.kind);
    if (e.workers >= 0) row += fmt::format(" {}", e.workers);
    if (e.by >= 0) row += " by " + r.run.jobs[e.by].name;
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace dlsched::testing
