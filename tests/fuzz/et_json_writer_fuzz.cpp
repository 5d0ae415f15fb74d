// The native ET recorder's writer (shim/src/writers/et_json_writer.cpp) on
// random records: whatever the bytes, it ends, and what it writes is one
// JSON document (records it cannot read are counted and skipped).
//
// Input: byte 0 picks the number of threads (1-4); the rest is split evenly
// into their record streams, each with the same small string table.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "files/byte_sink.h"
#include "fuzz_support.h"
#include "writers/et_json_writer.h"

using namespace chakrashim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const std::vector<std::string> strings = {
      "aten::addmm", "float", "cpu", "None", "aten::addmm(Tensor self) -> Tensor", "\"q\\\n",
      "2", "\"allreduce\"", "not json", "", "cuda:0"};
  const std::size_t threads = 1 + data[0] % 4;
  const std::size_t per = (size - 1) / threads;
  std::vector<writers::EtThreadStream> streams(threads);
  for (std::size_t i = 0; i < threads; ++i) {
    streams[i].strings = &strings;
    const std::uint8_t* begin = data + 1 + i * per;
    const std::size_t n = i + 1 == threads ? size - 1 - i * per : per;
    // Two chunks, as the recorder may leave a record's predecessor in the
    // chunk before.
    streams[i].chunks.emplace_back(begin, n / 2);
    streams[i].chunks.emplace_back(begin + n / 2, n - n / 2);
  }
  writers::EtHeader header;
  header.pid = 1;
  header.time = "2026-01-01 00:00:00";
  files::StringSink sink;
  writers::EtWriteStats stats;
  CHAKRA_FUZZ_REQUIRE(writers::write_et_json(sink, header, streams, &stats));
  CHAKRA_FUZZ_REQUIRE(nlohmann::json::accept(sink.text()));
  return 0;
}
