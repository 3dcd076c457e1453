#include "sim/scenario.h"

#include "dlsched/core/lifecycle.h"

namespace dlsched::testing {
namespace {

// Exact: the shortest text that reads back as `t`; "-" for never.
std::string TimeText(core::Time t) { return t >= core::kNever ? "-" : fmt::format("{}", t); }

std::string JobRow(const metrics::JobRecord& j) {
  std::string row =
      fmt::format("{} {}..{} {} workers={} scales={} preempted={} reallocated={}", j.name,
                  TimeText(j.first_start), TimeText(j.completion), core::PhaseName(j.final_phase),
                  j.final_workers, j.scale_events, j.preemptions, j.reallocations);
  if (j.stuck) row += " stuck";
  return row;
}

std::string PhasesRow(const metrics::JobRecord& j) {
  return fmt::format("{} queued={} launching={} running={}", j.name, TimeText(j.queueing),
                     TimeText(j.launching), TimeText(j.running));
}

}  // namespace

core::Result<sim::SimResult> Run(const Scenario& s) {
  config::WorkloadSpec w;
  w.jobs = s.jobs;
  sim::SimOptions options;
  options.check_invariants = true;
  options.timeline = true;
  return sim::Simulate(s.cluster, w, MakeEngine(s.profile, s.edit), options);
}

std::vector<std::string> Outcome(const Scenario& s, const sim::SimResult& r) {
  std::vector<std::string> rows;
  for (const auto& j : r.run.jobs) rows.push_back(JobRow(j));
  if (s.phases) {
    for (const auto& j : r.run.jobs) rows.push_back(PhasesRow(j));
  }
  for (const std::string& name : s.timelines) {
    for (const std::string& t : Timeline(r, name)) rows.push_back(name + ": " + t);
  }
  return rows;
}

std::vector<std::string> Outcome(const Scenario& s) {
  auto r = Run(s);
  if (!r) return {"error: " + r.error().message};
  return Outcome(s, *r);
}

std::string Table(const std::vector<std::string>& rows) {
  std::string text;
  for (const std::string& row : rows) text += row + "\n";
  return text;
}

void ExpectOutcome(const Scenario& s) {
  auto r = Run(s);
  ASSERT_TRUE(r.has_value()) << s.name << ": " << r.error().message;
  EXPECT_EQ(Table(Outcome(s, *r)), Table(s.expected)) << "scenario " << s.name;
  if (s.checks) s.checks(*r);
}

std::string ScenarioName(const ::testing::TestParamInfo<Scenario>& info) { return info.param.name; }

void PrintTo(const Scenario& s, std::ostream* os) { *os << s.name; }

}  // namespace dlsched::testing
