// Unit tests for the exact microsecond text <-> nanoseconds conversions
// (tools/common/time_text.h).
#include "common/time_text.h"

#include <gtest/gtest.h>

namespace chakrashim::tools {
namespace {

TEST(MicrosTextToNs, KeepsEveryNanosecondOfALargeKinetoTimestamp) {
  // As a double this is 4458676416788066.5 or so; the text is exact.
  EXPECT_EQ(micros_text_to_ns("4458676416788.066"), 4458676416788066);
  EXPECT_EQ(micros_text_to_ns("4458676416788.067"), 4458676416788067);
}

TEST(MicrosTextToNs, ReadsIntegersShortFractionsAndSigns) {
  EXPECT_EQ(micros_text_to_ns("12"), 12000);
  EXPECT_EQ(micros_text_to_ns("1.5"), 1500);
  EXPECT_EQ(micros_text_to_ns("-0.5"), -500);
  EXPECT_EQ(micros_text_to_ns("0.0004"), 0);
  EXPECT_EQ(micros_text_to_ns("0.0005"), 1);
}

TEST(MicrosTextToNs, FallsBackToADoubleForExponents) {
  EXPECT_EQ(micros_text_to_ns("1.5e3"), 1500000);
  EXPECT_EQ(micros_text_to_ns("2E-3"), 2);
}

TEST(MicrosTextToNs, RefusesWhatIsNotANumber) {
  EXPECT_EQ(micros_text_to_ns(""), std::nullopt);
  EXPECT_EQ(micros_text_to_ns("abc"), std::nullopt);
  EXPECT_EQ(micros_text_to_ns("1.2.3"), std::nullopt);
  EXPECT_EQ(micros_text_to_ns("."), std::nullopt);
  EXPECT_EQ(micros_text_to_ns("99999999999999999999"), std::nullopt);
}

TEST(UsText, WritesThreeDecimals) {
  EXPECT_EQ(us_text(4458676416788066), "4458676416788.066");
  EXPECT_EQ(us_text(-500), "-0.500");
  EXPECT_EQ(us_text(0), "0.000");
}

}  // namespace
}  // namespace chakrashim::tools
