#pragma once

// Files for tests: reading one back whole, writing one, and a scratch
// directory that is gone when the test ends. Test-only code.

#include <filesystem>
#include <string>
#include <string_view>

namespace dlsched::testing {

// The whole file, byte for byte ("" if it cannot be read).
std::string ReadFile(const std::filesystem::path& path);

// Writes `text` to `path`, creating its directory if need be.
void WriteFile(const std::filesystem::path& path, std::string_view text);

// Writes `text` to a file `name` in gtest's temporary directory, under a
// name of this process, and returns its path.
std::string WriteTemp(std::string_view name, std::string_view text);

// A directory of the running test and process under the system's
// temporary directory, removed before (a leftover of an earlier run) and
// after the test; created at once if `create`, else left to the test.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "dlsched", bool create = true);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // `name` in the directory.
  std::string Path(std::string_view name) const;

 private:
  std::filesystem::path path_;
};

}  // namespace dlsched::testing
