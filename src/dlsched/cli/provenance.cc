#include "dlsched/cli/provenance.h"

#include <fcntl.h>
#include <nettle/sha2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "dlsched/config/trace.h"
#include "dlsched/policy/framework/registry.h"

namespace dlsched::cli {
namespace {

std::string Hex(const std::array<uint8_t, SHA256_DIGEST_SIZE>& digest) {
  std::string out;
  out.reserve(2 * digest.size());
  for (uint8_t b : digest) out += fmt::format("{:02x}", b);
  return out;
}

// Options that take a value and say only where the results go (long and
// short names), and flags that say only how the run shows itself.
constexpr std::string_view kDropLongWithValue[] = {"--out", "--report", "--threads"};
constexpr char kDropShortWithValue[] = {'o', 'j'};
constexpr std::string_view kDropLongFlags[] = {"--quiet"};
constexpr char kDropShortFlags[] = {'q'};

template <typename T, size_t N>
bool In(const T (&set)[N], const T& x) {
  return std::find(std::begin(set), std::end(set), x) != std::end(set);
}

}  // namespace

std::string Sha256Hex(std::string_view bytes) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()));
  std::array<uint8_t, SHA256_DIGEST_SIZE> digest;
  sha256_digest(&ctx, digest.size(), digest.data());
  return Hex(digest);
}

core::Result<std::string> Sha256File(const std::string& path) {
  auto fail = [&](const std::string& why) {
    return core::Errorf("{}: cannot read file: {}", path, why);
  };
  // Non-blocking, so a FIFO in the file's place is refused, not waited on.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return fail(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("not a regular file");
  }
  sha256_ctx ctx;
  sha256_init(&ctx);
  std::array<uint8_t, 1 << 16> buf;
  while (true) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return fail(std::strerror(err));
    }
    if (n == 0) break;
    sha256_update(&ctx, static_cast<size_t>(n), buf.data());
  }
  ::close(fd);
  std::array<uint8_t, SHA256_DIGEST_SIZE> digest;
  sha256_digest(&ctx, digest.size(), digest.data());
  return Hex(digest);
}

std::vector<std::string> RecordedCommand(std::span<const std::string> args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& t = args[i];
    if (t == "--") {
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (t.starts_with("--")) {
      const size_t eq = t.find('=');
      const std::string_view name = std::string_view(t).substr(0, eq);
      if (In(kDropLongFlags, name)) continue;
      if (In(kDropLongWithValue, name)) {
        if (eq == std::string::npos) ++i;  // the value is the next word
        continue;
      }
      out.push_back(t);
      continue;
    }
    if (t.size() < 2 || t[0] != '-') {
      out.push_back(t);
      continue;
    }
    // Short options, as CLI11 reads them: flags may be run together (-qo),
    // and an option's value may follow its letter (-oDIR) or be the next
    // word.
    std::string kept = "-";
    for (size_t k = 1; k < t.size(); ++k) {
      const char c = t[k];
      if (In(kDropShortFlags, c)) continue;
      if (In(kDropShortWithValue, c)) {
        if (k + 1 == t.size()) ++i;
        break;
      }
      kept += t.substr(k);  // an option of its own, its value attached or next
      break;
    }
    if (kept != "-") out.push_back(kept);
  }
  return out;
}

core::Status AddInputFile(report::Provenance& p, const std::string& role, const std::string& format,
                          const std::string& path) {
  DLSCHED_TRY_LET(sha, Sha256File(path));
  p.inputs.push_back({role, format, path, std::move(*sha)});
  return {};
}

core::Status AddInputTree(report::Provenance& p, const std::string& role, const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(it->path().string());
  }
  if (ec) return core::Errorf("{}: cannot read directory: {}", dir, ec.message());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    if (auto st = AddInputFile(p, role, "", f); !st) return st;
  }
  return {};
}

core::Status AddProfile(report::Provenance& p, const std::string& name_or_path,
                        std::span<const std::string> overrides, const std::string& name) {
  report::Provenance::Profile profile;
  profile.name = name;
  profile.set.assign(overrides.begin(), overrides.end());
  if (policy::BuiltinProfileText(name_or_path)) {
    profile.builtin = name_or_path;
  } else {
    profile.file = name_or_path;
    const bool listed = std::any_of(p.inputs.begin(), p.inputs.end(), [&](const auto& in) {
      return in.role == "profile" && in.path == name_or_path;
    });
    if (!listed) {
      if (auto st = AddInputFile(p, "profile", "", name_or_path); !st) return st;
    }
  }
  DLSCHED_TRY_LET(yaml, policy::ResolvedProfileText(name_or_path, overrides));
  profile.yaml = std::move(*yaml);
  p.profiles.push_back(std::move(profile));
  return {};
}

core::Result<report::Provenance> RunProvenance(const std::vector<std::string>& command,
                                               const std::string& cluster, const JobSource& jobs,
                                               const std::string& window) {
  report::Provenance p;
  if (!window.empty()) p.window = window;
  p.version = DLSCHED_VERSION;
  p.command = command;
  core::Status st =
      cluster.starts_with(kTiresiasPrefix)
          ? AddInputFile(p, "cluster", "tiresias", cluster.substr(kTiresiasPrefix.size()))
          : AddInputFile(p, "cluster", "", cluster);
  if (st && !jobs.workload.empty()) st = AddInputFile(p, "workload", "", jobs.workload);
  if (st && !jobs.trace.empty()) {
    DLSCHED_TRY_LET(o, config::ParseTraceArg(jobs.trace));
    st = AddInputFile(p, "trace", std::string(config::TraceFormatName(o->format)), o->path);
    if (st && o->format == config::TraceFormat::kPollux) {
      o->pollux_traces = jobs.pollux_traces;
      st = AddInputTree(p, "pollux-traces", config::PolluxTracesDir(*o));
    }
  }
  DLSCHED_TRY(st);
  return p;
}

core::Status AddProfiles(report::Provenance& p, const LoadedProfiles& profiles) {
  for (size_t i = 0; i < profiles.bases.size(); ++i) {
    if (auto st = AddProfile(p, profiles.bases[i], profiles.overrides[i], profiles.dirs[i]); !st) {
      return st;
    }
  }
  return {};
}

}  // namespace dlsched::cli
