#include "dlsched/cli/rerun_command.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "dlsched/cli/options.h"
#include "dlsched/cli/provenance.h"
#include "dlsched/core/error.h"
#include "dlsched/core/text.h"
#include "dlsched/report/provenance.h"
#include "dlsched/report/schema.h"

namespace dlsched::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kOk = 0;
constexpr int kNotReproduced = 1;
constexpr int kBadInput = 2;
constexpr int kInterrupted = 130;

int Fail(int code, std::string_view message) {
  std::fflush(stdout);
  std::fprintf(stderr, "dlsched: rerun: %s\n", core::EscapeMessage(message).c_str());
  return code;
}

core::Result<std::string> ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in) return core::Errorf("{}: cannot read file", p.string());
  return ss.str();
}

// DIR-rerun beside DIR ("out/kod2/" gives "out/kod2-rerun").
std::string DefaultOut(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  if (p.empty() || p == "." || p == "..") p = fs::absolute(p).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  return p.string() + "-rerun";
}

// Whether `inner` is `outer` or lies under it.
bool Within(const fs::path& inner, const fs::path& outer) {
  auto o = outer.begin();
  auto i = inner.begin();
  for (; o != outer.end() && !o->empty(); ++o, ++i) {
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

fs::path Canonical(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  return ec ? fs::absolute(path).lexically_normal() : p;
}

// The directory's identity, to tell whether a run replaced it; nullopt
// when there is none.
std::optional<std::pair<dev_t, ino_t>> DirId(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return std::nullopt;
  return std::pair{st.st_dev, st.st_ino};
}

// The first summary.json under `dir` of a run that was interrupted.
std::optional<std::string> PartialRun(const std::string& dir) {
  for (const std::string& rel : ComparedFiles(dir)) {
    if (fs::path(rel).filename() != report::schema::kSummaryJson) continue;
    const fs::path p = fs::path(dir) / rel;
    auto text = ReadAll(p);
    // summary.json's top-level "partial" key, as dlsched writes it.
    const std::string partial =
        fmt::format("\n  \"{}\": true,\n", report::schema::summary::kPartial);
    if (text && text->find(partial) != std::string::npos) return p.string();
  }
  return std::nullopt;
}

// Options no recorded command holds: those that run something other than
// the computation (a merge, one cell, a Job manifest, help), beside those
// RecordedCommand drops (where the results go, how the run shows itself).
constexpr std::string_view kNeverRecorded[] = {"--merge", "--cell", "--emit-k8s-job",
                                               "--help",  "-h",     "--version"};

// Why `command` (provenance.command) is not one dlsched recorded, or "".
// Run as it stands, an edited one could write anywhere (--report FILE,
// --merge DIR) or do anything but reproduce the results.
std::string NotRecorded(const std::vector<std::string>& command) {
  if (RecordedCommand(command) != command) {
    return "holds an option that says where results go (--out, --report, --threads, --quiet), "
           "which dlsched never records";
  }
  for (const std::string& word : command) {
    if (word == "--") break;
    const std::string_view name = std::string_view(word).substr(0, word.find('='));
    for (std::string_view never : kNeverRecorded) {
      if (name == never) return fmt::format("holds {}, which dlsched never records", never);
    }
  }
  return "";
}

int FirstDifferingLine(std::string_view a, std::string_view b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return 1 + static_cast<int>(std::count(a.begin(), ia, '\n'));
}

// The provenance `dir` records, checked: a simulate, compare or sweep
// command as dlsched records it, results that are not partial, every input
// file as it was. An error is bad input (exit 2).
core::Result<report::Provenance> CheckedProvenance(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return core::MakeError(dir + ": no such directory");
  DLSCHED_TRY_LET(found, report::ReadProvenance(dir));
  if (!*found) {
    return core::Errorf(
        "{}: records no provenance (simulate, compare and sweep record it at the top of their "
        "--out; a compare's or a sweep's run directories do not: rerun the directory above)",
        dir);
  }
  const report::Provenance& p = (*found)->provenance;
  const std::string& command = p.command[0];
  if (command != "simulate" && command != "compare" && command != "sweep") {
    return core::Errorf(
        "{}: provenance.command: expected a simulate, compare or sweep command, got '{}'",
        (*found)->file, command);
  }
  if (const std::string why = NotRecorded(p.command); !why.empty()) {
    return core::Errorf("{}: provenance.command: {} (was the file edited?)", (*found)->file, why);
  }
  if (auto partial = PartialRun(dir)) {
    return core::Errorf(
        "{}: the run was interrupted (\"partial\": true); partial results cannot be reproduced",
        *partial);
  }
  for (const auto& in : p.inputs) {
    auto sha = Sha256File(in.path);
    if (!sha) {
      return core::Errorf(
          "{}: the run's {} is missing or unreadable ({}); paths are relative to the directory "
          "the run started in",
          in.path, in.role, sha.error().message);
    }
    if (*sha != in.sha256) {
      return core::Errorf("{}: the run's {} has changed since the run (SHA-256 {}, recorded {})",
                          in.path, in.role, *sha, in.sha256);
    }
  }
  return p;
}

// Whether `out` holds the files `dir` holds (ComparedFiles), no more, each
// byte for byte; how many if so, else the first difference (`note` after
// it).
core::Result<size_t> CompareDirs(const std::string& dir, const std::string& out,
                                 const std::string& note) {
  const std::vector<std::string> expected = ComparedFiles(dir);
  const std::vector<std::string> got = ComparedFiles(out);
  for (const auto& f : expected) {
    if (!std::binary_search(got.begin(), got.end(), f)) {
      return core::Errorf("{}: not written again, but {} has it{}", (fs::path(out) / f).string(),
                          dir, note);
    }
  }
  for (const auto& f : got) {
    if (!std::binary_search(expected.begin(), expected.end(), f)) {
      return core::Errorf("{}: written, but {} has no such file{}", (fs::path(out) / f).string(),
                          dir, note);
    }
  }
  for (const auto& f : expected) {
    DLSCHED_TRY_LET(want, ReadAll(fs::path(dir) / f));
    DLSCHED_TRY_LET(have, ReadAll(fs::path(out) / f));
    if (*want != *have) {
      return core::Errorf("{} differs from {} from line {} on{}", (fs::path(out) / f).string(),
                          (fs::path(dir) / f).string(), FirstDifferingLine(*want, *have), note);
    }
  }
  return expected.size();
}

}  // namespace

CLI::App* AddRerunCommand(CLI::App& app, RerunArgs* args) {
  CLI::App* cmd = app.add_subcommand(
      "rerun",
      "Reproduce a result directory from what it records (its provenance: docs/formats.md): "
      "check that every input file still has the SHA-256 it had, run the recorded simulate, "
      "compare or sweep command again into another directory, and check that every file it "
      "writes is byte for byte the one in DIR (report.html aside)");
  cmd->footer(
      "Examples:\n"
      "  dlsched simulate -c examples/cluster-3node.yaml -w examples/workload-small.yaml \\\n"
      "                   -p kod2 -o out/kod2\n"
      "  dlsched rerun out/kod2                 # writes out/kod2-rerun/ and compares\n\n"
      "Input paths are as the run was given them: rerun from the directory it ran in.\n"
      "Exit codes: 0 reproduced byte for byte; 1 a file differs (the first is named) or the "
      "results could not be written; 2 DIR records no provenance or partial results, or an "
      "input changed or is missing (one line naming it); 130 interrupted.");
  cmd->add_option("dir", args->dir, "A result directory of simulate, compare or sweep (its --out)")
      ->required();
  cmd->add_option("--out,-o", args->out,
                  "Where to write the results again (default: DIR-rerun beside DIR); replaced as "
                  "a whole, as simulate's --out");
  AddQuietOption(cmd, &args->quiet);
  AddThreadsOption(cmd, &args->threads,
                   "compare and sweep: runs at once (default 0: one per core); the results do not "
                   "depend on it");
  return cmd;
}

std::vector<std::string> ComparedFiles(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with('.')) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (name == "report.html" || !it->is_regular_file(ec)) continue;
    out.push_back(fs::relative(it->path(), dir, ec).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

int Rerun(const RerunArgs& a, const RunCommand& run) {
  auto checked = CheckedProvenance(a.dir);
  if (!checked) return Fail(kBadInput, checked.error().message);
  const report::Provenance& p = *checked;
  const std::string& command = p.command[0];
  const std::string out = a.out.empty() ? DefaultOut(a.dir) : a.out;
  const fs::path dir_path = Canonical(a.dir);
  const fs::path out_path = Canonical(out);
  if (Within(out_path, dir_path) || Within(dir_path, out_path)) {
    return Fail(kBadInput,
                fmt::format("--out: {} must be outside {} (and not hold it)", out, a.dir));
  }

  std::vector<std::string> args = p.command;
  args.insert(args.end(), {"--out", out});
  if (a.quiet) args.push_back("--quiet");
  if (a.threads > 0 && command != "simulate") {
    args.insert(args.end(), {"--threads", std::to_string(a.threads)});
  }
  if (!a.quiet) {
    std::printf("rerun: %s\n", core::EscapeText(report::ShellCommand(args), 4096).c_str());
    std::fflush(stdout);
  }
  const auto before = DirId(out);
  const int code = run(args);
  if (code == kBadInput || code == kInterrupted) return code;
  const auto after = DirId(out);
  // The run writes its directory as one unit: a directory unchanged is
  // one it could not write (it said why).
  if (!after || after == before) return code == kOk ? kNotReproduced : code;

  const std::string version_note =
      p.version == DLSCHED_VERSION
          ? std::string()
          : fmt::format(" ({} was written by dlsched {}, this is dlsched {})", a.dir, p.version,
                        DLSCHED_VERSION);
  auto compared = CompareDirs(a.dir, out, version_note);
  if (!compared) return Fail(kNotReproduced, compared.error().message);
  std::printf("rerun: %s/ is byte for byte %s/ (%zu files compared; report.html is not)\n",
              core::EscapeText(out, 4096).c_str(), core::EscapeText(a.dir, 4096).c_str(),
              *compared);
  return kOk;
}

}  // namespace dlsched::cli
