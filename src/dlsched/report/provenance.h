#pragma once

// What a result directory records of how it was made (docs/formats.md,
// Provenance), so that it can be reproduced from the directory alone
// (`dlsched rerun DIR`): the dlsched version, the command line, every input
// file with its SHA-256, the profiles as they ran, the seeds and the window.
// `simulate` writes it into summary.json, `compare` into compare.json and
// `sweep` into provenance.json beside sweep.csv, always under the key
// "provenance"; the HTML report shows it.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dlsched/core/error.h"
#include "dlsched/report/json_writer.h"
#include "dlsched/report/schema.h"

namespace dlsched::report {

// The file a sweep's directory records its provenance in.
inline constexpr std::string_view kProvenanceFile = schema::kProvenanceJson;

struct Provenance {
  // A file the results were computed from.
  struct Input {
    std::string role;    // "cluster", "workload", "trace", "profile" or "pollux-traces"
    std::string format;  // of a trace or cluster CSV ("tiresias", ...); "" for YAML
    std::string path;    // as given on the command line (relative to where dlsched ran)
    std::string sha256;  // of the file's bytes, lowercase hex
  };
  // A profile the results were computed under.
  struct Profile {
    std::string name;              // as the results name it
    std::string builtin;           // the built-in profile it starts from, or ""
    std::string file;              // or the profile file it starts from
    std::vector<std::string> set;  // --set, then NAME:PATH=VALUE overrides, in order
    std::string yaml;              // the profile that ran, `set` applied
  };

  std::string version;  // dlsched's
  // The command line after `dlsched`, without the options that say where
  // the results go and how the run shows itself but not what it computes
  // (--out, --report, --quiet, --threads).
  std::vector<std::string> command;
  std::vector<Input> inputs;
  std::vector<Profile> profiles;
  // The seeds of generated workloads (sweep --jobs N --seeds ...); nullopt
  // when the jobs come from a file.
  std::optional<std::vector<uint64_t>> seeds;
  // The time window the results are restricted to, as given (--window
  // FROM:TO); nullopt when none.
  std::optional<std::string> window;
};

// Writes `p` as a JSON object: the value after w.Key("provenance").
void WriteProvenance(JsonWriter& w, const Provenance& p);

// provenance.json: {"provenance": {...}}, indented by 2, ending in a newline.
std::string ProvenanceFileText(const Provenance& p);

// Reads what WriteProvenance wrote. Errors read
// "provenance.<key>: expected <what>".
core::Result<Provenance> ParseProvenance(const nlohmann::json& value);

// Parses the JSON text of the file `path` (summary.json, compare.json,
// provenance.json); with `skip_jobs`, summary.json's per-job array (most of
// a large run's file) is dropped unbuilt. Malformed text, a number beyond
// the range of a double included, is one line "<path>:<line>: invalid
// JSON: <why>"; no exception of the JSON library escapes.
core::Result<nlohmann::json> ParseJsonFile(const std::string& text, const std::string& path,
                                           bool skip_jobs);

// The provenance of a result directory and the file holding it.
struct FoundProvenance {
  std::string file;  // DIR/provenance.json, DIR/compare.json or DIR/summary.json
  Provenance provenance;
};

// Reads `dir`'s provenance: the "provenance" of its provenance.json,
// compare.json or summary.json, the first of them that exists; nullopt
// when that file has none (a run of an older dlsched, a run directory
// inside a compare or a sweep, a sweep cell run alone). Errors read
// "<file>: ..." (a file that does not parse).
core::Result<std::optional<FoundProvenance>> ReadProvenance(const std::string& dir);

// The command as one line a POSIX shell reads back:
// dlsched simulate -c 'my cluster.yaml' ... (words quoted only when needed).
std::string ShellCommand(std::span<const std::string> command);

}  // namespace dlsched::report
