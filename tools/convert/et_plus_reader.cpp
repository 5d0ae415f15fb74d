#include "convert/et_plus_reader.h"

#include <array>
#include <cmath>
#include <istream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>

#include "files/byte_stream.h"
#include "common/json_stream_parser.h"
#include "common/tool_schema.h"
#include "convert/et_plus_sax.h"

namespace chakrashim::tools::convert {

using detail::EtPlusSax;

bool converter_reads_schema(std::string_view schema) {
  const auto& ok = names::kConverterSchemas;
  return std::find(ok.begin(), ok.end(), schema) != ok.end();
}

namespace {

// Runs the parse; the problem in one line, or "" when the document read.
std::string parse_with(EtPlusSax& sax, std::streambuf& in, const files::ByteStream* file) {
  const JsonStreamOutcome parsed = parse_json_stream(in, sax);
  if (file != nullptr && !file->ok()) return "cannot be read: " + file->error() + " (a truncated or damaged gzip file?)";
  if (parsed.stopped) return sax.problem();
  if (!parsed.ok) {
    return parsed.truncated ? "ends early (an unfinished or truncated file): " + parsed.error
                            : "invalid JSON: " + parsed.error;
  }
  if (!sax.finish()) return sax.problem();
  return "";
}

EtPlusRead read_from(std::streambuf& in, const files::ByteStream* file) {
  EtPlusRead result;
  EtPlusSax sax(result.trace);
  result.error = parse_with(sax, in, file);
  result.ok = result.error.empty();
  if (!result.ok) result.trace = {};
  return result;
}

}  // namespace

EtPlusRead read_et_plus(const std::string& path, std::atomic<std::uint64_t>* progress) {
  files::ByteStream::ChunkObserver observer;
  if (progress != nullptr) {
    // Counts file bytes (compressed ones for gzip), as the bar's total does.
    observer = [progress, last = std::uint64_t{0}](std::string_view, std::uint64_t pos) mutable {
      if (pos > last) progress->fetch_add(pos - last, std::memory_order_relaxed);
      last = pos;
    };
  }
  files::ByteStream stream(path, observer);
  if (!stream.ok()) {
    EtPlusRead result;
    result.error = stream.error();
    return result;
  }
  return read_from(stream, &stream);
}

EtPlusRead read_et_plus(std::streambuf& in) { return read_from(in, nullptr); }

HostEtRead read_host_et(const std::string& path) {
  HostEtRead result;
  files::ByteStream stream(path);
  if (!stream.ok()) {
    result.error = stream.error();
    return result;
  }
  EtPlus meta_only;
  EtPlusSax sax(meta_only, &result.nodes);
  result.error = parse_with(sax, stream, &stream);
  result.ok = result.error.empty();
  if (result.ok) {
    result.meta = std::move(meta_only.meta);
    result.ordinary = sax.ordinary();
  } else {
    result.nodes = {};
  }
  return result;
}

}  // namespace chakrashim::tools::convert
