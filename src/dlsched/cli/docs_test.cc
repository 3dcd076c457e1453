// Docs that run: every command block of README.md and docs/**/*.md runs as
// written, file by file, in order, in a scratch directory of its own where
// the repository's examples/, data/ and testing/ are reachable by the same
// relative paths, with the built dlsched first on PATH.
//
// A command block is a fenced block marked sh, bash or shell, or an
// indented (or unmarked fenced) block whose first line is a command:
// `dlsched <command>` (not `dlsched: `, which is an error message), an
// assignment `v=...`, or a program of the skip rules below (so that they
// are skipped by a rule, not by being missed). Each file's
// blocks make one bash script (set -euo pipefail, so `$v` set by one
// block serves the next, and a failing line fails the file):
//
// - A `dlsched ...` command (with its `\` continuations) is checked on its
//   own: its exit code must be the one its trailing comment states
//   (`# ... exit 2`), else 0. Its placeholders (kPlaceholders) become
//   files and values the repository carries; its `[optional parts]` run
//   twice, without and then with them.
// - Any other line (sed, perl, a loop, a variable) runs as written.
// - kSkippedBlocks and kClusterCommands say what does not run, and where
//   it is tested instead.
//
// A doc command that cannot run as written is fixed in the doc (a step
// that makes the file it reads, an example file, a smaller slice of a
// trace), not here.
//
// Code a doc quotes from a file (a fenced block marked `file=PATH`, as
// docs/writing-a-policy.md quotes its example) must stand in that file as
// written (CheckQuotes).
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dlsched/core/error.h"
#include "dlsched/report/test_util.h"

namespace dlsched::cli {
namespace {

namespace fs = std::filesystem;

// What the docs' placeholders stand for. `after` limits an entry to the
// word that follows that word ("" = anywhere).
struct Placeholder {
  std::string_view word;
  std::string_view after;
  std::string_view value;
};
constexpr Placeholder kPlaceholders[] = {
    {"C", "", "examples/cluster-3node.yaml"},
    {"CLUSTER.yaml", "", "examples/cluster-3node.yaml"},
    {"W", "", "examples/workload-small.yaml"},
    {"WORKLOAD.yaml", "", "examples/workload-small.yaml"},
    {"P", "", "gang-binpack"},
    {"PROFILE", "", "gang-binpack"},
    {"NAME", "--job", "resnet-1"},  // a job of W
    {"NAME", "--show", "kod2"},     // a built-in profile
    {"N", "", "12"},                // a job count: small, for generated workloads
    {"DIR", "", "out/dir"},
    {"FILE", "", "examples/workload-small.yaml"},
    {"FILE...", "validate",
     "examples/cluster-3node.yaml examples/workload-small.yaml examples/profile-cps-group.yaml"},
    // README's `sweep ... --emit-k8s-job`: "the same grid" as its line
    // before, with N jobs.
    {"...", "sweep",
     "-c examples/cluster-3node.yaml --jobs 12 --seeds 1,2,3 -p fifo,kod2 --load 0.5,1,1.5"},
};

// Blocks that do not run, as a whole, and why (where they are covered).
struct SkipRule {
  std::string_view pattern;  // an ECMAScript regex over the block's text
  std::string_view why;
};
constexpr std::string_view kCommandStart = R"((^|\n|[;&|(]|\bdo|\bthen)[ \t]*)";
const SkipRule kSkippedBlocks[] = {
    // CI builds the sanitize preset (scripts/test) and this test runs
    // what it built.
    {R"((cmake|ctest)\b)", "a build (CI builds with scripts/test)"},
    // scripts/test is CI itself; scripts/demo builds the release preset and
    // replays docs/experiments.md's commands, which run here; scripts/deps
    // installs packages; scripts/fuzz fuzzes for minutes (fuzz_test runs
    // the targets on their corpus and former crashes).
    {R"(scripts/)", "a script of scripts/ (CI, the demo, apt-get, fuzzing)"},
    // docs/performance.md's recipes: full-size runs of the release build,
    // timed or profiled (bench/ holds their benchmarks; the same commands
    // at small sizes run in the other docs and tests).
    {R"((perf|valgrind|callgrind_annotate|hyperfine|strace|/usr/bin/time)\b)", "a measurement"},
    {R"((build/|\$D\b))", "a program of another preset's build (release, bench, fuzz)"},
};

// Commands that need a Kubernetes cluster: skipped with the rest of their
// block (what follows reads what they made: a snapshot's files, a Job's
// results). Covered instead by k8s_test (the operator against the test API
// server and kubelet of testing/k8s/, the parity test against the
// simulator), cli_test's OperatorAndSnapshotRunInDlschedK8s (the hand-over
// to dlsched-k8s) and sweep_test's IndexedJobPassesKubectlAndItsPodsGiveTheSweep
// (the Indexed Job through kubectl).
constexpr std::string_view kClusterCommands = R"(^(kubectl|docker|dlsched (operator|snapshot))\b)";

// A code block of a markdown file: its lines with their line numbers.
struct Line {
  int number = 0;
  std::string text;
};
struct Block {
  std::string lang;  // a fenced block's language ("sh" of "sh {.x}"); "" otherwise
  std::string info;  // a fenced block's whole info string
  std::vector<Line> lines;
};

std::vector<Block> Blocks(const std::string& markdown) {
  std::vector<std::string> lines;
  for (size_t at = 0; at <= markdown.size();) {
    size_t end = markdown.find('\n', at);
    if (end == std::string::npos) end = markdown.size();
    lines.push_back(markdown.substr(at, end - at));
    at = end + 1;
  }
  const auto blank = [](const std::string& l) {
    return l.find_first_not_of(" \t") == std::string::npos;
  };
  std::vector<Block> blocks;
  for (size_t i = 0; i < lines.size();) {
    const std::string& l = lines[i];
    const size_t indent = l.find_first_not_of(' ');
    if (indent != std::string::npos && l.compare(indent, 3, "```") == 0) {
      Block b;
      b.info = l.substr(indent + 3);
      b.lang = b.info.substr(0, b.info.find_first_of(" \t{"));  // "sh", of "sh {.x}"
      size_t j = i + 1;
      for (; j < lines.size(); ++j) {
        const size_t in = lines[j].find_first_not_of(' ');
        if (in != std::string::npos && lines[j].compare(in, 3, "```") == 0) break;
        // The fence's indentation, where the line has it, is not the command's.
        b.lines.push_back(
            {static_cast<int>(j + 1),
             lines[j].substr(std::min(indent, in == std::string::npos ? lines[j].size() : in))});
      }
      blocks.push_back(std::move(b));
      i = j + 1;
      continue;
    }
    if (l.starts_with("    ") && (i == 0 || blank(lines[i - 1]))) {
      Block b;
      size_t j = i;
      for (; j < lines.size() && (lines[j].starts_with("    ") || blank(lines[j])); ++j) {
        b.lines.push_back({static_cast<int>(j + 1), lines[j].size() > 4 ? lines[j].substr(4) : ""});
      }
      while (!b.lines.empty() && blank(b.lines.back().text)) b.lines.pop_back();
      blocks.push_back(std::move(b));
      i = j;
      continue;
    }
    ++i;
  }
  return blocks;
}

bool IsDlschedCommand(std::string_view line) {
  return std::regex_search(std::string(line), std::regex(R"(^dlsched (-|[a-z]))"));
}

// Whether `block` holds commands (see the top of the file).
bool IsCommandBlock(const Block& b) {
  if (b.lang == "sh" || b.lang == "bash" || b.lang == "shell") return true;
  if (!b.lang.empty()) return false;
  for (const Line& l : b.lines) {
    const std::string& t = l.text;
    if (t.find_first_not_of(" \t") == std::string::npos) continue;
    if (IsDlschedCommand(t)) return true;
    if (std::regex_search(t, std::regex(R"(^[A-Za-z_][A-Za-z0-9_]*=[^ =])"))) return true;
    if (std::regex_search(t, std::regex(std::string(kClusterCommands)))) return true;
    for (const SkipRule& rule : kSkippedBlocks) {
      if (std::regex_search(t, std::regex("^" + std::string(rule.pattern)))) return true;
    }
    return false;
  }
  return false;
}

// The trailing `# comment` of a command, if any, and the command without it.
std::pair<std::string, std::string> SplitComment(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      std::string command = line.substr(0, i);
      command.erase(command.find_last_not_of(" \t") + 1);
      return {command, line.substr(i + 1)};
    }
  }
  return {line, ""};
}

// The rule that skips `block`, if one does.
const SkipRule* SkippedBy(const Block& b) {
  std::string text;  // without the comments, which may name any program
  for (const Line& l : b.lines) text += SplitComment(l.text).first + "\n";
  for (const SkipRule& rule : kSkippedBlocks) {
    if (std::regex_search(text,
                          std::regex(std::string(kCommandStart) + std::string(rule.pattern)))) {
      return &rule;
    }
  }
  return nullptr;
}

// A command as the shell reads it: lines joined at their `\`.
struct Logical {
  int number = 0;
  std::vector<std::string> physical;
  std::string joined;  // one line, the `\`s and line breaks as one space
};

std::vector<Logical> LogicalLines(const Block& b) {
  std::vector<Logical> out;
  bool open = false;
  for (const Line& l : b.lines) {
    if (!open) out.push_back({l.number, {}, ""});
    Logical& cur = out.back();
    cur.physical.push_back(l.text);
    std::string part = l.text;
    open = part.ends_with("\\");
    if (open) part.pop_back();
    if (!cur.joined.empty()) {
      const size_t first = part.find_first_not_of(" \t");
      part = first == std::string::npos ? "" : part.substr(first);
      cur.joined += " ";
    }
    cur.joined += part;
  }
  return out;
}

// A `dlsched` command ready to run: its forms (with and without its
// optional parts) and the exit code it must give.
struct Command {
  std::vector<std::string> forms;
  int exit_code = 0;
};

// Words split at blanks outside quotes.
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string cur;
  char quote = 0;
  bool in_word = false;
  for (char c : text) {
    if (quote == 0 && (c == ' ' || c == '\t')) {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    cur += c;
    if (quote == 0 && (c == '\'' || c == '"')) {
      quote = c;
    } else if (c == quote) {
      quote = 0;
    }
  }
  if (in_word) words.push_back(cur);
  return words;
}

// `line` (a `dlsched` command) with its placeholders filled in; an error
// names a placeholder kPlaceholders lacks.
core::Result<Command> MakeCommand(const std::string& line) {
  auto [text, comment] = SplitComment(line);
  Command c;
  std::smatch m;
  if (std::regex_search(comment, m, std::regex(R"(\bexit (\d+)\b)"))) {
    c.exit_code = std::stoi(m[1]);
  }
  const std::vector<std::string> words = Words(text);
  for (const bool with_optional : {false, true}) {
    std::string form;
    std::string previous;
    bool optional = false;
    bool any_optional = false;
    for (std::string word : words) {
      const bool opens = word.starts_with("[");
      const bool closes = word.ends_with("]") && (optional || opens);
      if (opens) {
        optional = true;
        any_optional = true;
        word.erase(0, 1);
      }
      if (closes) word.pop_back();
      const bool keep = !optional || with_optional;
      if (closes) optional = false;
      if (!keep) continue;
      const Placeholder* found = nullptr;
      for (const Placeholder& p : kPlaceholders) {
        if (word == p.word && (p.after.empty() || previous == p.after)) {
          found = &p;
          break;
        }
      }
      previous = word;
      if (found != nullptr) {
        word = found->value;
      } else if (std::regex_match(word,
                                  std::regex(R"([A-Z][A-Z0-9_]*(\.[a-z]+)?(\.\.\.)?|\.\.\.)"))) {
        return core::Errorf("'{}': the placeholder '{}' has no entry in kPlaceholders", text, word);
      }
      form += (form.empty() ? "" : " ") + word;
    }
    if (with_optional && !any_optional) break;
    c.forms.push_back(form);
  }
  return c;
}

std::string ShellQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A doc file as one bash script, each line with the doc line it came from.
struct Script {
  std::vector<std::string> lines;
  std::vector<int> from;             // the doc's line number per script line (0: our own)
  int commands = 0;                  // dlsched commands it runs (forms counted apart)
  std::vector<std::string> skipped;  // "file:line: why"
  void Add(std::string line, int doc_line) {
    lines.push_back(std::move(line));
    from.push_back(doc_line);
  }
};

constexpr std::string_view kPrologue = R"(set -Eeuo pipefail
trap 'echo "docs_test: script line $LINENO: exit $?: $BASH_COMMAND" >&2' ERR
__begin() { __at=$1; __want=$2; __rc=0; printf '+ %s: %s\n' "$1" "$3" >&2; }
__end() {
  if [ "$__rc" != "$__want" ]; then
    echo "docs_test: $__at: exit $__rc, expected $__want" >&2
    exit 1
  fi
})";

core::Result<Script> MakeScript(const std::string& name, const std::string& markdown) {
  Script s;
  for (size_t at = 0; at < kPrologue.size();) {
    const size_t end = std::min(kPrologue.find('\n', at), kPrologue.size());
    s.Add(std::string(kPrologue.substr(at, end - at)), 0);
    at = end + 1;
  }
  for (const Block& b : Blocks(markdown)) {
    if (!IsCommandBlock(b) || b.lines.empty()) continue;
    if (const SkipRule* rule = SkippedBy(b)) {
      s.skipped.push_back(fmt::format("{}:{}: {}", name, b.lines.front().number, rule->why));
      continue;
    }
    for (const Logical& l : LogicalLines(b)) {
      const size_t first = l.joined.find_first_not_of(" \t");
      const std::string trimmed = first == std::string::npos ? "" : l.joined.substr(first);
      if (std::regex_search(trimmed, std::regex(std::string(kClusterCommands)))) {
        s.skipped.push_back(fmt::format(
            "{}:{}: needs a Kubernetes cluster (with the rest of its block)", name, l.number));
        break;
      }
      if (!IsDlschedCommand(trimmed)) {
        for (size_t i = 0; i < l.physical.size(); ++i) {
          s.Add(l.physical[i], l.number + static_cast<int>(i));
        }
        continue;
      }
      auto command = MakeCommand(trimmed);
      if (!command) return core::Errorf("{}:{}: {}", name, l.number, command.error().message);
      for (const std::string& form : command->forms) {
        const std::string at = fmt::format("{}:{}", name, l.number);
        s.Add(fmt::format("__begin {} {} {}; {} || __rc=$?; __end", ShellQuote(at),
                          command->exit_code, ShellQuote(form), form),
              l.number);
        ++s.commands;
      }
    }
  }
  return s;
}

// What running a doc gave: how many dlsched commands ran, what was
// skipped, and on failure where and the end of the run's log.
struct Outcome {
  bool ok = false;
  int commands = 0;
  std::vector<std::string> skipped;
  std::string failure;
};

// Runs the command blocks of `markdown` (named `name`) in `scratch`, an
// empty directory, with examples/, data/ and testing/ linked there.
Outcome RunDoc(const std::string& name, const std::string& markdown, const fs::path& scratch) {
  Outcome o;
  auto script = MakeScript(name, markdown);
  if (!script) {
    o.failure = script.error().message;
    return o;
  }
  o.commands = script->commands;
  o.skipped = script->skipped;
  if (std::all_of(script->from.begin(), script->from.end(), [](int n) { return n == 0; })) {
    o.ok = true;  // nothing to run
    return o;
  }
  const fs::path root(DLSCHED_SOURCE_DIR);
  for (const char* dir : {"examples", "data", "testing"}) {
    fs::create_directory_symlink(root / dir, scratch / dir);
  }
  std::string text;
  for (const std::string& line : script->lines) text += line + "\n";
  report::testing::WriteFile(scratch / "docs.sh", text);
  const std::string bin = fs::path(DLSCHED_BINARY).parent_path().string();
  const std::string run =
      fmt::format("cd {} && PATH={}:\"$PATH\" bash docs.sh >log.txt 2>&1 </dev/null",
                  ShellQuote(scratch.string()), ShellQuote(bin));
  if (std::system(run.c_str()) == 0) {
    o.ok = true;
    return o;
  }
  const std::string log = report::testing::ReadFile(scratch / "log.txt");
  // Where: the doc line of the failing script line (a dlsched command
  // names its own).
  std::smatch m;
  if (std::regex_search(log, m, std::regex(R"((docs_test: script line|docs\.sh: line) (\d+):)"))) {
    const size_t line = std::stoul(m[2]);
    if (line >= 1 && line <= script->from.size() && script->from[line - 1] > 0) {
      o.failure = fmt::format("{}:{}: ", name, script->from[line - 1]);
    }
  }
  size_t at = log.size();
  for (int n = 0; n < 30 && at != std::string::npos && at > 0; ++n) at = log.rfind('\n', at - 1);
  o.failure += fmt::format("a command of {} failed as written; the end of the run's log:\n{}", name,
                           at == std::string::npos ? log : log.substr(at + 1));
  return o;
}

// A scratch directory per test (removed afterwards).
fs::path Scratch(const std::string& what) {
  std::string slug = what;
  for (char& c : slug) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  const fs::path dir =
      fs::temp_directory_path() / fmt::format("dlsched-docs-{}-{}", ::getpid(), slug);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// README.md and every docs/**/*.md, relative to the source directory.
std::vector<std::string> DocFiles() {
  const fs::path root(DLSCHED_SOURCE_DIR);
  std::vector<std::string> files = {"README.md"};
  std::vector<std::string> docs;
  for (const auto& e : fs::recursive_directory_iterator(root / "docs")) {
    if (e.is_regular_file() && e.path().extension() == ".md") {
      docs.push_back(fs::relative(e.path(), root).string());
    }
  }
  std::sort(docs.begin(), docs.end());
  files.insert(files.end(), docs.begin(), docs.end());
  return files;
}

class DocsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { tmp_ = Scratch(GetParam()); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
  fs::path tmp_;
};

TEST_P(DocsTest, CommandsRunAsWritten) {
  const std::string markdown = report::testing::ReadFile(fs::path(DLSCHED_SOURCE_DIR) / GetParam());
  const Outcome o = RunDoc(GetParam(), markdown, tmp_);
  std::cout << GetParam() << ": " << o.commands << " dlsched commands run\n";
  for (const std::string& s : o.skipped) std::cout << "  skipped " << s << "\n";
  EXPECT_TRUE(o.ok) << o.failure << "\n(fix the doc, or the code it documents)";
}

INSTANTIATE_TEST_SUITE_P(Docs, DocsTest, ::testing::ValuesIn(DocFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return name;
                         });

// What a doc becomes: commands joined at their `\`, comments and exit
// codes read, placeholders filled in, optional parts run without and
// with; YAML, error messages and builds left out; a cluster command
// ends its block.
TEST(DocsScriptTest, TurnsCommandBlocksIntoChecks) {
  const std::string doc =
      "# A doc\n"
      "\n"
      "    dlsched simulate -c C \\\n"
      "                     -w W   # one error line, exit 2\n"
      "    dlsched report   out/x [-o r.html]\n"
      "\n"
      "```yaml\n"
      "nodes: []\n"
      "```\n"
      "\n"
      "    dlsched: c.yaml: nodes[0].cpu: an error message, not a command\n"
      "\n"
      "```sh\n"
      "v=out/v; mkdir -p $v   # a line of its own\n"
      "kubectl apply -f job.yaml\n"
      "dlsched report out/s\n"
      "```\n"
      "\n"
      "```sh\n"
      "cmake --preset release\n"
      "build/release/dlsched --version\n"
      "```\n";
  auto s = MakeScript("t.md", doc);
  ASSERT_TRUE(s) << s.error().message;
  std::vector<std::string> body;
  std::vector<int> from;
  for (size_t i = 0; i < s->lines.size(); ++i) {
    if (s->from[i] == 0) continue;
    body.push_back(s->lines[i]);
    from.push_back(s->from[i]);
  }
  const std::string sim =
      "dlsched simulate -c examples/cluster-3node.yaml -w examples/workload-small.yaml";
  EXPECT_EQ(body, (std::vector<std::string>{
                      "__begin 't.md:3' 2 '" + sim + "'; " + sim + " || __rc=$?; __end",
                      "__begin 't.md:5' 0 'dlsched report out/x'; dlsched report out/x || "
                      "__rc=$?; __end",
                      "__begin 't.md:5' 0 'dlsched report out/x -o r.html'; dlsched report "
                      "out/x -o r.html || __rc=$?; __end",
                      "v=out/v; mkdir -p $v   # a line of its own",
                  }));
  EXPECT_EQ(from, (std::vector<int>{3, 5, 5, 14}));
  EXPECT_EQ(s->commands, 3);
  EXPECT_EQ(s->skipped, (std::vector<std::string>{
                            "t.md:15: needs a Kubernetes cluster (with the rest of its block)",
                            "t.md:20: a build (CI builds with scripts/test)"}));

  // A placeholder the table does not know is an error, not a guess.
  auto unknown = MakeScript("t.md", "    dlsched simulate -c C -w X\n");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message,
            "t.md:1: 'dlsched simulate -c C -w X': the placeholder 'X' has no entry in "
            "kPlaceholders");
}

// A command that fails as written fails the doc, naming its line; one
// documented to fail must fail with its code; any other failing line (an
// unset variable too) fails it as well.
TEST(DocsScriptTest, AFailingCommandFailsTheDoc) {
  const fs::path tmp = Scratch("fails");
  const auto run = [&](const std::string& doc) {
    fs::remove_all(tmp);
    fs::create_directories(tmp);
    return RunDoc("t.md", doc, tmp);
  };
  Outcome o = run("    dlsched validate examples/broken-workload.yaml\n");
  EXPECT_FALSE(o.ok);
  EXPECT_NE(o.failure.find("docs_test: t.md:1: exit 2, expected 0"), std::string::npos)
      << o.failure;
  o = run("    dlsched validate examples/broken-workload.yaml   # exit 2\n");
  EXPECT_TRUE(o.ok) << o.failure;
  o = run("    dlsched validate examples/workload-small.yaml   # exit 2\n");
  EXPECT_FALSE(o.ok);
  EXPECT_NE(o.failure.find("docs_test: t.md:1: exit 0, expected 2"), std::string::npos)
      << o.failure;
  o = run("text\n\n```sh\nv=out\ncat $v/nothing.yaml\n```\n");
  EXPECT_FALSE(o.ok);
  EXPECT_TRUE(o.failure.starts_with("t.md:5: ")) << o.failure;
  o = run("```sh\nls $undefined\n```\n");
  EXPECT_FALSE(o.ok);
  EXPECT_TRUE(o.failure.starts_with("t.md:2: ")) << o.failure;
  fs::remove_all(tmp);
}

// Code a doc quotes from a file: a fenced block whose info string names
// the file, relative to the repository (```cpp file=src/dlsched/x.cc),
// holds lines that stand in that file as they are in the block, one after
// another, so a doc that quotes code cannot drift from it. The quotes of
// `markdown` (named `name`) that are not in their file, one line each
// ("name:line: ..."), and how many quotes it holds.
struct QuoteCheck {
  int quotes = 0;
  std::vector<std::string> bad;
};

QuoteCheck CheckQuotes(const std::string& name, const std::string& markdown, const fs::path& root) {
  QuoteCheck c;
  for (const Block& b : Blocks(markdown)) {
    std::smatch m;
    if (!std::regex_search(b.info, m, std::regex(R"((^|\s)file=(\S+))"))) continue;
    ++c.quotes;
    const int at = b.lines.empty() ? 0 : b.lines.front().number - 1;  // the fence's line
    const fs::path file = root / m[2].str();
    if (!fs::is_regular_file(file)) {
      c.bad.push_back(fmt::format("{}:{}: quotes {}, which does not exist", name, at, m[2].str()));
      continue;
    }
    std::string text;
    for (const Line& l : b.lines) text += l.text + "\n";
    if (report::testing::ReadFile(file).find(text) == std::string::npos) {
      c.bad.push_back(fmt::format("{}:{}: the block quoting {} is not in that file as written",
                                  name, at, m[2].str()));
    }
  }
  return c;
}

TEST_P(DocsTest, CodeQuotedFromAFileIsInThatFile) {
  const fs::path root(DLSCHED_SOURCE_DIR);
  const QuoteCheck c = CheckQuotes(GetParam(), report::testing::ReadFile(root / GetParam()), root);
  std::string all;
  for (const std::string& b : c.bad) all += b + "\n";
  EXPECT_EQ(all, "") << "copy the code again from the file into the doc (or fix the file name)";
}

// The check itself, and the guide to writing a policy quoting its
// example's code (so that it is checked).
TEST(DocsQuoteTest, AQuoteMustStandInItsFileAsWritten) {
  const fs::path root(DLSCHED_SOURCE_DIR);
  const std::string doc =
      "```cpp file=src/dlsched/policy/shared/order_fifo.h\n"
      "class FifoOrder final : public engine::JobOrder {\n"
      " public:\n"
      "```\n"
      "\n"
      "```cpp file=src/dlsched/policy/shared/order_fifo.h\n"
      "class FifoOrder : public engine::JobOrder {\n"
      "```\n"
      "```yaml file=examples/none.yaml\n"
      "name: x\n"
      "```\n"
      "```cpp\n"
      "not checked\n"
      "```\n";
  const QuoteCheck c = CheckQuotes("t.md", doc, root);
  EXPECT_EQ(c.quotes, 3);
  EXPECT_EQ(c.bad,
            (std::vector<std::string>{
                "t.md:6: the block quoting src/dlsched/policy/shared/order_fifo.h is not in that "
                "file as written",
                "t.md:9: quotes examples/none.yaml, which does not exist"}));
  const std::string guide = "docs/writing-a-policy.md";
  EXPECT_GE(CheckQuotes(guide, report::testing::ReadFile(root / guide), root).quotes, 8);
}

// The lines of `text`, without their '\n'.
std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t at = 0; at <= text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

// Docs that stand alone: the repository cites no document its readers do
// not have. The project was specified in a specification and design notes
// kept outside it; what the docs rely on from them is stated in docs/
// (principles.md, policies/ and the papers they cite), so a citation of them
// (the specification's name as a word in capitals, "<name> section 4", or
// the design notes' file name) is a fact left unstated. The names are
// spelled in two pieces so that this file cites nothing either. The
// numbers, from 1, of the lines of `text` that hold one.
const std::string kSpecName = std::string("SP") + "EC";
const std::string kDesignFile = std::string("DES") + "IGN.md";

std::vector<int> CitationsOfAbsentDocs(std::string_view text) {
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  const std::vector<std::string_view> lines = SplitLines(text);
  std::vector<int> found;
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::string_view line = lines[n];
    bool cites = line.find(kDesignFile) != std::string_view::npos;
    // The name as a word of its own, in capitals: not inside JobSpec, nor
    // inside a longer word in capitals.
    const size_t len = kSpecName.size();
    for (size_t i = line.find(kSpecName); !cites && i != std::string_view::npos;
         i = line.find(kSpecName, i + 1)) {
      cites = (i == 0 || !word(line[i - 1])) && (i + len == line.size() || !word(line[i + len]));
    }
    if (cites) found.push_back(static_cast<int>(n + 1));
  }
  return found;
}

TEST(DocsStandAloneTest, FindsCitationsOfAbsentDocs) {
  const std::string& s = kSpecName;
  EXPECT_EQ(
      CitationsOfAbsentDocs("# KOD2 (" + s + " sections 2-3)\n" + "as " + kDesignFile + " asks\n" +
                            "JobSpec, " + s + "IAL, IN" + s + "T and spec are words of ours\n" +
                            "(" + s + "'s choice)\n" + "see " + s + ".md\n" + s),
      (std::vector<int>{1, 2, 4, 5, 6}));
  EXPECT_EQ(CitationsOfAbsentDocs(""), std::vector<int>{});
}

// The docs (README.md, docs/), and the comments, examples and scripts
// beside the code, which point readers to the docs.
TEST(DocsStandAloneTest, NothingCitesDocumentsTheRepositoryLacks) {
  const fs::path root(DLSCHED_SOURCE_DIR);
  std::vector<fs::path> files;
  for (const char* f : {"README.md", "CMakeLists.txt", "CMakePresets.json"}) {
    files.push_back(root / f);
  }
  for (const std::string_view dir :
       {"docs", "src", "scripts", "bench", "testing", "examples", "fuzz", "deploy", "data"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      if (!e.is_regular_file()) continue;
      // data/ holds public traces, copied unchanged: only its notes are ours.
      if (dir == "data" && e.path().extension() != ".md") continue;
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::string found;
  int scanned = 0;
  for (const fs::path& f : files) {
    const std::string text = report::testing::ReadFile(f);
    if (text.find('\0') != std::string::npos) continue;  // a binary fuzz input
    ++scanned;
    const std::vector<std::string_view> lines = SplitLines(text);
    for (int n : CitationsOfAbsentDocs(text)) {
      found += fmt::format("{}:{}: {}\n", fs::relative(f, root).string(), n, lines[n - 1]);
    }
  }
  EXPECT_GT(scanned, 100);
  EXPECT_EQ(found, "") << "these lines cite documents a reader of the repository does not have; "
                          "state what they stand for in docs/ (docs/principles.md, docs/policies/, "
                          "the papers in docs/policies.md#references) and cite that instead";
}

}  // namespace
}  // namespace dlsched::cli
