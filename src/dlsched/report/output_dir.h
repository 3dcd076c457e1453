#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dlsched/core/error.h"

namespace dlsched::report {

// Checks that `dir` may receive a run's outputs: it does not exist, or it
// is a directory that holds nothing but files dlsched writes (summary.json,
// jobs.csv, utilization.csv, events.csv, allocations.csv, compare.csv,
// compare.json, sweep.csv, cell.csv, provenance.json, report.html), directly or in
// subdirectories up to four levels down (compare's <profile>/, a sweep's
// cells/<profile>/load-<L>/seed-<S>/). Anything else is refused, since
// writing replaces the directory as a whole. Errors read "<dir>: ...".
core::Status CheckOutputDir(const std::string& dir);

class OutputDir;

namespace internal {

// One writer's temporary beside its target (the directory or file being
// written): ".<name>.dlsched-tmp-<32 random hex digits>", a name no other
// process picks, whatever its pid, PID namespace or host; "<that>-old"
// while earlier results move out on a file system without
// RENAME_EXCHANGE; and its lock file "<that>.lock", which the writer holds
// locked (an open file description lock, kept by an NFS server for every
// host) while it lives. Others sweep a temporary only once they hold its
// lock: its writer is gone. Release (and the destructor) deletes the
// temporary, then the lock file, then lets the lock go.
class TempClaim {
 public:
  TempClaim() = default;
  TempClaim(TempClaim&& other) noexcept;
  TempClaim& operator=(TempClaim&& other) noexcept;
  TempClaim(const TempClaim&) = delete;
  TempClaim& operator=(const TempClaim&) = delete;
  ~TempClaim() { Release(); }

  // A fresh name beside `parent`/`leaf`, its lock file created and locked;
  // the temporary itself is the caller's to create. Errors are the reason.
  static core::Result<TempClaim> Claim(const std::filesystem::path& parent,
                                       const std::string& leaf);

  void Release();
  bool empty() const { return path_.empty(); }
  const std::string& path() const { return path_; }
  std::string old_path() const;

 private:
  std::string path_;
  int lock_fd_ = -1;
};

}  // namespace internal

// A file of an OutputDir being written a chunk at a time
// (OutputDir::Create), so that a large file never has to be whole in
// memory. A failed write is kept: later writes do nothing, and Close()
// reports it, once.
class OutputFile {
 public:
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  // Closes the file if Close() was not called; the file stays incomplete in
  // the temporary directory, so its OutputDir must not be committed.
  ~OutputFile();

  // Appends `text` to the file.
  void Write(std::string_view text);

  // Finishes the file and starts writing it to disk; the OutputDir's
  // Commit() waits until it is there (fsync) before making it visible.
  // Errors name the final path: "<dir>/<relative>: cannot write: <reason>".
  core::Status Close();

 private:
  friend class OutputDir;
  OutputFile(OutputDir* dir, std::string target, int fd)
      : dir_(dir), target_(std::move(target)), fd_(fd) {}

  OutputDir* dir_;      // takes the file at Close()
  std::string target_;  // the final path, for errors
  int fd_;              // -1 once closed or moved from
  int err_ = 0;         // errno of the first failed write
};

// A run's output files, written as one unit: they go to a temporary
// directory beside `dir` (internal::TempClaim: ".<name>.dlsched-tmp-<random>"),
// and Commit() flushes them to disk (fsync), then swaps that directory with
// `dir` in one atomic rename (renameat2 RENAME_EXCHANGE) before deleting
// the old contents. A reader sees all the old files or all the new ones,
// never a mix, whatever happens: a full disk fails the write and leaves
// `dir` as it was; a kill leaves a temporary directory, which the next
// OutputDir for the same `dir` deletes (its writer no longer holds its
// lock). Writers of one `dir` at once (two runs, two pods on one volume)
// each swap in a whole set: the last to swap wins. On a file system
// without RENAME_EXCHANGE, `dir` is briefly absent between two renames
// instead, and a writer that finds it gone or taken in between fails.
class OutputDir {
 public:
  // Sweeps temporaries left by dead processes, checks `dir`
  // (CheckOutputDir) and creates the temporary directory and `dir`'s
  // parents. Errors read "<path>: cannot write: <reason>" or come from
  // CheckOutputDir.
  static core::Result<OutputDir> Open(const std::string& dir);

  OutputDir(OutputDir&& other) noexcept;
  OutputDir& operator=(OutputDir&&) = delete;
  OutputDir(const OutputDir&) = delete;
  // Deletes the temporary directory unless Commit() succeeded.
  ~OutputDir();

  // Creates `relative` ("jobs.csv" or "<profile>/jobs.csv") under the
  // temporary directory, to write with OutputFile::Write and finish with
  // OutputFile::Close before Commit(); the OutputDir must stay where it is
  // until then. Errors name the final path:
  // "<dir>/<relative>: cannot write: <reason>".
  core::Result<OutputFile> Create(std::string_view relative);

  // Writes `content` to `relative` as a whole (Create, Write, Close).
  core::Status Add(std::string_view relative, std::string_view content);

  // Flushes every file to disk, then puts them in place of `dir` at once.
  // After an error `dir` is as it was before Open.
  core::Status Commit();

  const std::string& dir() const { return dir_; }

 private:
  friend class OutputFile;
  OutputDir(std::string dir, internal::TempClaim tmp)
      : dir_(std::move(dir)), tmp_(std::move(tmp)) {}

  // A closed file whose writeback has started but may not have finished.
  struct Unsynced {
    std::string target;  // the final path, for errors
    int fd;
  };
  // Takes a closed file's descriptor to fsync in Commit(); past
  // kMaxUnsynced (a sweep writes thousands of files) the oldest is synced
  // now, so that the descriptors stay few.
  core::Status AddUnsynced(std::string target, int fd);
  // Fsyncs and closes every unsynced file; the first error.
  core::Status SyncFiles();

  std::string dir_;
  internal::TempClaim tmp_;  // empty once committed or moved from
  std::vector<Unsynced> unsynced_;
};

// A file to write with ReplaceFiles.
struct FileContent {
  std::string path;
  std::string_view content;
};

// Replaces single files (not a run directory), e.g. what `dlsched generate`
// writes: each goes to a temporary beside its target (internal::TempClaim)
// and is flushed; only when all are written are they renamed into place, so
// after an error no target has changed. Temporaries of writers that are
// gone are swept. Errors read "<path>: cannot write: <reason>".
core::Status ReplaceFiles(std::span<const FileContent> files);

}  // namespace dlsched::report
