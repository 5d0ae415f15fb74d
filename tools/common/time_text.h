// Kineto times are microseconds written with three decimals. Comparing them
// as doubles loses nanoseconds past 2^53 ns, so the exact text is turned into
// integer nanoseconds instead.
//   "4458676416788.066" -> 4458676416788066   "12" -> 12000   "-0.5" -> -500
//   "1.5e3" -> 1500000 (exponents fall back to a rounded double)
//   "" / "abc" / "1.2.3" -> nullopt
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace chakrashim::tools {

std::optional<std::int64_t> micros_text_to_ns(std::string_view text);

// The other way, for messages: 4458676416788066 -> "4458676416788.066"
//   -500 -> "-0.500"
std::string us_text(std::int64_t ns);

}  // namespace chakrashim::tools
