// Unit tests for the strict value grammars (config/value_grammar.h).
#include "config/value_grammar.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace chakrashim::config {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// ---- parse_decimal ---------------------------------------------------------

TEST(ParseDecimal, AcceptsPlainDigits) {
  EXPECT_EQ(parse_decimal("0"), std::optional<std::uint64_t>(0));
  EXPECT_EQ(parse_decimal("42"), std::optional<std::uint64_t>(42));
  EXPECT_EQ(parse_decimal("1000000"), std::optional<std::uint64_t>(1000000));
}

TEST(ParseDecimal, AcceptsLeadingZeros) {
  EXPECT_EQ(parse_decimal("007"), std::optional<std::uint64_t>(7));
  EXPECT_EQ(parse_decimal("000"), std::optional<std::uint64_t>(0));
  EXPECT_EQ(parse_decimal("00000000000000000001"), std::optional<std::uint64_t>(1));
}

TEST(ParseDecimal, AcceptsTheLargestUint64) {
  EXPECT_EQ(parse_decimal("18446744073709551615"), std::optional<std::uint64_t>(kMax));
  EXPECT_EQ(parse_decimal("18446744073709551614"), std::optional<std::uint64_t>(kMax - 1));
}

TEST(ParseDecimal, RejectsTwoToTheSixtyFourAndBeyond) {
  EXPECT_EQ(parse_decimal("18446744073709551616"), std::nullopt);
  EXPECT_EQ(parse_decimal("18446744073709551620"), std::nullopt);
  EXPECT_EQ(parse_decimal("99999999999999999999"), std::nullopt);
  EXPECT_EQ(parse_decimal("100000000000000000000"), std::nullopt);
}

TEST(ParseDecimal, RejectsTheEmptyString) { EXPECT_EQ(parse_decimal(""), std::nullopt); }

TEST(ParseDecimal, RejectsASignOrSpaces) {
  for (const char* bad : {"+1", "-1", "-0", " 1", "1 ", "1 2", "\t1", "1\n"})
    EXPECT_EQ(parse_decimal(bad), std::nullopt) << "'" << bad << "'";
}

TEST(ParseDecimal, RejectsExponentsFractionsAndOtherBases) {
  for (const char* bad : {"1e3", "1.0", "0x10", "1_000", "1,000", "a", "12a"})
    EXPECT_EQ(parse_decimal(bad), std::nullopt) << "'" << bad << "'";
}

// ---- parse_bool ------------------------------------------------------------

TEST(ParseBool, AcceptsEveryTrueWord) {
  for (const char* word : {"1", "true", "on", "yes"})
    EXPECT_EQ(parse_bool(word), std::optional<bool>(true)) << word;
}

TEST(ParseBool, AcceptsEveryFalseWord) {
  for (const char* word : {"0", "false", "off", "no"})
    EXPECT_EQ(parse_bool(word), std::optional<bool>(false)) << word;
}

TEST(ParseBool, IgnoresCase) {
  for (const char* word : {"TRUE", "True", "ON", "On", "YES", "yEs"})
    EXPECT_EQ(parse_bool(word), std::optional<bool>(true)) << word;
  for (const char* word : {"FALSE", "False", "OFF", "oFf", "NO", "No"})
    EXPECT_EQ(parse_bool(word), std::optional<bool>(false)) << word;
}

TEST(ParseBool, RejectsAnyOtherWord) {
  for (const char* bad :
       {"", "2", "y", "n", "t", "f", " on", "on ", "enable", "disabled", "01", "truee", "nope"})
    EXPECT_EQ(parse_bool(bad), std::nullopt) << "'" << bad << "'";
}

// ---- parse_byte_size -------------------------------------------------------

TEST(ParseByteSize, AcceptsPlainBytes) {
  EXPECT_EQ(parse_byte_size("0"), std::optional<std::uint64_t>(0));
  EXPECT_EQ(parse_byte_size("512"), std::optional<std::uint64_t>(512));
}

TEST(ParseByteSize, AcceptsKMAndGInEitherCase) {
  EXPECT_EQ(parse_byte_size("64K"), std::optional<std::uint64_t>(64ULL << 10));
  EXPECT_EQ(parse_byte_size("64k"), std::optional<std::uint64_t>(64ULL << 10));
  EXPECT_EQ(parse_byte_size("3M"), std::optional<std::uint64_t>(3ULL << 20));
  EXPECT_EQ(parse_byte_size("3m"), std::optional<std::uint64_t>(3ULL << 20));
  EXPECT_EQ(parse_byte_size("1G"), std::optional<std::uint64_t>(1073741824ULL));
  EXPECT_EQ(parse_byte_size("2g"), std::optional<std::uint64_t>(2147483648ULL));
}

TEST(ParseByteSize, RejectsOverflowAfterTheMultiplier) {
  // kMax / 2^30 = 17179869183 fits; one more overflows.
  EXPECT_EQ(parse_byte_size("17179869183G"),
            std::optional<std::uint64_t>(17179869183ULL << 30));
  EXPECT_EQ(parse_byte_size("17179869184G"), std::nullopt);
  EXPECT_EQ(parse_byte_size("18014398509481984K"), std::nullopt);  // 2^54 K = 2^64
  EXPECT_EQ(parse_byte_size("18446744073709551615"), std::optional<std::uint64_t>(kMax));
  EXPECT_EQ(parse_byte_size("18446744073709551616"), std::nullopt);
}

TEST(ParseByteSize, RejectsUnitsItDoesNotKnow) {
  for (const char* bad : {"1GB", "1KiB", "1T", "1b", "1 G", "G", "K", "", "1.5G", "-1", "+1G",
                          "1GG", "G1"})
    EXPECT_EQ(parse_byte_size(bad), std::nullopt) << "'" << bad << "'";
}

// ---- parse_rank_list and RankSet::contains ----------------------------------

using Ranks = std::vector<std::uint64_t>;

Ranks members(const RankSet& set, std::uint64_t up_to) {
  Ranks out;
  for (std::uint64_t r = 0; r <= up_to; ++r)
    if (set.contains(r)) out.push_back(r);
  return out;
}

// The ranks 0..20 that the list `text` holds; nullopt when it does not parse.
std::optional<Ranks> members_of(const char* text) {
  const auto set = parse_rank_list(text);
  if (!set) return std::nullopt;
  return members(*set, 20);
}

TEST(ParseRankList, AcceptsOneRank) {
  EXPECT_EQ(members_of("0"), (Ranks{0}));
}

TEST(ParseRankList, AcceptsACommaSeparatedList) {
  EXPECT_EQ(members_of("0,3"), (Ranks{0, 3}));
}

TEST(ParseRankList, AcceptsAnInclusiveRange) {
  EXPECT_EQ(members_of("4-7"), (Ranks{4, 5, 6, 7}));
  const auto set = parse_rank_list("4-7");
  ASSERT_TRUE(set);
  ASSERT_EQ(set->ranges().size(), 1u);
  EXPECT_EQ(set->ranges()[0], (RankSet::Range{4, 7}));
}

TEST(ParseRankList, AcceptsRanksAndRangesMixed) {
  EXPECT_EQ(members_of("0,4-7"), (Ranks{0, 4, 5, 6, 7}));
}

TEST(ParseRankList, AcceptsASingleRankRange) {
  EXPECT_EQ(members_of("5-5"), (Ranks{5}));
}

TEST(ParseRankList, AcceptsHugeRanksWithoutOverflow) {
  const auto set = parse_rank_list("18446744073709551614-18446744073709551615");
  ASSERT_TRUE(set);
  EXPECT_TRUE(set->contains(kMax));
  EXPECT_TRUE(set->contains(kMax - 1));
  EXPECT_FALSE(set->contains(kMax - 2));
  EXPECT_FALSE(set->contains(0));
}

TEST(ParseRankList, RejectsMalformedLists) {
  for (const char* bad : {"", "1,", ",1", "1,,2", "7-4", "1 ,2", "1, 2", " 1", "a", "1-", "-1",
                          "1-2-3", "--1", "1-a", "0x1", "+1", "18446744073709551616"})
    EXPECT_FALSE(parse_rank_list(bad).has_value()) << "'" << bad << "'";
}

TEST(RankSetContains, IsFalseForAnEmptySet) {
  const RankSet empty({});
  EXPECT_FALSE(empty.contains(0));
  EXPECT_FALSE(empty.contains(kMax));
}

TEST(RankSetContains, ChecksEveryRangeInclusively) {
  const RankSet set({{2, 3}, {10, 12}});
  EXPECT_EQ(members(set, 20), (Ranks{2, 3, 10, 11, 12}));
}

// ---- parse_job_id ----------------------------------------------------------

TEST(ParseJobId, AcceptsFolderSafeNames) {
  for (const char* good : {"123456", "run_7.b", "a+b-c", "A", ".hidden", "...", "0"})
    EXPECT_EQ(parse_job_id(good), std::optional<std::string>(good)) << good;
}

TEST(ParseJobId, AcceptsUpTo128Characters) {
  const std::string max(128, 'x');
  EXPECT_EQ(parse_job_id(max), std::optional<std::string>(max));
  EXPECT_EQ(parse_job_id(std::string(129, 'x')), std::nullopt);
}

TEST(ParseJobId, RejectsEmptyDotsAndUnsafeCharacters) {
  for (const char* bad : {"", ".", "..", "a/b", "/", "a b", "a\nb", "a\\b", "a:b", "a*b", "$x",
                          "~", "é"})
    EXPECT_EQ(parse_job_id(bad), std::nullopt) << "'" << bad << "'";
}

// ---- parse_run_id ----------------------------------------------------------

TEST(ParseRunId, AcceptsLaunchersIdsUpTo256Characters) {
  for (const char* good : {"slurm:88.0", "slurm:88,torchrun:3f2a-9", "pid:41@node-3", "prterun-h-1@1"})
    EXPECT_EQ(parse_run_id(good), std::optional<std::string>(good)) << good;
  EXPECT_EQ(parse_run_id(std::string(256, 'x')), std::optional<std::string>(std::string(256, 'x')));
  EXPECT_EQ(parse_run_id(std::string(257, 'x')), std::nullopt);
}

TEST(ParseRunId, RejectsEmptyAndWhatALogLineOrAFileCouldNotCarry) {
  for (const char* bad : {"", "a b", "a\nb", "a/b", "a\"b", "é", "a;b"})
    EXPECT_EQ(parse_run_id(bad), std::nullopt) << "'" << bad << "'";
}

// ---- ascii_lower -----------------------------------------------------------

TEST(AsciiLower, LowersOnlyAsciiLetters) {
  EXPECT_EQ(ascii_lower("ON"), "on");
  EXPECT_EQ(ascii_lower("MiXeD_09-Z@["), "mixed_09-z@[");
  EXPECT_EQ(ascii_lower(""), "");
}

}  // namespace
}  // namespace chakrashim::config
