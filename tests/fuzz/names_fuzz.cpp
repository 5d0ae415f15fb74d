// The small text parsers of the tools: capture folder and file names
// (common/capture_scan.h), microsecond text to ns (common/time_text.h) and
// device-trace names (check/device_facts.h).
#include <cstdint>
#include <string>

#include "check/device_facts.h"
#include "common/capture_scan.h"
#include "common/time_text.h"
#include "fuzz_support.h"

using namespace chakrashim::tools;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(chakrashim::fuzz::as_text(data, size));
  if (const auto f = parse_folder_name(text)) CHAKRA_FUZZ_REQUIRE(!text.empty());
  // rank-R.json, or a loose file's .R.json / _R.json / -R.json.
  if (rank_from_file_name(text)) CHAKRA_FUZZ_REQUIRE(text.find(".json") != std::string::npos);
  (void)is_partial_name(text);
  if (const auto ns = micros_text_to_ns(text)) CHAKRA_FUZZ_REQUIRE(!text.empty());
  if (const auto step = check::profiler_step_number(text)) {
    CHAKRA_FUZZ_REQUIRE(text.rfind("ProfilerStep#", 0) == 0);
  }
  CHAKRA_FUZZ_REQUIRE(check::strip_version_suffix(text).size() <= text.size());
  return 0;
}
