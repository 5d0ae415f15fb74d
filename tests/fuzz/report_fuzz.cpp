// `chakrashim report` on one rank: the device trace is written to a file and
// read by report_rank as the command reads it (common/byte_stream, the
// reader, the event table, step, self-time, GPU and timeline figures).
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "report/rank_report.h"

using namespace chakrashim::tools;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  RankFiles files;
  files.device_path = chakrashim::fuzz::write_scratch("rank-0.json", chakrashim::fuzz::as_text(data, size));
  report::RankOptions options;
  options.want_timeline = true;
  const report::RankStats stats = report::report_rank("", files, options, nullptr);
  // No property on the figures: "in ops + outside ops = the step" holds for
  // properly nested spans only, and fuzzed traces overlap spans on a thread.
  (void)stats;
  return 0;
}
