#include "json/json_emitter.h"

namespace chakrashim::writers {

namespace {
constexpr std::size_t kFlushAt = 1 << 16;

// Length of the valid UTF-8 sequence starting at text[i], or 0.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  std::size_t len;
  std::uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xe0) == 0xc0) len = 2, cp = c & 0x1f;
  else if ((c & 0xf0) == 0xe0) len = 3, cp = c & 0x0f;
  else if ((c & 0xf8) == 0xf0) len = 4, cp = c & 0x07;
  else return 0;
  if (i + len > text.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  // Overlong forms, surrogates and values past U+10FFFF are invalid.
  static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
  return len;
}
}  // namespace

void append_escaped(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < text.size();) {
    // Runs of plain ASCII, the common case, in one append.
    std::size_t j = i;
    while (j < text.size()) {
      const auto p = static_cast<unsigned char>(text[j]);
      if (p < 0x20 || p >= 0x80 || p == '"' || p == '\\') break;
      ++j;
    }
    if (j > i) {
      out.append(text.data() + i, j - i);
      i = j;
      continue;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      switch (c) {
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
      }
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (const std::size_t len = utf8_length(text, i)) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
}

void JsonEmitter::put(std::string_view text) {
  out_.append(text);
  if (out_.size() >= kFlushAt) flush();
}

bool JsonEmitter::flush() {
  close_line();
  if (!out_.empty()) sink_.write(out_);
  out_.clear();
  return sink_.ok();
}

void JsonEmitter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    const bool line = newline_pending_;
    newline_pending_ = false;
    if (!first_.back()) put(line ? ",\n" : ", ");
    else if (line) put("\n");
    first_.back() = false;
  }
  newline_pending_ = false;
}

void JsonEmitter::close_line() {
  // Cleared before put(), which may flush and so come back here.
  const bool pending = newline_pending_;
  newline_pending_ = false;
  if (pending) put("\n");
}

JsonEmitter& JsonEmitter::begin_object() {
  before_value();
  put("{");
  first_.push_back(true);
  return *this;
}

JsonEmitter& JsonEmitter::end_object() {
  close_line();
  first_.pop_back();
  put("}");
  return *this;
}

JsonEmitter& JsonEmitter::begin_array() {
  before_value();
  put("[");
  first_.push_back(true);
  return *this;
}

JsonEmitter& JsonEmitter::end_array() {
  close_line();
  first_.pop_back();
  put("]");
  return *this;
}

JsonEmitter& JsonEmitter::key(std::string_view name) {
  before_value();
  out_ += '"';
  append_escaped(out_, name);
  put("\": ");
  after_key_ = true;
  return *this;
}

JsonEmitter& JsonEmitter::value(std::string_view text) {
  before_value();
  out_ += '"';
  append_escaped(out_, text);
  put("\"");
  return *this;
}

JsonEmitter& JsonEmitter::value(std::int64_t number) {
  before_value();
  put(std::to_string(number));
  return *this;
}

JsonEmitter& JsonEmitter::value(std::uint64_t number) {
  before_value();
  put(std::to_string(number));
  return *this;
}

JsonEmitter& JsonEmitter::value(bool flag) {
  before_value();
  put(flag ? "true" : "false");
  return *this;
}

JsonEmitter& JsonEmitter::null() {
  before_value();
  put("null");
  return *this;
}

JsonEmitter& JsonEmitter::raw(std::string_view json) {
  before_value();
  put(json);
  return *this;
}

JsonEmitter& JsonEmitter::newline() {
  newline_pending_ = true;
  return *this;
}

}  // namespace chakrashim::writers
