#include "writers/json_validate.h"

#include <zlib.h>

#include <istream>
#include <streambuf>
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

// A streambuf over zlib's gzread: plain files pass through unchanged, gzip
// files are inflated as they are read, in bounded memory.
class GzStreamBuf final : public std::streambuf {
 public:
  explicit GzStreamBuf(const std::string& path) : file_(gzopen(path.c_str(), "rb")) {}
  ~GzStreamBuf() override {
    if (file_) gzclose(file_);
  }
  bool is_open() const { return file_ != nullptr; }
  bool failed() const { return failed_; }

 protected:
  int_type underflow() override {
    const int n = gzread(file_, buffer_, sizeof buffer_);
    if (n <= 0) {
      failed_ = n < 0;
      return traits_type::eof();
    }
    setg(buffer_, buffer_, buffer_ + n);
    return traits_type::to_int_type(buffer_[0]);
  }

 private:
  gzFile file_;
  char buffer_[1 << 16];
  bool failed_ = false;
};

}  // namespace

std::string validate_json_file(const std::string& path) {
  GzStreamBuf buf(path);
  if (!buf.is_open()) return "cannot open for reading";
  std::istream in(&buf);
  NullSax sax;
  const bool ok = nlohmann::json::sax_parse(in, &sax);
  if (buf.failed()) return "cannot decompress (corrupt gzip)";
  if (ok) return {};
  return sax.error.empty() ? "not valid JSON" : sax.error;
}

}  // namespace chakrashim::writers
