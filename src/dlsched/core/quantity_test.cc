#include "dlsched/core/quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dlsched::core {
namespace {

using namespace std::string_literals;

constexpr int64_t kInt64Max = INT64_MAX;
constexpr int64_t kInt64Min = INT64_MIN;

// A string Kubernetes accepts, the exact value we keep (Quantity::ToString,
// i.e. the nano value as a plain decimal), and MilliValue()/Value(); nullopt
// means that accessor must fail with int64 overflow.
struct ValidCase {
  std::string_view in;
  std::string_view exact;
  std::optional<int64_t> milli;
  std::optional<int64_t> value;
};

const ValidCase kValid[] = {
    // Plain numbers in every <number> form.
    {"0", "0", 0, 0},
    {"1", "1", 1000, 1},
    {"007", "7", 7000, 7},
    {"1.5", "1.5", 1500, 2},  // Value() rounds 1.5 up to 2
    {"1.", "1", 1000, 1},
    {".5", "0.5", 500, 1},
    {"+1", "1", 1000, 1},
    {"-0", "0", 0, 0},  // zero, and not negative

    // Decimal SI suffixes, including n and u, which Kubernetes accepts too.
    {"100m", "0.1", 100, 1},  // Value(): ceil(0.1) = 1
    {"500m", "0.5", 500, 1},
    {"1000m", "1", 1000, 1},
    {"0.1m", "0.0001", 1, 1},  // 0.1 millicore: MilliValue rounds up to 1
    {"1u", "0.000001", 1, 1},  // 1e-6 * 1000 = 0.001 -> 1
    {"1n", "0.000000001", 1, 1},
    {"5k", "5000", 5'000'000, 5000},
    {"2M", "2000000", 2'000'000'000, 2'000'000},
    {"3G", "3000000000", 3'000'000'000'000, 3'000'000'000},
    {"4T", "4000000000000", 4'000'000'000'000'000, 4'000'000'000'000},
    {"5P", "5000000000000000", 5'000'000'000'000'000'000, 5'000'000'000'000'000},  // 5e18 fits
    // "E" alone is exa. 1e18 * 1000 = 1e21 > 2^63-1, so only MilliValue overflows.
    {"1E", "1000000000000000000", std::nullopt, 1'000'000'000'000'000'000},
    {"12E", "12000000000000000000", std::nullopt, std::nullopt},  // 1.2e19 > 2^63-1
    {"1.G", "1000000000", 1'000'000'000'000, 1'000'000'000},      // "1." with a suffix

    // Binary SI suffixes.
    {"1Ki", "1024", 1'024'000, 1024},
    {"2Gi", "2147483648", 2'147'483'648'000, 2'147'483'648},
    {"1.5Gi", "1610612736", 1'610'612'736'000, 1'610'612'736},  // 15 * 2^30 / 10
    {"0.5Mi", "524288", 524'288'000, 524'288},
    {"100.035Ki", "102435.84", 102'435'840, 102'436},                        // 100035 * 1024 / 1000
    {"0.5Ei", "576460752303423488", std::nullopt, 576'460'752'303'423'488},  // 2^59
    {"7Ei", "8070450532247928832", std::nullopt, 8'070'450'532'247'928'832},  // 7 * 2^60
    // 8 * 2^60 = 2^63, one past int64. Kubernetes would silently cap it at
    // 2^63-1; we keep it exact and Value() reports the overflow.
    {"8Ei", "9223372036854775808", std::nullopt, std::nullopt},

    // Decimal exponents.
    {"1e3", "1000", 1'000'000, 1000},
    {"1E3", "1000", 1'000'000, 1000},
    {"5e+2", "500", 500'000, 500},
    {"1E-3", "0.001", 1, 1},
    {"1.5e3", "1500", 1'500'000, 1500},
    {"1.3E+6", "1300000", 1'300'000'000, 1'300'000},
    {"0.5e-1", "0.05", 50, 1},
    {"1e03", "1000", 1'000'000, 1000},  // strconv.ParseInt accepts leading zeros
    {"0e1000", "0", 0, 0},              // zero stays zero at any exponent

    // Anything finer than 1n rounds up to the next nano (away from zero).
    {"1e-9", "0.000000001", 1, 1},
    {"1e-10", "0.000000001", 1, 1},
    {"0.9n", "0.000000001", 1, 1},
    {"3.001n", "0.000000004", 1, 1},
    {"0.00000012345", "0.000000124", 1, 1},
    {"0.000000000001Ki", "0.000000002", 1, 1},  // 1.024e-9 rounds up to 2n
    {"1e-1000", "0.000000001", 1, 1},
    {"1e-9223372036854775808", "0.000000001", 1, 1},  // the smallest int64 exponent

    // Negative values: rounding is away from zero everywhere, as in
    // Kubernetes, so negative values round down.
    {"-1", "-1", -1000, -1},
    {"-1.5", "-1.5", -1500, -2},
    {"-100m", "-0.1", -100, -1},
    {"-0.9n", "-0.000000001", -1, -1},
    {"-1.5m", "-0.0015", -2, -1},

    // int64 boundaries of the accessors.
    {"9223372036854775807", "9223372036854775807", std::nullopt, kInt64Max},
    {"-9223372036854775808", "-9223372036854775808", std::nullopt, kInt64Min},
    {"9223372036854775.807", "9223372036854775.807", kInt64Max, 9'223'372'036'854'776},
    {"9223372036854775.8071", "9223372036854775.8071", std::nullopt, 9'223'372'036'854'776},

    // Digits far beyond 128 bits are fine when the exponent brings the value
    // back: 123456789.012345678|901... -> rounded up at the nano.
    {"123456789012345678901234567890123456789012345e-36", "123456789.012345679", 123'456'789'013,
     123'456'790},
    // 1e29 is 1e38 nano, just under 2^127-1 (1.7e38).
    {"1e29", "100000000000000000000000000000", std::nullopt, std::nullopt},
    // Exactly 2^127-1 nano, the largest value we can hold.
    {"170141183460469231731687303715.884105727", "170141183460469231731687303715.884105727",
     std::nullopt, std::nullopt},
};

TEST(QuantityTest, ParsesKubernetesQuantities) {
  for (const auto& c : kValid) {
    SCOPED_TRACE(std::string(c.in));
    auto q = Quantity::Parse(c.in);
    ASSERT_TRUE(q.has_value()) << q.error().message;
    EXPECT_EQ(q->ToString(), c.exact);
    EXPECT_EQ(q->IsNegative(), c.exact.starts_with('-'));
    EXPECT_EQ(q->IsZero(), c.exact == "0");

    auto milli = q->MilliValue();
    if (c.milli) {
      ASSERT_TRUE(milli.has_value()) << milli.error().message;
      EXPECT_EQ(*milli, *c.milli);
    } else {
      ASSERT_FALSE(milli.has_value()) << "MilliValue " << *milli;
      EXPECT_NE(milli.error().message.find("is too large"), std::string::npos)
          << milli.error().message;
    }
    auto value = q->Value();
    if (c.value) {
      ASSERT_TRUE(value.has_value()) << value.error().message;
      EXPECT_EQ(*value, *c.value);
    } else {
      ASSERT_FALSE(value.has_value()) << "Value " << *value;
      EXPECT_NE(value.error().message.find("is too large"), std::string::npos)
          << value.error().message;
    }
  }
}

// Strings Kubernetes rejects too (unless noted), each with why.
const std::string_view kInvalid[] = {
    "",                       // empty
    " 1",                     // leading space: not trimmed
    "1 ",                     // trailing space
    "1 Gi",                   // space before the suffix
    "1.2.3",                  // two decimal points
    "1.1.M",                  // two decimal points before a suffix
    "1+1.0M",                 // sign in the middle
    "--1",                    // two signs
    "+-1",                    // two signs
    "10Xi",                   // unknown suffix
    "1K",                     // kilo is lower-case k
    "1KI",                    // binary suffixes are Ki, Mi, ...
    "1i",                     // "i" alone is no suffix
    ".5i",                    // "i" alone, after a fraction
    "0.1mi",                  // milli has no binary form
    "1m3",                    // digits after a non-exponent suffix
    "1Ki5",                   // digits after a binary suffix
    "1e",                     // exponent without digits ("1E" alone is exa)
    "1e+",                    // signed exponent without digits
    "-3.01e-",                // signed exponent without digits
    "1e1.5",                  // fractional exponent
    "1ee3",                   // doubled exponent marker
    "1Ee3",                   // exa followed by an exponent
    "1e3e",                   // trailing exponent marker
    "0x10",                   // no hex
    "1_000",                  // no digit separators
    "1,5",                    // no decimal comma
    "aoeu",                   // no number at all
    "\xef\xbc\x91",           // a full-width digit one
    "1e9223372036854775808",  // the exponent must fit in int64 (strconv.ParseInt)
    // Kubernetes' scanner takes these as 0, but they are not in its grammar
    // and a silent zero request would hide a typo.
    "Mi",
    ".",
    "-.",
    "+",
    "-",
    "-Ki",
};

TEST(QuantityTest, RejectsMalformedQuantities) {
  for (std::string_view in : kInvalid) {
    SCOPED_TRACE("'" + std::string(in) + "'");
    auto q = Quantity::Parse(in);
    ASSERT_FALSE(q.has_value()) << "parsed as " << q->ToString();
    EXPECT_NE(q.error().message.find("is not a valid quantity"), std::string::npos)
        << q.error().message;
  }
}

TEST(QuantityTest, InvalidMessageIsTheReasonOnly) {
  auto q = Quantity::Parse("1.2.3");
  ASSERT_FALSE(q.has_value());
  EXPECT_EQ(q.error().message,
            "'1.2.3' is not a valid quantity (expected a number with an optional suffix such as "
            "500m, 2Gi, 1.5, 1e3)");
}

TEST(QuantityTest, InvalidMessageStaysOnOneLine) {
  // A YAML block scalar can carry a newline or NUL; the message must not.
  auto q = Quantity::Parse("1k\n"s + '\0');
  ASSERT_FALSE(q.has_value());
  EXPECT_EQ(q.error().message.substr(0, q.error().message.find(" is")), "'1k\\x0a\\x00'");

  auto long_input = Quantity::Parse(std::string(100, '1') + "x");
  ASSERT_FALSE(long_input.has_value());
  EXPECT_EQ(long_input.error().message.substr(0, 69), "'" + std::string(64, '1') + "...'");
}

TEST(QuantityTest, RejectsValuesBeyond128BitNanos) {
  // 1e30 is 1e39 nano, more than 2^127-1 (about 1.7e38).
  auto q = Quantity::Parse("1e30");
  ASSERT_FALSE(q.has_value());
  EXPECT_EQ(q.error().message, "'1e30' is too large");

  q = Quantity::Parse("-1e30");
  ASSERT_FALSE(q.has_value());
  EXPECT_EQ(q.error().message, "'-1e30' is too large in magnitude");

  // One nano past 2^127-1, written out and reached by rounding up.
  for (const char* in :
       {"170141183460469231731687303715.884105728", "170141183460469231731687303715.8841057271",
        "1000000000000000000000000000000000000000000000000000",  // 52 digits
        "1e9223372036854775807",
        // Kubernetes truncates this exponent to 32 bits and reads 1; we do not.
        "1e4294967296"}) {
    SCOPED_TRACE(in);
    q = Quantity::Parse(in);
    ASSERT_FALSE(q.has_value()) << q->ToString();
    EXPECT_NE(q.error().message.find("is too large"), std::string::npos) << q.error().message;
  }
}

TEST(QuantityTest, EqualityIsByValue) {
  // Different spellings of the same amount compare equal.
  EXPECT_EQ(*Quantity::Parse("1Gi"), *Quantity::Parse("1024Mi"));
  EXPECT_EQ(*Quantity::Parse("1.5"), *Quantity::Parse("1500m"));
  EXPECT_EQ(*Quantity::Parse("1e3"), *Quantity::Parse("1k"));
  EXPECT_EQ(*Quantity::Parse("0"), Quantity());
  EXPECT_NE(*Quantity::Parse("1k"), *Quantity::Parse("1Ki"));
  // gtest cannot print __int128, hence EXPECT_TRUE.
  EXPECT_TRUE(Quantity::Parse("1Gi")->Nano() ==
              static_cast<__int128>(1'073'741'824) * 1'000'000'000);
  EXPECT_TRUE(Quantity::Parse("-1n")->Nano() == -1);
}

TEST(QuantityTest, AccessorErrorsNameTheValue) {
  auto milli = Quantity::Parse("1E")->MilliValue();
  ASSERT_FALSE(milli.has_value());
  EXPECT_EQ(milli.error().message,
            "'1000000000000000000' is too large for a 64-bit count of milli-units");
  auto value = Quantity::Parse("-12E")->Value();
  ASSERT_FALSE(value.has_value());
  EXPECT_EQ(value.error().message,
            "'-12000000000000000000' is too large in magnitude for a 64-bit integer");
}

}  // namespace
}  // namespace dlsched::core
