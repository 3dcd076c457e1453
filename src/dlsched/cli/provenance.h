#pragma once

// Building a result directory's provenance (report/provenance.h) from the
// command line (cli/ internal): the command as recorded, input files with
// their SHA-256, and the profiles as they ran.

#include <span>
#include <string>
#include <vector>

#include "dlsched/cli/inputs.h"
#include "dlsched/cli/options.h"
#include "dlsched/core/error.h"
#include "dlsched/report/provenance.h"

namespace dlsched::cli {

// The SHA-256 of `bytes`, lowercase hex (Nettle's).
std::string Sha256Hex(std::string_view bytes);

// The SHA-256 of the file at `path`, read in pieces, lowercase hex. Errors
// read "<path>: cannot read file: <reason>".
core::Result<std::string> Sha256File(const std::string& path);

// `args` (the command line after "dlsched", the subcommand first) without
// the options that say where the results go or how the run shows itself,
// not what it computes: --out/-o, --report, --quiet/-q and --threads/-j, in
// every form CLI11 reads (-o DIR, -oDIR, --out DIR, --out=DIR, -qo DIR).
// A command recorded this way, given --out again, writes the same files.
std::vector<std::string> RecordedCommand(std::span<const std::string> args);

// Adds the file at `path` as an input of `role` (and `format`, "" for
// YAML), hashed now.
core::Status AddInputFile(report::Provenance& p, const std::string& role, const std::string& format,
                          const std::string& path);

// Adds every regular file under the directory `dir`, in path order, as
// inputs of `role` (Pollux's measurements).
core::Status AddInputTree(report::Provenance& p, const std::string& role, const std::string& dir);

// A profile as --profile or --profiles gives it: a built-in name or a
// profile file, `overrides` (--set, then NAME:PATH=VALUE) applied, named
// `name` in the results. Records the profile's YAML and, for a file, the
// file as an input (once).
core::Status AddProfile(report::Provenance& p, const std::string& name_or_path,
                        std::span<const std::string> overrides, const std::string& name);

// What a result directory records of a run of `cluster` and `jobs`: the
// version, `command` (RecordedCommand's), the input files with their
// SHA-256 and the --window as given; the caller adds the profiles and the
// seeds.
core::Result<report::Provenance> RunProvenance(const std::vector<std::string>& command,
                                               const std::string& cluster, const JobSource& jobs,
                                               const std::string& window);

// Adds compare's or sweep's profiles (AddProfile), each named as its
// results are.
core::Status AddProfiles(report::Provenance& p, const LoadedProfiles& profiles);

}  // namespace dlsched::cli
