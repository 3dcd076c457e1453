#include "dlsched/report/output_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace dlsched::report {
namespace {

namespace fs = std::filesystem;

// Every file name dlsched writes into an output directory.
constexpr std::string_view kOutputFiles[] = {
    "summary.json", "jobs.csv",  "utilization.csv", "events.csv", "allocations.csv", "compare.csv",
    "compare.json", "sweep.csv", "report.html",     "cell.csv",   "provenance.json"};
// How deep dlsched's own subdirectories go: compare's <profile>/, a
// sweep's cells/<profile>/load-<L>/seed-<S>/.
constexpr int kMaxOutputDepth = 4;
constexpr std::string_view kTmpMarker = ".dlsched-tmp-";

std::unexpected<core::Error> CannotWrite(const std::string& path, const std::string& reason) {
  return core::MakeError(path + ": cannot write: " + reason);
}

std::unexpected<core::Error> CannotWrite(const std::string& path, int err) {
  return CannotWrite(path, std::strerror(err));
}

bool IsOutputFile(std::string_view name) {
  for (auto known : kOutputFiles) {
    if (name == known) return true;
  }
  // Temporaries of earlier versions, which wrote file by file.
  return name.starts_with('.') && name.ends_with(".tmp");
}

// The first entry of `dir` that dlsched did not write, "" if none;
// subdirectories count as dlsched's when `depth` > 0 and they hold only
// output files.
core::Result<std::string> ForeignEntry(const fs::path& dir, int depth) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return core::Errorf("{}: cannot read directory: {}", dir.string(), ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    const fs::directory_entry& e = *it;
    const std::string name = e.path().filename().string();
    const fs::file_status st = e.symlink_status(ec);
    if (ec) return core::Errorf("{}: cannot read: {}", e.path().string(), ec.message());
    if (fs::is_regular_file(st) && IsOutputFile(name)) continue;
    if (fs::is_directory(st) && depth > 0) {
      auto inner = ForeignEntry(e.path(), depth - 1);
      if (!inner) return inner;
      if (inner->empty()) continue;
      return name + "/" + *inner;
    }
    return name;
  }
  if (ec) return core::Errorf("{}: cannot read directory: {}", dir.string(), ec.message());
  return std::string();
}

int CreateFile(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
}

// Writes all of `content` to `fd`; errno on failure.
int WriteAll(int fd, std::string_view content) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno != EINTR) return errno;
    } else {
      done += static_cast<size_t>(n);
    }
  }
  return 0;
}

// Fsyncs and closes `fd`, keeping `err` if it is already set; the error.
int SyncAndClose(int fd, int err) {
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  return err;
}

// Writes a whole file, fsyncs it and closes it; errno on failure.
int WriteAndSync(const std::string& path, std::string_view content) {
  const int fd = CreateFile(path);
  if (fd < 0) return errno;
  return SyncAndClose(fd, WriteAll(fd, content));
}

// Flushes a directory's entries (new files, renames) to disk.
int SyncDirectory(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::fsync(fd) != 0 ? errno : 0;
  ::close(fd);
  return err;
}

bool ProcessAlive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// Deletes ".<leaf>.dlsched-tmp-<pid>" directories of processes that are gone:
// a run killed while writing, or after the swap but before deleting the old
// contents.
void SweepStale(const fs::path& parent, const std::string& leaf) {
  const std::string prefix = "." + leaf + std::string(kTmpMarker);
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const std::string_view digits = std::string_view(name).substr(prefix.size());
    pid_t pid = 0;
    auto [end, perr] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    const std::string_view rest(end, digits.data() + digits.size() - end);
    if (perr != std::errc() || pid <= 0 || !(rest.empty() || rest == "-old")) continue;
    if (pid == ::getpid() || ProcessAlive(pid)) continue;
    std::error_code ignored;
    fs::remove_all(it->path(), ignored);
  }
}

}  // namespace

core::Status CheckOutputDir(const std::string& dir) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return core::Errorf("{}: cannot use as output directory: {}", dir, ec.message());
  }
  if (!fs::exists(st)) return {};
  if (!fs::is_directory(st)) return core::Errorf("{}: exists and is not a directory", dir);
  auto foreign = ForeignEntry(dir, kMaxOutputDepth);
  if (!foreign) return std::unexpected(foreign.error());
  if (!foreign->empty()) {
    return core::Errorf(
        "{}: holds '{}', which dlsched did not write; results replace the whole directory, so "
        "give a new or empty one",
        dir, *foreign);
  }
  return {};
}

core::Result<OutputDir> OutputDir::Open(const std::string& dir_arg) {
  std::error_code ec;
  std::string dir = dir_arg;
  // Replace what a symlink points to, not the link.
  if (fs::is_symlink(fs::symlink_status(dir, ec))) {
    const fs::path target = fs::canonical(dir, ec);
    if (ec) return CannotWrite(dir_arg, ec.message());
    dir = target.string();
  }
  fs::path path = fs::path(dir).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();  // "out/" -> "out"
  const std::string leaf = path.filename().string();
  if (leaf.empty() || leaf == "." || leaf == "..") {
    return core::Errorf("{}: cannot write: give a directory by name (not '.' or '..')", dir_arg);
  }
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) return CannotWrite(parent.string(), ec.message());
  SweepStale(parent, leaf);
  if (auto st = CheckOutputDir(path.string()); !st) return std::unexpected(st.error());

  const fs::path tmp = parent / fmt::format(".{}{}{}", leaf, kTmpMarker, ::getpid());
  fs::remove_all(tmp, ec);  // ours from an earlier OutputDir that failed
  if (::mkdir(tmp.c_str(), 0755) != 0) return CannotWrite(dir_arg, errno);
  return OutputDir(path.string(), tmp.string());
}

OutputDir::OutputDir(OutputDir&& other) noexcept
    : dir_(std::move(other.dir_)),
      tmp_(std::move(other.tmp_)),
      unsynced_(std::move(other.unsynced_)) {
  other.tmp_.clear();
  other.unsynced_.clear();
}

OutputDir::~OutputDir() {
  for (const Unsynced& f : unsynced_) ::close(f.fd);
  if (tmp_.empty()) return;
  std::error_code ignored;
  fs::remove_all(tmp_, ignored);
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : dir_(other.dir_), target_(std::move(other.target_)), fd_(other.fd_), err_(other.err_) {
  other.fd_ = -1;
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputFile::Write(std::string_view text) {
  if (fd_ >= 0 && err_ == 0) err_ = WriteAll(fd_, text);
}

core::Status OutputFile::Close() {
  if (fd_ < 0) return CannotWrite(target_, "the file is already closed");
  const int fd = std::exchange(fd_, -1);
  if (err_ != 0) {
    ::close(fd);
    return CannotWrite(target_, err_);
  }
  // Start the disk on this file now and wait for it (fsync) only in
  // Commit(): the writeback runs while the next file is made, and the
  // fsyncs find little left to do. On the Tiresias x100 run the files took
  // 25 ms from the first open to the rename with an fsync per file, 18 ms
  // so (medians of 15, docs/performance.md). Only a hint: an I/O error
  // shows at the fsync.
  ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  return dir_->AddUnsynced(target_, fd);
}

core::Status OutputDir::AddUnsynced(std::string target, int fd) {
  constexpr size_t kMaxUnsynced = 64;
  unsynced_.push_back({std::move(target), fd});
  if (unsynced_.size() <= kMaxUnsynced) return {};
  const Unsynced oldest = std::move(unsynced_.front());
  unsynced_.erase(unsynced_.begin());
  if (int err = SyncAndClose(oldest.fd, 0); err != 0) return CannotWrite(oldest.target, err);
  return {};
}

core::Status OutputDir::SyncFiles() {
  core::Status st;
  for (const Unsynced& f : unsynced_) {
    const int err = SyncAndClose(f.fd, 0);
    if (err != 0 && st) st = CannotWrite(f.target, err);
  }
  unsynced_.clear();
  return st;
}

core::Result<OutputFile> OutputDir::Create(std::string_view relative) {
  std::string target = (fs::path(dir_) / relative).string();
  if (tmp_.empty()) return CannotWrite(target, "the output directory is already committed");
  const fs::path file = fs::path(tmp_) / relative;
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) return CannotWrite(target, ec.message());
  const int fd = CreateFile(file.string());
  if (fd < 0) return CannotWrite(target, errno);
  return OutputFile(this, std::move(target), fd);
}

core::Status OutputDir::Add(std::string_view relative, std::string_view content) {
  auto file = Create(relative);
  if (!file) return std::unexpected(file.error());
  file->Write(content);
  return file->Close();
}

core::Status OutputDir::Commit() {
  if (tmp_.empty()) return CannotWrite(dir_, "the output directory is already committed");
  // The files, then their directories (subdirectories first, then the top):
  // everything is on disk before the swap makes it visible.
  if (auto st = SyncFiles(); !st) return st;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(tmp_, ec); !ec && it != fs::end(it); it.increment(ec)) {
    if (it->is_directory(ec)) {
      if (int err = SyncDirectory(it->path().string()); err != 0) return CannotWrite(dir_, err);
    }
  }
  if (ec) return CannotWrite(dir_, ec.message());
  if (int err = SyncDirectory(tmp_); err != 0) return CannotWrite(dir_, err);
  // The directory may have changed since Open.
  if (auto st = CheckOutputDir(dir_); !st) return st;

  const std::string parent = fs::path(dir_).parent_path().empty()
                                 ? std::string(".")
                                 : fs::path(dir_).parent_path().string();
  bool swapped = false;
  if (::rename(tmp_.c_str(), dir_.c_str()) == 0) {
    // `dir` did not exist (or was empty): nothing old to delete.
    tmp_.clear();
  } else if (errno == EEXIST || errno == ENOTEMPTY) {
    if (::renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) == 0) {
      swapped = true;
    } else if (errno == EINVAL || errno == ENOSYS) {
      // No atomic exchange on this file system: move the old directory
      // aside, then the new one in. Never a mix, but briefly no directory.
      const std::string old = tmp_ + "-old";
      if (::rename(dir_.c_str(), old.c_str()) != 0) return CannotWrite(dir_, errno);
      if (::rename(tmp_.c_str(), dir_.c_str()) != 0) {
        const int err = errno;
        ::rename(old.c_str(), dir_.c_str());
        return CannotWrite(dir_, err);
      }
      tmp_ = old;
      swapped = true;
    } else {
      return CannotWrite(dir_, errno);
    }
  } else {
    return CannotWrite(dir_, errno);
  }
  SyncDirectory(parent);
  if (swapped) {
    // tmp_ now holds the previous results.
    fs::remove_all(tmp_, ec);
    tmp_.clear();
  }
  return {};
}

core::Status ReplaceFiles(std::span<const FileContent> files) {
  std::vector<std::string> tmps;
  // Deletes the temporaries not renamed yet, whatever happens.
  struct Cleanup {
    std::vector<std::string>& tmps;
    ~Cleanup() {
      for (const auto& t : tmps) {
        if (!t.empty()) ::unlink(t.c_str());
      }
    }
  } cleanup{tmps};
  for (const FileContent& f : files) {
    const fs::path target(f.path);
    const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
    const std::string leaf = target.filename().string();
    if (leaf.empty()) return CannotWrite(f.path, "not a file name");
    // Renaming over a device or a directory would replace it (as root,
    // /dev/null): only regular files are replaced.
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(target, ec);
    if (fs::exists(st) && !fs::is_regular_file(st)) {
      return CannotWrite(f.path, "it exists and is not a regular file");
    }
    SweepStale(parent, leaf);
    const std::string tmp =
        (parent / fmt::format(".{}{}{}", leaf, kTmpMarker, ::getpid())).string();
    ::unlink(tmp.c_str());
    tmps.push_back(tmp);
    if (int err = WriteAndSync(tmp, f.content); err != 0) return CannotWrite(f.path, err);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (::rename(tmps[i].c_str(), files[i].path.c_str()) != 0) {
      return CannotWrite(files[i].path, errno);
    }
    tmps[i].clear();
  }
  tmps.clear();
  return {};
}

}  // namespace dlsched::report
