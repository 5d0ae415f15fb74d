// Python's str() of the values json.load gives, which is what
// chakra_converter writes into a node's inputs and outputs
// (str(node["inputs"]["values"])): lists as "[1, 'a', None]", floats in
// Python's shortest repr, strings in repr's quotes and escapes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chakrashim::tools::convert {

// repr(str):  abc -> 'abc'   it's -> "it's"   a\nb -> 'a\\nb'
void append_py_str(std::string& out, std::string_view utf8);

// repr(float):  0.5 -> 0.5   1e-05 -> 1e-05   3.0 -> 3.0   1e16 -> 1e+16
void append_py_float(std::string& out, double v);

// A JSON number token that is not a plain int64/uint64 (nlohmann hands
// these over as doubles): an integer too large for 64 bits stays an exact
// Python int; anything else is a float.
void append_py_number_token(std::string& out, std::string_view token, double parsed);

// Builds str() of one JSON value from parse events, in order.
class PyReprWriter {
 public:
  explicit PyReprWriter(std::string& out) : out_(out) {}
  void begin_list() { open('['); }
  void end_list() { close(']'); }
  void begin_dict() { open('{'); }
  void end_dict() { close('}'); }
  void key(std::string_view k);  // a dict's next key
  void null() { scalar("None"); }
  void boolean(bool v) { scalar(v ? "True" : "False"); }
  void integer(std::int64_t v);
  void unsigned_integer(std::uint64_t v);
  void number_token(std::string_view token, double parsed);
  void string(std::string_view v);

 private:
  void open(char c);
  void close(char c);
  void scalar(std::string_view text);
  void separate();

  std::string& out_;
  // Per open container: has it had an item yet; is it a dict awaiting a value.
  struct Level {
    bool any = false;
    bool after_key = false;
  };
  std::vector<Level> levels_;
};

}  // namespace chakrashim::tools::convert
