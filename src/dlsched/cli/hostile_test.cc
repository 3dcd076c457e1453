// Hostile and careless inputs, as a new user or an attacker would try them:
// every file kind (YAML, the trace CSVs, Pollux's measurements, result
// directories, provenance, an operator's /snapshot answer), every
// subcommand and flag. For each, the dlsched binary must exit 2 (bad input)
// or 1 (a run that fails), print exactly one line on stderr starting
// "dlsched:", not die of a signal, not hang, stay within a bound of memory,
// and leave the working directory (with an earlier run's results in it)
// exactly as it was.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>

#include "core/files.h"
#include "dlsched/cli/provenance.h"
#include "dlsched/cli/snapshot.h"
#include "dlsched/cli/snapshot_server.h"
#include "dlsched/config/trace.h"

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int code = -1;        // exit code, or -1 when killed by a signal
  int signal = 0;       // the signal that killed it, if any
  bool hung = false;    // still running after kHangSeconds: killed
  long max_rss_kb = 0;  // its peak resident memory
  std::string out;      // stdout
  std::string err;      // stderr
};

struct Options {
  std::string stdout_path;  // redirect stdout to this file instead of a pipe
  rlim_t max_file_size = RLIM_INFINITY;
  rlim_t max_address_space = RLIM_INFINITY;  // RLIMIT_AS: out of memory on purpose
};

// A case still running after this long hangs: it is killed and fails. Far
// above any case's time (each takes well under a second): a guard that
// turns a hang into a failure, not a timing test.
constexpr int kHangSeconds = 300;
// The most memory a case may take (resident, sanitizer's shadow included):
// every case reads at most a few MiB, so a case near this reads without
// bound.
constexpr long kMaxRssKb = 1536 * 1024;

// Runs the dlsched binary with `args` in `cwd`, capturing stdout and stderr.
Outcome RunDlsched(const fs::path& cwd, const std::vector<std::string>& args,
                   const Options& opt = {}) {
  int out_pipe[2];
  int err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(127);
    if (opt.stdout_path.empty()) {
      dup2(out_pipe[1], 1);
    } else {
      const int fd = open(opt.stdout_path.c_str(), O_WRONLY);
      if (fd < 0) _exit(127);
      dup2(fd, 1);
    }
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    if (opt.max_file_size != RLIM_INFINITY) {
      const rlimit lim{opt.max_file_size, opt.max_file_size};
      setrlimit(RLIMIT_FSIZE, &lim);
    }
    if (opt.max_address_space != RLIM_INFINITY) {
      const rlimit lim{opt.max_address_space, opt.max_address_space};
      setrlimit(RLIMIT_AS, &lim);
    }
    std::vector<char*> argv;
    std::string binary = DLSCHED_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  Outcome r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kHangSeconds);
  while (open_fds > 0) {
    if (!r.hung && std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      r.hung = true;
    }
    const int ready = poll(fds, 2, 1000);
    if (ready < 0) break;
    if (ready == 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        sinks[i]->append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  r.max_rss_kb = usage.ru_maxrss;
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// Every regular file under `dir` with its content, and every directory.
std::map<std::string, std::string> Snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).string();
    if (e.is_regular_file()) {
      out[rel] = dlsched::testing::ReadFile(e.path());
    } else {
      out[rel] = e.is_directory() ? "<dir>" : "<special>";
    }
  }
  return out;
}

// Valid inputs the cases start from.
constexpr char kCluster[] =
    "nodes:\n"
    "  - name: n\n"
    "    count: 2\n"
    "    resources: {cpu: \"8\", memory: 32Gi, nvidia.com/gpu: 4}\n";
constexpr char kWorkload[] =
    "jobs:\n"
    "  - name: a\n"
    "    arrival: 0\n"
    "    ps: {replicas: 1, resources: {cpu: \"1\", memory: 1Gi}}\n"
    "    worker: {replicas: 2, resources: {cpu: \"1\", memory: 1Gi, nvidia.com/gpu: 1}}\n"
    "    totalSteps: 100\n"
    "    throughput: {table: {1: 1, 2: 2}}\n";
constexpr char kProfile[] = "name: mine\nadmission: Gang\n";

// A workload of one valid job with some fields replaced, added or (with an
// empty value) removed.
std::string Job(const std::map<std::string, std::string>& changes) {
  std::vector<std::pair<std::string, std::string>> fields = {
      {"name", "a"},
      {"arrival", "0"},
      {"ps", "{replicas: 1, resources: {cpu: \"1\", memory: 1Gi}}"},
      {"worker", "{replicas: 2, resources: {cpu: \"1\", memory: 1Gi, nvidia.com/gpu: 1}}"},
      {"totalSteps", "100"},
      {"throughput", "{table: {1: 1, 2: 2}}"},
  };
  for (const auto& [key, value] : changes) {
    bool found = false;
    for (auto& f : fields) {
      if (f.first == key) {
        f.second = value;
        found = true;
      }
    }
    if (!found) fields.emplace_back(key, value);
  }
  std::string out = "jobs:\n  -";
  for (const auto& [key, value] : fields) {
    if (!value.empty()) out += " " + key + ": " + value + "\n   ";
  }
  return out + "\n";
}

// A cluster of one node with these resources and extra lines.
std::string Node(const std::string& resources, const std::string& extra = "",
                 const std::string& name = "n") {
  return "nodes:\n  - name: " + name + "\n    resources: " + resources + "\n" + extra;
}

// "a.io/r0: 1, a.io/r1: 1, ..." with `n` names.
std::string ManyResourceNames(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += (i == 0 ? "a.io/r" : ", a.io/r") + std::to_string(i) + ": 1";
  return out;
}

// `n` queues q0, q1, ... as lines of a block list, each with `rest`.
std::string ManyQueues(int n, const std::string& rest = "") {
  std::string out;
  for (int i = 0; i < n; ++i) out += "  - {name: q" + std::to_string(i) + rest + "}\n";
  return out;
}

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

struct Case {
  std::string name;
  std::vector<std::string> args;
  // Written into the working directory (subdirectories made); "<sparse>"
  // is a 65 MiB file of zeros taking no disk, "<fifo>" a FIFO.
  std::map<std::string, std::string> files;
  int code = 2;
  std::string stderr_has;  // the one line must contain this
  Options options;
  std::string may_write;  // a run that fails still writes its results here
  // Served to `dlsched snapshot` as its /snapshot answer (with this status);
  // "@SNAPSHOT@" in args becomes the address that serves it.
  std::string snapshot_body;
  int snapshot_status = 200;
};

// gtest shows a case by its name, not its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// Cases that fail today in surfaces other work on (issue 23), skipped until
// then: the case's name and what makes it pass. Delete a line to run it.
const std::map<std::string, std::string>& KnownFailing() {
  static const std::map<std::string, std::string> known = {};
  return known;
}

// A tiresias trace row: job_id,num_gpu,submit_time,duration (the columns
// the importer reads; the real files have more).
std::string TiresiasRow(const std::string& id, const std::string& gpus, const std::string& submit,
                        const std::string& duration) {
  return id + "," + gpus + "," + submit + "," + duration + "\n";
}

// Pollux's measurements (data/pollux/traces), for pollux traces.
std::string PolluxTraces() { return std::string(DLSCHED_SOURCE_DIR) + "/data/pollux/traces"; }

// A small result directory of `simulate --out` under `dir`, with some files
// replaced ("<none>" removes one).
std::map<std::string, std::string> RunDir(const std::string& dir,
                                          const std::map<std::string, std::string>& changes) {
  std::map<std::string, std::string> files = {
      {"summary.json", "{\"profile\": \"p\", \"end_time\": 10, \"counts\": {\"total\": 1}}\n"},
      {"jobs.csv", "name,submit,queueing,launching,running,completion,jct\na,0,1,2,3,6,6\n"},
      {"utilization.csv", "time,cpu_allocated,cpu_effective\n0,0.5,0.5\n10,0,0\n"},
      {"events.csv", "time,job,event,workers\n0,a,submitted,\n1,a,started,2\n"},
      {"allocations.csv", "node,job,start,end,tasks,gpus\nn,a,1,6,2,2\n"},
  };
  for (const auto& [file, text] : changes) files[file] = text;
  std::map<std::string, std::string> out;
  for (const auto& [file, text] : files) {
    if (text != "<none>") out[dir + "/" + file] = text;
  }
  return out;
}

// The provenance of a simulate run of c.yaml and w.yaml (as the working
// directory holds them) under gang-binpack, as JSON, with `command` and
// extra members.
std::string Provenance(const std::string& command, const std::string& extra = "",
                       const std::string& cluster_sha = "") {
  const std::string c_sha = cluster_sha.empty() ? dlsched::cli::Sha256Hex(kCluster) : cluster_sha;
  const std::string w_sha = dlsched::cli::Sha256Hex(kWorkload);
  return "{\"dlsched_version\": \"0.1.0\", \"command\": " + command +
         ", \"inputs\": [{\"role\": \"cluster\", \"format\": null, \"path\": \"c.yaml\", "
         "\"sha256\": \"" +
         c_sha +
         "\"}, {\"role\": \"workload\", \"format\": null, \"path\": \"w.yaml\", \"sha256\": \"" +
         w_sha +
         "\"}], \"profiles\": [{\"name\": \"gang-binpack\", \"builtin\": \"gang-binpack\", "
         "\"file\": null, \"set\": [], \"yaml\": \"name: gang-binpack\\n\"}], \"seeds\": null, "
         "\"window\": null" +
         extra + "}";
}

constexpr char kSimulateCommand[] = "[\"simulate\", \"-c\", \"c.yaml\", \"-w\", \"w.yaml\"]";

// The inputs added since the first pass: the trace importers, Pollux's
// measurements, convert, size, sweep, report, rerun, snapshot, --set,
// --threads, --window and the operator's flags.
void AddSurfaceCases(std::vector<Case>& cases) {
  auto add = [&](std::string name, std::vector<std::string> args,
                 std::map<std::string, std::string> files = {}, int code = 2,
                 std::string stderr_has = "") {
    cases.push_back(Case{std::move(name),
                         std::move(args),
                         std::move(files),
                         code,
                         std::move(stderr_has),
                         {},
                         "",
                         "",
                         200});
  };

  // --- Traces: each through simulate; every other one through convert
  // too, and the tiresias ones through size.
  const std::string tiresias_header = "job_id,num_gpu,submit_time,duration\n";
  const std::string tiresias_ok = TiresiasRow("0", "1", "0", "50");
  const std::string long_line(200 * 1024, 'x');
  const std::vector<std::pair<std::string, std::string>> tiresias = {
      {"empty", ""},
      {"header-only", tiresias_header},
      {"binary", std::string("\x00\x01\x02\xff\xfe\n\x89PNG\r\n", 11)},
      {"bom-header-bad-row", "\xef\xbb\xbf" + tiresias_header + TiresiasRow("0", "x", "0", "5")},
      {"wrong-header", "a,b,c\n1,2,3\n"},
      {"no-duration-column", "job_id,num_gpu,submit_time\n0,1,0\n"},
      {"gpu-zero", tiresias_header + TiresiasRow("0", "0", "0", "5")},
      {"gpu-negative", tiresias_header + TiresiasRow("0", "-1", "0", "5")},
      {"gpu-100001", tiresias_header + TiresiasRow("0", "100001", "0", "5")},
      {"gpu-fraction", tiresias_header + TiresiasRow("0", "1.5", "0", "5")},
      {"gpu-nan", tiresias_header + TiresiasRow("0", "nan", "0", "5")},
      {"gpu-2^63", tiresias_header + TiresiasRow("0", "9223372036854775808", "0", "5")},
      {"submit-nan", tiresias_header + TiresiasRow("0", "1", "nan", "5")},
      {"submit-inf", tiresias_header + TiresiasRow("0", "1", "inf", "5")},
      {"submit-negative", tiresias_header + TiresiasRow("0", "1", "-1", "5")},
      {"submit-1e10", tiresias_header + TiresiasRow("0", "1", "1e10", "5")},
      {"submit-1e400", tiresias_header + TiresiasRow("0", "1", "1e400", "5")},
      {"duration-zero", tiresias_header + TiresiasRow("0", "1", "0", "0")},
      {"duration-nan", tiresias_header + TiresiasRow("0", "1", "0", "NaN")},
      {"duration-minus-inf", tiresias_header + TiresiasRow("0", "1", "0", "-inf")},
      {"duration-1e300", tiresias_header + TiresiasRow("0", "1", "0", "1e300")},
      {"duration-hex", tiresias_header + TiresiasRow("0", "1", "0", "0x10")},
      {"id-negative", tiresias_header + TiresiasRow("-1", "1", "0", "5")},
      {"id-2^53-plus-1", tiresias_header + TiresiasRow("9007199254740993", "1", "0", "5")},
      {"id-text", tiresias_header + TiresiasRow("job", "1", "0", "5")},
      {"duplicate-ids", tiresias_header + tiresias_ok + TiresiasRow("0", "2", "5", "5")},
      {"quoted-field", tiresias_header + "\"0\",1,0,5\n"},
      {"too-few-fields", tiresias_header + "0,1,0\n"},
      {"too-many-fields", tiresias_header + "0,1,0,5,6\n"},
      {"nul-in-field", tiresias_header + std::string("0\0,1,0,5\n", 9)},
      {"cr-only-line-ends", "job_id,num_gpu,submit_time,duration\r0,1,0,5\r"},
      {"long-line", tiresias_header + long_line + "\n" + tiresias_ok},
      {"long-header", long_line + "\n" + tiresias_ok},
      {"escape-in-field", tiresias_header + TiresiasRow("0", "\x1b[31m1", "0", "5")},
      {"tasks-over-limit",
       [] {
         std::string t = "job_id,num_gpu,submit_time,duration\n";
         for (int i = 0; i < 1001; ++i) t += std::to_string(i) + ",100000,0,5\n";
         return t;
       }()},
  };
  for (size_t i = 0; i < tiresias.size(); ++i) {
    const auto& [name, text] = tiresias[i];
    const std::map<std::string, std::string> files = {{"bad.csv", text}};
    add("tiresias-" + name + "-simulate",
        {"simulate", "-c", "c.yaml", "-t", "tiresias:bad.csv", "-o", "out"}, files);
    if (i % 2 == 0)
      add("tiresias-" + name + "-convert", {"convert", "-t", "tiresias:bad.csv"}, files);
    if (i % 3 == 0) add("tiresias-" + name + "-size", {"size", "-t", "tiresias:bad.csv"}, files);
  }
  // Every row bad and skipped: nothing left to run.
  add("tiresias-all-rows-skipped",
      {"simulate", "-c", "c.yaml", "-t", "tiresias:bad.csv", "--skip-bad-rows", "-o", "out"},
      {{"bad.csv", tiresias_header + TiresiasRow("0", "x", "0", "5")}}, 2, "no job left to run");

  const std::string philly_header = "timestamp,duration,num_gpus,gpu_time,cluster\n";
  auto philly_row = [](const std::string& ts, const std::string& duration, const std::string& gpus,
                       const std::string& vc = "vc1") {
    return ts + "," + duration + "," + gpus + ",1," + vc + "\n";
  };
  const std::vector<std::pair<std::string, std::string>> philly = {
      {"empty", ""},
      {"header-only", philly_header},
      {"binary", std::string("\xff\xd8\xff\xe0\x00\x10JFIF\n", 11)},
      {"month-13", philly_header + philly_row("2017-13-01 00:00:00", "5", "1")},
      {"february-30", philly_header + philly_row("2017-02-30", "5", "1")},
      {"hour-25", philly_header + philly_row("2017-10-09T25:00:00", "5", "1")},
      {"epoch-seconds", philly_header + philly_row("1507507200", "5", "1")},
      {"timezone-suffix", philly_header + philly_row("2017-10-09 07:01:55Z", "5", "1")},
      {"timestamp-empty", philly_header + philly_row("", "5", "1")},
      {"timestamp-spaces", philly_header + philly_row(" 2017-10-09 07:01:55", "5", "1")},
      {"duration-nan", philly_header + philly_row("2017-10-09 07:01:55", "nan", "1")},
      {"duration-zero", philly_header + philly_row("2017-10-09 07:01:55", "0", "1")},
      {"duration-inf", philly_header + philly_row("2017-10-09 07:01:55", "inf", "1")},
      {"gpus-zero", philly_header + philly_row("2017-10-09 07:01:55", "5", "0")},
      {"gpus-1e9", philly_header + philly_row("2017-10-09 07:01:55", "5", "1000000000")},
      {"gpus-text", philly_header + philly_row("2017-10-09 07:01:55", "5", "four")},
      {"no-cluster-column", "timestamp,duration,num_gpus\n2017-10-09 07:01:55,5,1\n"},
      {"long-line", philly_header + long_line + "\n"},
  };
  for (size_t i = 0; i < philly.size(); ++i) {
    const auto& [name, text] = philly[i];
    const std::map<std::string, std::string> files = {{"bad.csv", text}};
    add("philly-" + name + "-simulate",
        {"simulate", "-c", "c.yaml", "-t", "philly:bad.csv", "-o", "out"}, files);
    if (i % 2 == 1) add("philly-" + name + "-convert", {"convert", "-t", "philly:bad.csv"}, files);
  }
  // Arrivals 10,000 years apart: beyond the 1e9 s an arrival may be.
  add("philly-span-over-limit-simulate",
      {"simulate", "-c", "c.yaml", "-t", "philly:bad.csv", "-o", "out"},
      {{"bad.csv", philly_header + philly_row("0001-01-01 00:00:00", "5", "1") +
                       philly_row("9999-12-31 00:00:00", "5", "1")}});
  const std::map<std::string, std::string> philly_ok = {
      {"p.csv", philly_header + philly_row("2017-10-09 07:01:55", "66", "1", "6214e9")}};
  for (const auto& [name, flags] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"vc-commas", {"--vc", ",,,"}},
           {"vc-filters-everything", {"--vc", "nope"}},
           {"from-junk", {"--from", "yesterday"}},
           {"until-junk", {"--until", "2017-10-09 07:01"}},
           {"until-before-everything", {"--until", "2000-01-01"}},
           {"vc-on-tiresias", {}},
           {"elastic-zero", {"--elastic", "0:2"}},
           {"elastic-nan", {"--elastic", "nan:2"}},
           {"elastic-inverted", {"--elastic", "2:0.5"}},
           {"elastic-huge", {"--elastic", "0.5:1e9"}},
           {"scaling-amdahl-2", {"--scaling", "amdahl:2"}},
           {"scaling-unknown", {"--scaling", "cubic"}},
           {"limit-negative", {"--limit", "-1"}},
           {"limit-zero", {"--limit", "0"}},
           {"limit-text", {"--limit", "ten"}},
       }) {
    std::vector<std::string> args = {"simulate", "-c", "c.yaml", "-t", "philly:p.csv", "-o", "out"};
    if (name == "vc-on-tiresias") {
      args = {"simulate", "-c", "c.yaml", "-t", "tiresias:p.csv", "--vc", "a", "-o", "out"};
    }
    args.insert(args.end(), flags.begin(), flags.end());
    add("philly-flag-" + name, args, philly_ok);
  }

  const std::string pollux_header = "name,time,application,num_replicas,batch_size\n";
  const std::vector<std::pair<std::string, std::string>> pollux = {
      {"empty", ""},
      {"header-only", pollux_header},
      {"binary", std::string("\x7f"
                             "ELF\x02\x01\x01\x00\n",
                             9)},
      {"application-unknown", pollux_header + "a,0,gpt5,1,128\n"},
      {"application-escape", pollux_header + "a,0,\x1b]0;x\x07,1,128\n"},
      {"name-control", pollux_header + "a\tb,0,cifar10,1,128\n"},
      {"name-not-utf8", pollux_header + "a\xff,0,cifar10,1,128\n"},
      {"name-empty", pollux_header + ",0,cifar10,1,128\n"},
      {"name-300-bytes", pollux_header + std::string(300, 'n') + ",0,cifar10,1,128\n"},
      {"time-nan", pollux_header + "a,nan,cifar10,1,128\n"},
      {"time-negative", pollux_header + "a,-5,cifar10,1,128\n"},
      {"replicas-zero", pollux_header + "a,0,cifar10,0,128\n"},
      {"replicas-100001", pollux_header + "a,0,cifar10,100001,128\n"},
      {"batch-zero", pollux_header + "a,0,cifar10,1,0\n"},
      {"batch-2^41", pollux_header + "a,0,cifar10,1,2199023255552\n"},
      {"batch-beyond-measured", pollux_header + "a,0,cifar10,1,1000000\n"},
      {"replicas-beyond-measured", pollux_header + "a,0,cifar10,99,128\n"},
      {"duplicate-names", pollux_header + "a,0,cifar10,1,128\na,5,cifar10,1,128\n"},
  };
  for (size_t i = 0; i < pollux.size(); ++i) {
    const auto& [name, text] = pollux[i];
    const std::map<std::string, std::string> files = {{"bad.csv", text}};
    add("pollux-" + name + "-simulate",
        {"simulate", "-c", "c.yaml", "-t", "pollux:bad.csv", "--pollux-traces", PolluxTraces(),
         "-o", "out"},
        files);
    if (i % 2 == 0) {
      add("pollux-" + name + "-convert",
          {"convert", "-t", "pollux:bad.csv", "--pollux-traces", PolluxTraces()}, files);
    }
  }
  // Pollux's measurements themselves: a directory of one application's
  // files beside a fine workload.
  const std::map<std::string, std::string> pollux_ok = {
      {"w.csv", pollux_header + "a,0,bert,1,12\n"}};
  const std::string placements = "placement,local_bsz,step_time,sync_time\n";
  const std::string scalability = "num_nodes,num_replicas,local_bsz,step_time,sync_time\n";
  const std::string validation = "progress,grad_sqr,grad_var\n1,1,1\n2,1,1\n";
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> measurements = {
      {"missing-directory", {}},
      {"no-placements", {{"m/bert/scalability.csv", scalability + "5,5,1,1,1\n"}}},
      {"placements-empty",
       {{"m/bert/placements.csv", ""}, {"m/bert/scalability.csv", scalability + "5,5,1,1,1\n"}}},
      {"placements-header-only",
       {{"m/bert/placements.csv", placements},
        {"m/bert/scalability.csv", scalability + "5,5,1,1,1\n"}}},
      {"placements-nan",
       {{"m/bert/placements.csv", placements + "1,4,nan,0.1\n"},
        {"m/bert/scalability.csv", scalability + "5,5,1,1,1\n"}}},
      {"placements-negative",
       {{"m/bert/placements.csv", placements + "1,4,-1,0.1\n"},
        {"m/bert/scalability.csv", scalability + "5,5,1,1,1\n"}}},
      {"placements-binary",
       {{"m/bert/placements.csv", std::string("\0\0\0\1", 4)},
        {"m/bert/scalability.csv", scalability}}},
      {"scalability-wrong-header",
       {{"m/bert/placements.csv", placements + "1,4,0.5,0.1\n"},
        {"m/bert/scalability.csv", "nodes,gpus\n5,5\n"}}},
      {"no-validation",
       {{"m/bert/placements.csv", placements + "1,4,0.5,0.1\n1,12,0.6,0.1\n"},
        {"m/bert/scalability.csv", scalability + "5,5,4,1,1\n"}}},
      {"validation-name-not-a-batch",
       {{"m/bert/placements.csv", placements + "1,4,0.5,0.1\n1,12,0.6,0.1\n"},
        {"m/bert/scalability.csv", scalability + "5,5,4,1,1\n"},
        {"m/bert/validation-twelve.csv", validation}}},
      {"validation-too-few-epochs",
       {{"m/bert/placements.csv", placements + "1,4,0.5,0.1\n1,12,0.6,0.1\n"},
        {"m/bert/scalability.csv", scalability + "5,5,4,1,1\n"},
        {"m/bert/validation-12.csv", "progress,grad_sqr,grad_var\n1,1,1\n"}}},
      {"validation-1e400",
       {{"m/bert/placements.csv", placements + "1,4,0.5,0.1\n1,12,0.6,0.1\n"},
        {"m/bert/scalability.csv", scalability + "5,5,4,1,1\n"},
        {"m/bert/validation-12.csv", "progress,grad_sqr,grad_var\n1e400,1,1\n2,1,1\n"}}},
      {"step-time-1e308",
       {{"m/bert/placements.csv", placements + "1,4,1e308,0.1\n1,12,1e308,0.1\n"},
        {"m/bert/scalability.csv", scalability + "5,5,4,1,1\n"},
        {"m/bert/validation-12.csv", validation}}},
      {"local-bsz-all-zero",
       {{"m/bert/placements.csv", placements + "1,0,0.5,0.1\n"},
        {"m/bert/scalability.csv", scalability + "5,5,0,1,1\n"},
        {"m/bert/validation-12.csv", validation}}},
  };
  for (const auto& [name, files] : measurements) {
    std::map<std::string, std::string> all = pollux_ok;
    all.insert(files.begin(), files.end());
    add("pollux-measurements-" + name,
        {"simulate", "-c", "c.yaml", "-t", "pollux:w.csv", "--pollux-traces", "m", "-o", "out"},
        all);
  }

  const std::string native_header = std::string(dlsched::config::kNativeHeader) + "\n";
  const std::string wide_header = std::string(dlsched::config::kNativeWideHeader) + "\n";
  // A native row: name,submit,workers,min,max,gpus,cpu,memory,duration,scaling
  auto native_row = [](std::map<std::string, std::string> f) {
    const std::vector<std::pair<std::string, std::string>> defaults = {
        {"name", "a"}, {"submit", "0"}, {"workers", "2"},  {"min", "1"},       {"max", "4"},
        {"gpus", "1"}, {"cpu", "1"},    {"memory", "1Gi"}, {"duration", "50"}, {"scaling", ""}};
    std::string row;
    for (const auto& [key, value] : defaults) {
      row += (row.empty() ? "" : ",") + (f.contains(key) ? f[key] : value);
    }
    return row + "\n";
  };
  const std::vector<std::pair<std::string, std::string>> native = {
      {"empty", ""},
      {"header-only", native_header},
      {"binary", std::string("PK\x03\x04\x14\x00\x00\x00\n", 9)},
      {"header-misspelt",
       "name,submit,worker,min_workers,max_workers,gpus,cpu,memory,duration,"
       "scaling\na,0,1,1,1,1,,,5,\n"},
      {"name-empty", native_header + native_row({{"name", ""}})},
      {"name-control", native_header + native_row({{"name", "a\x01"}})},
      {"name-not-utf8", native_header + native_row({{"name", "\xc3\x28"}})},
      {"name-254-bytes", native_header + native_row({{"name", std::string(254, 'j')}})},
      {"submit-nan", native_header + native_row({{"submit", "nan"}})},
      {"submit-1e10", native_header + native_row({{"submit", "1e10"}})},
      {"workers-zero", native_header + native_row({{"workers", "0"}, {"min", "0"}})},
      {"workers-100001", native_header + native_row({{"workers", "100001"}, {"max", "100001"}})},
      {"min-over-workers", native_header + native_row({{"min", "3"}})},
      {"max-under-workers", native_header + native_row({{"max", "1"}})},
      {"gpus-negative", native_header + native_row({{"gpus", "-1"}})},
      {"gpus-1e20", native_header + native_row({{"gpus", "1e20"}})},
      {"cpu-junk", native_header + native_row({{"cpu", "lots"}})},
      {"memory-2Pi", native_header + native_row({{"memory", "2Pi"}})},
      {"total-over-limit",
       native_header + native_row({{"max", "100000"}, {"memory", "1Pi"}, {"gpus", ""}})},
      {"duration-zero", native_header + native_row({{"duration", "0"}})},
      {"duration-1e300", native_header + native_row({{"duration", "1e300"}})},
      {"scaling-amdahl-2", native_header + native_row({{"scaling", "amdahl:2"}})},
      {"scaling-unknown", native_header + native_row({{"scaling", "quadratic"}})},
      {"duplicate-names", native_header + native_row({}) + native_row({{"submit", "3"}})},
      {"wide-ps-negative", wide_header + "a,0,1,1,1,1,,,50,,-1,,,,\n"},
      {"wide-ps-cpu-without-ps", wide_header + "a,0,1,1,1,1,,,50,,,1,,,\n"},
      {"wide-steps-without-model", wide_header + "a,0,1,1,1,1,,,,,,,,100,\n"},
      {"wide-model-without-steps", wide_header + "a,0,1,1,1,1,,,,,,,,,resnet50\n"},
      {"wide-duration-and-steps", wide_header + "a,0,1,1,1,1,,,50,,,,,100,resnet50\n"},
      {"wide-model-unknown", wide_header + "a,0,1,1,1,1,,,,,,,,100,nope\n"},
      {"wide-model-escape", wide_header + "a,0,1,1,1,1,,,,,,,,100,\x1b[2J\n"},
      {"wide-steps-1e16", wide_header + "a,0,1,1,1,1,,,,,,,,1e16,resnet50\n"},
      {"wide-steps-nan", wide_header + "a,0,1,1,1,1,,,,,,,,nan,resnet50\n"},
      {"wide-scaling-with-steps", wide_header + "a,0,1,1,1,1,,,,sqrt,,,,100,resnet50\n"},
  };
  for (size_t i = 0; i < native.size(); ++i) {
    const auto& [name, text] = native[i];
    const std::map<std::string, std::string> files = {{"bad.csv", text}};
    add("native-" + name + "-simulate",
        {"simulate", "-c", "c.yaml", "-t", "native:bad.csv", "-o", "out"}, files);
    if (i % 2 == 1) add("native-" + name + "-convert", {"convert", "-t", "native:bad.csv"}, files);
  }
  // Flags that do not apply to the format.
  const std::map<std::string, std::string> native_ok = {{"n.csv", native_header + native_row({})}};
  add("native-flag-elastic",
      {"simulate", "-c", "c.yaml", "-t", "native:n.csv", "--elastic", "0.5:2", "-o", "out"},
      native_ok);
  add("native-flag-scaling",
      {"simulate", "-c", "c.yaml", "-t", "native:n.csv", "--scaling", "sqrt", "-o", "out"},
      native_ok);
  add("native-flag-pollux-traces",
      {"simulate", "-c", "c.yaml", "-t", "native:n.csv", "--pollux-traces", "m", "-o", "out"},
      native_ok);
  add("trace-without-file", {"simulate", "-c", "c.yaml", "-t", "native:", "-o", "out"});
  add("trace-is-directory", {"simulate", "-c", "c.yaml", "-t", "native:dir.yaml", "-o", "out"});
  add("trace-is-fifo", {"simulate", "-c", "c.yaml", "-t", "tiresias:fifo.yaml", "-o", "out"});
  add("trace-is-dev-zero", {"simulate", "-c", "c.yaml", "-t", "philly:/dev/zero", "-o", "out"});
  add("trace-sparse-65MiB", {"simulate", "-c", "c.yaml", "-t", "native:big.csv", "-o", "out"},
      {{"big.csv", "<sparse>"}});

  // --- Tiresias cluster specs (-c tiresias:FILE).
  const std::string cluster_header =
      "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n";
  const std::vector<std::pair<std::string, std::string>> tiresias_clusters = {
      {"empty", ""},
      {"header-only", cluster_header},
      {"binary", std::string("\x1f\x8b\x08\x00\n", 5)},
      {"two-rows", cluster_header + "1,2,4,8,64\n1,2,4,8,64\n"},
      {"switches-zero", cluster_header + "0,2,4,8,64\n"},
      {"nodes-over-limit", cluster_header + "1000,1000,4,8,64\n"},
      {"gpus-1025", cluster_header + "1,2,1025,8,64\n"},
      {"gpus-negative", cluster_header + "1,2,-4,8,64\n"},
      {"cpu-nan", cluster_header + "1,2,4,nan,64\n"},
      {"memory-2^31", cluster_header + "1,2,4,8,2147483648\n"},
      {"fields-missing", cluster_header + "1,2,4\n"},
      {"column-missing", "num_switch,num_node_p_switch,num_gpu_p_node\n1,2,4\n"},
      {"long-line", cluster_header + long_line + "\n"},
  };
  for (const auto& [name, text] : tiresias_clusters) {
    add("tiresias-cluster-" + name,
        {"simulate", "-c", "tiresias:bad.csv", "-w", "w.yaml", "-o", "out"}, {{"bad.csv", text}});
  }
  add("tiresias-cluster-missing",
      {"simulate", "-c", "tiresias:nope.csv", "-w", "w.yaml", "-o", "out"});

  // --- The limits every way a cluster or a job enters keeps (issue 23):
  // a Tiresias spec's memory, each node's and the cluster's total; update
  // events; `reserved`; philly arrivals through convert.
  for (const auto& [name, row, message] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"memory-2^60-bytes", "1,8,4,40,1073741824",
            "mem_p_node: expected an integer in [1, 1048576], got '1073741824'"},
           {"memory-total-over-4Ei", "1000,200,4,40,1048576",
            "mem_p_node: the cluster's total memory would exceed the limit of 4Ei"},
       }) {
    add("tiresias-cluster-" + name,
        {"simulate", "-c", "tiresias:bad.csv", "-w", "w.yaml", "-o", "out"},
        {{"bad.csv", cluster_header + row + "\n"}}, 2, message);
  }
  // 4,095 nodes of 1 PiB and two of 1 GiB; one updated to 1 PiB is over.
  const std::string updates =
      "nodes:\n  - {name: a, count: 4095, resources: {memory: 1Pi}}\n"
      "  - {name: s, count: 2, resources: {memory: 1Gi}}\nevents:\n"
      "  - {time: 5, update: {name: s-0, resources: {memory: 1Pi}}}\n";
  add("cluster-update-over-total", {"simulate", "-c", "bad.yaml", "-w", "w.yaml", "-o", "out"},
      {{"bad.yaml", updates}}, 2,
      "events[0].update.resources.memory: the cluster's total memory would exceed the limit of "
      "4Ei");
  add("cluster-reserved-over-node", {"simulate", "-c", "bad.yaml", "-w", "w.yaml", "-o", "out"},
      {{"bad.yaml",
        "nodes:\n  - {name: n, resources: {cpu: 8, nvidia.com/gpu: 4}, reserved: "
        "{cpu: 8, nvidia.com/gpu: 32768}}\n"}},
      2, "nodes[0].reserved.nvidia.com/gpu: 32768 is more than the node has (4)");
  add("cluster-update-under-reserved", {"simulate", "-c", "bad.yaml", "-w", "w.yaml", "-o", "out"},
      {{"bad.yaml",
        "nodes:\n  - {name: n, resources: {cpu: 8}, reserved: {cpu: 4}}\nevents:\n"
        "  - {time: 5, update: {name: n, resources: {cpu: 1}}}\n"}},
      2, "events[0].update.resources.cpu: 1 is less than the node's `reserved` (4)");
  add("philly-span-over-limit-convert", {"convert", "-t", "philly:bad.csv", "-o", "w.yaml"},
      {{"bad.csv", philly_header + philly_row("0001-01-01 00:00:00", "5", "1") +
                       philly_row("9999-12-31 00:00:00", "5", "1")}},
      2, "is more than the limit of 1000000000 s (31.7 years)");

  // --- convert.
  const std::map<std::string, std::string> trace_ok = {
      {"t.csv", tiresias_header + tiresias_ok + TiresiasRow("1", "2", "5", "40")}};
  const std::string chief_job =
      "jobs:\n  - {name: a, arrival: 0, chief: {replicas: 1, resources: {cpu: 1}},\n"
      "     worker: {replicas: 1, resources: {nvidia.com/gpu: 1}}, totalSteps: 10,\n"
      "     throughput: {table: {1: 1}}}\n";
  for (const auto& [name, args, files] : std::vector<
           std::tuple<std::string, std::vector<std::string>, std::map<std::string, std::string>>>{
           {"to-xml", {"convert", "-t", "tiresias:t.csv", "--to", "xml"}, trace_ok},
           {"out-is-directory", {"convert", "-t", "tiresias:t.csv", "-o", "dir.yaml"}, trace_ok},
           {"out-is-device", {"convert", "-t", "tiresias:t.csv", "-o", "/dev/null"}, trace_ok},
           {"no-input", {"convert", "-o", "x.csv"}, {}},
           {"workload-and-trace", {"convert", "-w", "w.yaml", "-t", "tiresias:t.csv"}, trace_ok},
           {"workload-is-csv", {"convert", "-w", "t.csv"}, trace_ok},
           {"chief-to-native",
            {"convert", "-w", "chief.yaml", "-o", "x.csv"},
            {{"chief.yaml", chief_job}}},
           {"table-to-native", {"convert", "-w", "w.yaml", "--to", "native"}, {}},
           {"bad-workload-yaml", {"convert", "-w", "bad.yaml"}, {{"bad.yaml", "jobs: [\n"}}},
           {"elastic-on-native", {"convert", "-t", "native:t.csv", "--elastic", "0.5:2"}, trace_ok},
           {"limit-negative", {"convert", "-t", "tiresias:t.csv", "--limit", "-3"}, trace_ok},
       }) {
    add("convert-" + name, args, files);
  }
  // The file cannot be written: a run that fails (1), nothing left behind.
  add("convert-out-in-missing-directory",
      {"convert", "-t", "tiresias:t.csv", "-o", "nowhere/x.csv"}, trace_ok, 1, "cannot write");

  // --- size.
  for (const auto& [name, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"load-inverted", {"--load", "0.9:0.7"}},
           {"load-nan", {"--load", "nan:1"}},
           {"load-zero", {"--load", "0:1"}},
           {"load-junk", {"--load", "busy"}},
           {"load-empty", {"--load", ""}},
           {"load-1e400", {"--load", "0.5:1e400"}},
           {"gpus-zero", {"--gpus-per-node", "0"}},
           {"gpus-2000", {"--gpus-per-node", "2000"}},
           {"gpus-text", {"--gpus-per-node", "eight"}},
           {"cpus-negative", {"--cpus-per-node", "-1"}},
           {"memory-zero", {"--memory-gi-per-node", "0"}},
           {"to-xml", {"--to", "xml"}},
           {"out-is-directory", {"-o", "dir.yaml"}},
       }) {
    std::vector<std::string> all = {"size", "-t", "tiresias:t.csv"};
    all.insert(all.end(), args.begin(), args.end());
    add("size-" + name, all, trace_ok);
  }
  add("size-task-larger-than-node", {"size", "-w", "wide.yaml", "--gpus-per-node", "1"},
      {{"wide.yaml",
        "jobs:\n  - {name: a, arrival: 0, worker: {replicas: 1, resources: {nvidia.com/gpu: 2}},\n"
        "     totalSteps: 10, throughput: {table: {1: 1}}}\n"
        "  - {name: b, arrival: 9, worker: {replicas: 1, resources: {nvidia.com/gpu: 1}},\n"
        "     totalSteps: 10, throughput: {table: {1: 1}}}\n"}});
  add("size-all-at-once", {"size", "-t", "tiresias:t0.csv"},
      {{"t0.csv", tiresias_header + tiresias_ok + TiresiasRow("1", "1", "0", "5")}});
  add("size-no-gpu-jobs", {"size", "-w", "cpu.yaml"},
      {{"cpu.yaml",
        "jobs:\n  - {name: a, arrival: 0, worker: {replicas: 1, resources: {cpu: 1}},\n"
        "     totalSteps: 10, throughput: {table: {1: 1}}}\n"
        "  - {name: b, arrival: 9, worker: {replicas: 1, resources: {cpu: 1}},\n"
        "     totalSteps: 10, throughput: {table: {1: 1}}}\n"}});

  // --- sweep: flags, --cell, --merge on junk directories.
  const std::vector<std::string> sweep = {"sweep", "-c", "c.yaml", "-w", "w.yaml", "-o", "out"};
  for (const auto& [name, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"profiles-only-commas", {"-p", ",,,"}},
           {"profiles-empty-item", {"-p", "gang-binpack,,kod2"}},
           {"profiles-missing", {}},
           {"load-only-commas", {"-p", "gang-binpack", "--load", ",,,"}},
           {"load-zero", {"-p", "gang-binpack", "--load", "0"}},
           {"load-nan", {"-p", "gang-binpack", "--load", "nan"}},
           {"load-inf", {"-p", "gang-binpack", "--load", "inf"}},
           {"load-1e400", {"-p", "gang-binpack", "--load", "1e400"}},
           {"load-negative", {"-p", "gang-binpack", "--load", "-1"}},
           {"load-twice", {"-p", "gang-binpack", "--load", "1,1.0"}},
           {"load-text", {"-p", "gang-binpack", "--load", "1,high"}},
           {"cell-negative", {"-p", "gang-binpack", "--cell", "-1"}},
           {"cell-beyond", {"-p", "gang-binpack", "--cell", "99"}},
           {"cell-text", {"-p", "gang-binpack", "--cell", "first"}},
           {"cell-and-report", {"-p", "gang-binpack", "--cell", "0", "--report", "r.html"}},
           {"k8s-parallelism-negative",
            {"-p", "gang-binpack", "--emit-k8s-job", "--k8s-parallelism", "-1"}},
           {"k8s-parallelism-huge",
            {"-p", "gang-binpack", "--emit-k8s-job", "--k8s-parallelism", "99999999999"}},
           {"k8s-backoff-limit-negative",
            {"-p", "gang-binpack", "--emit-k8s-job", "--k8s-backoff-limit", "-6"}},
           {"k8s-backoff-per-index-nan",
            {"-p", "gang-binpack", "--emit-k8s-job", "--k8s-backoff-limit-per-index", "nan"}},
           {"k8s-flag-without-emit", {"-p", "gang-binpack", "--k8s-parallelism", "2"}},
           {"window-inverted", {"-p", "gang-binpack", "--window", "50:10"}},
       }) {
    std::vector<std::string> all = sweep;
    all.insert(all.end(), args.begin(), args.end());
    add("sweep-" + name, all);
  }
  // A generated workload per seed.
  for (const auto& [name, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"seeds-only-commas", {"--seeds", ",,"}},
           {"seeds-negative", {"--seeds", "-1"}},
           {"seeds-2^64", {"--seeds", "18446744073709551616"}},
           {"seeds-twice", {"--seeds", "3,3"}},
           {"jobs-zero", {}},
           {"jobs-with-workload", {"-w", "w.yaml"}},
           // 12 x 1000 x 100 cells, beyond the million a sweep may have.
           {"grid-too-large",
            {"-p",
             "gang-binpack,kod2,fifo,las,sjf,srtf,k8s-default,fsched,cps,volcano-priority,"
             "static-2,pollux-tiresias",
             "--load",
             [] {
               std::string loads = "1";
               for (int i = 2; i <= 1000; ++i) loads += "," + std::to_string(i);
               return loads;
             }(),
             "--seeds",
             [] {
               std::string seeds = "1";
               for (int i = 2; i <= 100; ++i) seeds += "," + std::to_string(i);
               return seeds;
             }()}},
       }) {
    std::vector<std::string> all = {
        "sweep", "-c", "c.yaml", "-p", "gang-binpack", "--jobs", name == "jobs-zero" ? "0" : "5",
        "-o",    "out"};
    all.insert(all.end(), args.begin(), args.end());
    add("sweep-" + name, all);
  }
  const std::string cell_header = "cell,cells,profile,load,seed,status\n";
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> merges = {
      {"no-cells-directory", {{"m/notes.txt", "x"}}},
      {"cells-empty", {{"m/cells/.keep", ""}}},
      {"cell-truncated", {{"m/cells/a/load-1/cell.csv", "cell,cells,prof"}}},
      {"cell-binary", {{"m/cells/a/load-1/cell.csv", std::string("\0\xff\n\0", 4)}}},
      {"cell-two-rows",
       {{"m/cells/a/load-1/cell.csv", cell_header + "0,2,a,1,,all done\n1,2,a,2,,all done\n"}}},
      {"cell-no-cells-column", {{"m/cells/a/load-1/cell.csv", "cell,profile\n0,a\n"}}},
      {"cells-zero", {{"m/cells/a/load-1/cell.csv", cell_header + "0,0,a,1,,all done\n"}}},
      {"cells-huge", {{"m/cells/a/load-1/cell.csv", cell_header + "0,1e12,a,1,,all done\n"}}},
      {"cell-out-of-range", {{"m/cells/a/load-1/cell.csv", cell_header + "5,2,a,1,,all done\n"}}},
      {"cell-missing", {{"m/cells/a/load-1/cell.csv", cell_header + "0,3,a,1,,all done\n"}}},
      {"cell-twice",
       {{"m/cells/a/load-1/cell.csv", cell_header + "0,2,a,1,,all done\n"},
        {"m/cells/a/load-2/cell.csv", cell_header + "0,2,a,2,,all done\n"}}},
      {"cells-headers-differ",
       {{"m/cells/a/load-1/cell.csv", cell_header + "0,2,a,1,,all done\n"},
        {"m/cells/a/load-2/cell.csv", "cell,cells,profile,load\n1,2,a,2\n"}}},
      {"cells-grids-differ",
       {{"m/cells/a/load-1/cell.csv", cell_header + "0,2,a,1,,all done\n"},
        {"m/cells/a/load-2/cell.csv", cell_header + "1,3,a,2,,all done\n"}}},
      {"cell-quote-never-closed",
       {{"m/cells/a/load-1/cell.csv", cell_header + "0,1,\"a,1,,all done\n"}}},
      {"cell-is-fifo", {{"m/cells/a/load-1/cell.csv", "<fifo>"}}},
  };
  for (const auto& [name, files] : merges)
    add("sweep-merge-" + name, {"sweep", "--merge", "m"}, files);
  add("sweep-merge-missing", {"sweep", "--merge", "nowhere"});
  add("sweep-merge-with-profiles", {"sweep", "--merge", "out", "-p", "gang-binpack"});

  // --- report: result directories with one file broken.
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> reports = {
      {"summary-1e400", {{"summary.json", "{\"end_time\": 1e400}"}}},
      {"summary-minus-1e400", {{"summary.json", "{\"jct\": {\"mean\": -1e400}}"}}},
      {"summary-truncated", {{"summary.json", "{\"profile\": \"p\", \"end_ti"}}},
      {"summary-array", {{"summary.json", "[1, 2, 3]"}}},
      {"summary-string", {{"summary.json", "\"summary\""}}},
      {"summary-binary", {{"summary.json", std::string("\0\x01{\xff", 4)}}},
      {"summary-bad-utf8", {{"summary.json", "{\"profile\": \"\xff\xfe\"}"}}},
      {"summary-profile-number", {{"summary.json", "{\"profile\": 7}"}}},
      {"summary-counts-negative", {{"summary.json", "{\"counts\": {\"total\": -1}}"}}},
      {"summary-counts-2^64",
       {{"summary.json", "{\"counts\": {\"total\": 18446744073709551615}}"}}},
      {"summary-counts-fraction", {{"summary.json", "{\"counts\": {\"completed\": 0.5}}"}}},
      {"summary-window-list", {{"summary.json", "{\"window\": [0, 1]}"}}},
      {"summary-utilization-resource-list",
       {{"summary.json", "{\"utilization\": {\"resources\": {\"cpu\": [1]}}}"}}},
      {"summary-partial-string", {{"summary.json", "{\"partial\": \"yes\"}"}}},
      {"summary-deep-nesting",
       {{"summary.json", "{\"window\": " + Repeat("[", 100000) + Repeat("]", 100000) + "}"}}},
      {"summary-provenance-junk", {{"summary.json", "{\"provenance\": {\"command\": 1}}"}}},
      {"summary-is-directory", {{"summary.json", "<none>"}, {"summary.json/x", "1"}}},
      {"summary-is-fifo", {{"summary.json", "<fifo>"}}},
      {"jobs-empty", {{"jobs.csv", ""}}},
      {"jobs-truncated-row", {{"jobs.csv", "name,submit,queueing,launching,running\na,0,1"}}},
      {"jobs-quote-never-closed",
       {{"jobs.csv", "name,submit,queueing,launching,running\n\"a,0,1,2,3\n"}}},
      {"jobs-missing-column", {{"jobs.csv", "name,submit,queueing,launching\na,0,1,2\n"}}},
      {"jobs-nan", {{"jobs.csv", "name,submit,queueing,launching,running\na,nan,1,2,3\n"}}},
      {"jobs-1e400", {{"jobs.csv", "name,submit,queueing,launching,running\na,1e400,1,2,3\n"}}},
      {"jobs-stuck-maybe",
       {{"jobs.csv", "name,submit,queueing,launching,running,stuck\na,0,1,2,3,maybe\n"}}},
      {"jobs-gpus-fraction",
       {{"jobs.csv", "name,submit,queueing,launching,running,gpus\na,0,1,2,3,1.5\n"}}},
      {"jobs-binary", {{"jobs.csv", std::string("\x00\x00\x00\x00", 4)}}},
      {"jobs-sparse-65MiB", {{"jobs.csv", "<sparse>"}}},
      {"utilization-no-effective", {{"utilization.csv", "time,gpu_allocated\n0,1\n"}}},
      {"utilization-inf", {{"utilization.csv", "time,cpu_allocated,cpu_effective\ninf,1,1\n"}}},
      {"utilization-time-text",
       {{"utilization.csv", "time,cpu_allocated,cpu_effective\nnow,1,1\n"}}},
      {"events-workers-text", {{"events.csv", "time,job,event,workers\n0,a,started,many\n"}}},
      {"events-no-job-column", {{"events.csv", "time,event\n0,started\n"}}},
      {"allocations-start-junk", {{"allocations.csv", "node,job,start,end\nn,a,soon,\n"}}},
      {"allocations-quote-inside", {{"allocations.csv", "node,job,start,end\nn,a\"b,0,1\n"}}},
      {"compare-csv-junk", {{"compare.csv", "\"never closed\n"}}},
      {"sweep-csv-no-load", {{"sweep.csv", "profile,jct_mean\na,1\n"}}},
      {"sweep-csv-load-nan", {{"sweep.csv", "profile,load,jct_mean\na,nan,1\n"}}},
      {"sweep-csv-fields-missing", {{"sweep.csv", "profile,load,jct_mean\na,1\n"}}},
  };
  for (const auto& [name, changes] : reports) {
    add("report-" + name, {"report", "res", "-o", "r.html"}, RunDir("res", changes));
  }
  add("report-missing-dir", {"report", "nowhere", "-o", "r.html"});
  add("report-empty-dir", {"report", "mine", "-o", "r.html"});
  add("report-file-not-dir", {"report", "c.yaml", "-o", "r.html"});
  add("report-out-is-directory", {"report", "res", "-o", "dir.yaml"}, RunDir("res", {}));
  add("report-baseline-unknown", {"report", "res", "-o", "r.html", "--baseline", "nope"},
      RunDir("res", {}));
  add("report-log-axis-junk", {"report", "res", "-o", "r.html", "--log-axis", "sometimes"},
      RunDir("res", {}));

  // --- rerun: provenance that was edited.
  const std::vector<std::pair<std::string, std::string>> provenances = {
      {"command-not-a-list", Provenance("\"simulate -c c.yaml\"")},
      {"command-empty", Provenance("[]")},
      {"command-numbers", Provenance("[1, 2]")},
      {"command-operator", Provenance("[\"operator\", \"--kubeconfig\", \"k\"]")},
      {"command-with-report",
       Provenance("[\"simulate\", \"-c\", \"c.yaml\", \"-w\", \"w.yaml\", \"--report\", "
                  "\"/tmp/x.html\"]")},
      {"command-with-out",
       Provenance("[\"simulate\", \"-c\", \"c.yaml\", \"-w\", \"w.yaml\", \"-o\", \"mine\"]")},
      {"command-merge", Provenance("[\"sweep\", \"--merge\", \"mine\"]")},
      {"command-cell",
       Provenance("[\"sweep\", \"-c\", \"c.yaml\", \"-w\", \"w.yaml\", \"-p\", \"fifo\", "
                  "\"--cell=0\"]")},
      {"command-emit-k8s-job",
       Provenance("[\"sweep\", \"-c\", \"c.yaml\", \"-w\", \"w.yaml\", \"-p\", \"fifo\", "
                  "\"--emit-k8s-job\"]")},
      {"command-help", Provenance("[\"simulate\", \"--help\"]")},
      {"command-bad-profile", Provenance("[\"simulate\", \"-c\", \"c.yaml\", \"-w\", \"w.yaml\", "
                                         "\"-p\", \"nope\"]")},
      {"command-missing-cluster", Provenance("[\"simulate\", \"-w\", \"w.yaml\"]")},
      {"input-changed", Provenance(kSimulateCommand, "", std::string(64, '0'))},
      {"input-missing",
       "{\"dlsched_version\": \"0.1.0\", \"command\": [\"simulate\"], \"inputs\": [{\"role\": "
       "\"cluster\", \"format\": null, \"path\": \"gone.yaml\", \"sha256\": \"00\"}], "
       "\"profiles\": []}"},
      {"input-dev-zero",
       "{\"dlsched_version\": \"0.1.0\", \"command\": [\"simulate\"], \"inputs\": [{\"role\": "
       "\"cluster\", \"format\": null, \"path\": \"/dev/zero\", \"sha256\": \"00\"}], "
       "\"profiles\": []}"},
      {"input-fifo",
       "{\"dlsched_version\": \"0.1.0\", \"command\": [\"simulate\"], \"inputs\": [{\"role\": "
       "\"cluster\", \"format\": null, \"path\": \"fifo.yaml\", \"sha256\": \"00\"}], "
       "\"profiles\": []}"},
      {"inputs-not-a-list",
       "{\"dlsched_version\": \"0.1.0\", \"command\": [\"simulate\"], \"inputs\": {}, "
       "\"profiles\": []}"},
      {"seeds-negative", Provenance(kSimulateCommand, ", \"seeds\": [-1]")},
      {"window-number", Provenance(kSimulateCommand, ", \"window\": 5")},
      {"version-number",
       "{\"dlsched_version\": 1, \"command\": [\"simulate\"], \"inputs\": [], \"profiles\": []}"},
      {"number-1e400",
       "{\"dlsched_version\": \"0.1.0\", \"command\": [\"simulate\"], "
       "\"inputs\": [], \"profiles\": [], \"seeds\": [1e400]}"},
  };
  for (const auto& [name, provenance] : provenances) {
    // (A member given twice, as seeds and window above: the later counts.)
    add("rerun-" + name, {"rerun", "res"},
        RunDir("res",
               {{"summary.json", "{\"profile\": \"p\", \"provenance\": " + provenance + "}\n"}}));
  }
  add("rerun-partial", {"rerun", "res"},
      RunDir("res", {{"summary.json", "{\n  \"partial\": true,\n  \"provenance\": " +
                                          Provenance(kSimulateCommand) + "\n}\n"}}));
  add("rerun-provenance-json-junk", {"rerun", "res"},
      {{"res/provenance.json", "{\"provenance\": "}});
  add("rerun-compare-json-junk", {"rerun", "res"}, {{"res/compare.json", "[]"}});
  add("rerun-threads-text", {"rerun", "res", "-j", "all"}, RunDir("res", {}));

  // --- snapshot: an operator's answers, served on loopback.
  const std::string cluster_yaml = "nodes:\\n  - {name: n, resources: {cpu: 1}}\\n";
  const std::vector<std::tuple<std::string, int, std::string, int>> snapshots = {
      {"http-500", 500, "{\"error\": \"\x1b[31mboom\"}", 1},
      {"not-json", 200, "<html>hello</html>", 1},
      {"truncated", 200, "{\"cluster\": \"nodes:", 1},
      {"number-1e400", 200, "{\"start\": 1e400, \"cluster\": \"\", \"workload\": \"\"}", 1},
      {"cluster-yaml-junk", 200, "{\"cluster\": \"nodes: [\", \"workload\": \"jobs: []\"}", 1},
      {"no-jobs", 200, "{\"cluster\": \"" + cluster_yaml + "\", \"workload\": \"jobs:\\n\"}", 1},
      {"workload-yaml-junk", 200,
       "{\"cluster\": \"" + cluster_yaml + "\", \"workload\": \"jobs: {a: 1}\"}", 1},
  };
  for (const auto& [name, status, body, code] : snapshots) {
    cases.push_back(Case{"snapshot-" + name,
                         {"snapshot", "--from", "@SNAPSHOT@", "--timeout", "10", "-o", "snap"},
                         {},
                         code,
                         "",
                         {},
                         "",
                         body,
                         status});
  }
  cases.push_back(Case{"snapshot-out-is-file",
                       {"snapshot", "--from", "@SNAPSHOT@", "--timeout", "10", "-o", "c.yaml"},
                       {},
                       2,
                       "",
                       {},
                       "",
                       "{\"cluster\": \"" + cluster_yaml +
                           "\", \"workload\": \"jobs:\\n  - {name: a, arrival: 0, worker: "
                           "{replicas: 1, resources: {cpu: 1}}, totalSteps: 1, throughput: "
                           "{table: {1: 1}}}\\n\"}",
                       200});
  add("snapshot-timeout-nan",
      {"snapshot", "--from", "127.0.0.1:1", "--timeout", "nan", "-o", "snap"});
  add("snapshot-timeout-zero",
      {"snapshot", "--from", "127.0.0.1:1", "--timeout", "0", "-o", "snap"});

  // --- --set on every command that takes it.
  const std::string long_key(5000, 'k');
  const std::vector<std::pair<std::string, std::string>> sets = {
      {"empty", ""},
      {"no-equals", "kappa"},
      {"no-path", "=2"},
      {"empty-key", "order..kappa=2"},
      {"leading-dot", ".order=FIFO"},
      {"value-not-yaml", "order.args.kappa=[1"},
      {"value-nan", "order.args.kappa=.nan"},
      {"index-beyond", "scorers.99.weight=2"},
      {"index-text", "scorers.first.weight=2"},
      {"scalar-not-map", "protectFactor.x=1"},
      {"unknown-key", "orde=FIFO"},
      {"name-path", "name=../../x"},
      {"protect-1e400", "protectFactor=1e400"},
      {"long-key-keeps-reason", long_key + "=1"},
      {"long-value-keeps-reason", "order.args.kappa=" + std::string(5000, '9')},
  };
  for (const auto& [name, set] : sets) {
    add("set-" + name + "-simulate",
        {"simulate", "-c", "c.yaml", "-w", "w.yaml", "-p", "kod2", "--set", set, "-o", "out"}, {},
        2, name == "long-key-keeps-reason" ? "unknown key (allowed: " : "");
  }
  add("set-long-key-compare-variant",
      {"compare", "-c", "c.yaml", "-w", "w.yaml", "-p", "kod2:" + long_key + "=1", "-o", "out"}, {},
      2, "unknown key (allowed: ");
  // A path 60,000 keys deep (yaml-cpp recurses once per level).
  add("set-path-60000-deep-simulate", {"simulate", "-c", "c.yaml", "-w", "w.yaml", "-p", "fifo",
                                       "--set", Repeat("a.", 60000) + "b=1", "-o", "out"});
  add("set-variant-empty-override",
      {"compare", "-c", "c.yaml", "-w", "w.yaml", "-p", "kod2:", "-o", "out"});
  add("set-sweep", {"sweep", "-c", "c.yaml", "-w", "w.yaml", "-p", "kod2", "--set",
                    "order.args.kappa=-1", "-o", "out"});
  add("set-explain",
      {"explain", "-c", "c.yaml", "-w", "w.yaml", "--job", "a", "--set", "sizer=Nope"});

  // --- --threads.
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"text", "all"}, {"fraction", "1.5"}, {"2^63", "9223372036854775808"}, {"600", "600"}}) {
    add("threads-" + name + "-compare", {"compare", "-c", "c.yaml", "-w", "w.yaml", "-p",
                                         "gang-binpack", "-j", value, "-o", "out"});
    add("threads-" + name + "-sweep", {"sweep", "-c", "c.yaml", "-w", "w.yaml", "-p",
                                       "gang-binpack", "--threads", value, "-o", "out"});
  }

  // --- --window, on every command that takes it.
  for (const auto& [label, window] : std::vector<std::pair<std::string, std::string>>{
           {"no-colon", "5"},
           {"colon-only", ":"},
           {"inverted", "5:1"},
           {"from-nan", "nan:"},
           {"to-nan", ":nan"},
           {"from-negative", "-1:5"},
           {"from-1e10", "1e10:"},
           {"to-inf", "1:inf"},
           {"hex", "0x10:"},
           {"three-parts", "1:2:3"},
           {"leading-space", " 1:2"},
       }) {
    const std::string name = "window-" + label;
    add(name + "-simulate",
        {"simulate", "-c", "c.yaml", "-w", "w.yaml", "--window", window, "-o", "out"});
    if (window.size() <= 3) {
      add(name + "-compare", {"compare", "-c", "c.yaml", "-w", "w.yaml", "-p", "gang-binpack",
                              "--window", window, "-o", "out"});
      add(name + "-report", {"report", "res", "--window", window, "-o", "r.html"},
          RunDir("res", {}));
    }
  }

  // --- The operator's flags: refused before it connects anywhere.
  const std::map<std::string, std::string> kubeconfig = {
      {"k.yaml",
       "apiVersion: v1\nkind: Config\ncurrent-context: x\ncontexts:\n- name: x\n  context: "
       "{cluster: x, user: x}\nclusters:\n- name: x\n  cluster: {server: "
       "\"http://127.0.0.1:1\"}\nusers:\n- name: x\n  user: {}\n"}};
  for (const auto& [name, flags] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"lease-nan", {"--leader-elect-lease-duration", "nan"}},
           {"lease-negative", {"--leader-elect-lease-duration", "-15"}},
           {"lease-inf", {"--leader-elect-lease-duration", "inf"}},
           {"lease-1e300", {"--leader-elect-lease-duration", "1e300"}},
           {"renew-nan", {"--leader-elect-renew-deadline", "nan"}},
           {"renew-zero", {"--leader-elect-renew-deadline", "0"}},
           {"retry-nan", {"--leader-elect-retry-period", "NAN"}},
           {"retry-negative", {"--leader-elect-retry-period", "-2"}},
           {"renew-over-lease",
            {"--leader-elect-lease-duration", "5", "--leader-elect-renew-deadline", "10"}},
           {"resync-nan", {"--resync", "nan"}},
           {"resync-zero", {"--resync", "0"}},
           {"release-wait-nan", {"--release-wait", "nan"}},
           {"release-wait-negative", {"--release-wait", "-1"}},
           {"profile-unknown", {"--profile", "nope"}},
       }) {
    std::vector<std::string> all = {"operator", "--kubeconfig",
                                    "k.yaml",   "--metrics-bind-address",
                                    "0",        "--health-probe-bind-address",
                                    "0"};
    all.insert(all.end(), flags.begin(), flags.end());
    add("operator-" + name, all, kubeconfig);
  }

  // --- Out of memory on a run's thread is the same one line and exit code
  // as on the main thread. `compare` of two profiles on two threads: the
  // trace (40,000 one-GPU jobs of 100,000 s, one a second, on 64 nodes of 8
  // GPUs) loads under a 256 MiB address space, its runs do not, on their
  // threads: this aborted (std::terminate, exit 134).
  std::string cluster64 = "nodes:\n";
  for (int i = 0; i < 64; ++i) {
    cluster64 += "  - {name: n" + std::to_string(i) +
                 ", resources: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: 8}}\n";
  }
  std::string queue =
      "name,submit,workers,min_workers,max_workers,gpus,cpu,memory,duration,scaling\n";
  for (int i = 0; i < 40'000; ++i) {
    queue += "j" + std::to_string(i) + "," + std::to_string(i) + ",1,1,1,1,,,100000,linear\n";
  }
  cases.push_back(Case{
      "run-thread-out-of-memory-compare",
      {"compare", "-c", "c64.yaml", "-t", "native:q.csv", "-p", "fifo,las", "-j", "2", "-o", "out"},
      {{"c64.yaml", cluster64}, {"q.csv", queue}},
      1,
      "out of memory",
      {.stdout_path = "", .max_file_size = RLIM_INFINITY, .max_address_space = rlim_t{256} << 20},
      "",
      "",
      200});

  // --- Out of memory while reading YAML is a failed run (1), not bad input
  // (2): a 4 MiB workload of 1.3 million empty lists (about 650 MB as
  // yaml-cpp nodes) under a 512 MiB address space.
  cases.push_back(Case{
      "yaml-out-of-memory",
      {"validate", "big.yaml"},
      {{"big.yaml", "jobs: [" + Repeat("[],", 1'300'000) + "]\n"}},
      1,
      "out of memory",
      {.stdout_path = "", .max_file_size = RLIM_INFINITY, .max_address_space = rlim_t{512} << 20},
      "",
      "",
      200});
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::vector<std::string> args,
                 std::map<std::string, std::string> files = {}, int code = 2,
                 std::string stderr_has = "", Options options = {}, std::string may_write = "") {
    cases.push_back(Case{std::move(name), std::move(args), std::move(files), code,
                         std::move(stderr_has), std::move(options), std::move(may_write), "", 200});
  };

  // --- Clusters: each through `validate` and `simulate`.
  const std::vector<std::pair<std::string, std::string>> clusters = {
      {"empty", ""},
      {"binary", std::string("\x00\x01\x02\xff\xfe", 5)},
      {"syntax", "nodes: [\n"},
      {"deep-nesting", Repeat("[", 20000) + Repeat("]", 20000)},
      {"no-nodes", "nodes: []\n"},
      {"nodes-scalar", "nodes: 5\n"},
      {"root-list", "- a\n- b\n"},
      {"gpu-2^31", Node("{nvidia.com/gpu: 2147483648}")},
      {"gpu-2^32", Node("{nvidia.com/gpu: 4294967296}")},
      {"gpu-int64-max", Node("{nvidia.com/gpu: 9223372036854775807}")},
      {"gpu-1e400", Node("{nvidia.com/gpu: 1e400}")},
      {"gpu-1025", Node("{nvidia.com/gpu: 1025}")},
      {"cpu-negative", Node("{cpu: \"-1\"}")},
      {"memory-1e19", Node("{memory: 1e19}")},
      {"memory-2Pi", Node("{memory: 2Pi}")},
      {"cpu-quantity-junk", Node("{cpu: 1.2.3}")},
      {"count-10M", Node("{cpu: 1}", "    count: 10000000\n")},
      {"count-negative", Node("{cpu: 1}", "    count: -1\n")},
      {"count-zero", Node("{cpu: 1}", "    count: 0\n")},
      {"count-float", Node("{cpu: 1}", "    count: 1e3\n")},
      {"count-2^63", Node("{cpu: 1}", "    count: 9223372036854775808\n")},
      {"nodes-over-limit",
       "nodes:\n  - {name: a, count: 150000, resources: {cpu: 1}}\n"
       "  - {name: b, count: 150000, resources: {cpu: 1}}\n"},
      {"memory-total-over-limit", Node("{memory: 1Pi}", "    count: 200000\n")},
      {"name-newline", Node("{cpu: 1}", "", "\"a\\nb\"")},
      {"name-escape", Node("{cpu: 1}", "", "\"\\e[31mred\"")},
      {"name-not-utf8", Node("{cpu: 1}", "", "\"a\xff\xfe\"")},
      {"name-too-long", Node("{cpu: 1}", "", std::string(300, 'x'))},
      {"name-1MB", Node("{cpu: 1}", "", std::string(1 << 20, 'x'))},
      {"name-count-suffix-too-long", Node("{cpu: 1}", "    count: 20\n", std::string(252, 'x'))},
      {"duplicate-names",
       "nodes:\n  - {name: a, resources: {cpu: 1}}\n  - {name: a, resources: {cpu: 1}}\n"},
      {"label-list", Node("{cpu: 1}", "    labels: {zone: [a, b]}\n")},
      {"label-key-empty", Node("{cpu: 1}", "    labels: {\"\": x}\n")},
      {"label-value-escape", Node("{cpu: 1}", "    labels: {zone: \"\\x1b[2J\"}\n")},
      {"unknown-key", Node("{cpu: 1}", "    gpus: 4\n")},
      {"schedulable-maybe", Node("{cpu: 1}", "    schedulable: maybe\n")},
      // One name more than a ResourceId can number (65,536 with the 3
      // built in); any fewer are fine.
      {"too-many-resource-names", Node("{" + ManyResourceNames(65534) + "}")},
      {"resource-name-space", Node("{\"a b\": 1}")},
      {"resources-list", Node("[cpu, 1]")},
      {"key-is-map", "nodes:\n  - {? {a: 1} : 2, name: n, resources: {cpu: 1}}\n"},
      {"merge-key", "base: &b {cpu: 1}\nnodes:\n  - name: n\n    resources: {<<: *b}\n"},
      {"alias-loop", "nodes: &a [*a]\n"},
      // Teams' queues.
      {"queues-map", Node("{cpu: 1}") + "queues: {a: 1}\n"},
      {"queue-duplicate", Node("{cpu: 1}") + "queues: [{name: a}, {name: a}]\n"},
      {"queue-weight-nan", Node("{cpu: 1}") + "queues: [{name: a, weight: .nan}]\n"},
      {"queue-quota-1e19", Node("{cpu: 1}") + "queues: [{name: a, quota: {memory: 1e19}}]\n"},
      {"queue-quota-type-empty",
       Node("{cpu: 1}") + "queues: [{name: a, quota: {nvidia.com/gpu@: 1}}]\n"},
      {"queue-quota-type-twice",
       Node("{cpu: 1}") + "queues: [{name: a, quota: {nvidia.com/gpu@a@b: 1}}]\n"},
      {"queue-quota-type-control",
       Node("{cpu: 1}") + "queues: [{name: a, quota: {\"nvidia.com/gpu@\\x01\": 1}}]\n"},
      {"queue-lending-above-nominal",
       Node("{cpu: 1}") +
           "queues: [{name: a, cohort: c, quota: {cpu: {nominal: 1, lendingLimit: 2}}}]\n"},
      {"queue-borrowing-without-cohort",
       Node("{cpu: 1}") + "queues: [{name: a, quota: {cpu: {nominal: 1, borrowingLimit: 2}}}]\n"},
      {"queues-over-limit", Node("{cpu: 1}") + "queues:\n" + ManyQueues(10001)},
      // 4097 x 2^50 bytes lent in one cohort: more than 2^62.
      {"queues-cohort-total-over-limit",
       Node("{cpu: 1}") + "queues:\n" + ManyQueues(4097, ", cohort: c, quota: {memory: 1Pi}")},
  };
  for (const auto& [name, text] : clusters) {
    add("cluster-" + name + "-validate", {"validate", "bad.yaml"}, {{"bad.yaml", text}});
    add("cluster-" + name + "-simulate",
        {"simulate", "-c", "bad.yaml", "-w", "w.yaml", "-o", "out"}, {{"bad.yaml", text}});
  }

  // --- Workloads: through `validate`, `simulate`, `compare`, `sweep` and
  // `explain`.
  const std::vector<std::pair<std::string, std::string>> workloads = {
      {"empty", ""},
      {"jobs-map", "jobs: {a: 1}\n"},
      {"jobs-scalars", "jobs: [1, 2]\n"},
      {"maxReplicas-int-max",
       Job({{"worker", "{replicas: 1, maxReplicas: 2147483647, resources: {cpu: 1}}"}})},
      {"replicas-int-max", Job({{"worker", "{replicas: 2147483647, resources: {cpu: 1}}"}})},
      {"maxReplicas-2^40",
       Job({{"worker", "{replicas: 1, maxReplicas: 1099511627776, resources: {cpu: 1}}"}})},
      {"ps-over-limit", Job({{"ps", "{replicas: 100001, resources: {cpu: 1}}"}})},
      {"tasks-over-limit",
       Job({{"chief", "{replicas: 1, resources: {cpu: 1}}"},
            {"worker", "{replicas: 1, maxReplicas: 100000, resources: {cpu: 1}}"}})},
      {"arrival-1e300", Job({{"arrival", "1e300"}})},
      {"arrival-inf", Job({{"arrival", ".inf"}})},
      {"arrival-nan", Job({{"arrival", ".nan"}})},
      {"arrival-negative", Job({{"arrival", "-1"}})},
      {"arrival-just-over", Job({{"arrival", "1000000001"}})},
      {"arrival-missing", Job({{"arrival", ""}})},
      {"totalSteps-1e300", Job({{"totalSteps", "1e300"}})},
      {"totalSteps-zero", Job({{"totalSteps", "0"}})},
      {"rate-1e-300", Job({{"throughput", "{table: {1: 1e-300}}"}})},
      {"rate-1e300", Job({{"throughput", "{table: {1: 1e300}}"}})},
      {"rate-negative", Job({{"throughput", "{table: {1: -1}}"}})},
      {"rate-key-2^31", Job({{"throughput", "{table: {2147483648: 1}}"}})},
      {"rate-key-zero", Job({{"throughput", "{table: {0: 1}}"}})},
      {"rate-key-text", Job({{"throughput", "{table: {abc: 1}}"}})},
      {"rate-all-zero", Job({{"throughput", "{table: {1: 0, 2: 0}}"}})},
      {"rate-zero-at-min", Job({{"throughput", "{table: {4: 1}}"}})},
      {"duration-over-limit",
       Job({{"throughput", "{table: {2: 0.000001}}"}, {"totalSteps", "10000"}})},
      {"locality-2", Job({{"throughput", "{table: {1: 1}, localitySensitivity: 2}"}})},
      {"launchDelay-1e300", Job({{"launchDelay", "1e300"}})},
      {"checkpointDelay-negative", Job({{"checkpointDelay", "-5"}})},
      {"deadline-1e300", Job({{"deadline", "1e300"}})},
      {"deadline-zero", Job({{"deadline", "0"}})},
      {"maxWait-1e300", Job({{"maxWaitMinutes", "1e300"}})},
      {"namespace-control", Job({{"namespace", "\"a\\tb\""}})},
      {"name-yaml-nel", Job({{"name", "\"a\\Nb\""}})},  // YAML's \N is U+0085
      {"name-raw-not-utf8", Job({{"name", "\"a\xff\""}})},
      {"name-c1-control", Job({{"name", "\"a\\x9bb\""}})},
      {"name-254-bytes", Job({{"name", std::string(254, 'n')}})},
      {"model-unknown-escape", Job({{"throughput", "{model: \"nope\\e[2J\"}"}})},
      {"duplicate-jobs", Job({}) + Job({}).substr(6)},
      {"priority-urgent", Job({{"priority", "urgent"}})},
      {"chief-2", Job({{"chief", "{replicas: 2, resources: {cpu: 1}}"}})},
      {"worker-gpu-over-limit",
       Job({{"worker", "{replicas: 1, resources: {nvidia.com/gpu: 1125899906842625}}"}})},
      {"job-total-over-limit",
       Job({{"worker", "{replicas: 1, maxReplicas: 90000, resources: {memory: 1Pi}}"}})},
      {"min-over-max",
       Job({{"worker", "{replicas: 2, minReplicas: 3, maxReplicas: 2, resources: {cpu: 1}}"}})},
      {"worker-missing", Job({{"worker", ""}})},
      {"unknown-key", Job({{"gpus", "4"}})},
      {"too-big-sparse", "<sparse>"},  // a 65 MiB file
  };
  for (const auto& [name, text] : workloads) {
    const std::map<std::string, std::string> files = {{"bad.yaml", text}};
    add("workload-" + name + "-validate", {"validate", "bad.yaml"}, files);
    add("workload-" + name + "-simulate",
        {"simulate", "-c", "c.yaml", "-w", "bad.yaml", "-o", "out"}, files);
    add("workload-" + name + "-compare",
        {"compare", "-c", "c.yaml", "-w", "bad.yaml", "-p", "gang-binpack,kod2", "-o", "out"},
        files);
    add("workload-" + name + "-sweep",
        {"sweep", "-c", "c.yaml", "-w", "bad.yaml", "-p", "gang-binpack", "--load", "1,2", "-o",
         "out"},
        files);
    add("workload-" + name + "-explain",
        {"explain", "-c", "c.yaml", "-w", "bad.yaml", "--job", "a", "--format", "json"}, files);
  }

  // --- Profiles: through `validate`, `simulate`, `compare` and `sweep`.
  const std::vector<std::pair<std::string, std::string>> profiles = {
      {"empty", ""},
      {"name-dotdot-path", "name: ../../x\nadmission: Gang\n"},
      {"name-dot", "name: .\nadmission: Gang\n"},
      {"name-slash", "name: a/b\nadmission: Gang\n"},
      {"name-64", "name: " + std::string(64, 'p') + "\nadmission: Gang\n"},
      {"name-newline", "name: \"a\\nb\"\nadmission: Gang\n"},
      {"args-list-key", "name: x\nadmission:\n  name: Gang\n  args: {[a]: 1}\n"},
      {"args-map-key", "name: x\nadmission:\n  name: Gang\n  args: {? {a: 1} : 1}\n"},
      {"cps-namespace-list-key",
       "name: x\norder:\n  name: CombinedPriority\n  args:\n    namespaceWeights: {[a]: 1}\n"},
      {"cps-namespace-weight-text",
       "name: x\norder:\n  name: CombinedPriority\n  args:\n    namespaceWeights: {a: b}\n"},
      {"unknown-plugin-escape", "name: x\norder: \"\\e]0;owned\\a\"\n"},
      {"slotGpus-1e9",
       "name: x\nsizer:\n  name: StaticPartition\n  args: {slotGpus: 1000000000}\n"},
      {"kappa-nan", "name: x\norder:\n  name: Kod2Weight\n  args: {kappa: .nan}\n"},
      {"starveLimit-negative", "name: x\norder:\n  name: Kod2Weight\n  args: {starveLimit: -1}\n"},
      {"protectFactor-1e300", "name: x\nprotectFactor: 1e300\n"},
      {"scorer-weight-1e300", "name: x\nscorers:\n  - {name: LeastAllocated, weight: 1e300}\n"},
      {"scorer-weight-zero", "name: x\nscorers:\n  - {name: LeastAllocated, weight: 0}\n"},
      {"scorers-map", "name: x\nscorers: {a: 1}\n"},
      {"rtcr-shape-decreasing",
       "name: x\nscorers:\n  - name: RequestedToCapacityRatio\n    args:\n      shape:\n"
       "        - {utilization: 50, score: 1}\n        - {utilization: 10, score: 2}\n"},
      {"rtcr-score-11",
       "name: x\nscorers:\n  - name: RequestedToCapacityRatio\n    args:\n      shape:\n"
       "        - {utilization: 0, score: 11}\n"},
      {"rtcr-resources-key-list",
       "name: x\nscorers:\n  - name: MostAllocated\n    args:\n      resources: [{[x]: 1}]\n"},
      {"fsched-vbound-2", "name: x\nsizer:\n  name: FScheduling\n  args: {vBound: 2}\n"},
      {"unknown-key", "name: x\nschedulers: []\n"},
  };
  for (const auto& [name, text] : profiles) {
    const std::map<std::string, std::string> files = {{"bad.yaml", text}};
    add("profile-" + name + "-validate", {"validate", "bad.yaml"}, files);
    add("profile-" + name + "-simulate",
        {"simulate", "-c", "c.yaml", "-w", "w.yaml", "-p", "./bad.yaml", "-o", "out"}, files);
    add("profile-" + name + "-compare",
        {"compare", "-c", "c.yaml", "-w", "w.yaml", "-p", "gang-binpack,./bad.yaml", "-o", "out"},
        files);
    add("profile-" + name + "-sweep",
        {"sweep", "-c", "c.yaml", "-w", "w.yaml", "-p", "gang-binpack,./bad.yaml", "-o", "out"},
        files);
  }

  // --- Special files in place of an input.
  for (const auto& [name, path] :
       std::vector<std::pair<std::string, std::string>>{{"dev-zero", "/dev/zero"},
                                                        {"fifo", "fifo.yaml"},
                                                        {"directory", "dir.yaml"},
                                                        {"missing", "missing.yaml"},
                                                        {"dev-null", "/dev/null"}}) {
    add("special-" + name + "-validate", {"validate", path}, {}, 2, "cannot read file");
    add("special-" + name + "-cluster", {"simulate", "-c", path, "-w", "w.yaml", "-o", "out"});
    add("special-" + name + "-workload", {"simulate", "-c", "c.yaml", "-w", path, "-o", "out"});
    add("special-" + name + "-profile",
        {"simulate", "-c", "c.yaml", "-w", "w.yaml", "-p", path, "-o", "out"});
  }

  // --- Flags.
  const std::vector<std::pair<std::string, std::vector<std::string>>> flags = {
      {"unknown-command", {"simulat"}},
      {"no-command", {}},
      {"unknown-flag", {"simulate", "--bogus", "-c", "c.yaml", "-w", "w.yaml"}},
      {"missing-workload", {"simulate", "-c", "c.yaml"}},
      {"flag-without-value", {"simulate", "-c"}},
      {"generate-jobs-negative", {"generate", "--jobs", "-1"}},
      {"generate-jobs-huge", {"generate", "--jobs", "99999999999"}},
      {"generate-jobs-over-limit", {"generate", "--jobs", "1000001"}},
      {"generate-jobs-text", {"generate", "--jobs", "abc"}},
      {"generate-interarrival-nan", {"generate", "--jobs", "3", "--mean-interarrival", "nan"}},
      {"generate-interarrival-negative", {"generate", "--jobs", "3", "--mean-interarrival", "-1"}},
      {"generate-interarrival-1e300", {"generate", "--jobs", "3", "--mean-interarrival", "1e300"}},
      {"generate-arrivals-beyond-limit",
       {"generate", "--jobs", "1000", "--mean-interarrival", "1e9"}},
      {"generate-max-workers-zero", {"generate", "--jobs", "3", "--max-workers", "0"}},
      {"generate-elastic-2", {"generate", "--jobs", "3", "--elastic-fraction", "2"}},
      {"generate-min-steps-zero", {"generate", "--jobs", "3", "--min-steps", "0"}},
      {"generate-max-steps-1e300", {"generate", "--jobs", "3", "--max-steps", "1e300"}},
      {"generate-steps-too-long",
       {"generate", "--jobs", "50", "--min-steps", "1e14", "--max-steps", "1e15"}},
      {"generate-nodes-zero",
       {"generate", "--jobs", "3", "--out", "g.yaml", "--cluster-out", "gc.yaml", "--nodes", "0"}},
      {"generate-nodes-huge",
       {"generate", "--jobs", "3", "--out", "g.yaml", "--cluster-out", "gc.yaml", "--nodes",
        "99999999"}},
      {"generate-gpus-5000",
       {"generate", "--jobs", "3", "--out", "g.yaml", "--cluster-out", "gc.yaml", "--gpus-per-node",
        "5000"}},
      {"generate-nodes-without-cluster-out", {"generate", "--jobs", "3", "--nodes", "4"}},
      {"generate-gpu-type-bar", {"generate", "--jobs", "3", "--gpu-types", "a|b"}},
      {"generate-gpu-type-twice", {"generate", "--jobs", "3", "--gpu-types", "k80,k80"}},
      {"generate-typed-without-types", {"generate", "--jobs", "3", "--typed-fraction", "0.5"}},
      {"generate-typed-over-one",
       {"generate", "--jobs", "3", "--gpu-types", "k80", "--typed-fraction", "2"}},
      {"generate-gpu-types-over-nodes",
       {"generate", "--jobs", "3", "--out", "g.yaml", "--cluster-out", "gc.yaml", "--nodes", "1",
        "--gpu-types", "k80,v100"}},
      {"generate-out-is-device", {"generate", "--jobs", "3", "--out", "/dev/null"}},
      {"generate-out-is-directory", {"generate", "--jobs", "3", "--out", "dir.yaml"}},
      {"explain-job-newline", {"explain", "-c", "c.yaml", "-w", "w.yaml", "--job", "a\nb\x1b[31m"}},
      {"explain-job-not-utf8", {"explain", "-c", "c.yaml", "-w", "w.yaml", "--job", "\xff"}},
      {"explain-format-xml",
       {"explain", "-c", "c.yaml", "-w", "w.yaml", "--job", "a", "--format", "xml"}},
      {"profiles-show-escape", {"profiles", "--show", "\x1b[31mred"}},
      {"profile-name-escape",
       {"simulate", "-c", "c.yaml", "-w", "w.yaml", "-p", "\x1b]0;pwned\x07", "-o", "out"}},
      {"profile-static-huge", {"simulate", "-c", "c.yaml", "-w", "w.yaml", "-p", "static-5000"}},
      {"profile-static-overflow",
       {"simulate", "-c", "c.yaml", "-w", "w.yaml", "-p", "static-99999999999999999999"}},
      {"out-is-file", {"simulate", "-c", "c.yaml", "-w", "w.yaml", "-o", "c.yaml"}},
      {"out-has-foreign-file", {"simulate", "-c", "c.yaml", "-w", "w.yaml", "-o", "mine"}},
      {"out-is-dot", {"simulate", "-c", "c.yaml", "-w", "w.yaml", "-o", "."}},
      {"compare-out-foreign",
       {"compare", "-c", "c.yaml", "-w", "w.yaml", "-p", "gang-binpack", "-o", "mine"}},
      {"compare-empty-profile", {"compare", "-c", "c.yaml", "-w", "w.yaml", "-p", "", "-o", "out"}},
      {"validate-nothing", {"validate"}},
      {"simulate-jobs-is-job-table", {"simulate", "-c", "c.yaml", "-w", "w.yaml", "--jobs"}},
      {"workload-is-csv", {"simulate", "-c", "c.yaml", "-w", "t.csv", "-o", "out"}},
      {"trace-format-misspelt", {"simulate", "-c", "c.yaml", "-t", "tiresais:t.csv"}},
      {"rerun-no-provenance", {"rerun", "out"}},
      {"rerun-missing-dir", {"rerun", "nowhere"}},
      {"rerun-into-itself", {"rerun", "out", "-o", "out"}},
      {"models-extra-argument", {"models", "x"}},
  };
  for (const auto& [name, args] : flags) add("flag-" + name, args, {});

  // --- Runs that fail (exit 1): the inputs are fine, the run is not.
  // A per-pod deadlock whose jobs have a deadline 28 years away: the run
  // must end at once (at the deadline, simulated), not tick on backoff
  // timers 10 s at a time until then. It writes its results to "new".
  add("run-deadlock-far-deadline",
      {"simulate", "-c", "c.yaml", "-w", "dl.yaml", "-p", "k8s-default", "-q", "-o", "new"},
      {{"dl.yaml",
        "jobs:\n"
        "  - {name: a, arrival: 0, deadline: 900000000, totalSteps: 10, "
        "throughput: {table: {8: 1}},\n"
        "     worker: {replicas: 8, resources: {nvidia.com/gpu: 1}}}\n"
        "  - {name: b, arrival: 0, deadline: 900000000, totalSteps: 10, "
        "throughput: {table: {8: 1}},\n"
        "     worker: {replicas: 8, resources: {nvidia.com/gpu: 1}}}\n"}},
      1, "2 failed", {}, "new");
  // Standard output that cannot be written.
  add("run-stdout-full", {"models"}, {}, 1, "cannot write to standard output",
      {.stdout_path = "/dev/full"});
  add("run-stdout-full-explain", {"explain", "-c", "c.yaml", "-w", "w.yaml", "--job", "a"}, {}, 1,
      "cannot write to standard output", {.stdout_path = "/dev/full"});
  // A full disk (here: the file-size limit) while writing the results: the
  // previous results stay, no temporary is left.
  add("run-disk-full-simulate", {"simulate", "-c", "c.yaml", "-w", "w.yaml", "-q", "-o", "out"}, {},
      1, "cannot write", {.stdout_path = "", .max_file_size = 200});
  add("run-disk-full-compare",
      {"compare", "-c", "c.yaml", "-w", "w.yaml", "-p", "gang-binpack,kod2", "-o", "out"}, {}, 1,
      "cannot write", {.stdout_path = "", .max_file_size = 200});
  add("run-disk-full-generate",
      {"generate", "--jobs", "50", "--out", "g.yaml", "--cluster-out", "gc.yaml"}, {}, 1,
      "cannot write", {.stdout_path = "", .max_file_size = 200});
  AddSurfaceCases(cases);
  return cases;
}

class HostileInputTest : public ::testing::TestWithParam<Case> {};

TEST_P(HostileInputTest, ExitsWithOneLineAndChangesNothing) {
  const Case& c = GetParam();
  if (const auto known = KnownFailing().find(c.name); known != KnownFailing().end()) {
    GTEST_SKIP() << "known to fail until " << known->second;
  }
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer reserves terabytes of address space and reports out
  // of memory itself (it never throws std::bad_alloc).
  if (c.options.max_address_space != RLIM_INFINITY) {
    GTEST_SKIP() << "an address-space limit needs a build without AddressSanitizer";
  }
#endif
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("dlsched-hostile-" + std::to_string(getpid()) + "-" + c.name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    fs::create_directories((dir / name).parent_path());
    std::ofstream(dir / name, std::ios::binary) << text;
  };
  write("c.yaml", kCluster);
  write("w.yaml", kWorkload);
  write("p.yaml", kProfile);
  // Results of an earlier run, which a failed run must leave alone.
  fs::create_directories(dir / "out" / "gang-binpack");
  write("out/summary.json", "{\"earlier\": true}\n");
  write("out/jobs.csv", "name\nearlier\n");
  write("out/utilization.csv", "time\n0\n");
  write("out/gang-binpack/jobs.csv", "name\nearlier\n");
  write("out/compare.csv", "profile\nearlier\n");
  // A directory of the user's own.
  fs::create_directories(dir / "mine");
  write("mine/notes.txt", "mine\n");
  write("g.yaml", "# earlier\n");
  write("gc.yaml", "# earlier\n");
  fs::create_directories(dir / "dir.yaml");
  ASSERT_EQ(mkfifo((dir / "fifo.yaml").c_str(), 0644), 0);
  for (const auto& [name, text] : c.files) {
    if (text == "<sparse>") {
      fs::create_directories((dir / name).parent_path());
      const int fd = open((dir / name).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ASSERT_GE(fd, 0);
      ASSERT_EQ(ftruncate(fd, off_t{65} << 20), 0);  // 65 MiB of zeros, no disk used
      close(fd);
    } else if (text == "<fifo>") {
      fs::create_directories((dir / name).parent_path());
      ASSERT_EQ(mkfifo((dir / name).c_str(), 0644), 0);
    } else {
      write(name, text);
    }
  }
  const auto before = Snapshot(dir);

  std::vector<std::string> args = c.args;
  for (std::string& a : args) {
    if (a == "@SNAPSHOT@")
      a = dlsched::cli::testing::SnapshotServer::Get().Serve(c.name, c.snapshot_status,
                                                             c.snapshot_body);
  }
  const Outcome r = RunDlsched(dir, args, c.options);

  EXPECT_FALSE(r.hung) << "still running after " << kHangSeconds << " s: killed";
  EXPECT_EQ(r.signal, r.hung ? SIGKILL : 0)
      << "killed by signal " << r.signal << "\nstderr: " << r.err;
  EXPECT_LT(r.max_rss_kb, kMaxRssKb) << "peak memory " << r.max_rss_kb << " KiB";
  EXPECT_EQ(r.code, c.code) << "stderr: " << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not exactly one line:\n" << r.err;
  EXPECT_TRUE(r.err.starts_with("dlsched: ")) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "raw escape in: " << r.err;
  if (!c.stderr_has.empty()) {
    EXPECT_NE(r.err.find(c.stderr_has), std::string::npos) << r.err;
  }
  auto after = Snapshot(dir);
  if (!c.may_write.empty()) {
    EXPECT_TRUE(after.contains(c.may_write + "/summary.json"));
    std::erase_if(after, [&](const auto& kv) { return kv.first.starts_with(c.may_write); });
  }
  EXPECT_EQ(after, before) << "the working directory changed";
  fs::remove_all(dir);
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.name;
  for (char& ch : n) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Inputs, HostileInputTest, ::testing::ValuesIn(Cases()), CaseName);

// Every case runs under its own name (gtest's, with punctuation as '_').
TEST(HostileInputTableTest, NamesAreUnique) {
  const std::vector<Case> cases = Cases();
  std::set<std::string> names;
  for (const Case& c : cases) {
    std::string n = c.name;
    for (char& ch : n) {
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    }
    EXPECT_TRUE(names.insert(n).second) << c.name;
  }
  for (const auto& known : KnownFailing()) {
    EXPECT_TRUE(std::any_of(cases.begin(), cases.end(),
                            [&](const Case& c) { return c.name == known.first; }))
        << "no case named " << known.first;
  }
}

// `dlsched snapshot`'s decoder on answers that are not a dlsched
// operator's, in process: each is an error of one line naming --from or
// the file, never an exception.
struct SnapshotBody {
  std::string name;
  std::string body;
};
void PrintTo(const SnapshotBody& b, std::ostream* os) { *os << b.name; }

std::vector<SnapshotBody> SnapshotBodies() {
  const std::string cluster = "\"nodes:\\n  - {name: n, resources: {cpu: '1'}}\\n\"";
  const std::string job =
      "\"jobs:\\n  - {name: a, arrival: 0, worker: {replicas: 1, resources: {cpu: '1'}}, "
      "totalSteps: 5, throughput: {table: {1: 1}}}\\n\"";
  auto body = [](const std::string& c, const std::string& w, const std::string& extra = "") {
    return "{\"cluster\": " + c + ", \"workload\": " + w + extra + "}";
  };
  return {
      {"empty", ""},
      {"null", "null"},
      {"array", "[]"},
      {"number", "42"},
      {"string", "\"cluster\""},
      {"empty-object", "{}"},
      {"cluster-only", "{\"cluster\": " + cluster + "}"},
      {"workload-only", "{\"workload\": " + job + "}"},
      {"cluster-number", body("1", job)},
      {"workload-object", body(cluster, "{\"jobs\": []}")},
      {"cluster-null", body("null", job)},
      {"truncated", body(cluster, job).substr(0, 40)},
      {"binary", std::string("\0\xff\xfe{\x01", 5)},
      {"not-utf8-string", body("\"nodes: \xff\"", job)},
      {"lone-surrogate-escape", body("\"\\ud800\"", job)},
      {"nul-escape-in-yaml", body("\"nodes: [\\u0000]\"", job)},
      {"number-1e400", body(cluster, job, ", \"start\": 1e400")},
      {"deep-nesting", Repeat("[", 50000) + Repeat("]", 50000)},
      {"duplicate-keys", "{\"cluster\": 1, \"cluster\": 2, \"workload\": " + job + "}"},
      {"cluster-yaml-junk", body("\"nodes: [\"", job)},
      {"cluster-no-nodes", body("\"nodes: []\"", job)},
      {"cluster-escape", body("\"nodes:\\n  - {name: \\\"\\\\e[31m\\\", resources: {}}\"", job)},
      {"workload-empty", body(cluster, "\"jobs:\\n\"")},
      {"workload-after-comment", body(cluster, "\"# x\\njobs:\\n\"")},
      {"workload-yaml-junk", body(cluster, "\"jobs: {\"")},
      {"workload-not-jobs", body(cluster, "\"nodes: []\"")},
      {"workload-start-1e10", body(cluster, "\"start: 1e10\\njobs: []\\n\"")},
      {"huge-string", body("\"" + std::string(1 << 20, 'n') + "\"", job)},
      {"yaml-alias-loop", body("\"nodes: &a [*a]\"", job)},
  };
}

class SnapshotDecoderTest : public ::testing::TestWithParam<SnapshotBody> {};

TEST_P(SnapshotDecoderTest, RefusesWithOneLine) {
  const SnapshotBody& b = GetParam();
  dlsched::core::Result<dlsched::cli::DecodedSnapshot> r = dlsched::core::MakeError("not run");
  ASSERT_NO_THROW(r = dlsched::cli::DecodeSnapshot(b.body, "127.0.0.1:8080", "now"));
  ASSERT_FALSE(r.has_value()) << "decoded: " << b.body.substr(0, 200);
  const std::string& m = r.error().message;
  EXPECT_FALSE(m.empty());
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_TRUE(m.starts_with("--from 127.0.0.1:8080: ") || m.starts_with("now/cluster.yaml") ||
              m.starts_with("now/workload.yaml"))
      << m;
}

INSTANTIATE_TEST_SUITE_P(Bodies, SnapshotDecoderTest, ::testing::ValuesIn(SnapshotBodies()),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

// The table is meant to be broad: keep it above the hundred the issue
// asks, and the 300 the second pass added.
TEST(HostileInputTableTest, HasAtLeastSevenHundredInputs) {
  EXPECT_GE(Cases().size() + SnapshotBodies().size(), 700u);
}

}  // namespace
