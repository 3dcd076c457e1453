#include "dlsched/sim/model_zoo.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace dlsched::sim {
namespace {

// Carried by the repository (data/README.md): the test never skips.
constexpr const char* kGavelJson = DLSCHED_SOURCE_DIR "/data/gavel/simulation_throughputs.json";

TEST(ModelZooTest, NamesAreSortedUniqueAndMatchModels) {
  std::vector<std::string_view> names = ModelNames();
  ASSERT_FALSE(names.empty());
  EXPECT_TRUE(std::ranges::adjacent_find(names, std::ranges::greater_equal{}) == names.end())
      << "names must be strictly increasing";
  std::span<const ModelInfo> models = Models();
  ASSERT_EQ(models.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(models[i].name, names[i]);

  const std::vector<std::string_view> expected = {
      "a3c",          "cyclegan",      "lm",         "recommendation", "resnet18", "resnet50",
      "resnet50-k80", "resnet50-p100", "transformer"};
  EXPECT_EQ(names, expected);
}

TEST(ModelZooTest, FindModel) {
  for (std::string_view name : ModelNames()) {
    const core::ThroughputProfile* p = FindModel(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->model, name);
    const ModelInfo* info = FindModelInfo(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->profile, p);
    EXPECT_EQ(info->name, name);
    EXPECT_FALSE(info->source.empty());
    EXPECT_FALSE(info->locality_note.empty());
    // Stable across calls.
    EXPECT_EQ(FindModel(name), p);
  }
  for (std::string_view unknown :
       {"", "ResNet50", "resnet", "resnet500", "inception3", "vgg16", "resnet50 ", "zzz"}) {
    EXPECT_EQ(FindModel(unknown), nullptr) << '"' << unknown << '"';
    EXPECT_EQ(FindModelInfo(unknown), nullptr) << '"' << unknown << '"';
  }
}

TEST(ModelZooTest, TablesArePositiveAndNonDecreasing) {
  for (const ModelInfo& m : Models()) {
    SCOPED_TRACE(std::string(m.name));
    const auto& table = m.profile->steps_per_s;
    ASSERT_FALSE(table.empty());
    EXPECT_EQ(table.begin()->first, 1) << "every model runs with one worker";
    double prev = 0;
    for (auto [workers, rate] : table) {
      EXPECT_GT(workers, 0);
      EXPECT_GT(rate, 0) << workers << " workers";
      EXPECT_GE(rate, prev) << workers << " workers";
      prev = rate;
    }
    EXPECT_GE(m.profile->locality_sensitivity, 0);
    EXPECT_LE(m.profile->locality_sensitivity, 1);

    ASSERT_FALSE(m.profile->GpuTypes().empty());
    for (const auto& [type, by_type] : m.profile->GpuTypes()) {
      ASSERT_FALSE(by_type.empty()) << type;
      EXPECT_EQ(by_type.begin()->first, 1) << type;
      double prev_on = 0;
      for (auto [workers, rate] : by_type) {
        EXPECT_GT(workers, 0) << type;
        EXPECT_GT(rate, 0) << type << ", " << workers << " workers";
        EXPECT_GE(rate, prev_on) << type << ", " << workers << " workers";
        prev_on = rate;
      }
    }
  }
}

TEST(ModelZooTest, RateUsesTheTable) {
  const core::ThroughputProfile* p = FindModel("resnet50");
  ASSERT_NE(p, nullptr);
  EXPECT_DOUBLE_EQ(p->Rate(0), 0);
  EXPECT_DOUBLE_EQ(p->Rate(1), 4.395);
  EXPECT_DOUBLE_EQ(p->Rate(2), 7.922);
  EXPECT_DOUBLE_EQ(p->Rate(3), (7.922 + 9.452) / 2);
  EXPECT_DOUBLE_EQ(p->Rate(8), 17.30);
  EXPECT_DOUBLE_EQ(p->Rate(16), 17.30);  // flat above the largest point

  // Single-GPU job types: extra workers do not help.
  const core::ThroughputProfile* a3c = FindModel("a3c");
  ASSERT_NE(a3c, nullptr);
  EXPECT_DOUBLE_EQ(a3c->Rate(4), a3c->Rate(1));

  // A GPU type's table on nodes of that type; the base table on any other.
  EXPECT_DOUBLE_EQ(p->RateOn("k80", 1), 0.6190);
  EXPECT_DOUBLE_EQ(p->RateOn("p100", 4), 10.36);
  EXPECT_DOUBLE_EQ(p->RateOn("v100", 8), 17.30);
  EXPECT_DOUBLE_EQ(p->RateOn("", 2), p->Rate(2));
  EXPECT_DOUBLE_EQ(p->RateOn("Tesla-V100-SXM2-16GB", 4), p->Rate(4));
}

// Rounds to 4 significant digits the way the zoo's numbers were written.
std::string Sig4(double x) { return fmt::format("{:.4g}", x); }

TEST(ModelZooTest, MatchesGavelMeasurements) {
  std::ifstream in(kGavelJson);
  ASSERT_TRUE(in) << kGavelJson;
  const nlohmann::json gavel = nlohmann::json::parse(in);

  for (const ModelInfo& m : Models()) {
    SCOPED_TRACE(std::string(m.name));
    const std::string gpu(m.gpu);
    const std::string uncons = gpu + "_unconsolidated";
    ASSERT_TRUE(gavel.contains(gpu));
    ASSERT_TRUE(gavel.contains(uncons));

    std::set<int> measured;
    double sum = 0;
    int pairs = 0;
    for (int scale : {1, 2, 4, 8}) {
      const std::string key = fmt::format("('{}', {})", m.job_type, scale);
      if (!gavel[gpu].contains(key)) continue;
      measured.insert(scale);
      const double rate = gavel[gpu][key]["null"].get<double>();
      auto it = m.profile->steps_per_s.find(scale);
      ASSERT_NE(it, m.profile->steps_per_s.end()) << key << " is in Gavel but not in the zoo";
      EXPECT_EQ(Sig4(it->second), Sig4(rate)) << gpu << ", " << key;
      if (scale > 1 && gavel[uncons].contains(key)) {
        sum += 1 - gavel[uncons][key]["null"].get<double>() / rate;
        ++pairs;
      }
    }
    std::set<int> zoo;
    for (const auto& [workers, rate] : m.profile->steps_per_s) zoo.insert(workers);
    EXPECT_EQ(zoo, measured);

    const double mean = pairs > 0 ? sum / pairs : 0;
    const double expected = std::round(std::clamp(mean, 0.0, 1.0) * 100) / 100;
    EXPECT_NEAR(m.profile->locality_sensitivity, expected, 1e-12) << "pairs: " << pairs;

    // by_gpu_type: a table for every GPU type Gavel has the job type on
    // (consolidated keys only), with every size Gavel has there and its rate.
    const auto& by_gpu_type = m.profile->GpuTypes();
    const std::string prefix = fmt::format("('{}', ", m.job_type);
    std::set<std::string> gavel_types;
    for (std::string type : {"k80", "p100", "v100"}) {
      ASSERT_TRUE(gavel.contains(type));
      const nlohmann::json& on = gavel.at(type);
      std::set<int> measured_on;
      for (auto it = on.begin(); it != on.end(); ++it) {
        const std::string& key = it.key();
        if (!key.starts_with(prefix)) continue;
        const int scale = std::stoi(key.substr(prefix.size()));
        ASSERT_EQ(key, fmt::format("('{}', {})", m.job_type, scale));
        measured_on.insert(scale);
        auto table = by_gpu_type.find(type);
        ASSERT_NE(table, by_gpu_type.end())
            << type << ", " << key << " is in Gavel but not in the zoo";
        auto rate = table->second.find(scale);
        ASSERT_NE(rate, table->second.end())
            << type << ", " << key << " is in Gavel but not in the zoo";
        EXPECT_EQ(Sig4(rate->second), Sig4(it.value().at("null").get<double>()))
            << type << ", " << key;
      }
      if (measured_on.empty()) continue;
      gavel_types.insert(type);
      std::set<int> zoo_on;
      for (const auto& [workers, rate] : by_gpu_type.at(type)) zoo_on.insert(workers);
      EXPECT_EQ(zoo_on, measured_on) << type;
    }
    std::set<std::string> zoo_types;
    for (const auto& [type, table] : by_gpu_type) zoo_types.insert(type);
    EXPECT_EQ(zoo_types, gavel_types);
    // The entry's own GPU type has its own table.
    if (auto own = by_gpu_type.find(m.gpu); own != by_gpu_type.end()) {
      EXPECT_EQ(own->second, m.profile->steps_per_s) << gpu;
    }
  }
}

}  // namespace
}  // namespace dlsched::sim
