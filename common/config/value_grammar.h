// Strict value grammars for configuration. Each parser accepts exactly the
// documented form and returns nullopt for anything else; none of them trims,
// guesses or saturates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chakrashim::config {

// Decimal digits only, no sign, no spaces, no overflow of uint64_t.
//   "42" -> 42   "007" -> 7   "" / "+1" / " 1" / "1e3" / "-0" -> nullopt
//   "18446744073709551616" -> nullopt (2^64)
std::optional<std::uint64_t> parse_decimal(std::string_view text);

// Boolean words in any case.
//   "1" "true" "on" "yes" -> true    "0" "false" "off" "no" -> false
//   "TRUE" -> true   "" / "2" / "y" / " on" -> nullopt
std::optional<bool> parse_bool(std::string_view text);

// A byte count: decimal digits, then optionally one of K, M, G (binary
// multiples, either case).
//   "512" -> 512   "64K" -> 65536   "1G" -> 1073741824   "2g" -> 2147483648
//   "1.5G" / "1GB" / "G" / "-1" -> nullopt; overflow -> nullopt
std::optional<std::uint64_t> parse_byte_size(std::string_view text);
// CHAKRA_CUPTI_EXTRA: "none", or a comma list of "sync" and "overhead"
// (any case, each at most once) -> {sync, overhead}.
std::optional<std::pair<bool, bool>> parse_cupti_extra(std::string_view text);

// A set of ranks: comma-separated items, each N or N-M with N <= M.
//   "0" -> {0}   "0,3" -> {0,3}   "4-7" -> {4,5,6,7}   "0,4-7" -> {0,4..7}
//   "" / "1," / "7-4" / "1 ,2" / "a" -> nullopt
class RankSet {
 public:
  using Range = std::pair<std::uint64_t, std::uint64_t>;  // inclusive
  explicit RankSet(std::vector<Range> ranges) : ranges_(std::move(ranges)) {}
  bool contains(std::uint64_t rank) const;
  const std::vector<Range>& ranges() const { return ranges_; }

 private:
  std::vector<Range> ranges_;
};
std::optional<RankSet> parse_rank_list(std::string_view text);

// A job id that is safe as a folder-name prefix: 1 to 128 characters of
// [A-Za-z0-9._+-], and not "." or "..".
//   "123456" -> ok   "run_7.b" -> ok   "" / "a/b" / ".." / "a b" -> nullopt
std::optional<std::string> parse_job_id(std::string_view text);
// A launch's identity (CHAKRA_RUN_ID, or a launcher's): a job id's
// characters and ':', ',', '@', 1-256 of them.
//   "slurm:8812.0" -> "slurm:8812.0"   "a b" -> nullopt   "" -> nullopt
std::optional<std::string> parse_run_id(std::string_view text);

// A value as it may appear inside one log line: printable ASCII kept, other
// bytes as \xNN, cut after 80 bytes, in single quotes.
//   "abc" -> 'abc'    "a\nb" -> 'a\x0ab'
std::string quote_for_log(std::string_view value);

// Lowercases ASCII letters: "ON" -> "on".
std::string ascii_lower(std::string_view text);

}  // namespace chakrashim::config
