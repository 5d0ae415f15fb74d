// One rank's link, start to end: read the ET (first pass), read the device
// trace, link, then read the ET again while writing the ET+ through
// publish_file (a .partial renamed when complete). And the same for every
// rank of a capture, in parallel. Messages only; the command prints them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "link/device_ops.h"
#include "link/et_plus_linker.h"

namespace chakrashim::files {
class ByteSink;
}

namespace chakrashim::tools::link {

struct RankJob {
  std::uint64_t rank = 0;
  std::string host_path, device_path, output_path;
  bool gzip = false;  // also implied by an output name ending in .gz
  // Also receives the ET+ as it is written, uncompressed (convert parses it
  // meanwhile); not owned.
  files::ByteSink* tee = nullptr;
  // Keep the window's partial last step (partial_step.h); by default it is
  // left out, and said.
  bool keep_partial_step = false;
};

// The partial last step left out of one rank's link (issue #49).
struct LeftOutStep {
  std::uint64_t step = 0;
  std::string reason;  // what ended the window: exit, signal:SIGTERM, ...
  std::int64_t dur_ns = 0;
  std::uint64_t host_nodes = 0, gpu_ops = 0;
};

struct RankResult {
  std::uint64_t rank = 0;
  bool ok = false;
  std::string error;                  // one line when !ok
  std::vector<std::string> warnings;  // lines worth a look, never fatal
  std::string output_path;
  LinkStats stats;
  std::uint64_t nodes_written = 0;
  double seconds = 0;
  std::optional<LeftOutStep> left_out;
  // The window as the rank captured it: its ProfilerStep#N spans, less the
  // partial step left out. What a simulation of the rank is measured
  // against (`chakrashim simulate`); 0 steps: none in the device trace.
  std::int64_t window_ns = 0;
  std::uint64_t window_steps = 0;
};

// One line for the ranks' left-out partial steps, empty if none was:
//   "the partial step 30 at the window's end (exit; 1377.2 ms on rank 0) is left out of ranks 0-1: it holds
//    what ran as the window ended, not a training step; --keep-partial-step keeps it"
std::string left_out_line(const std::vector<std::pair<std::uint64_t, LeftOutStep>>& ranks);
std::string left_out_line(const std::vector<RankResult>& results);

RankResult link_rank(const RankJob& job);

// RankResult's window_ns and window_steps from a device trace alone, for an
// ET+ that link wrote earlier (the partial step left out unless kept, as
// link does by default). nullopt: the trace cannot be read.
struct CapturedWindow {
  std::int64_t window_ns = 0;
  std::uint64_t window_steps = 0;
};
std::optional<CapturedWindow> captured_window(const std::string& device_path, bool keep_partial_step = false);

// Everything of link_rank but the writing: the two reads, the checks and the
// join. `result.ok` (and its warnings and stats) as link_rank would give
// them if the write then succeeds; `plan` and `device` are what the ET+
// writer, or convert's in-memory join (convert/linked_join.h), takes.
struct RankPlan {
  RankResult result;
  LinkPlan plan;
  DeviceOps device;  // cpu and launches freed: the plan holds what they gave
};
RankPlan plan_rank(const RankJob& job);

// The ranks of a capture folder, or an error. `output_dir` empty: each run
// JOB gets JOB_linked[.i]/ beside its JOB_chakra[.i]/.
struct CapturePlan {
  std::vector<RankJob> jobs;
  std::vector<std::string> skipped;  // ranks without both files, as lines
  std::vector<std::string> warnings;  // ranks the capture should hold and lacks (missing_ranks.h)
  std::string error;
};
CapturePlan plan_capture(const std::string& dir, const std::string& output_dir, bool gzip,
                         bool keep_partial_step = false);

// The end of a capture's link, in one line:
//   "chakrashim link: 512 ranks linked, 0 failed; 1843200 GPU ops linked; 6.52 s; ET+ in /t/0_linked"
std::string totals_line(const std::vector<RankResult>& results, double seconds);

// "rank 0: 14391 host nodes (14385 timed), 3660 GPU ops linked, ... -> OUT (0.4 s)"
std::string summary_line(const RankResult& r);

}  // namespace chakrashim::tools::link
