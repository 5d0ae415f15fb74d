// Re-serializes SAX events as compact JSON text into a string, with the
// commas placed for the caller. The ET+ writer copies every ET value it
// does not change through it: numbers keep their original text (a float is
// written exactly as it was read), strings are escaped again.
//   key("a"); scalar_raw("1.50"); -> "a":1.50   (inside an object)
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chakrashim::tools::link {

class JsonText {
 public:
  // Starts a new value at the end of `out` (which must outlive the writes).
  void start(std::string* out) {
    out_ = out;
    first_.clear();
    after_key_ = false;
  }
  // True once the value that start() began is complete.
  bool done() const { return first_.empty() && !after_key_; }

  void key(std::string_view k);
  void scalar_raw(std::string_view text);
  void scalar_string(std::string_view text);
  void open(bool object);
  void close(bool object);

 private:
  void before_value();

  std::string* out_ = nullptr;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

// "text" with JSON escaping, quotes included.
void append_quoted(std::string& out, std::string_view text);

}  // namespace chakrashim::tools::link
