#include "dlsched/core/text.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "dlsched/core/limits.h"

namespace dlsched::core {
namespace {

TEST(EscapeTextTest, KeepsPrintableAndValidUtf8) {
  EXPECT_EQ(EscapeText("job-1 on gpu-0"), "job-1 on gpu-0");
  EXPECT_EQ(EscapeText("zürich \u65e5\u672c \U0001F600"), "zürich \u65e5\u672c \U0001F600");
  // A backslash is printable: already-escaped text is not escaped twice.
  EXPECT_EQ(EscapeText("a\\x0ab"), "a\\x0ab");
}

TEST(EscapeTextTest, EscapesLineBreaksAndTerminalControls) {
  EXPECT_EQ(EscapeText("a\nb\r\tc"), "a\\x0ab\\x0d\\x09c");
  EXPECT_EQ(EscapeText("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(EscapeText(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(EscapeText("del\x7f"), "del\\x7f");
  // C1 controls encoded in UTF-8: U+009B is CSI to some terminals.
  EXPECT_EQ(EscapeText("a\xc2\x9b"
                       "b"),
            "a\\xc2\\x9bb");
  // U+2028 LINE SEPARATOR breaks lines in some viewers.
  EXPECT_EQ(EscapeText("a\u2028b"), "a\\xe2\\x80\\xa8b");
}

TEST(EscapeTextTest, EscapesInvalidUtf8ByteByByte) {
  EXPECT_EQ(EscapeText("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(EscapeText("\xc3\x28"), "\\xc3(");                        // truncated sequence
  EXPECT_EQ(EscapeText("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(EscapeText("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(EscapeText("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
}

// A long message keeps its start and its end (the reason), escaped.
TEST(EscapeMessageTest, ShortensTheMiddleKeepingTheReason) {
  EXPECT_EQ(EscapeMessage("f.yaml: x: bad\n"), "f.yaml: x: bad\\x0a");
  const std::string message =
      "--set: '" + std::string(10000, 'a') + "=1': 'order' is not a map (it is FIFO)";
  const std::string shown = EscapeMessage(message, 200);
  EXPECT_EQ(shown.size(), 200u);
  EXPECT_TRUE(shown.starts_with("--set: 'aaa")) << shown;
  EXPECT_TRUE(shown.ends_with("=1': 'order' is not a map (it is FIFO)")) << shown;
  EXPECT_NE(shown.find("aaa ... aaa"), std::string::npos) << shown;
  // Never a character cut in half, on either side of the gap.
  std::string accents;
  for (int i = 0; i < 200; ++i) accents += "\u00e9";
  const std::string cut = EscapeMessage(accents, 102);
  EXPECT_TRUE(IsValidUtf8(cut)) << cut;
  EXPECT_EQ(cut.size(), 101u);
  EXPECT_EQ(EscapeMessage(std::string(4096, 'z')), std::string(4096, 'z'));
  EXPECT_EQ(EscapeMessage(std::string(4097, 'z')).size(), 4096u);
}

TEST(EscapeTextTest, CutsAtACharacterBoundary) {
  EXPECT_EQ(EscapeText("abcdef", 4), "abcd...");
  // "é" is two bytes: never cut in half.
  EXPECT_EQ(EscapeText("abcé", 4), "abc...");
  // An escape counts as the four characters it prints.
  EXPECT_EQ(EscapeText("ab\ncd", 4), "ab...");
  EXPECT_EQ(EscapeText("abcd", 4), "abcd");
}

TEST(IsValidUtf8Test, AcceptsAndRejects) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain \u00e9\u4e2d\U0010FFFF"));
  EXPECT_FALSE(IsValidUtf8("\x80"));
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));
  EXPECT_FALSE(IsValidUtf8("\xf5\x80\x80\x80"));
}

TEST(NameProblemTest, NamesAreBoundedPrintableUtf8) {
  EXPECT_EQ(NameProblem("job-1"), std::nullopt);
  EXPECT_EQ(NameProblem("équipe/ñ"), std::nullopt);
  EXPECT_EQ(NameProblem(std::string(kMaxNameBytes, 'x')), std::nullopt);
  EXPECT_EQ(NameProblem(""), "a name must not be empty");
  auto long_name = NameProblem(std::string(kMaxNameBytes + 1, 'x'));
  ASSERT_TRUE(long_name.has_value());
  EXPECT_NE(long_name->find("254 bytes long; names have at most 253"), std::string::npos)
      << *long_name;
  EXPECT_EQ(NameProblem("a\nb"), "'a\\x0ab' contains a control character");
  EXPECT_EQ(NameProblem("a\xff"), "'a\\xff' is not valid UTF-8");
}

TEST(ClosestNameTest, SuggestsOnlyCloseCandidates) {
  const std::vector<std::string_view> keys = {"name", "count", "resources", "labels", "taints"};
  // A swap of two neighbours is one edit.
  EXPECT_EQ(ClosestName("lables", keys), "labels");
  EXPECT_EQ(ClosestName("resource", keys), "resources");
  EXPECT_EQ(ClosestName("Count", keys), "count");  // case does not count
  EXPECT_EQ(ClosestName("gpus", keys), std::nullopt);
  EXPECT_EQ(ClosestName("", keys), std::nullopt);
  // Short words allow one edit, longer ones two, then three.
  const std::vector<std::string_view> profiles = {"fifo", "kod2", "gang-binpack", "k8s-default"};
  EXPECT_EQ(ClosestName("kod", profiles), "kod2");
  EXPECT_EQ(ClosestName("ko", profiles), std::nullopt);
  EXPECT_EQ(ClosestName("gang-bnpak", profiles), "gang-binpack");
  EXPECT_EQ(ClosestName("gangbin", profiles), std::nullopt);
  EXPECT_EQ(ClosestName("k8s-defualt", profiles), "k8s-default");
  // A one-letter name is never "one edit" from another one-letter name.
  const std::vector<std::string_view> one = {"a"};
  EXPECT_EQ(ClosestName("b", one), std::nullopt);
  // Ties go to the earlier candidate.
  const std::vector<std::string_view> tie = {"cat", "car"};
  EXPECT_EQ(ClosestName("caz", tie), "cat");
  // A megabyte of key is compared at no cost.
  EXPECT_EQ(ClosestName(std::string(1 << 20, 'x'), keys), std::nullopt);
}

TEST(ClosestNameTest, DidYouMeanEndsAMessage) {
  const std::vector<std::string_view> formats = {"tiresias", "philly", "pollux", "native"};
  EXPECT_EQ(DidYouMean("tiresais", formats), "; did you mean 'tiresias'?");
  EXPECT_EQ(DidYouMean("alibaba", formats), "");
}

}  // namespace
}  // namespace dlsched::core
