#pragma once

// `dlsched snapshot` (cli/ internal): the live queue of a running `dlsched
// operator` as cluster and workload YAML to replay. The flags are
// registered here (snapshot_command.cc); the command runs in
// snapshot_run.cc (dlsched-k8s) or is handed to it (operator_exec.cc,
// dlsched); the answer is decoded by snapshot.h's DecodeSnapshot.

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace dlsched::cli {

// The longest answer `dlsched snapshot` takes from /snapshot: its cluster
// and workload YAML are at most 64 MiB each (what dlsched reads back, as
// any input file), and JSON's escapes at most double them.
inline constexpr uint64_t kMaxSnapshotBytes = uint64_t{256} << 20;

struct SnapshotArgs {
  std::string from = "http://127.0.0.1:8080";
  std::string out;
  double timeout = 60;
  uint64_t max_response_bytes = kMaxSnapshotBytes;  // not a flag: tests lower it
};

// Registers the subcommand; returns it (parsed() tells whether it ran).
CLI::App* AddSnapshotCommand(CLI::App& app, SnapshotArgs* args);

// Fetches /snapshot from a running operator and writes <out>/cluster.yaml
// and <out>/workload.yaml. Exit 0, 1 (no answer, nothing to replay), 2 (bad
// --out). `argc`/`argv`: the whole command line; in `dlsched` this replaces
// the process with dlsched-k8s, as Operate does (operator_command.h).
int TakeSnapshot(const SnapshotArgs& args, int argc, char** argv);

}  // namespace dlsched::cli
