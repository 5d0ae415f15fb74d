#include "convert/python_repr.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace chakrashim::tools::convert {

namespace {

// Python's str.isprintable() for code points above ASCII, as far as the
// categories it rejects go: control (Cc), format (Cf), separators other than
// the ASCII space (Zs, Zl, Zp), surrogates (Cs) and private use (Co).
// Unassigned code points (Cn) are taken as printable: the table of them
// changes with each Unicode version, and torch's names never hold them.
bool py_printable(std::uint32_t cp) {
  if (cp < 0xa1) return cp >= 0x20 && cp < 0x7f;  // 0x7f-0xa0: DEL, C1 controls, NBSP
  if (cp == 0xad) return false;
  if (cp >= 0x600 && cp <= 0x605) return false;
  if (cp == 0x61c || cp == 0x6dd || cp == 0x70f || cp == 0x890 || cp == 0x891 || cp == 0x8e2) return false;
  if (cp == 0x1680 || cp == 0x180e) return false;
  if (cp >= 0x2000 && cp <= 0x200f) return false;
  if (cp >= 0x2028 && cp <= 0x202f) return false;
  if (cp >= 0x205f && cp <= 0x2064) return false;
  if (cp >= 0x2066 && cp <= 0x206f) return false;
  if (cp == 0x3000 || cp == 0xfeff) return false;
  if (cp >= 0xd800 && cp <= 0xf8ff) return false;  // surrogates, private use
  if (cp >= 0xfff9 && cp <= 0xfffb) return false;
  if (cp == 0xfffe || cp == 0xffff) return false;
  if (cp == 0x110bd || cp == 0x110cd) return false;
  if (cp >= 0x13430 && cp <= 0x1343f) return false;
  if (cp >= 0x1bca0 && cp <= 0x1bca3) return false;
  if (cp >= 0x1d173 && cp <= 0x1d17a) return false;
  if (cp == 0xe0001 || (cp >= 0xe0020 && cp <= 0xe007f)) return false;
  if (cp >= 0xf0000) return false;  // private use planes
  return true;
}

// One code point from valid UTF-8 (the JSON parser has checked it); returns
// the bytes it used.
std::size_t decode_utf8(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto b = static_cast<unsigned char>(s[i]);
  auto more = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(s[i + k]) & 0x3f); };
  if (b < 0x80 || i + 1 >= s.size()) {
    cp = b;
    return 1;
  }
  if (b < 0xe0) {
    cp = ((b & 0x1fu) << 6) | more(1);
    return 2;
  }
  if (b < 0xf0 && i + 2 < s.size()) {
    cp = ((b & 0x0fu) << 12) | (more(1) << 6) | more(2);
    return 3;
  }
  if (i + 3 < s.size()) {
    cp = ((b & 0x07u) << 18) | (more(1) << 12) | (more(2) << 6) | more(3);
    return 4;
  }
  cp = b;
  return 1;
}

void append_hex(std::string& out, char kind, std::uint32_t cp, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\%c%0*x", kind, digits, cp);
  out += buf;
}

}  // namespace

void append_py_str(std::string& out, std::string_view s) {
  // repr picks double quotes only for a string with ' and no ".
  const bool has_single = s.find('\'') != std::string_view::npos;
  const char quote = has_single && s.find('"') == std::string_view::npos ? '"' : '\'';
  out += quote;
  std::size_t run = 0;  // start of the pending plain run
  std::size_t i = 0;
  auto flush = [&](std::size_t end) { out.append(s.data() + run, end - run); };
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != static_cast<unsigned char>(quote)) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      std::uint32_t cp = 0;
      const std::size_t n = decode_utf8(s, i, cp);
      if (py_printable(cp)) {
        i += n;
        continue;
      }
      flush(i);
      if (cp <= 0xff) append_hex(out, 'x', cp, 2);
      else if (cp <= 0xffff) append_hex(out, 'u', cp, 4);
      else append_hex(out, 'U', cp, 8);
      i += n;
      run = i;
      continue;
    }
    flush(i);
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c == static_cast<unsigned char>(quote)) {
          out += '\\';
          out += quote;
        } else {
          append_hex(out, 'x', c, 2);
        }
    }
    run = ++i;
  }
  flush(i);
  out += quote;
}

void append_py_float(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-inf" : "inf";
    return;
  }
  // The shortest digits that round-trip (what repr uses), then Python's
  // layout: positional for exponents -4 < e <= 16, else d.ddde+XX.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  std::size_t pos = 0;
  if (sci[0] == '-') {
    out += '-';
    pos = 1;
  }
  const std::size_t e = sci.find('e');
  std::string digits;
  for (std::size_t i = pos; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  int exponent = 0;
  std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exponent);
  const int decpt = exponent + 1;  // the value is 0.DIGITS x 10^decpt
  const int n = static_cast<int>(digits.size());
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-decpt), '0');
      out += digits;
    } else if (decpt >= n) {
      out += digits;
      out.append(static_cast<std::size_t>(decpt - n), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<std::size_t>(decpt));
      out += '.';
      out.append(digits, static_cast<std::size_t>(decpt));
    }
    return;
  }
  out += digits[0];
  if (n > 1) {
    out += '.';
    out.append(digits, 1);
  }
  char exp[16];
  std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
  out += exp;
}

void append_py_number_token(std::string& out, std::string_view token, double parsed) {
  if (token.find_first_of(".eE") == std::string_view::npos) {
    // An integer beyond 64 bits: Python's int prints every digit.
    out += token;
    return;
  }
  append_py_float(out, parsed);
}

void PyReprWriter::separate() {
  if (levels_.empty()) return;
  Level& top = levels_.back();
  if (top.after_key) {
    top.after_key = false;
    return;
  }
  if (top.any) out_ += ", ";
  top.any = true;
}

void PyReprWriter::open(char c) {
  separate();
  out_ += c;
  levels_.push_back({});
}

void PyReprWriter::close(char c) {
  out_ += c;
  if (!levels_.empty()) levels_.pop_back();
}

void PyReprWriter::scalar(std::string_view text) {
  separate();
  out_ += text;
}

void PyReprWriter::key(std::string_view k) {
  separate();
  append_py_str(out_, k);
  out_ += ": ";
  if (!levels_.empty()) levels_.back().after_key = true;
}

void PyReprWriter::integer(std::int64_t v) {
  separate();
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, r.ptr);
}

void PyReprWriter::unsigned_integer(std::uint64_t v) {
  separate();
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, r.ptr);
}

void PyReprWriter::number_token(std::string_view token, double parsed) {
  separate();
  append_py_number_token(out_, token, parsed);
}

void PyReprWriter::string(std::string_view v) {
  separate();
  append_py_str(out_, v);
}

}  // namespace chakrashim::tools::convert
