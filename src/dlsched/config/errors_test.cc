// What the config readers make of failures that are not in the input: out
// of memory is the process's to report (cli::Main: "out of memory", exit
// 1), never a one-line input error (exit 2).

#include <new>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "dlsched/config/yaml_util.h"

namespace dlsched::config {
namespace {

using internal::Reader;

// yaml-cpp building a large document runs out of memory as std::bad_alloc
// from inside ParseText: it used to come back as "big.yaml: std::bad_alloc",
// an input error (exit 2).
TEST(ConfigErrorsTest, OutOfMemoryIsNotAnInputError) {
  const auto oom = [](const Reader&, const YAML::Node&) -> core::Result<int> {
    throw std::bad_alloc();
  };
  EXPECT_THROW((void)internal::ParseText("a: 1\n", "big.yaml", oom), std::bad_alloc);
  // Any other exception is still an error about the input, on one line.
  const auto odd = [](const Reader&, const YAML::Node&) -> core::Result<int> {
    throw std::runtime_error("bad conversion");
  };
  auto r = internal::ParseText("a: 1\n", "odd.yaml", odd);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "odd.yaml: bad conversion");
  // FromException, which every reader's catch block goes through, rethrows
  // out of memory and converts the rest.
  const auto convert = [](auto thrown) {
    try {
      throw thrown;
    } catch (const std::exception& e) {
      return internal::FromException("f.yaml", e).message;
    }
  };
  EXPECT_THROW(convert(std::bad_alloc()), std::bad_alloc);
  EXPECT_THROW(convert(std::bad_array_new_length()), std::bad_alloc);
  EXPECT_EQ(convert(std::out_of_range("x")), "f.yaml: x");
}

}  // namespace
}  // namespace dlsched::config
