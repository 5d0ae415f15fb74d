#include "common/time_text.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace chakrashim::tools {

namespace {

std::optional<std::int64_t> via_double(std::string_view text) {
  const std::string copy(text);
  char* end = nullptr;
  const double us = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(us)) return std::nullopt;
  const double ns = std::round(us * 1000.0);
  if (std::fabs(ns) > 9.0e18) return std::nullopt;
  return static_cast<std::int64_t>(ns);
}

}  // namespace

std::optional<std::int64_t> micros_text_to_ns(std::string_view text) {
  if (text.find_first_of("eE") != std::string_view::npos) return via_double(text);
  bool negative = false;
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  std::int64_t whole = 0;
  std::size_t digits = 0;
  constexpr std::int64_t kMaxWhole = std::numeric_limits<std::int64_t>::max() / 1000 - 1;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
    whole = whole * 10 + (text[i] - '0');
    if (whole > kMaxWhole) return std::nullopt;
  }
  std::int64_t frac = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    int places = 0;
    bool round_up = false;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
      if (places < 3) {
        frac = frac * 10 + (text[i] - '0');
        ++places;
      } else if (places == 3) {
        round_up = text[i] >= '5';  // beyond nanoseconds: round half up
        ++places;
      }
    }
    for (; places < 3; ++places) frac *= 10;
    if (round_up) ++frac;
  }
  if (i != text.size() || digits == 0) return std::nullopt;
  const std::int64_t ns = whole * 1000 + frac;
  return negative ? -ns : ns;
}

std::string us_text(std::int64_t ns) {
  const bool negative = ns < 0;
  const auto mag = negative ? static_cast<std::uint64_t>(-(ns + 1)) + 1 : static_cast<std::uint64_t>(ns);
  std::string frac = std::to_string(mag % 1000);
  frac.insert(0, 3 - frac.size(), '0');
  return (negative ? "-" : "") + std::to_string(mag / 1000) + "." + frac;
}

}  // namespace chakrashim::tools
