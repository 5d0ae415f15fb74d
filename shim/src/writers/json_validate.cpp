#include "writers/json_validate.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

namespace chakrashim::writers {

namespace {

// Accepts every event and remembers the first parse error.
class NullSax final : public nlohmann::json_sax<nlohmann::json> {
 public:
  using json = nlohmann::json;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(json::number_integer_t) override { return true; }
  bool number_unsigned(json::number_unsigned_t) override { return true; }
  bool number_float(json::number_float_t, const json::string_t&) override { return true; }
  bool string(json::string_t&) override { return true; }
  bool binary(json::binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(json::string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    error = e.what();
    return false;
  }
  std::string error;
};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

std::string validate_json_file(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) return "cannot open for reading";
  NullSax sax;
  const bool ok = nlohmann::json::sax_parse(file.get(), &sax);
  if (ok) return {};
  return sax.error.empty() ? "not valid JSON" : sax.error;
}

}  // namespace chakrashim::writers
