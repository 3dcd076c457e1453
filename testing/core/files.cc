#include "core/files.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <system_error>

#include <gtest/gtest.h>

namespace dlsched::testing {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::filesystem::path& path, std::string_view text) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string WriteTemp(std::string_view name, std::string_view text) {
  const std::string path =
      ::testing::TempDir() + "dlsched_" + std::to_string(::getpid()) + "_" + std::string(name);
  WriteFile(path, text);
  return path;
}

TempDir::TempDir(std::string_view prefix, bool create) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(prefix) + "-" + std::to_string(::getpid());
  if (info != nullptr) name += std::string("-") + info->test_suite_name() + "-" + info->name();
  for (char& c : name) {
    if (c == '/') c = '_';  // parameterised tests' names
  }
  path_ = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(path_);
  if (create) std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::Path(std::string_view name) const { return (path_ / name).string(); }

}  // namespace dlsched::testing
