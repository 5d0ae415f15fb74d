// `chakrashim link` on one rank, in memory: an ET and a device trace (split
// at a "====" line) -> both readers -> the linker -> the ET+ writer, whose
// own SAX pass re-reads the ET. Whatever the inputs, no crash, and a written
// ET+ is valid JSON.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/et_reader.h"
#include "common/trace_reader.h"
#include "files/byte_sink.h"
#include "fuzz_support.h"
#include "link/device_ops.h"
#include "link/et_plus_linker.h"
#include "link/et_plus_writer.h"

using namespace chakrashim::tools;
using namespace chakrashim::tools::link;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto [et_text, device_text] = chakrashim::fuzz::split_pair(chakrashim::fuzz::as_text(data, size));
  const std::string et(et_text);

  std::vector<HostNode> host;
  std::istringstream et_in(et);
  const EtSummary es = read_execution_trace(et_in, [&host](const EtNode& n) {
    if (n.id) host.push_back({*n.id, n.parent, n.rf_id});
  });
  if (!es.parse.ok || es.nodes != host.size()) return 0;

  DeviceOpsBuilder builder;
  std::istringstream dev_in{std::string(device_text)};
  if (!read_device_trace(dev_in, [&builder](const TraceEvent& e) { builder.add(e); }).parse.ok) return 0;
  const DeviceOps device = std::move(builder).finish();

  const LinkPlan plan = link_et_plus(host, device);
  if (!plan.error.empty()) return 0;
  chakrashim::files::StringSink sink;
  std::istringstream again(et);
  const WriteOutcome out = write_et_plus(again, plan, device, sink, chakrashim::fuzz::scratch_dir().string());
  if (out.ok) {
    CHAKRA_FUZZ_REQUIRE(!nlohmann::json::parse(sink.text(), nullptr, false).is_discarded());
  }
  return 0;
}
