#include "common/hta_rank_scan.h"

#include <limits>

namespace chakrashim::tools {

namespace {
constexpr std::string_view kLiteral = "\"rank\":";

// Python's \s on str: ASCII whitespace plus the separators \x1c-\x1f (the
// non-ASCII ones never occur next to JSON punctuation we care about).
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
         (c >= '\x1c' && c <= '\x1f');
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

void HtaRankScan::feed(std::string_view chunk) {
  for (char c : chunk) {
    if (state_ == State::matched) return;
    step(c);
    ++pos_;
  }
}

void HtaRankScan::finish() {
  if (state_ == State::digits) state_ = State::matched;
}

std::optional<std::uint64_t> HtaRankScan::rank() const {
  if (state_ != State::matched) return std::nullopt;
  return value_;
}

// A failed candidate may itself begin the next one: "rank": is the only
// literal and its only repeatable start is the quote.
void HtaRankScan::restart(char c) {
  state_ = State::literal;
  literal_pos_ = 0;
  if (c == kLiteral[0]) {
    literal_pos_ = 1;
    match_start_ = pos_;
  }
}

void HtaRankScan::step(char c) {
  switch (state_) {
    case State::literal:
      if (c == kLiteral[literal_pos_]) {
        if (literal_pos_ == 0) match_start_ = pos_;
        if (++literal_pos_ == kLiteral.size()) state_ = State::space;
      } else {
        restart(c);
      }
      return;
    case State::space:  // \s+ needs at least one
      if (is_space(c)) state_ = State::more_space;
      else restart(c);
      return;
    case State::more_space:
      if (is_space(c)) return;
      if (is_digit(c)) {
        value_ = static_cast<std::uint64_t>(c - '0');
        state_ = State::digits;
      } else {
        restart(c);
      }
      return;
    case State::digits:
      if (is_digit(c)) {
        const auto max = std::numeric_limits<std::uint64_t>::max();
        const auto d = static_cast<std::uint64_t>(c - '0');
        value_ = value_ > (max - d) / 10 ? max : value_ * 10 + d;
      } else {
        state_ = State::matched;
      }
      return;
    case State::matched:
      return;
  }
}

}  // namespace chakrashim::tools
