// A run's files appear together or not at all: OutputDir writes them beside
// the target and swaps the directory in; ReplaceFiles does the same for
// single files.
#include "dlsched/report/output_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "dlsched/report/test_util.h"

namespace dlsched::report {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

std::set<std::string> Entries(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    out.insert(fs::relative(e.path(), dir).string());
  }
  return out;
}

// While it lives, writes past `bytes` fail with EFBIG, as on a full disk
// (SIGXFSZ ignored instead of killing the test).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) : old_handler_(::signal(SIGXFSZ, SIG_IGN)) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    rlimit small = saved_;
    small.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &small);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    ::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  void (*old_handler_)(int);
  rlimit saved_{};
};

TEST(OutputDirTest, WritesANewDirectoryAndLeavesNothingElse) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "runs" / "out";
  auto out = OutputDir::Open(dir.string());
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ASSERT_TRUE(out->Add("summary.json", "{}\n").has_value());
  ASSERT_TRUE(out->Add("kod2/jobs.csv", "name\n").has_value());
  // Nothing is visible before the commit.
  EXPECT_FALSE(fs::exists(dir));
  ASSERT_TRUE(out->Commit().has_value());
  EXPECT_EQ(ReadFile(dir / "summary.json"), "{}\n");
  EXPECT_EQ(ReadFile(dir / "kod2" / "jobs.csv"), "name\n");
  EXPECT_EQ(Entries(tmp.path() / "runs"),
            (std::set<std::string>{"out", "out/summary.json", "out/kod2", "out/kod2/jobs.csv"}));
}

// The old results go as a whole: a file the new run does not write does not
// survive beside the new ones.
TEST(OutputDirTest, ReplacesEarlierResultsAsAWhole) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  WriteFile(dir / "summary.json", "old\n");
  WriteFile(dir / "jobs.csv", "old\n");
  WriteFile(dir / "gang-binpack" / "jobs.csv", "old\n");
  auto out = OutputDir::Open(dir.string());
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ASSERT_TRUE(out->Add("summary.json", "new\n").has_value());
  ASSERT_TRUE(out->Commit().has_value());
  EXPECT_EQ(Entries(tmp.path()), (std::set<std::string>{"out", "out/summary.json"}));
  EXPECT_EQ(ReadFile(dir / "summary.json"), "new\n");
}

TEST(OutputDirTest, RefusesADirectoryWithFilesItDidNotWrite) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "mine";
  WriteFile(dir / "notes.txt", "keep me\n");
  WriteFile(dir / "jobs.csv", "old\n");
  auto out = OutputDir::Open(dir.string());
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().message,
            dir.string() +
                ": holds 'notes.txt', which dlsched did not write; results replace the whole "
                "directory, so give a new or empty one");
  EXPECT_EQ(ReadFile(dir / "notes.txt"), "keep me\n");
  EXPECT_EQ(Entries(tmp.path()),
            (std::set<std::string>{"mine", "mine/notes.txt", "mine/jobs.csv"}));
  // A foreign file one level down is refused too.
  WriteFile(tmp.path() / "out2" / "kod2" / "plot.png", "x");
  EXPECT_FALSE(CheckOutputDir((tmp.path() / "out2").string()).has_value());
  EXPECT_TRUE(CheckOutputDir((tmp.path() / "absent").string()).has_value());
}

// Every file a run, compare, sweep or report writes may be replaced, at
// the top or in a profile's directory: a report written into its own
// output directory does not stop the next run.
TEST(OutputDirTest, AcceptsEveryFileDlschedWrites) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  for (const char* f :
       {"summary.json", "jobs.csv", "utilization.csv", "events.csv", "allocations.csv",
        "compare.csv", "compare.json", "sweep.csv", "cell.csv", "report.html"}) {
    WriteFile(dir / f, "x");
    WriteFile(dir / "kod2" / f, "x");
    // A sweep's cell directory, four levels down.
    WriteFile(dir / "cells" / "kod2" / "load-1.5" / "seed-3" / f, "x");
  }
  EXPECT_TRUE(CheckOutputDir(dir.string()).has_value());
  WriteFile(dir / "cells" / "kod2" / "load-1.5" / "seed-3" / "deeper" / "jobs.csv", "x");
  EXPECT_FALSE(CheckOutputDir(dir.string()).has_value());
  fs::remove_all(dir / "cells" / "kod2" / "load-1.5" / "seed-3" / "deeper");
  WriteFile(dir / "report.htm", "x");
  EXPECT_FALSE(CheckOutputDir(dir.string()).has_value());
}

// A full disk while writing (here the file-size limit, which fails writes
// with EFBIG once SIGXFSZ is ignored): the error names the file, the old
// results stay, and no temporary is left.
TEST(OutputDirTest, AFailedWriteLeavesTheOldResults) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  WriteFile(dir / "summary.json", "old\n");
  auto out = OutputDir::Open(dir.string());
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ASSERT_TRUE(out->Add("jobs.csv", "small\n").has_value());

  core::Status st;
  {
    FileSizeLimit limit(64);
    st = out->Add("summary.json", std::string(1000, 'x'));
  }

  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().message, (dir / "summary.json").string() + ": cannot write: File too large");
  { OutputDir dropped = std::move(*out); }  // the run gives up
  EXPECT_EQ(ReadFile(dir / "summary.json"), "old\n");
  EXPECT_EQ(Entries(tmp.path()), (std::set<std::string>{"out", "out/summary.json"}));
}

// A file written a chunk at a time holds the chunks in order; nothing is
// visible before the commit.
TEST(OutputDirTest, CreateWritesChunks) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  auto out = OutputDir::Open(dir.string());
  ASSERT_TRUE(out.has_value()) << out.error().message;
  auto file = out->Create("kod2/events.csv");
  ASSERT_TRUE(file.has_value()) << file.error().message;
  std::string expected;
  for (int i = 0; i < 1000; ++i) {
    const std::string chunk = std::to_string(i) + std::string(static_cast<size_t>(i % 97), 'x');
    file->Write(chunk);
    expected += chunk;
  }
  ASSERT_TRUE(file->Close().has_value());
  const core::Status again = file->Close();
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().message,
            (dir / "kod2" / "events.csv").string() + ": cannot write: the file is already closed");
  EXPECT_FALSE(fs::exists(dir));
  ASSERT_TRUE(out->Commit().has_value());
  EXPECT_EQ(ReadFile(dir / "kod2" / "events.csv"), expected);
  EXPECT_EQ(Entries(tmp.path()), (std::set<std::string>{"out", "out/kod2", "out/kod2/events.csv"}));
}

// A write that fails part-way is reported once, by Close, naming the file;
// the writes after it do nothing.
TEST(OutputDirTest, AFailedChunkIsReportedOnceAtClose) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  auto out = OutputDir::Open(dir.string());
  ASSERT_TRUE(out.has_value()) << out.error().message;
  auto file = out->Create("summary.json");
  ASSERT_TRUE(file.has_value()) << file.error().message;

  core::Status st;
  {
    FileSizeLimit limit(64);
    for (int i = 0; i < 10; ++i) file->Write(std::string(50, 'x'));
    st = file->Close();
  }

  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().message, (dir / "summary.json").string() + ": cannot write: File too large");
  { OutputDir dropped = std::move(*out); }
  EXPECT_EQ(Entries(tmp.path()), std::set<std::string>{});
}

// More closed files than OutputDir keeps open to fsync at the commit (64;
// a sweep writes thousands): all of them arrive.
TEST(OutputDirTest, ManyFiles) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  auto out = OutputDir::Open(dir.string());
  ASSERT_TRUE(out.has_value()) << out.error().message;
  constexpr int kFiles = 70;
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_TRUE(out->Add("f" + std::to_string(i), std::to_string(i)).has_value());
  }
  ASSERT_TRUE(out->Commit().has_value());
  for (int i = 0; i < kFiles; ++i) {
    EXPECT_EQ(ReadFile(dir / ("f" + std::to_string(i))), std::to_string(i));
  }
}

// The temporaries beside `parent`: every entry whose name starts with
// ".out." (OutputDir's temporary directories and their lock files).
std::set<std::string> Temporaries(const fs::path& parent) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(parent)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(".out.")) out.insert(name);
  }
  return out;
}

// A run killed mid-way leaves ".<name>.dlsched-tmp-<random>" and its lock
// file; the next run for the same directory deletes them once no one holds
// the lock, and leaves alone those whose writer lives (it holds the lock)
// and those named after a pid by earlier versions (a pid says nothing of a
// process in another PID namespace or on another host).
TEST(OutputDirTest, SweepsTemporariesWhoseWriterIsGone) {
  TempDir tmp;
  const std::string dead = ".out.dlsched-tmp-0123456789abcdef0123456789abcdef";
  const std::string live = ".out.dlsched-tmp-fedcba9876543210fedcba9876543210";
  const std::string pid = ".out.dlsched-tmp-1";
  WriteFile(tmp.path() / dead / "summary.json", "half\n");
  WriteFile(tmp.path() / (dead + "-old") / "summary.json", "old\n");
  WriteFile(tmp.path() / (dead + ".lock"), "");
  WriteFile(tmp.path() / live / "summary.json", "busy\n");
  WriteFile(tmp.path() / (live + ".lock"), "");
  WriteFile(tmp.path() / pid / "summary.json", "old version\n");
  // The live writer's lock (as TempClaim takes it).
  const int fd = ::open((tmp.path() / (live + ".lock")).c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  struct flock fl {};
  fl.l_type = F_WRLCK;
  ASSERT_EQ(::fcntl(fd, F_OFD_SETLK, &fl), 0);
  {
    auto out = OutputDir::Open((tmp.path() / "out").string());
    ASSERT_TRUE(out.has_value()) << out.error().message;
    const std::set<std::string> during = Temporaries(tmp.path());
    EXPECT_FALSE(during.contains(dead));
    EXPECT_FALSE(during.contains(dead + "-old"));
    EXPECT_FALSE(during.contains(dead + ".lock"));
    EXPECT_TRUE(during.contains(live));
    EXPECT_TRUE(during.contains(live + ".lock"));
    EXPECT_TRUE(during.contains(pid));
    // Its own temporary and lock, besides.
    EXPECT_EQ(during.size(), 5u);
  }
  ::close(fd);
  // The writer has gone now: the next run sweeps its temporary.
  auto out = OutputDir::Open((tmp.path() / "out").string());
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_FALSE(fs::exists(tmp.path() / live));
  EXPECT_FALSE(fs::exists(tmp.path() / (live + ".lock")));
  EXPECT_TRUE(fs::exists(tmp.path() / pid));
}

// Two writers of one directory at once (in one process here, so with one
// pid): neither deletes the other's temporary, each commit swaps in a
// whole set, the last one wins, and nothing is left beside it.
TEST(OutputDirTest, TwoWritersOfOneDirectoryEachCommitAWholeSet) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  WriteFile(dir / "summary.json", "old\n");
  auto a = OutputDir::Open(dir.string());
  ASSERT_TRUE(a.has_value()) << a.error().message;
  auto b = OutputDir::Open(dir.string());
  ASSERT_TRUE(b.has_value()) << b.error().message;
  ASSERT_TRUE(a->Add("summary.json", "a\n").has_value());
  ASSERT_TRUE(b->Add("summary.json", "b\n").has_value());
  ASSERT_TRUE(a->Add("jobs.csv", "a\n").has_value());
  ASSERT_TRUE(b->Add("utilization.csv", "b\n").has_value());
  ASSERT_TRUE(a->Commit().has_value());
  EXPECT_EQ(Entries(dir), (std::set<std::string>{"summary.json", "jobs.csv"}));
  EXPECT_EQ(ReadFile(dir / "summary.json"), "a\n");
  ASSERT_TRUE(b->Commit().has_value());
  EXPECT_EQ(Entries(dir), (std::set<std::string>{"summary.json", "utilization.csv"}));
  EXPECT_EQ(ReadFile(dir / "summary.json"), "b\n");
  EXPECT_EQ(Temporaries(tmp.path()), std::set<std::string>{});
}

TEST(OutputDirTest, AbandonedWithoutCommitLeavesNothing) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  {
    auto out = OutputDir::Open(dir.string());
    ASSERT_TRUE(out.has_value());
    ASSERT_TRUE(out->Add("summary.json", "x").has_value());
  }
  EXPECT_EQ(Entries(tmp.path()), std::set<std::string>{});
}

// A symlinked output directory: the results go where it points.
TEST(OutputDirTest, FollowsASymlink) {
  TempDir tmp;
  const fs::path real = tmp.path() / "real";
  WriteFile(real / "summary.json", "old\n");
  fs::create_directory_symlink(real, tmp.path() / "link");
  auto out = OutputDir::Open((tmp.path() / "link").string());
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ASSERT_TRUE(out->Add("summary.json", "new\n").has_value());
  ASSERT_TRUE(out->Commit().has_value());
  EXPECT_TRUE(fs::is_symlink(tmp.path() / "link"));
  EXPECT_EQ(ReadFile(tmp.path() / "link" / "summary.json"), "new\n");
}

TEST(ReplaceFilesTest, WritesAllOrLeavesAll) {
  TempDir tmp;
  fs::create_directories(tmp.path());
  const fs::path a = tmp.path() / "w.yaml";
  const fs::path b = tmp.path() / "c.yaml";
  WriteFile(a, "old a\n");
  const FileContent files[] = {{a.string(), "new a\n"}, {b.string(), "new b\n"}};
  ASSERT_TRUE(ReplaceFiles(files).has_value());
  EXPECT_EQ(ReadFile(a), "new a\n");
  EXPECT_EQ(ReadFile(b), "new b\n");
  EXPECT_EQ(Entries(tmp.path()), (std::set<std::string>{"w.yaml", "c.yaml"}));

  // The second target cannot be written (its directory is missing): the
  // first is not replaced either.
  const FileContent bad[] = {{a.string(), "newer a\n"},
                             {(tmp.path() / "missing" / "c.yaml").string(), "x"}};
  const core::Status st = ReplaceFiles(bad);
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().message, (tmp.path() / "missing" / "c.yaml").string() +
                                    ": cannot write: No such file or directory");
  EXPECT_EQ(ReadFile(a), "new a\n");
  EXPECT_EQ(Entries(tmp.path()), (std::set<std::string>{"w.yaml", "c.yaml"}));
}

// Renaming over a device would replace it (as root, /dev/null itself).
TEST(ReplaceFilesTest, RefusesToReplaceWhatIsNotARegularFile) {
  const FileContent files[] = {{"/dev/null", "x"}};
  const core::Status st = ReplaceFiles(files);
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().message, "/dev/null: cannot write: it exists and is not a regular file");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

}  // namespace
}  // namespace dlsched::report
