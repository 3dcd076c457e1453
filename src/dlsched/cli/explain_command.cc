#include "dlsched/cli/explain_command.h"

#include <cstdio>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dlsched/cli/errors.h"
#include "dlsched/cli/inputs.h"
#include "dlsched/core/text.h"
#include "dlsched/engine/engine.h"
#include "dlsched/metrics/records.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::cli {
namespace {

nlohmann::ordered_json TraceJson(const engine::ClusterState& state, const engine::Profile& p,
                                 const engine::JobTrace& t) {
  nlohmann::ordered_json j;
  j["cycle"] = t.cycle;
  j["time"] = t.time;
  j["position"] = t.position;
  j["outcome"] = t.outcome;
  // kube-scheduler's status code while the job waits: Unschedulable (not
  // now) or UnschedulableAndUnresolvable (never on this cluster).
  j["status"] = t.waiting ? nlohmann::ordered_json(std::string(engine::WaitStatusName(t.status)))
                          : nlohmann::ordered_json(nullptr);
  auto& tasks = j["tasks"] = nlohmann::ordered_json::array();
  for (const auto& task : t.tasks) {
    nlohmann::ordered_json tj;
    tj["task"] = fmt::format("{}[{}]", core::RoleName(task.task.role), task.task.index);
    tj["chosen"] = task.chosen == engine::kNoNode
                       ? nlohmann::ordered_json(nullptr)
                       : nlohmann::ordered_json(state.NodeName(task.chosen));
    if (!task.note.empty()) tj["note"] = task.note;
    if (!task.rejected.empty()) {
      auto& rejected = tj["rejected"] = nlohmann::ordered_json::object();
      for (const auto& [node, why] : task.rejected) rejected[state.NodeName(node)] = why;
    }
    auto& cands = tj["candidates"] = nlohmann::ordered_json::array();
    for (const auto& c : task.candidates) {
      nlohmann::ordered_json cj;
      cj["node"] = state.NodeName(c.node);
      auto& scores = cj["scores"] = nlohmann::ordered_json::object();
      for (size_t i = 0; i < c.scores.size(); ++i)
        scores[std::string(p.scorers[i]->Name())] = c.scores[i];
      cj["total"] = c.total;
      cands.push_back(std::move(cj));
    }
    tasks.push_back(std::move(tj));
  }
  return j;
}

// What a cycle showed about the job, without which cycle it was: two
// consecutive cycles with the same body are the same decision again.
std::string TraceBody(const engine::ClusterState& state, const engine::Profile& p,
                      const engine::JobTrace& t) {
  std::string out = fmt::format(
      "(position {} in the queue): {}{}\n", t.position, t.outcome,
      t.waiting ? fmt::format(" [{}]", engine::WaitStatusName(t.status)) : std::string());
  constexpr size_t kMaxRejected = 50;
  for (const auto& task : t.tasks) {
    out += fmt::format("  {}[{}] -> {}{}\n", core::RoleName(task.task.role), task.task.index,
                       task.chosen == engine::kNoNode ? "(none)" : state.NodeName(task.chosen),
                       task.note.empty() ? "" : "  (" + task.note + ")");
    for (const auto& c : task.candidates) {
      std::string scores;
      for (size_t i = 0; i < c.scores.size(); ++i) {
        scores += fmt::format("{}{}={}", i ? " " : "", p.scorers[i]->Name(), c.scores[i]);
      }
      out += fmt::format("      {:<20} {:<50} total={:g}{}\n", state.NodeName(c.node), scores,
                         c.total, c.node == task.chosen ? "  <- chosen" : "");
    }
    for (size_t i = 0; i < task.rejected.size() && i < kMaxRejected; ++i) {
      out += fmt::format("      {:<20} {}\n", state.NodeName(task.rejected[i].first),
                         task.rejected[i].second);
    }
    if (task.rejected.size() > kMaxRejected) {
      out += fmt::format("      ... and {} more nodes (--format json lists them all)\n",
                         task.rejected.size() - kMaxRejected);
    }
  }
  return out;
}

// Consecutive cycles with the same body (the same decision for the same
// reasons), as one.
struct Group {
  size_t first = 0;
  size_t count = 0;
  std::string body;
};

// What explain shows of one job's run.
struct Explained {
  const std::string& job;
  const engine::ClusterState& names;  // node names only
  const engine::Profile& profile;
  const sim::SimResult& result;
  const metrics::JobRecord& record;
  std::vector<const metrics::JobEvent*> timeline;
  std::vector<Group> groups;
};

std::vector<const metrics::JobEvent*> Timeline(const metrics::RunInput& run,
                                               const std::string& job) {
  std::vector<const metrics::JobEvent*> timeline;
  for (const auto& e : run.events) {
    if (run.jobs[e.job].name == job) timeline.push_back(&e);
  }
  return timeline;
}

std::vector<Group> Groups(const engine::ClusterState& names, const engine::Profile& p,
                          const std::vector<engine::JobTrace>& traces) {
  std::vector<Group> groups;
  for (size_t i = 0; i < traces.size(); ++i) {
    std::string body = TraceBody(names, p, traces[i]);
    if (!groups.empty() && groups.back().body == body) {
      ++groups.back().count;
    } else {
      groups.push_back({i, 1, std::move(body)});
    }
  }
  return groups;
}

void PrintJson(const Explained& x) {
  const metrics::RunInput& run = x.result.run;
  nlohmann::ordered_json j;
  j["job"] = x.job;
  j["profile"] = x.profile.name;
  j["final_state"] = std::string(core::PhaseName(x.record.final_phase));
  j["stuck"] = x.record.stuck;
  auto& rows = j["timeline"] = nlohmann::ordered_json::array();
  for (const metrics::JobEvent* e : x.timeline) {
    nlohmann::ordered_json row;
    row["time"] = e->time;
    row["event"] = std::string(e->kind);
    row["workers"] = e->workers >= 0 ? nlohmann::ordered_json(e->workers) : nullptr;
    row["by"] = e->by >= 0 ? nlohmann::ordered_json(run.jobs[e->by].name) : nullptr;
    row["detail"] = e->detail;
    rows.push_back(std::move(row));
  }
  auto& cycles = j["cycles"] = nlohmann::ordered_json::array();
  for (const Group& g : x.groups) {
    nlohmann::ordered_json c = TraceJson(x.names, x.profile, x.result.traces[g.first]);
    const engine::JobTrace& last = x.result.traces[g.first + g.count - 1];
    c["repeated"] = g.count;  // identical cycles, through last_cycle
    c["last_cycle"] = last.cycle;
    c["last_time"] = last.time;
    cycles.push_back(std::move(c));
  }
  // Names are valid UTF-8 (the loaders check); replace rather than throw
  // should anything else slip through.
  std::puts(j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
}

void PrintText(const Explained& x) {
  const metrics::RunInput& run = x.result.run;
  std::printf("job %s under profile %s: %zu cycles considered it; final state %s%s\n",
              x.job.c_str(), x.profile.name.c_str(), x.result.traces.size(),
              std::string(core::PhaseName(x.record.final_phase)).c_str(),
              x.record.stuck ? " (stuck)" : "");
  std::puts("timeline:");
  for (const metrics::JobEvent* e : x.timeline) {
    std::string row = fmt::format("  {:>10.1f} s  {}", e->time, e->kind);
    if (e->workers >= 0) row += fmt::format(" ({} workers)", e->workers);
    if (e->by >= 0) row += " by " + run.jobs[e->by].name;
    // "waiting: waiting: ..." reads as the verdict alone.
    std::string_view detail = e->detail;
    if (detail.starts_with(e->kind) && detail.substr(e->kind.size()).starts_with(": ")) {
      detail.remove_prefix(e->kind.size() + 2);
    }
    if (!detail.empty()) row += fmt::format(": {}", detail);
    std::puts(core::EscapeText(row, kMaxMessageBytes).c_str());
  }
  std::puts("cycles:");
  for (const Group& g : x.groups) {
    const engine::JobTrace& first = x.result.traces[g.first];
    const engine::JobTrace& last = x.result.traces[g.first + g.count - 1];
    std::string header = g.count == 1
                             ? fmt::format("cycle {} at {:.1f}s ", first.cycle, first.time)
                             : fmt::format("cycles {}-{} at {:.1f}-{:.1f}s ({} identical cycles) ",
                                           first.cycle, last.cycle, first.time, last.time, g.count);
    std::fputs((header + g.body).c_str(), stdout);
  }
}

}  // namespace

CLI::App* AddExplainCommand(CLI::App& app, ExplainArgs* args) {
  CLI::App* explain = app.add_subcommand(
      "explain",
      "Run the simulation and show every cycle in which one job was considered: each feasible "
      "node with every scorer's score and the weighted total, the node chosen for each task, "
      "or why the job waited");
  AddRunOptions(explain, &args->run);
  explain->add_option("--job,-j", args->job, "The job to explain")->required();
  explain->add_option("--format,-f", args->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  return explain;
}

int Explain(const ExplainArgs& args) {
  const std::string& job = args.job;
  auto loaded = Load(args.run);
  if (!loaded) return BadInput(loaded.error());
  bool found = false;
  for (const auto& j : loaded->inputs.workload.jobs) found = found || j.name == job;
  if (!found) {
    return BadInput(core::Error{
        fmt::format("--job: no job named '{}' in {}", job, loaded->inputs.workload.source)});
  }
  sim::SimOptions options;
  options.trace_job = job;
  auto result =
      sim::Simulate(loaded->inputs.cluster, loaded->inputs.workload, *loaded->engine, options);
  if (!result) return BadInput(result.error());
  // Node names only: a fresh state of the same cluster.
  const engine::ClusterState names(loaded->inputs.cluster);
  const engine::Profile& p = loaded->engine->profile();
  const metrics::JobRecord* record = nullptr;
  for (const auto& r : result->run.jobs) {
    if (r.name == job) record = &r;
  }
  // The job's timeline, then its cycles, consecutive identical ones as one
  // group.
  const Explained x{job,
                    names,
                    p,
                    *result,
                    *record,
                    Timeline(result->run, job),
                    Groups(names, p, result->traces)};
  if (args.format == "json") {
    PrintJson(x);
  } else {
    PrintText(x);
  }
  return kOk;
}

}  // namespace dlsched::cli
