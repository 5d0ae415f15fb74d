// What the check keeps of a device trace while it streams by: counters with
// one example each, and compact records (ids, span bounds) for the rules that
// compare events with each other. Nothing here grows with the file's bytes,
// only with its number of events, by a few words each.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/trace_event.h"

namespace chakrashim::tools::check {

// A count of events breaking one rule, with the first one as an example.
struct Tally {
  std::uint64_t count = 0;
  std::string example;
  void add(const TraceEvent& e);
};

struct StepEvent {
  std::uint64_t step = 0;
  std::uint32_t thread = 0;
  std::int64_t start_ns = 0, end_ns = 0;
};

// Where an ET marker's rf_id was found in the device trace.
struct MarkerHit {
  std::uint64_t rf_id = 0;
  std::uint32_t thread = 0;
  std::int64_t ts_ns = 0;
};

class DeviceFacts {
 public:
  // `et_op_rf_ids` (sorted) and `marker_rf_ids` come from the ET when there
  // is one; the join is counted while the events stream by.
  DeviceFacts(const std::vector<std::uint64_t>* et_op_rf_ids,
              std::vector<std::uint64_t> marker_rf_ids);

  void add(const TraceEvent& e);
  void finish();

  // Counts.
  std::uint64_t cuda_runtime = 0, kernels = 0, memcpys = 0, memsets = 0;
  // cpu_op and user_annotation spans, ProfilerStep#N left out.
  std::uint64_t host_spans = 0;
  std::uint64_t gpu_ops() const { return kernels + memcpys + memsets; }
  // Rule tallies.
  Tally missing_rf_id, gpu_missing_external_id, gpu_bad_stream, cpu_with_stream, launch_suffix;
  std::uint64_t duplicate_correlations = 0;
  std::string duplicate_correlation_example;
  std::uint64_t equal_spans = 0;
  std::string equal_span_example;
  std::uint64_t gpu_ops_unlinked = 0;  // launched by calls Chakra does not count
  // Steps and the join.
  std::vector<StepEvent> steps;  // in file order
  // The steps' numbers by start time (file order among equal starts).
  std::vector<std::uint64_t> steps_by_time() const;
  std::vector<MarkerHit> marker_hits;
  std::uint64_t et_ops_matched() const;

 private:
  struct Span {
    std::int64_t start, end;
    std::uint32_t thread;
  };
  struct Launch {
    std::int64_t correlation;
    bool chakra_name;
  };
  std::uint32_t thread_of(const TraceEvent& e);
  void add_host(const TraceEvent& e);
  void add_launch(const TraceEvent& e);
  void add_gpu(const TraceEvent& e);
  void find_equal_spans();
  void find_launch_problems();

  const std::vector<std::uint64_t>* et_op_rf_ids_;
  std::vector<bool> et_matched_;  // parallel to *et_op_rf_ids_
  std::vector<std::uint64_t> marker_rf_ids_;  // sorted
  std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> threads_;
  std::vector<Span> spans_;
  std::vector<Launch> launches_;
  std::vector<std::int64_t> gpu_correlations_;  // kernels and memcpys
};

// Step numbers of "ProfilerStep#12" -> 12; nullopt when the name is not one.
std::optional<std::uint64_t> profiler_step_number(const std::string& name);
// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel"; other names unchanged.
std::string strip_version_suffix(const std::string& name);

}  // namespace chakrashim::tools::check
