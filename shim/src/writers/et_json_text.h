// The small text pieces of the ET JSON writer (et_json_writer.cpp): numbers
// as torch's observer prints them, and a node's value arrays.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace chakrashim::writers {

inline void append_uint(std::string& out, std::uint64_t v) {
  char buf[24];
  const int n = std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
  out.append(buf, static_cast<std::size_t>(n));
}

inline void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const int n = std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  out.append(buf, static_cast<std::size_t>(n));
}

// torch: std::to_string(double), i.e. "%f"; inf and nan quoted.
inline void append_double(std::string& out, double v) {
  char buf[512];
  const int n = std::snprintf(buf, sizeof buf, "%f", v);
  const bool quote = std::isinf(v) || std::isnan(v);
  if (quote) out += '"';
  out.append(buf, static_cast<std::size_t>(n > 0 && n < static_cast<int>(sizeof buf) ? n : 0));
  if (quote) out += '"';
}

// One value's four texts, as torch's convertIValue returns them.
struct ValueText {
  std::string shape, stride, type, value;
};

// The four arrays of a node's inputs or outputs.
struct ValueArrays {
  std::vector<std::string> shapes, strides, types, values;
};

inline void append_array(std::string& out, const std::vector<std::string>& items) {
  out += '[';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += items[i];
  }
  out += ']';
}

inline std::string array_text(const std::vector<std::string>& items) {
  std::string out;
  append_array(out, items);
  return out;
}

}  // namespace chakrashim::writers
