#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace dlsched::fuzz {

// A fuzz target: takes any bytes and must neither crash, hang, leak nor
// throw. A broken property (a round trip that changes a value, an invariant
// of the simulator) traps, so the fuzzer records the input.
using Target = void (*)(const uint8_t* data, size_t size);

// Kubernetes quantities: core::Quantity::Parse and ParseResourceAmount.
void Quantity(const uint8_t* data, size_t size);
// Cluster YAML; a cluster that loads is simulated with a small fixed
// workload under gang-binpack and k8s-default, invariants checked.
void Cluster(const uint8_t* data, size_t size);
// Workload YAML; a workload that loads and resolves is simulated on a
// small fixed cluster under gang-binpack, k8s-default, kod2 and fsched.
void Workload(const uint8_t* data, size_t size);
// Profile YAML; a profile that builds runs the fixed workload and cluster.
void Profile(const uint8_t* data, size_t size);

// The trace importers (config/trace.h), each on a file of the input's
// bytes. A trace that loads is resolved, written in the native format and
// loaded again (the same number of jobs), and when small simulated on the
// fixed cluster, invariants checked.
void TiresiasTrace(const uint8_t* data, size_t size);    // as is, then elastic
void TiresiasCluster(const uint8_t* data, size_t size);  // a cluster spec CSV
void PhillyTrace(const uint8_t* data, size_t size);      // as is, then filtered
// A pollux workload against the measurements in data/pollux/traces.
void PolluxTrace(const uint8_t* data, size_t size);
// Pollux's measurement CSVs of one application (bert), from an input of
// several files ("#file scalability.csv" lines; the bytes before the first
// are placements.csv), read by a fixed workload of bert jobs.
void PolluxMeasurements(const uint8_t* data, size_t size);
void NativeTrace(const uint8_t* data, size_t size);
// A result directory of files from the input ("#file utilization.csv"
// lines; before the first: jobs.csv): loaded as `dlsched report` loads it
// and rendered, whole and in a window; sweep cells merged.
void ReportCsv(const uint8_t* data, size_t size);
// summary.json: loaded and rendered; and as provenance.json and
// compare.json, the provenance `dlsched rerun` reads.
void ReportJson(const uint8_t* data, size_t size);
// The body of an operator's GET /snapshot through `dlsched snapshot`'s
// decoder; a snapshot that decodes is simulated when small.
void Snapshot(const uint8_t* data, size_t size);

struct NamedTarget {
  std::string_view name;
  Target run;
};
// Every target, by the name its corpus directory and binary carry.
std::span<const NamedTarget> Targets();
// The target called `name`, or nullptr.
Target FindTarget(std::string_view name);

// Runs every target once on valid input. The fuzz binaries call it before
// AFL++'s fork server starts, so one-time initialisation (function-local
// statics: the fixed inputs, built-in profiles, the model zoo) is inherited
// by every child instead of showing up as coverage of each child's first
// input, which AFL++ would count as unstable edges.
void WarmUp();

}  // namespace dlsched::fuzz
