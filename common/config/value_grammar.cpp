#include "config/value_grammar.h"

#include <cctype>
#include <limits>
#include <string>

namespace chakrashim::config {

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string quote_for_log(std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (std::size_t i = 0; i < value.size() && i < 80; ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (value.size() > 80) out += "...";
  return out + "'";
}

std::optional<std::uint64_t> parse_decimal(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (value > (kMax - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

std::optional<bool> parse_bool(std::string_view text) {
  const std::string word = ascii_lower(text);
  if (word == "1" || word == "true" || word == "on" || word == "yes") return true;
  if (word == "0" || word == "false" || word == "off" || word == "no") return false;
  return std::nullopt;
}

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t multiplier = 1;
  switch (text.back()) {
    case 'k': case 'K': multiplier = 1ULL << 10; break;
    case 'm': case 'M': multiplier = 1ULL << 20; break;
    case 'g': case 'G': multiplier = 1ULL << 30; break;
    default: break;
  }
  if (multiplier != 1) text.remove_suffix(1);
  const auto number = parse_decimal(text);
  if (!number) return std::nullopt;
  if (*number > std::numeric_limits<std::uint64_t>::max() / multiplier) return std::nullopt;
  return *number * multiplier;
}

bool RankSet::contains(std::uint64_t rank) const {
  for (const auto& [lo, hi] : ranges_)
    if (rank >= lo && rank <= hi) return true;
  return false;
}

std::optional<RankSet> parse_rank_list(std::string_view text) {
  std::vector<RankSet::Range> ranges;
  if (text.empty()) return std::nullopt;
  while (true) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const auto dash = item.find('-');
    const auto lo = parse_decimal(item.substr(0, dash));
    if (!lo) return std::nullopt;
    auto hi = lo;
    if (dash != std::string_view::npos) {
      hi = parse_decimal(item.substr(dash + 1));
      if (!hi || *hi < *lo) return std::nullopt;
    }
    ranges.emplace_back(*lo, *hi);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return RankSet(std::move(ranges));
}

std::optional<std::string> parse_job_id(std::string_view text) {
  if (text.empty() || text.size() > 128 || text == "." || text == "..") return std::nullopt;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' || c == '-';
    if (!ok) return std::nullopt;
  }
  return std::string(text);
}

std::optional<std::string> parse_run_id(std::string_view text) {
  if (text.empty() || text.size() > 256) return std::nullopt;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '+' || c == '-' || c == ':' || c == ',' || c == '@';
    if (!ok) return std::nullopt;
  }
  return std::string(text);
}

std::optional<std::pair<bool, bool>> parse_cupti_extra(std::string_view text) {
  auto lower = [](std::string_view v) {
    std::string out(v);
    for (auto& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return out;
  };
  if (lower(text) == "none") return std::pair<bool, bool>{false, false};
  std::pair<bool, bool> out{false, false};
  std::size_t pos = 0;
  for (;;) {
    const auto comma = text.find(',', pos);
    const std::string item = lower(text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos));
    bool* flag = item == "sync" ? &out.first : item == "overhead" ? &out.second : nullptr;
    if (!flag || *flag) return std::nullopt;
    *flag = true;
    if (comma == std::string_view::npos) return out;
    pos = comma + 1;
  }
}

}  // namespace chakrashim::config
