// Where writers put bytes. Writers know nothing of files; publish.cpp gives
// them a file sink, tests give them a string.
#pragma once

#include <string>
#include <string_view>

namespace chakrashim::files {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // False once any write has failed; later writes are ignored.
  virtual bool write(std::string_view bytes) = 0;
  virtual bool ok() const = 0;
};

class StringSink final : public ByteSink {
 public:
  bool write(std::string_view bytes) override {
    text_.append(bytes);
    return true;
  }
  bool ok() const override { return true; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace chakrashim::files
