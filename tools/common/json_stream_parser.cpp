#include "common/json_stream_parser.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace chakrashim::tools {

namespace {

using json = nlohmann::json;
constexpr std::size_t kBufferBytes = 1 << 20;

// Bytes a string's plain run may hold: not '"', not '\\', not a control.
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 256; ++c) t[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
  return t;
}();

bool is_space(int c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Well-formed UTF-8 (no overlongs, no surrogates, at most U+10FFFF).
bool valid_utf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const unsigned c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n = 0;
    unsigned lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c == 0xe0) n = 2, lo = 0xa0;
    else if (c == 0xed) n = 2, hi = 0x9f;
    else if (c >= 0xe1 && c <= 0xef) n = 2;
    else if (c == 0xf0) n = 3, lo = 0x90;
    else if (c >= 0xf1 && c <= 0xf3) n = 3;
    else if (c == 0xf4) n = 3, hi = 0x8f;
    else return false;
    if (end - p <= n) return false;
    if (p[1] < lo || p[1] > hi) return false;
    for (int k = 2; k <= n; ++k) {
      if (p[k] < 0x80 || p[k] > 0xbf) return false;
    }
    p += n + 1;
  }
  return true;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

class Parser {
 public:
  Parser(std::streambuf& in, json::json_sax_t& sax) : in_(in), sax_(sax), buffer_(kBufferBytes) {
    // Empty, at the buffer's start: the first refill counts 0 bytes consumed.
    p_ = end_ = buffer_.data();
  }

  JsonStreamOutcome run();

 private:
  // The next byte without taking it, or -1 at the end of the input.
  int peek() {
    if (p_ == end_ && !refill()) return -1;
    return static_cast<unsigned char>(*p_);
  }
  int take() {
    const int c = peek();
    if (c >= 0) ++p_;
    return c;
  }
  bool refill() {
    if (eof_) return false;
    consumed_ += static_cast<std::uint64_t>(end_ - buffer_.data());
    const auto n = in_.sgetn(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    p_ = buffer_.data();
    end_ = p_ + (n > 0 ? n : 0);
    if (n <= 0) eof_ = true;
    return n > 0;
  }
  std::uint64_t position() const { return consumed_ + static_cast<std::uint64_t>(p_ - buffer_.data()); }
  int skip_space() {
    for (;;) {
      while (p_ < end_ && is_space(static_cast<unsigned char>(*p_))) ++p_;
      if (p_ < end_) return static_cast<unsigned char>(*p_);
      if (!refill()) return -1;
    }
  }
  bool fail(const std::string& why) {
    if (out_.error.empty() && !out_.stopped) {
      out_.truncated = eof_ && p_ == end_;
      out_.position = position();
      out_.error = (out_.truncated ? "unexpected end of input at byte " : "syntax error at byte ") +
                   std::to_string(out_.position) + ": " + why;
    }
    return false;
  }
  bool stop() {
    out_.stopped = true;
    out_.position = position();
    return false;
  }
  bool string(std::string& into);  // after the opening quote
  bool escape(std::string& into);
  bool hex4(std::uint32_t& cp);
  bool number();
  bool literal(const char* rest, int kind);  // after the first letter
  bool value(int c);                         // c: the first byte, not taken yet
  // An object's `"key":`, c its first byte (not taken yet); c becomes the
  // byte after the ':' and the space that follows it.
  bool key(int& c);

  std::streambuf& in_;
  json::json_sax_t& sax_;
  std::vector<char> buffer_;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  std::uint64_t consumed_ = 0;
  bool eof_ = false;
  std::string text_, token_;
  JsonStreamOutcome out_;
};

bool Parser::hex4(std::uint32_t& cp) {
  cp = 0;
  for (int i = 0; i < 4; ++i) {
    const int c = take();
    if (c < 0) return fail("a \\u escape cut short");
    int v = -1;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    if (v < 0) return fail("a \\u escape needs four hex digits");
    cp = cp * 16 + static_cast<std::uint32_t>(v);
  }
  return true;
}

bool Parser::escape(std::string& into) {
  const int c = take();
  switch (c) {
    case '"': into += '"'; return true;
    case '\\': into += '\\'; return true;
    case '/': into += '/'; return true;
    case 'b': into += '\b'; return true;
    case 'f': into += '\f'; return true;
    case 'n': into += '\n'; return true;
    case 'r': into += '\r'; return true;
    case 't': into += '\t'; return true;
    case 'u': {
      std::uint32_t cp = 0;
      if (!hex4(cp)) return false;
      if (cp >= 0xdc00 && cp <= 0xdfff) return fail("a lone low surrogate in a \\u escape");
      if (cp >= 0xd800 && cp <= 0xdbff) {
        if (take() != '\\' || take() != 'u') return fail("a high surrogate without its low half");
        std::uint32_t low = 0;
        if (!hex4(low)) return false;
        if (low < 0xdc00 || low > 0xdfff) return fail("a high surrogate without its low half");
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
      }
      append_utf8(into, cp);
      return true;
    }
    case -1: return fail("a string cut short");
    default: return fail("an invalid escape in a string");
  }
}

bool Parser::string(std::string& into) {
  into.clear();
  bool high = false;
  for (;;) {
    const char* run = p_;
    // Eight bytes at a time while none is '"', '\\' or a control byte
    // (the classic has-zero-byte tests); high bits are collected for the
    // UTF-8 check.
    constexpr std::uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
    std::uint64_t seen = 0;
    while (end_ - p_ >= 8) {
      std::uint64_t v;
      std::memcpy(&v, p_, 8);
      const std::uint64_t quote = v ^ (kOnes * '"'), slash = v ^ (kOnes * '\\');
      const std::uint64_t stop = ((quote - kOnes) & ~quote) | ((slash - kOnes) & ~slash) | ((v - kOnes * 0x20) & ~v);
      if (stop & kHighs) break;
      seen |= v;
      p_ += 8;
    }
    while (p_ < end_ && kPlain[static_cast<unsigned char>(*p_)]) seen |= static_cast<unsigned char>(*p_++);
    high = high || (seen & kHighs) != 0;
    into.append(run, static_cast<std::size_t>(p_ - run));
    if (p_ == end_) {
      if (!refill()) return fail("a string cut short");
      continue;
    }
    const char c = *p_++;
    if (c == '"') break;
    if (c == '\\') {
      if (!escape(into)) return false;
      continue;
    }
    --p_;
    return fail("a control character in a string");
  }
  if (high && !valid_utf8(into)) return fail("a string that is not UTF-8");
  return true;
}

bool Parser::number() {
  // Fast path: a plain integer of up to 18 digits wholly in the buffer
  // (ids, sizes, shapes: most numbers of a trace) needs no token.
  {
    const char* q = p_;
    const bool negative = *q == '-';
    if (negative) ++q;
    const char* digits_start = q;
    std::uint64_t v = 0;
    while (q < end_ && q - digits_start < 19 && *q >= '0' && *q <= '9') v = v * 10 + static_cast<std::uint64_t>(*q++ - '0');
    const std::ptrdiff_t count = q - digits_start;
    const bool ends_here = q < end_ && *q != '.' && *q != 'e' && *q != 'E' && !(*q >= '0' && *q <= '9') &&
                           *q != '-' && *q != '+';
    if (ends_here && count > 0 && count <= 18 && !(count > 1 && *digits_start == '0')) {
      p_ = q;
      if (negative) return sax_.number_integer(-static_cast<std::int64_t>(v)) || stop();
      return sax_.number_unsigned(v) || stop();
    }
  }
  token_.clear();
  for (;;) {
    const char* start = p_;
    while (p_ < end_) {
      const char c = *p_;
      if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') ++p_;
      else break;
    }
    token_.append(start, static_cast<std::size_t>(p_ - start));
    if (p_ < end_ || !refill()) break;
  }
  if (token_ == "-" && peek() == 'I') {  // Python's -Infinity
    ++p_;
    if (!literal("nfinity", 0)) return false;
    token_ = "-Infinity";
    return sax_.number_float(-std::numeric_limits<double>::infinity(), token_) || stop();
  }
  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  std::size_t i = 0;
  const std::size_t n = token_.size();
  auto digits = [&] {
    const std::size_t from = i;
    while (i < n && token_[i] >= '0' && token_[i] <= '9') ++i;
    return i - from;
  };
  bool integral = true;
  if (i < n && token_[i] == '-') ++i;
  const std::size_t int_start = i;
  const std::size_t int_digits = digits();
  if (int_digits == 0) return fail("a malformed number '" + token_ + "'");
  if (int_digits > 1 && token_[int_start] == '0') return fail("a number with a leading zero '" + token_ + "'");
  if (i < n && token_[i] == '.') {
    ++i;
    integral = false;
    if (digits() == 0) return fail("a malformed number '" + token_ + "'");
  }
  if (i < n && (token_[i] == 'e' || token_[i] == 'E')) {
    ++i;
    integral = false;
    if (i < n && (token_[i] == '+' || token_[i] == '-')) ++i;
    if (digits() == 0) return fail("a malformed number '" + token_ + "'");
  }
  if (i != n) return fail("a malformed number '" + token_ + "'");
  const char* first = token_.data();
  const char* last = first + n;
  if (integral) {
    if (token_[0] == '-') {
      std::int64_t v = 0;
      if (std::from_chars(first, last, v).ec == std::errc()) return sax_.number_integer(v) || stop();
    } else {
      std::uint64_t v = 0;
      if (std::from_chars(first, last, v).ec == std::errc()) return sax_.number_unsigned(v) || stop();
    }
  }
  double d = 0;
  const auto r = std::from_chars(first, last, d);
  if (r.ec == std::errc::result_out_of_range) {
    // Beyond double's range: Python's float() gives inf (or 0.0).
    const bool tiny = token_.find_first_of("eE") != std::string::npos &&
                      token_.find('-', token_.find_first_of("eE")) != std::string::npos;
    d = tiny ? (token_[0] == '-' ? -0.0 : 0.0)
             : (token_[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
  }
  return sax_.number_float(d, token_) || stop();
}

// kind: 0 just match, 1 true, 2 false, 3 null, 4 NaN, 5 Infinity
bool Parser::literal(const char* rest, int kind) {
  for (const char* r = rest; *r != '\0'; ++r) {
    const int c = take();
    if (c != *r) return c < 0 ? fail("a literal cut short") : fail("an invalid literal");
  }
  switch (kind) {
    case 1: return sax_.boolean(true) || stop();
    case 2: return sax_.boolean(false) || stop();
    case 3: return sax_.null() || stop();
    case 4: token_ = "NaN"; return sax_.number_float(std::numeric_limits<double>::quiet_NaN(), token_) || stop();
    case 5: token_ = "Infinity"; return sax_.number_float(std::numeric_limits<double>::infinity(), token_) || stop();
    default: return true;
  }
}

bool Parser::value(int c) {
  switch (c) {
    case '"':
      ++p_;
      return string(text_) && (sax_.string(text_) || stop());
    case 't': ++p_; return literal("rue", 1);
    case 'f': ++p_; return literal("alse", 2);
    case 'n': ++p_; return literal("ull", 3);
    case 'N': ++p_; return literal("aN", 4);
    case 'I': ++p_; return literal("nfinity", 5);
    case -1: return fail("a value expected");
    default:
      if (c == '-' || (c >= '0' && c <= '9')) return number();
      return fail(std::string("an unexpected character '") + static_cast<char>(c) + "'");
  }
}

bool Parser::key(int& c) {
  if (c != '"') return fail("an object key expected");
  ++p_;
  if (!string(text_)) return false;
  if (!sax_.key(text_)) return stop();
  if (skip_space() != ':') return fail("':' expected after an object key");
  ++p_;
  c = skip_space();
  return true;
}

JsonStreamOutcome Parser::run() {
  // Containers open: true for an object. Each step reads one value, then
  // what follows it (',' or the container's end).
  std::vector<bool> open;
  int c = skip_space();
  for (;;) {
    // A value.
    if (c == '{' || c == '[') {
      const bool object = c == '{';
      ++p_;
      if (!(object ? sax_.start_object(static_cast<std::size_t>(-1)) : sax_.start_array(static_cast<std::size_t>(-1)))) {
        stop();
        return out_;
      }
      c = skip_space();
      if (c == (object ? '}' : ']')) {
        ++p_;
        if (!(object ? sax_.end_object() : sax_.end_array())) {
          stop();
          return out_;
        }
      } else {
        open.push_back(object);
        if (object && !key(c)) return out_;
        continue;
      }
    } else if (!value(c)) {
      return out_;
    }
    // What follows a value: a separator or the ends of containers.
    for (;;) {
      c = skip_space();
      if (open.empty()) {
        if (c != -1) {
          fail("extra data after the document");
          return out_;
        }
        out_.ok = true;
        out_.position = position();
        return out_;
      }
      const bool object = open.back();
      if (c == ',') {
        ++p_;
        c = skip_space();
        if (object && !key(c)) return out_;
        break;  // the next value
      }
      if (c == (object ? '}' : ']')) {
        ++p_;
        open.pop_back();
        if (!(object ? sax_.end_object() : sax_.end_array())) {
          stop();
          return out_;
        }
        continue;
      }
      fail(c < 0 ? "the document cut short" : object ? "',' or '}' expected" : "',' or ']' expected");
      return out_;
    }
  }
}

}  // namespace

JsonStreamOutcome parse_json_stream(std::streambuf& in, nlohmann::json::json_sax_t& sax) {
  Parser parser(in, sax);
  return parser.run();
}

}  // namespace chakrashim::tools
