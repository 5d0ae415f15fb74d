// The Execution Trace reader (tools/common/et_reader.cpp) on any bytes: ok
// or an error, never a crash, and every node it counts is handed out.
#include <cstdint>
#include <sstream>
#include <string>

#include "common/et_reader.h"
#include "fuzz_support.h"

using namespace chakrashim::tools;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(chakrashim::fuzz::as_text(data, size)));
  std::uint64_t seen = 0;
  const EtSummary s = read_execution_trace(in, [&seen](const EtNode&) { ++seen; });
  CHAKRA_FUZZ_REQUIRE(seen == s.nodes);
  CHAKRA_FUZZ_REQUIRE(s.parse.ok == s.parse.error.empty());
  if (s.parse.truncated) CHAKRA_FUZZ_REQUIRE(!s.parse.ok);
  return 0;
}
