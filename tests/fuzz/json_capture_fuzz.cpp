// JsonCapture (tools/common/json_capture.cpp), the SAX-to-value builder the
// readers keep distributedInfo and our metadata with, against nlohmann's
// own parser: for any valid document both must build the same value.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "common/json_capture.h"
#include "fuzz_support.h"

using json = nlohmann::json;
using chakrashim::tools::JsonCapture;

namespace {
class CaptureAll final : public json::json_sax_t {
 public:
  explicit CaptureAll(JsonCapture& c) : c_(c) { c_.begin(); }
  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(number_integer_t v) override { return put(v); }
  bool number_unsigned(number_unsigned_t v) override { return put(v); }
  bool number_float(number_float_t v, const string_t&) override { return put(v); }
  bool string(string_t& v) override { return put(v); }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override { c_.start_container(true); return true; }
  bool key(string_t& k) override { c_.key(k); return true; }
  bool end_object() override { c_.end_container(); return true; }
  bool start_array(std::size_t) override { c_.start_container(false); return true; }
  bool end_array() override { c_.end_container(); return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  bool put(json v) { c_.scalar(std::move(v)); return true; }
  JsonCapture& c_;
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(chakrashim::fuzz::as_text(data, size));
  JsonCapture capture;
  CaptureAll sax(capture);
  const bool parsed = json::sax_parse(text, &sax);
  const json expected = json::parse(text, nullptr, false);
  CHAKRA_FUZZ_REQUIRE(parsed == !expected.is_discarded());
  if (parsed) {
    CHAKRA_FUZZ_REQUIRE(capture.done());
    CHAKRA_FUZZ_REQUIRE(capture.value() == expected);
  }
  return 0;
}
