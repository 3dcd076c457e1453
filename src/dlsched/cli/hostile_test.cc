// Hostile and careless inputs, as a new user or an attacker would try them:
// every file kind, every subcommand and flag. For each, the dlsched binary
// must exit 2 (bad input) or 1 (a run that fails), print exactly one line
// on stderr starting "dlsched:", not die of a signal, and leave the working
// directory (with an earlier run's results in it) exactly as it was.
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int code = -1;    // exit code, or -1 when killed by a signal
  int signal = 0;   // the signal that killed it, if any
  std::string out;  // stdout
  std::string err;  // stderr
};

struct Options {
  std::string stdout_path;  // redirect stdout to this file instead of a pipe
  rlim_t max_file_size = RLIM_INFINITY;
};

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
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) break;
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
  waitpid(pid, &status, 0);
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
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      out[rel] = ss.str();
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

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

struct Case {
  std::string name;
  std::vector<std::string> args;
  std::map<std::string, std::string> files;  // written into the working directory
  int code = 2;
  std::string stderr_has;  // the one line must contain this
  Options options;
  std::string may_write;  // a run that fails still writes its results here
};

// gtest shows a case by its name, not its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> Cases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::vector<std::string> args,
                 std::map<std::string, std::string> files = {}, int code = 2,
                 std::string stderr_has = "", Options options = {}, std::string may_write = "") {
    cases.push_back(Case{std::move(name), std::move(args), std::move(files), code,
                         std::move(stderr_has), std::move(options), std::move(may_write)});
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
      {"nine-resources", Node("{a.io/r1: 1, a.io/r2: 1, a.io/r3: 1, a.io/r4: 1, a.io/r5: 1, "
                              "a.io/r6: 1}")},
      {"resource-name-space", Node("{\"a b\": 1}")},
      {"resources-list", Node("[cpu, 1]")},
      {"key-is-map", "nodes:\n  - {? {a: 1} : 2, name: n, resources: {cpu: 1}}\n"},
      {"merge-key", "base: &b {cpu: 1}\nnodes:\n  - name: n\n    resources: {<<: *b}\n"},
      {"alias-loop", "nodes: &a [*a]\n"},
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
  return cases;
}

class HostileInputTest : public ::testing::TestWithParam<Case> {};

TEST_P(HostileInputTest, ExitsWithOneLineAndChangesNothing) {
  const Case& c = GetParam();
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("dlsched-hostile-" + std::to_string(getpid()) + "-" + c.name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
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
      const int fd = open((dir / name).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ASSERT_GE(fd, 0);
      ASSERT_EQ(ftruncate(fd, off_t{65} << 20), 0);  // 65 MiB of zeros, no disk used
      close(fd);
    } else {
      write(name, text);
    }
  }
  const auto before = Snapshot(dir);

  const Outcome r = RunDlsched(dir, c.args, c.options);

  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal << "\nstderr: " << r.err;
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

// The table is meant to be broad: keep it above the hundred the issue asks.
TEST(HostileInputTableTest, HasAtLeastAHundredInputs) { EXPECT_GE(Cases().size(), 100u); }

}  // namespace
