// `chakrashim check` on one rank: an ET and a device trace (split at a
// "====" line) written to files and checked by check_rank as the command
// does: both readers, the HTA rank scan, the facts and every rule.
#include <cstdint>
#include <string>

#include "check/rank_check.h"
#include "fuzz_support.h"

using namespace chakrashim::tools;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto [et, device] = chakrashim::fuzz::split_pair(chakrashim::fuzz::as_text(data, size));
  RankFiles files;
  files.host_path = chakrashim::fuzz::write_scratch("rank-0.et.json", et);
  files.device_path = chakrashim::fuzz::write_scratch("rank-0.json", device);
  const check::RankReport r = check::check_rank("", files, check::CheckOptions{}, nullptr);
  (void)r;
  return 0;
}
