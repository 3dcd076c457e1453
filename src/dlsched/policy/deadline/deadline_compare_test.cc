// The deadline unit end to end: the built dlsched runs `compare` on the
// worked example (deadline_test.cc, docs/writing-a-policy.md) with
// examples/profile-deadline.yaml beside the built-in gang-binpack and
// three variants of the profile, each without one of the unit's pieces:
//
//   gang-binpack  FIFO: sweep takes node-0 and demo-a node-1 at 4 workers
//                 (321.4 s); demo-b starts at 321.4 and demo-c at 500,
//                 each needing 321.4 s: both fail at 600.       2 failed
//   deadline      every demo at 2 workers on one node, done at 500 (the
//                 worked example); sweep 500..1000.             all done
//   no-edf        (order FIFO) sweep first, on node-0; demo-a and demo-b
//                 share node-1; demo-c starts at 500 and ends at 1000,
//                 past 600.                                     1 failed
//   no-fit        (sizer Fixed) demo-a and demo-b at 4 workers, one node
//                 each, done at 321.4; demo-c then ends at 642.9.
//                                                               1 failed
//   no-together   (LeastAllocated on cpu and memory instead of
//                 KeepTogether) each demo's second worker goes to the
//                 emptier node: every demo spans both nodes, needs 714.3 s
//                 and fails at 600.                             3 failed
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/files.h"

namespace dlsched::policy {
namespace {

namespace fs = std::filesystem;
using dlsched::testing::ReadFile;

// The rows of a CSV file, each split at its commas, keyed by the first
// field. (Only jobs.csv's last field, the reason, may hold a comma: the
// fields read here come before it.)
std::map<std::string, std::vector<std::string>> Rows(const std::string& csv) {
  std::map<std::string, std::vector<std::string>> rows;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields;
    std::istringstream in(line);
    for (std::string f; std::getline(in, f, ',');) fields.push_back(f);
    if (!fields.empty()) rows[fields[0]] = fields;
  }
  return rows;
}

// The value of `column` in `row`, by the header row's names.
std::string Field(const std::map<std::string, std::vector<std::string>>& rows,
                  const std::string& header, const std::string& row, const std::string& column) {
  const std::vector<std::string>& names = rows.at(header);
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == column) return rows.at(row).at(i);
  }
  ADD_FAILURE() << "no column " << column;
  return "";
}

TEST(DeadlineCompareTest, EveryPieceIsNeededToMeetTheDeadlines) {
  const fs::path out =
      fs::temp_directory_path() / fmt::format("dlsched-deadline-compare-{}", ::getpid());
  fs::remove_all(out);
  const std::string p = "examples/profile-deadline.yaml";
  const std::string command = fmt::format(
      "cd '{}' && '{}' compare -q -c examples/cluster-2x4gpu.yaml "
      "-w examples/workload-deadline.yaml -p gang-binpack,{p},{p}:order=FIFO:name=no-edf,"
      "{p}:sizer=Fixed:name=no-fit,{p}:scorers.0.name=LeastAllocated:name=no-together -o '{}' "
      ">'{}.log' 2>&1",
      DLSCHED_SOURCE_DIR, DLSCHED_BINARY, out.string(), out.string(), fmt::arg("p", p));
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(out.string() + ".log");

  const auto compare = Rows(ReadFile(out / "compare.csv"));
  const std::map<std::string, std::string> want_status = {
      {"gang-binpack", "2 failed"}, {"deadline", "all done"},    {"no-edf", "1 failed"},
      {"no-fit", "1 failed"},       {"no-together", "3 failed"},
  };
  for (const auto& [profile, want] : want_status) {
    ASSERT_TRUE(compare.contains(profile)) << profile;
    EXPECT_EQ(Field(compare, "profile", profile, "status"), want) << profile;
  }

  // Under the profile, the worked example's times.
  const auto jobs = Rows(ReadFile(out / "deadline" / "jobs.csv"));
  for (const char* demo : {"demo-a", "demo-b", "demo-c"}) {
    EXPECT_EQ(Field(jobs, "name", demo, "final_workers"), "2") << demo;
    EXPECT_EQ(std::stod(Field(jobs, "name", demo, "completion")), 500) << demo;
  }
  EXPECT_EQ(std::stod(Field(jobs, "name", "sweep", "first_start")), 500);
  EXPECT_EQ(std::stod(Field(jobs, "name", "sweep", "completion")), 1000);
  fs::remove_all(out);
  fs::remove(out.string() + ".log");
}

}  // namespace
}  // namespace dlsched::policy
