#include "common/trace_tail.h"

#include <fstream>
#include <istream>

#include "files/byte_stream.h"

namespace chakrashim::tools {

namespace {

// The metadata object is a few hundred bytes at the very end; 64 KiB leaves
// room for a long CHAKRA_RANKS text and whatever a later version adds.
constexpr std::size_t kTailBytes = 64 * 1024;

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

// The last kTailBytes of the file's text: a seek for a plain file, a pass
// through zlib for a gzip one (zlib cannot seek backwards cheaply).
std::string read_tail(const std::string& path) {
  if (!ends_with(path, ".gz")) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    const std::streamoff from = size > static_cast<std::streamoff>(kTailBytes) ? size - kTailBytes : 0;
    in.seekg(from);
    std::string out(static_cast<std::size_t>(size - from), '\0');
    in.read(out.data(), static_cast<std::streamsize>(out.size()));
    return in ? out : std::string();
  }
  std::string tail;
  files::ByteStream stream(path, [&](std::string_view chunk, std::uint64_t) {
    tail.append(chunk);
    if (tail.size() > 2 * kTailBytes) tail.erase(0, tail.size() - kTailBytes);
  });
  std::istream in(&stream);
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
  }
  return stream.ok() ? tail : std::string();
}

std::optional<nlohmann::json> metadata_from_tail(std::string_view tail) {
  const auto key = tail.rfind("\"chakrashim\"");
  if (key == std::string_view::npos) return std::nullopt;
  const auto open = tail.find('{', key);
  const auto close = tail.rfind('}');  // the document's own closing brace
  if (open == std::string_view::npos || close == std::string_view::npos || close <= open) return std::nullopt;
  auto meta = nlohmann::json::parse(tail.substr(open, close - open), nullptr, false);
  if (!meta.is_object()) return std::nullopt;
  return meta;
}

std::optional<std::int64_t> recording_cost_from_tail(std::string_view tail) {
  const auto meta = metadata_from_tail(tail);
  if (!meta || !meta->contains("recording_cost")) return std::nullopt;
  const auto& cost = (*meta)["recording_cost"];
  if (!cost.is_object() || !cost.contains("per_op_ns") || !cost["per_op_ns"].is_number_integer()) return std::nullopt;
  const auto ns = cost["per_op_ns"].get<std::int64_t>();
  if (ns < 0) return std::nullopt;
  return ns;
}

std::string recording_cost_refusal_from_tail(std::string_view tail) {
  const auto meta = metadata_from_tail(tail);
  if (!meta || !meta->contains("recording_cost")) return {};
  const auto& cost = (*meta)["recording_cost"];
  if (!cost.is_object() || !cost.contains("step_refused") || !cost["step_refused"].is_string()) return {};
  return cost["step_refused"].get<std::string>();
}

}  // namespace chakrashim::tools
