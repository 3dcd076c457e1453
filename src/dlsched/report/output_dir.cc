#include "dlsched/report/output_dir.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dlsched/report/schema.h"

namespace dlsched::report {
namespace {

namespace fs = std::filesystem;

// Every file name dlsched writes into an output directory.
constexpr std::string_view kOutputFiles[] = {
    schema::kSummaryJson,    schema::kJobsCsv,    schema::kUtilizationCsv, schema::kEventsCsv,
    schema::kAllocationsCsv, schema::kCompareCsv, schema::kCompareJson,    schema::kSweepCsv,
    schema::kReportHtml,     schema::kCellCsv,    schema::kProvenanceJson, schema::kQueuesCsv};
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
// What vanishes while it is read (another writer of the same output
// directory swapped it out and deletes it) held only dlsched's files.
core::Result<std::string> ForeignEntry(const fs::path& dir, int depth) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec == std::errc::no_such_file_or_directory) return std::string();
  if (ec) return core::Errorf("{}: cannot read directory: {}", dir.string(), ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    const fs::directory_entry& e = *it;
    const std::string name = e.path().filename().string();
    const fs::file_status st = e.symlink_status(ec);
    if (ec == std::errc::no_such_file_or_directory) continue;
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

// 128 random bits as 32 hex digits: a temporary's name, unique across
// processes, PID namespaces and hosts sharing a volume (a pid is not: two
// containers are both PID 1).
core::Result<std::string> RandomHex() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    got += static_cast<size_t>(n);
  }
  if (got < sizeof bytes) {
    // No getrandom(2) (ENOSYS): the device.
    const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return core::Errorf("cannot read /dev/urandom: {}", std::strerror(errno));
    got = 0;
    while (got < sizeof bytes) {
      const ssize_t n = ::read(fd, bytes + got, sizeof bytes - got);
      if (n <= 0 && !(n < 0 && errno == EINTR)) break;
      if (n > 0) got += static_cast<size_t>(n);
    }
    ::close(fd);
    if (got < sizeof bytes) return core::MakeError("cannot read /dev/urandom");
  }
  std::string out;
  for (unsigned char b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

constexpr size_t kRandomHexDigits = 32;
constexpr std::string_view kLockSuffix = ".lock";
constexpr std::string_view kOldSuffix = "-old";

// Takes an exclusive open-file-description lock on all of `fd`'s file
// without waiting: 0, or the errno (EAGAIN when someone holds it).
// Such a lock belongs to the open file, not the process, so it conflicts
// with any other open of the file (this process's too), and a network file
// system's server keeps it for every host.
int LockFile(int fd) {
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  return ::fcntl(fd, F_OFD_SETLK, &fl) == 0 ? 0 : errno;
}

bool SameFile(int fd, const std::string& path) {
  struct stat a {};
  struct stat b {};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

}  // namespace

namespace internal {

TempClaim::TempClaim(TempClaim&& other) noexcept
    : path_(std::exchange(other.path_, std::string())),
      lock_fd_(std::exchange(other.lock_fd_, -1)) {}

TempClaim& TempClaim::operator=(TempClaim&& other) noexcept {
  if (this != &other) {
    Release();
    path_ = std::exchange(other.path_, std::string());
    lock_fd_ = std::exchange(other.lock_fd_, -1);
  }
  return *this;
}

core::Result<TempClaim> TempClaim::Claim(const fs::path& parent, const std::string& leaf) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    DLSCHED_TRY_LET(hex, RandomHex());
    TempClaim claim;
    claim.path_ = (parent / fmt::format(".{}{}{}", leaf, kTmpMarker, *hex)).string();
    const std::string lock = claim.path_ + std::string(kLockSuffix);
    claim.lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (claim.lock_fd_ < 0) {
      const int err = errno;
      claim.path_.clear();
      if (err == EEXIST) continue;
      return core::MakeError(std::strerror(err));
    }
    const int err = LockFile(claim.lock_fd_);
    // A sweeper that saw the lock file unlocked took the lock first and
    // deletes it: another name. On a file system without locks (EINVAL,
    // ENOLCK) there is none, and no sweeper deletes this temporary either.
    if (err == EAGAIN || err == EACCES || !SameFile(claim.lock_fd_, lock)) {
      ::close(std::exchange(claim.lock_fd_, -1));
      claim.path_.clear();
      continue;
    }
    return claim;
  }
  return core::MakeError("cannot find a free temporary name");
}

void TempClaim::Release() {
  if (path_.empty()) return;
  std::error_code ignored;
  fs::remove_all(path_, ignored);
  fs::remove_all(old_path(), ignored);
  ::unlink((path_ + std::string(kLockSuffix)).c_str());
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
  path_.clear();
}

std::string TempClaim::old_path() const { return path_ + std::string(kOldSuffix); }

}  // namespace internal

namespace {

// Deletes the temporaries beside `parent`/`leaf` whose writers are gone: a
// run killed while writing, or after the swap but before deleting the old
// results. A temporary is its writer's while the writer holds its lock
// file's lock (TempClaim); one whose lock this process can take is
// abandoned. Temporaries named after a pid (earlier versions) are left
// alone: a pid says nothing about a process of another PID namespace or host.
void SweepStale(const fs::path& parent, const std::string& leaf) {
  const std::string prefix = "." + leaf + std::string(kTmpMarker);
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix) || !name.ends_with(kLockSuffix)) continue;
    const std::string_view hex = std::string_view(name).substr(
        prefix.size(), name.size() - prefix.size() - kLockSuffix.size());
    if (hex.size() != kRandomHexDigits ||
        hex.find_first_not_of("0123456789abcdef") != std::string_view::npos) {
      continue;
    }
    const std::string lock = it->path().string();
    const int fd = ::open(lock.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) continue;  // gone already, or not ours to open
    // Locked by its live writer, or deleted since it was listed: not ours.
    if (LockFile(fd) != 0 || !SameFile(fd, lock)) {
      ::close(fd);
      continue;
    }
    const std::string tmp = lock.substr(0, lock.size() - kLockSuffix.size());
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    fs::remove_all(tmp + std::string(kOldSuffix), ignored);
    ::unlink(lock.c_str());
    ::close(fd);
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
  DLSCHED_TRY_LET(foreign, ForeignEntry(dir, kMaxOutputDepth));
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
  DLSCHED_TRY(CheckOutputDir(path.string()));

  auto tmp = internal::TempClaim::Claim(parent, leaf);
  if (!tmp) return CannotWrite(dir_arg, tmp.error().message);
  if (::mkdir(tmp->path().c_str(), 0755) != 0) return CannotWrite(dir_arg, errno);
  return OutputDir(path.string(), std::move(*tmp));
}

OutputDir::OutputDir(OutputDir&& other) noexcept
    : dir_(std::move(other.dir_)),
      tmp_(std::move(other.tmp_)),
      unsynced_(std::move(other.unsynced_)) {
  other.unsynced_.clear();
}

// tmp_ then deletes the temporary directory, if it is still there.
OutputDir::~OutputDir() {
  for (const Unsynced& f : unsynced_) ::close(f.fd);
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
  const fs::path file = fs::path(tmp_.path()) / relative;
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) return CannotWrite(target, ec.message());
  const int fd = CreateFile(file.string());
  if (fd < 0) return CannotWrite(target, errno);
  return OutputFile(this, std::move(target), fd);
}

core::Status OutputDir::Add(std::string_view relative, std::string_view content) {
  DLSCHED_TRY_LET(file, Create(relative));
  file->Write(content);
  return file->Close();
}

core::Status OutputDir::Commit() {
  if (tmp_.empty()) return CannotWrite(dir_, "the output directory is already committed");
  // The files, then their directories (subdirectories first, then the top):
  // everything is on disk before the swap makes it visible.
  if (auto st = SyncFiles(); !st) return st;
  std::error_code ec;
  const std::string& tmp = tmp_.path();
  for (fs::recursive_directory_iterator it(tmp, ec); !ec && it != fs::end(it); it.increment(ec)) {
    if (it->is_directory(ec)) {
      if (int err = SyncDirectory(it->path().string()); err != 0) return CannotWrite(dir_, err);
    }
  }
  if (ec) return CannotWrite(dir_, ec.message());
  if (int err = SyncDirectory(tmp); err != 0) return CannotWrite(dir_, err);
  // The directory may have changed since Open.
  if (auto st = CheckOutputDir(dir_); !st) return st;

  const std::string parent = fs::path(dir_).parent_path().empty()
                                 ? std::string(".")
                                 : fs::path(dir_).parent_path().string();
  // Another writer of `dir` (the same run twice, two pods on one volume)
  // only ever swaps a whole set of its own in: whichever swaps last wins,
  // and each deletes what it swapped out. Three tries, for a `dir` deleted
  // between the rename and the exchange.
  int err = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    // `dir` absent (or empty): nothing old to delete.
    if (::rename(tmp.c_str(), dir_.c_str()) == 0) break;
    err = errno;
    if (err != EEXIST && err != ENOTEMPTY) return CannotWrite(dir_, err);
    // Now `tmp` holds the previous results.
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) == 0) {
      err = 0;
      break;
    }
    err = errno;
    if (err == ENOENT) continue;
    if (err != EINVAL && err != ENOSYS) return CannotWrite(dir_, err);
    // No atomic exchange on this file system: move the old directory
    // aside, then the new one in. Never a mix, but briefly no directory;
    // a writer that finds it taken in between fails and says so.
    const std::string old = tmp_.old_path();
    if (::rename(dir_.c_str(), old.c_str()) != 0) return CannotWrite(dir_, errno);
    if (::rename(tmp.c_str(), dir_.c_str()) != 0) {
      err = errno;
      ::rename(old.c_str(), dir_.c_str());
      if (err == EEXIST || err == ENOTEMPTY) {
        return CannotWrite(dir_,
                           "another process wrote it at the same time; its results are there");
      }
      return CannotWrite(dir_, err);
    }
    break;
  }
  if (err != 0) return CannotWrite(dir_, err);
  SyncDirectory(parent);
  // The previous results (if any), then the lock.
  tmp_.Release();
  return {};
}

core::Status ReplaceFiles(std::span<const FileContent> files) {
  // Each deletes its temporary if not renamed yet, whatever happens.
  std::vector<internal::TempClaim> tmps;
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
    auto tmp = internal::TempClaim::Claim(parent, leaf);
    if (!tmp) return CannotWrite(f.path, tmp.error().message);
    tmps.push_back(std::move(*tmp));
    if (int err = WriteAndSync(tmps.back().path(), f.content); err != 0) {
      return CannotWrite(f.path, err);
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (::rename(tmps[i].path().c_str(), files[i].path.c_str()) != 0) {
      return CannotWrite(files[i].path, errno);
    }
  }
  return {};
}

}  // namespace dlsched::report
