// The device-trace reader (tools/common/trace_reader.cpp) on any bytes: it
// must end with ok, or an error, never crash; and the events it hands out
// must be as many as it counts.
#include <cstdint>
#include <sstream>
#include <string>

#include "common/trace_reader.h"
#include "fuzz_support.h"

using namespace chakrashim::tools;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(chakrashim::fuzz::as_text(data, size)));
  std::uint64_t seen = 0;
  const TraceSummary s = read_device_trace(in, [&seen](const TraceEvent&) {
    ++seen;
  });
  CHAKRA_FUZZ_REQUIRE(seen == s.events);
  CHAKRA_FUZZ_REQUIRE(s.parse.ok == s.parse.error.empty());
  if (s.parse.truncated) CHAKRA_FUZZ_REQUIRE(!s.parse.ok);
  return 0;
}
