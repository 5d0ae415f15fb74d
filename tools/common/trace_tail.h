// The end of a device trace, where the writer puts its metadata object
// ("chakrashim": {...}, docs/trace-format.md): read without reading the
// file, for the commands that need one fact of it (link, convert, report).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace chakrashim::tools {

// The last 64 KiB of the file's text: a seek for a plain file, a pass
// through zlib for a gzip one (zlib cannot seek backwards cheaply). Empty
// when it cannot be read.
std::string read_tail(const std::string& path);

// The "chakrashim" object at the end of a device trace's text:
//   "...\"chakrashim\": {\"version\": ..., \"ranks\": {...}}\n}" -> that object
//   a tail without one (torch.profiler's trace), or cut inside it -> nullopt
std::optional<nlohmann::json> metadata_from_tail(std::string_view tail);

// Its recording_cost.per_op_ns (what each recorded op cost the job,
// measured at capture), where there is one.
std::optional<std::int64_t> recording_cost_from_tail(std::string_view tail);
// Its recording_cost.step_refused: why the steps' figure was not taken
// (shim/src/writers/recording_cost.h); empty where it was, or is absent.
std::string recording_cost_refusal_from_tail(std::string_view tail);

}  // namespace chakrashim::tools
