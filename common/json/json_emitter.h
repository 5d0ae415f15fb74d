// Streaming JSON into a ByteSink, with one escaping function. It writes
// `"key": value` with a space after the colon (HTA's rank regex needs it)
// and tracks commas itself, so callers cannot produce invalid JSON by
// forgetting one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "files/byte_sink.h"

namespace chakrashim::writers {

// Escapes a string for the inside of JSON quotes: quote, backslash and
// control characters escaped, invalid UTF-8 replaced by U+FFFD.
//   a"b\ -> a\"b\\      "\x01" -> \u0001      "\xff" -> \ufffd
void append_escaped(std::string& out, std::string_view text);

class JsonEmitter {
 public:
  explicit JsonEmitter(files::ByteSink& sink) : sink_(sink) {}

  JsonEmitter& begin_object();
  JsonEmitter& end_object();
  JsonEmitter& begin_array();
  JsonEmitter& end_array();
  JsonEmitter& key(std::string_view name);
  JsonEmitter& value(std::string_view text);
  JsonEmitter& value(const char* text) { return value(std::string_view(text)); }
  JsonEmitter& value(std::int64_t number);
  JsonEmitter& value(std::uint64_t number);
  JsonEmitter& value(int number) { return value(static_cast<std::int64_t>(number)); }
  JsonEmitter& value(unsigned number) { return value(static_cast<std::uint64_t>(number)); }
  JsonEmitter& value(std::uint16_t number) { return value(static_cast<std::uint64_t>(number)); }
  JsonEmitter& value(bool flag);
  JsonEmitter& null();
  // A value already in JSON form (a number formatted elsewhere, or a JSON
  // document produced by torch). The caller vouches for it.
  JsonEmitter& raw(std::string_view json);
  // A line break after the item just written (placed after its comma), for
  // people reading the file: one event per line, as Kineto writes them.
  JsonEmitter& newline();

  // Writes what is buffered; false if the sink failed.
  bool flush();
  bool ok() const { return sink_.ok(); }

 private:
  void before_value();
  void close_line();
  void put(std::string_view text);

  files::ByteSink& sink_;
  std::string out_;
  // One entry per open container: true until its first element is written.
  std::vector<bool> first_;
  bool after_key_ = false;
  bool newline_pending_ = false;
};

}  // namespace chakrashim::writers
