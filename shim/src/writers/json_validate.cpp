#include "writers/json_validate.h"

#include <algorithm>
#include <cstdint>
#include <istream>
#include <vector>
#include <streambuf>
#include <nlohmann/json.hpp>

#include "files/byte_stream.h"

namespace chakrashim::writers {

namespace {

// Accepts every event and remembers the first parse error.
class NullSax : public nlohmann::json_sax<nlohmann::json> {
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

// Also collects the "id" of every element of the top-level "nodes" array
// (an ET node), so that a repeated id can be told apart.
class EtIdSax final : public NullSax {
 public:
  bool number_unsigned(json::number_unsigned_t v) override {
    if (depth_ == 3 && in_nodes_ && key_ == "id") ids.push_back(v);
    return true;
  }
  bool number_integer(json::number_integer_t v) override {
    if (depth_ == 3 && in_nodes_ && key_ == "id" && v >= 0) ids.push_back(static_cast<std::uint64_t>(v));
    return true;
  }
  bool start_object(std::size_t) override {
    ++depth_;
    key_.clear();
    return true;
  }
  bool end_object() override {
    --depth_;
    key_.clear();
    return true;
  }
  bool start_array(std::size_t) override {
    ++depth_;
    if (depth_ == 2 && key_ == "nodes") in_nodes_ = true;
    return true;
  }
  bool end_array() override {
    if (depth_ == 2) in_nodes_ = false;
    --depth_;
    return true;
  }
  bool key(json::string_t& k) override {
    key_ = k;
    return true;
  }
  std::vector<std::uint64_t> ids;

 private:
  int depth_ = 0;
  bool in_nodes_ = false;
  std::string key_;
};

template <typename Sax>
std::string parse_with(const std::string& path, Sax& sax) {
  files::ByteStream buf(path);
  if (!buf.ok()) return "cannot open for reading";
  std::istream in(&buf);
  const bool ok = nlohmann::json::sax_parse(in, &sax);
  if (!buf.ok()) return "cannot decompress (" + buf.error() + ")";
  if (ok) return {};
  return sax.error.empty() ? "not valid JSON" : sax.error;
}

}  // namespace

std::string validate_json_file(const std::string& path) {
  NullSax sax;
  return parse_with(path, sax);
}

std::string validate_et_file(const std::string& path) {
  EtIdSax sax;
  if (std::string error = parse_with(path, sax); !error.empty()) return error;
  std::sort(sax.ids.begin(), sax.ids.end());
  const auto repeated = std::adjacent_find(sax.ids.begin(), sax.ids.end());
  if (repeated != sax.ids.end()) {
    return "node id " + std::to_string(*repeated) +
           " appears more than once (something else wrote into the file)";
  }
  return {};
}

}  // namespace chakrashim::writers
