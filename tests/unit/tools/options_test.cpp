// Unit tests for tools/common/options.h: the command-line table every
// subcommand reads its arguments with.
#include "common/options.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace chakrashim::tools {
namespace {

// The arguments after the command's name: {"--json", "DIR"} reads as
// `chakrashim check --json DIR`.
ParsedLine parse_args(const CommandLine& line, std::initializer_list<const char*> args) {
  std::vector<const char*> argv = {"check"};
  argv.insert(argv.end(), args.begin(), args.end());
  return line.parse(static_cast<int>(argv.size()), argv.data());
}

std::optional<int> read_args(const CommandLine& line, std::initializer_list<const char*> args) {
  std::vector<const char*> argv = {"check"};
  argv.insert(argv.end(), args.begin(), args.end());
  return line.read(static_cast<int>(argv.size()), argv.data());
}

// A command line like check's, its results in plain members.
struct CheckLike {
  bool json = false, quiet = false;
  std::string marker = "Optimizer.step#";
  std::vector<std::string> tags;
  std::size_t jobs = 4;
  std::optional<std::uint64_t> rank;
  std::vector<std::string> paths;
  CommandLine line{"check", "usage: chakrashim check [options] DIR\n"};

  CheckLike() {
    line.flag({"--json"}, json)
        .flag({"--quiet", "-q"}, quiet)
        .value({"--step-marker"}, marker)
        .repeated({"--tag"}, tags)
        .jobs(jobs)
        .number({"--rank"}, 0, 7, "a rank from 0 to 7", rank)
        .ignored({"--log-level"})
        .refused({"--simulate"}, "--simulate is not supported")
        .positionals(paths, 1, "give a folder or trace files");
  }
};

TEST(Options, FlagsValuesAndPositionalsInAnyOrder) {
  CheckLike c;
  const ParsedLine p = parse_args(c.line, {"A", "--json", "--step-marker", "Step#", "-q", "B", "--jobs", "12"});
  EXPECT_FALSE(p.help);
  EXPECT_EQ(p.error, "");
  EXPECT_TRUE(c.json);
  EXPECT_TRUE(c.quiet);
  EXPECT_EQ(c.marker, "Step#");
  EXPECT_EQ(c.jobs, 12u);
  EXPECT_EQ(c.paths, (std::vector<std::string>{"A", "B"}));
}

TEST(Options, RepeatedFlagsStaySetAndTheLastValueWins) {
  CheckLike c;
  EXPECT_EQ(parse_args(c.line, {"--json", "--json", "-q", "--quiet", "--step-marker", "a", "--step-marker", "b",
                                "D"})
                .error,
            "");
  EXPECT_TRUE(c.json);
  EXPECT_TRUE(c.quiet);
  EXPECT_EQ(c.marker, "b");
}

TEST(Options, ARepeatedOptionKeepsEveryValueInOrder) {
  CheckLike c;
  EXPECT_EQ(parse_args(c.line, {"--tag", "x", "D", "--tag", "y", "--tag", "x"}).error, "");
  EXPECT_EQ(c.tags, (std::vector<std::string>{"x", "y", "x"}));
}

TEST(Options, AnUnknownOptionNamesTheNearestLongName) {
  CheckLike c;
  EXPECT_EQ(parse_args(c.line, {"--jsno", "D"}).error, "unknown option '--jsno' (did you mean --json?)");
  EXPECT_EQ(parse_args(c.line, {"D", "--stepmarker", "x"}).error,
            "unknown option '--stepmarker' (did you mean --step-marker?)");
  EXPECT_EQ(parse_args(c.line, {"--hepl"}).error, "unknown option '--hepl' (did you mean --help?)");
  EXPECT_EQ(parse_args(c.line, {"--zzzzzzzz", "D"}).error, "unknown option '--zzzzzzzz'");
  EXPECT_EQ(parse_args(c.line, {"-x", "D"}).error.rfind("unknown option '-x'", 0), 0u);
}

TEST(Options, TheSuggestionsAreTheLongNamesInTableOrderThenHelp) {
  CheckLike c;
  // Not -q (short), not --simulate (refused: never suggested).
  EXPECT_EQ(c.line.offered_names(), (std::vector<std::string_view>{"--json", "--quiet", "--step-marker", "--tag",
                                                                   "--jobs", "--rank", "--log-level", "--help"}));
  EXPECT_EQ(parse_args(c.line, {"--simulat", "D"}).error, "unknown option '--simulat'");
}

TEST(Options, AValueMissingAtTheEndOrEmptyIsAnError) {
  CheckLike c;
  EXPECT_EQ(parse_args(c.line, {"D", "--step-marker"}).error, "--step-marker needs a value");
  EXPECT_EQ(parse_args(c.line, {"--step-marker", "", "D"}).error, "--step-marker needs a value");
  EXPECT_EQ(parse_args(c.line, {"--log-level"}).error, "--log-level needs a value");
  EXPECT_EQ(parse_args(c.line, {"--jobs"}).error, "--jobs needs a value");
}

TEST(Options, AValueMayStartWithADash) {
  CheckLike c;
  EXPECT_EQ(parse_args(c.line, {"--step-marker", "--json", "D"}).error, "");
  EXPECT_EQ(c.marker, "--json");
  EXPECT_FALSE(c.json);
  EXPECT_EQ(parse_args(c.line, {"--rank", "-3", "D"}).error, "--rank takes a rank from 0 to 7, not '-3'");
}

TEST(Options, AnEmptyValueWhereItIsOne) {
  std::string prefix = "chakrashim: ";
  CommandLine line("config", "usage\n");
  line.value({"--prefix"}, prefix, /*empty_ok=*/true);
  EXPECT_EQ(parse_args(line, {"--prefix", ""}).error, "");
  EXPECT_EQ(prefix, "");
  EXPECT_EQ(parse_args(line, {"--prefix"}).error, "--prefix needs a value");
}

TEST(Options, NumbersArePlainDigitsInTheirRange) {
  CheckLike c;
  EXPECT_EQ(parse_args(c.line, {"--jobs", "0", "D"}).error, "--jobs takes a number from 1 to 1024, not '0'");
  EXPECT_EQ(parse_args(c.line, {"--jobs", "1025", "D"}).error, "--jobs takes a number from 1 to 1024, not '1025'");
  EXPECT_EQ(parse_args(c.line, {"--jobs", "+4", "D"}).error, "--jobs takes a number from 1 to 1024, not '+4'");
  EXPECT_EQ(parse_args(c.line, {"--jobs", "four", "D"}).error, "--jobs takes a number from 1 to 1024, not 'four'");
  EXPECT_EQ(parse_args(c.line, {"--rank", "8", "D"}).error, "--rank takes a rank from 0 to 7, not '8'");
  EXPECT_EQ(c.jobs, 4u);
  EXPECT_FALSE(c.rank);
  EXPECT_EQ(parse_args(c.line, {"--rank", "0", "--jobs", "1024", "D"}).error, "");
  EXPECT_EQ(c.rank, std::optional<std::uint64_t>(0));
  EXPECT_EQ(c.jobs, 1024u);
}

TEST(Options, ARefusedOptionSaysWhy) {
  CheckLike c;
  EXPECT_EQ(parse_args(c.line, {"--simulate", "D"}).error, "--simulate is not supported");
}

TEST(Options, TooFewPositionalsAtTheEnd) {
  CheckLike c;
  EXPECT_EQ(parse_args(c.line, {}).error, "give a folder or trace files");
  EXPECT_EQ(parse_args(c.line, {"--json"}).error, "give a folder or trace files");
}

TEST(Options, OnePositionalTooManyIsAnErrorAsItComes) {
  std::vector<std::string> dirs;
  bool gzip = false;
  CommandLine line("link", "usage\n");
  line.flag({"--gzip"}, gzip).positionals(dirs, 0, {}, 1, [](const std::string& extra) {
    return "one folder, not '" + extra + "' too";
  });
  EXPECT_EQ(parse_args(line, {}).error, "");
  EXPECT_EQ(parse_args(line, {"A"}).error, "");
  dirs.clear();
  // The second folder is the error, before the unknown option after it.
  EXPECT_EQ(parse_args(line, {"A", "B", "--bogus"}).error, "one folder, not 'B' too");
  dirs.clear();
  EXPECT_EQ(parse_args(line, {"--bogus", "A", "B"}).error, "unknown option '--bogus'");
}

TEST(Options, WithoutPositionalsAnArgumentIsAnUnknownOption) {
  bool markdown = false;
  CommandLine line("vars", "usage\n");
  line.flag({"--markdown"}, markdown);
  EXPECT_EQ(parse_args(line, {"extra"}).error, "unknown option 'extra'");
  EXPECT_EQ(parse_args(line, {"--markdwon"}).error, "unknown option '--markdwon' (did you mean --markdown?)");
}

TEST(Options, DashDashEndsTheOptionsAndADashIsAnArgument) {
  CheckLike c;
  EXPECT_EQ(parse_args(c.line, {"-", "--", "--json", "-q"}).error, "");
  EXPECT_EQ(c.paths, (std::vector<std::string>{"-", "--json", "-q"}));
  EXPECT_FALSE(c.json);
  EXPECT_FALSE(c.quiet);
}

TEST(Options, HelpStopsReadingButAnEarlierErrorComesFirst) {
  CheckLike c;
  for (const char* help : {"--help", "-h"}) {
    const ParsedLine p = parse_args(c.line, {help, "--bogus"});
    EXPECT_TRUE(p.help) << help;
    EXPECT_EQ(p.error, "") << help;
  }
  EXPECT_TRUE(parse_args(c.line, {}).help == false);
  const ParsedLine late = parse_args(c.line, {"--bogus", "--help"});
  EXPECT_FALSE(late.help);
  EXPECT_EQ(late.error, "unknown option '--bogus'");
  // --help needs no positional.
  EXPECT_EQ(parse_args(c.line, {"--json", "--help"}).error, "");
}

TEST(Options, ReadPrintsTheUsageOrTheErrorLineAndGivesTheStatus) {
  CheckLike c;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(read_args(c.line, {"--help"}), std::optional<int>(0));
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "usage: chakrashim check [options] DIR\n");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");

  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(read_args(c.line, {"--jsno", "D"}), std::optional<int>(2));
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "chakrashim check: unknown option '--jsno' (did you mean --json?) (see 'chakrashim check --help')\n");

  testing::internal::CaptureStdout();
  EXPECT_EQ(read_args(c.line, {"D"}), std::nullopt);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
}

}  // namespace
}  // namespace chakrashim::tools
