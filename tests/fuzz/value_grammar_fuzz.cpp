// The configuration value grammars (common/config/value_grammar.h) on any
// bytes. Besides not crashing, each accepted value must be what the
// grammar's comment promises: digits round-trip, rank sets contain exactly
// their ranges' ends, job ids are safe folder-name prefixes.
#include <cstdint>
#include <string>

#include "config/value_grammar.h"
#include "fuzz_support.h"

using namespace chakrashim::config;
using chakrashim::fuzz::as_text;

namespace {
bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = as_text(data, size);

  if (const auto n = parse_decimal(text)) {
    CHAKRA_FUZZ_REQUIRE(all_digits(text));
    const auto first = text.find_first_not_of('0');
    const std::string_view digits = first == std::string_view::npos ? "0" : text.substr(first);
    CHAKRA_FUZZ_REQUIRE(std::to_string(*n) == digits);
  }
  if (const auto b = parse_bool(text)) {
    CHAKRA_FUZZ_REQUIRE(text.size() <= 5);
  }
  if (const auto bytes = parse_byte_size(text)) {
    CHAKRA_FUZZ_REQUIRE(!text.empty() && text[0] >= '0' && text[0] <= '9');
  }
  if (const auto ranks = parse_rank_list(text)) {
    CHAKRA_FUZZ_REQUIRE(!ranks->ranges().empty());
    for (const auto& [lo, hi] : ranks->ranges()) {
      CHAKRA_FUZZ_REQUIRE(lo <= hi);
      CHAKRA_FUZZ_REQUIRE(ranks->contains(lo) && ranks->contains(hi));
    }
  }
  if (const auto job = parse_job_id(text)) {
    CHAKRA_FUZZ_REQUIRE(*job == text && !job->empty() && job->size() <= 128);
    CHAKRA_FUZZ_REQUIRE(*job != "." && *job != ".." && job->find('/') == std::string::npos);
  }
  const std::string quoted = quote_for_log(text);
  CHAKRA_FUZZ_REQUIRE(quoted.size() >= 2 && quoted.front() == '\'');
  for (unsigned char c : quoted) CHAKRA_FUZZ_REQUIRE(c >= 0x20 && c < 0x7f);
  CHAKRA_FUZZ_REQUIRE(ascii_lower(text).size() == text.size());
  return 0;
}
