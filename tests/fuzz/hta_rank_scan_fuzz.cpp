// HtaRankScan (tools/common/hta_rank_scan.cpp), HTA's "rank":\s+(\d+) on a
// stream: fed in arbitrary chunks it must find exactly what it finds when
// fed the whole text at once, and a match must be where it says.
#include <cstdint>
#include <string>

#include "common/hta_rank_scan.h"
#include "fuzz_support.h"

using chakrashim::tools::HtaRankScan;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  // The first byte chooses the chunk size, so one input covers one split.
  const std::size_t chunk = 1 + data[0] % 17;
  const std::string_view text = chakrashim::fuzz::as_text(data + 1, size - 1);

  HtaRankScan whole;
  whole.feed(text);
  whole.finish();
  HtaRankScan pieces;
  for (std::size_t at = 0; at < text.size(); at += chunk) pieces.feed(text.substr(at, chunk));
  pieces.finish();

  CHAKRA_FUZZ_REQUIRE(whole.done() == pieces.done());
  CHAKRA_FUZZ_REQUIRE(whole.rank() == pieces.rank());
  if (whole.done()) {
    CHAKRA_FUZZ_REQUIRE(whole.offset() == pieces.offset());
    CHAKRA_FUZZ_REQUIRE(text.substr(whole.offset(), 7) == "\"rank\":");
  }
  return 0;
}
