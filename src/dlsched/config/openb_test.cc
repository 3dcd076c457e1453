// The openb importer (config/openb.h) on the real files of data/openb/:
// every count and total is also computed here from the files' text, by a
// reader of its own (split on commas), so the two must agree.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "dlsched/config/openb.h"

namespace dlsched::config {
namespace {

std::string Data(const std::string& name) {
  return std::string(DLSCHED_SOURCE_DIR) + "/data/openb/" + name;
}

// The rows of a CSV file as columns by header name.
std::vector<std::map<std::string, std::string>> Rows(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string c; std::getline(hs, c, ',');) header.push_back(c);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::map<std::string, std::string> row;
    std::stringstream ls(line);
    size_t i = 0;
    for (std::string c; i < header.size(); ++i) {
      if (!std::getline(ls, c, ',')) c.clear();
      row[header[i]] = c;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

TEST(OpenbTest, NodeListMatchesTheFile) {
  const std::string path = Data("openb_node_list_gpu_node.csv");
  auto nodes = LoadOpenbNodes(path);
  ASSERT_TRUE(nodes.has_value()) << nodes.error().message;
  const auto rows = Rows(path);
  ASSERT_EQ(nodes->size(), rows.size());
  int64_t gpus = 0;
  int64_t cpu = 0;
  int64_t memory = 0;
  for (const auto& r : rows) {
    gpus += std::stoll(r.at("gpu"));
    cpu += std::stoll(r.at("cpu_milli"));
    memory += std::stoll(r.at("memory_mib"));
  }
  int64_t got_gpus = 0;
  int64_t got_cpu = 0;
  int64_t got_memory = 0;
  std::map<std::string, int> by_model;
  for (const OpenbNode& n : *nodes) {
    got_gpus += n.gpus;
    got_cpu += n.cpu_milli;
    got_memory += n.memory_mib;
    by_model[n.model] += n.gpus;
  }
  EXPECT_EQ(got_gpus, gpus);
  EXPECT_EQ(got_cpu, cpu);
  EXPECT_EQ(got_memory, memory);
  // As the trace's README and the FGD paper describe it: 1,213 GPU nodes,
  // 6,212 GPUs, 107,018 CPUs.
  EXPECT_EQ(nodes->size(), 1213u);
  EXPECT_EQ(got_gpus, 6212);
  EXPECT_EQ(got_cpu, 107018000);
  EXPECT_EQ(by_model["G2"], 4392);
  EXPECT_EQ(by_model["T4"], 842);
  EXPECT_EQ((*nodes)[0].name, rows[0].at("sn"));
}

TEST(OpenbTest, PodListsMatchTheFiles) {
  for (const char* file : {"openb_pod_list_default.csv", "openb_pod_list_gpushare100.csv",
                           "openb_pod_list_gpuspec33.csv"}) {
    SCOPED_TRACE(file);
    const std::string path = Data(file);
    auto pods = LoadOpenbPods(path);
    ASSERT_TRUE(pods.has_value()) << pods.error().message;
    const auto rows = Rows(path);
    ASSERT_EQ(pods->size(), rows.size());
    int64_t milli = 0;
    int64_t cpu = 0;
    int64_t shared = 0;
    int64_t typed = 0;
    for (const auto& r : rows) {
      const int64_t g = std::stoll(r.at("num_gpu"));
      const int64_t m = std::stoll(r.at("gpu_milli"));
      milli += g * m;
      cpu += std::stoll(r.at("cpu_milli"));
      if (g == 1 && m < 1000 && m > 0) ++shared;
      if (!r.at("gpu_spec").empty()) ++typed;
    }
    int64_t got_milli = 0;
    int64_t got_cpu = 0;
    int64_t got_shared = 0;
    int64_t got_typed = 0;
    for (const OpenbPod& p : *pods) {
      got_milli += int64_t{p.num_gpu} * p.gpu_milli;
      got_cpu += p.cpu_milli;
      if (p.num_gpu == 1 && p.gpu_milli < 1000 && p.gpu_milli > 0) ++got_shared;
      if (!p.gpu_spec.empty()) ++got_typed;
    }
    EXPECT_EQ(got_milli, milli);
    EXPECT_EQ(got_cpu, cpu);
    EXPECT_EQ(got_shared, shared);
    EXPECT_EQ(got_typed, typed);
  }
  // The default list: 8,152 pods, 3,078 of them a share of one GPU and
  // 1,088 with no GPU, none with a GPU type; 6,086.8 GPUs asked in all.
  auto pods = LoadOpenbPods(Data("openb_pod_list_default.csv"));
  ASSERT_TRUE(pods.has_value());
  EXPECT_EQ(pods->size(), 8152u);
  int64_t milli = 0;
  int shared = 0;
  int no_gpu = 0;
  for (const OpenbPod& p : *pods) {
    milli += int64_t{p.num_gpu} * p.gpu_milli;
    if (p.num_gpu == 1 && p.gpu_milli < 1000) ++shared;
    if (p.num_gpu == 0) ++no_gpu;
    EXPECT_TRUE(p.gpu_spec.empty());
  }
  EXPECT_EQ(milli, 6086800);
  EXPECT_EQ(shared, 3078);
  EXPECT_EQ(no_gpu, 1088);
}

TEST(OpenbTest, GpuSpecListsTheAllowedTypes) {
  auto pods = LoadOpenbPods(Data("openb_pod_list_gpuspec33.csv"));
  ASSERT_TRUE(pods.has_value());
  bool two = false;
  for (const OpenbPod& p : *pods) {
    for (const std::string& t : p.gpu_spec) EXPECT_FALSE(t.empty());
    two = two || p.gpu_spec.size() >= 2;
  }
  EXPECT_TRUE(two);  // "V100M16|V100M32" and the like
}

TEST(OpenbTest, BadRowsNameTheFileLineAndColumn) {
  const std::string path = ::testing::TempDir() + "dlsched_openb_bad.csv";
  const auto write = [&](const std::string& text) {
    std::ofstream(path) << text;
    return LoadOpenbPods(path);
  };
  const std::string header =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n";
  auto r =
      write(header + "p0,1000,10,1,500,,LS,Running,0,,0\np1,1000,10,1,1500,,LS,Running,0,,0\n");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message,
            path + ":3: gpu_milli: expected an integer in [0, 1000], got '1500'");
  r = write(header + "p0,1000,10,2,500,,LS,Running,0,,0\n");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(
      r.error().message,
      path + ":2: gpu_milli: expected 1000 for a pod of several GPUs (whole GPUs), got '500'");
  r = write(header + "p0,1000,10,0,500,,LS,Running,0,,0\n");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message,
            path + ":2: gpu_milli: expected 0 exactly when num_gpu is 0, got '500'");
  r = write("name,cpu_milli,memory_mib,num_gpu\n");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("no column 'gpu_milli'"), std::string::npos)
      << r.error().message;
  r = write(header);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, path + ": no pod (expected one row per pod)");
}

}  // namespace
}  // namespace dlsched::config
