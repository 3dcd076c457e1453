#include "dlsched/report/provenance.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dlsched/report/html.h"
#include "dlsched/report/run_data.h"
#include "dlsched/report/test_util.h"

namespace dlsched::report {
namespace {

namespace fs = std::filesystem;

using testing::TempDir;
using testing::WriteFile;

Provenance Sample() {
  Provenance p;
  p.version = "0.1.0";
  p.command = {"compare", "-c", "c.yaml", "-p", "fifo,<b>.yaml"};
  p.inputs = {{"cluster", "", "c.yaml", std::string(64, 'a')},
              {"profile", "", "<b>.yaml", std::string(64, 'b')}};
  p.profiles = {{"fifo", "fifo", "", {}, "name: fifo\norder: FIFO\n"},
                {"x<script>", "", "<b>.yaml", {"order.args.kappa=2"}, "name: 'x<script>'\n"}};
  p.seeds = std::vector<uint64_t>{1, 18446744073709551615u};
  return p;
}

TEST(ProvenanceTest, WrittenAndReadBack) {
  const Provenance p = Sample();
  const std::string text = ProvenanceFileText(p);
  const auto root = nlohmann::json::parse(text);
  // The keys in their documented order; null for what is absent.
  const auto ordered = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys;
  for (const auto& [k, v] : ordered["provenance"].items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"dlsched_version", "command", "inputs", "profiles",
                                            "seeds", "window"}));
  EXPECT_TRUE(root["provenance"]["window"].is_null());
  EXPECT_TRUE(root["provenance"]["inputs"][0]["format"].is_null());
  EXPECT_TRUE(root["provenance"]["profiles"][1]["builtin"].is_null());
  // The text is nlohmann's dump(2), as every file dlsched writes.
  EXPECT_EQ(text, ordered.dump(2) + "\n");
  auto back = ParseProvenance(root["provenance"]);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(ProvenanceFileText(*back), text);
  EXPECT_EQ(back->seeds->back(), 18446744073709551615u);
}

TEST(ProvenanceTest, BadValuesNameTheirKey) {
  auto v = nlohmann::json::parse(ProvenanceFileText(Sample()))["provenance"];
  v["inputs"][1]["sha256"] = 5;
  EXPECT_EQ(ParseProvenance(v).error().message, "provenance.inputs[1].sha256: expected a string");
  v = nlohmann::json::parse(ProvenanceFileText(Sample()))["provenance"];
  v["command"] = nlohmann::json::array();
  EXPECT_EQ(ParseProvenance(v).error().message,
            "provenance.command: expected a non-empty list of strings");
  v["command"] = {"simulate"};
  v["seeds"] = {-1};
  EXPECT_EQ(ParseProvenance(v).error().message,
            "provenance.seeds: expected a list of seeds or null");
}

TEST(ProvenanceTest, ReadFromTheDirectorysTopFile) {
  const TempDir tmp;
  const fs::path& dir = tmp.path();
  fs::create_directories(dir);
  EXPECT_EQ(ReadProvenance(dir.string()).value(), std::nullopt);
  WriteFile(dir / "compare.json", "{\"profiles\": []}\n");
  EXPECT_EQ(ReadProvenance(dir.string()).value(), std::nullopt);
  WriteFile(dir / "provenance.json", ProvenanceFileText(Sample()));
  auto found = ReadProvenance(dir.string());
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->file, (dir / "provenance.json").string());
  EXPECT_EQ((*found)->provenance.command[0], "compare");
  WriteFile(dir / "provenance.json", "{\"provenance\": {\"dlsched_version\": 1}}\n");
  EXPECT_EQ(ReadProvenance(dir.string()).error().message,
            (dir / "provenance.json").string() + ": provenance.dlsched_version: expected a string");
  // Malformed JSON says where and why, as the report's reader does.
  WriteFile(dir / "provenance.json", "{\"provenance\":\n  {\"seeds\": [1e400]}}\n");
  EXPECT_EQ(
      ReadProvenance(dir.string()).error().message,
      (dir / "provenance.json").string() + ":2: invalid JSON: number overflow parsing '1e400'");
  WriteFile(dir / "provenance.json", "{\"provenance\": \n\n tru}\n");
  EXPECT_TRUE(ReadProvenance(dir.string())
                  .error()
                  .message.starts_with((dir / "provenance.json").string() +
                                       ":3: invalid JSON: syntax error while parsing value"))
      << ReadProvenance(dir.string()).error().message;
}

TEST(ProvenanceTest, ShellCommandQuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(ShellCommand(std::vector<std::string>{"simulate", "-c", "a b.yaml", "--set",
                                                  "name=it's", "-p", "kod2:order.args.kappa=2"}),
            "dlsched simulate -c 'a b.yaml' --set 'name=it'\\''s' -p kod2:order.args.kappa=2");
}

// The report shows it, every name escaped.
TEST(ProvenanceTest, ReportShowsItEscaped) {
  const TempDir tmp;
  const fs::path& dir = tmp.path();
  testing::WriteFixtureRun(dir / "fifo", "fifo");
  WriteFile(dir / "compare.csv", "profile,status\nfifo,all done\n");
  std::string compare;
  JsonWriter w(&compare);
  w.BeginObject();
  w.Key("profiles");
  w.BeginArray();
  w.EndArray();
  w.Key("provenance");
  WriteProvenance(w, Sample());
  w.EndObject();
  WriteFile(dir / "compare.json", compare + "\n");
  const std::vector<std::string> dirs = {dir.string()};
  auto loaded = LoadReportDirs(dirs);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_TRUE((*loaded)[0].provenance);
  const std::string html = RenderHtml(*loaded);
  EXPECT_NE(html.find("<details class=\"provenance\" data-provenance>"), std::string::npos);
  EXPECT_NE(html.find("<code>dlsched compare -c c.yaml -p &#39;fifo,&lt;b&gt;.yaml&#39;</code>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find(std::string(64, 'b')), std::string::npos);
  EXPECT_NE(html.find("<pre>name: fifo\norder: FIFO\n</pre>"), std::string::npos);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("seeds: 1, 18446744073709551615; window: none (the whole run)"),
            std::string::npos);
}

}  // namespace
}  // namespace dlsched::report
