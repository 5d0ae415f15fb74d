// torch's ET observer names the job's own step records (its torch.profiler's
// prof.step() opens "ProfilerStep#N" every step) as torch does; the native
// recorder and the device trace write them as "job:ProfilerStep#N"
// (trace_schema.h). With CHAKRA_ET_RECORDER=torch the bridge copies torch's
// finished ET through this filter, which inserts the prefix in those node
// names, so that both recorders' files name them alike.
//
// Only a node's own "name" can hold the pattern below unescaped: torch writes
// every string value as a JSON string (its quotes escaped), and the attrs'
// names are torch's own ("rf_id", "scope", ...). torch >= 2.0 writes a node
// as `"id": N, "name": "...", ...`, one space after each colon. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "files/byte_sink.h"

namespace chakrashim::writers {

class TorchEtStepRenamer {
 public:
  // The text that precedes a job's step record's name.
  static constexpr std::string_view kPattern = "\"name\": \"ProfilerStep";
  static constexpr std::size_t kNameOffset = 9;  // past `"name": "`

  // `out` receives the renamed text; nullptr only counts (a scan).
  explicit TorchEtStepRenamer(files::ByteSink* out) : out_(out) {}

  // The next bytes of the file, cut anywhere.
  void feed(std::string_view bytes);
  // After the last bytes.
  void finish();
  std::uint64_t renamed() const { return renamed_; }

 private:
  void emit(std::string_view bytes) {
    if (out_) out_->write(bytes);
  }
  files::ByteSink* out_;
  std::string pending_;  // bytes not written yet: a match may start in them
  std::uint64_t renamed_ = 0;
};

}  // namespace chakrashim::writers
