// The device trace as chakra_trace_link sees it, kept compact: only the
// events its rules read, each a few dozen bytes, so a 1 GB trace becomes a
// model of a few hundred MB at most. Built event by event from the streaming
// reader (the events themselves are never kept).
//
// Chakra's categories (kineto_operator.py):
//   CPU ops   cat cpu_op or user_annotation, name without "ProfilerStep"
//   launches  cat cuda_runtime or cuda_driver with a launch name (below)
//   GPU ops   cat kernel or gpu_memcpy (gpu_memset is not linked)
// Missing fields read as Chakra reads them: ts and dur 0, External id and
// correlation -1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/trace_event.h"
#include "link/name_pool.h"

namespace chakrashim::tools::link {

struct CpuOp {
  std::int64_t ts = 0, dur = 0;  // ns
  std::int64_t tid = 0;
  std::int64_t external_id = -1;
  std::optional<std::int64_t> rf_id;
  bool nccl_coalesced = false;  // named "nccl:coalesced": NCCL kernels skip it
};

struct Launch {
  std::int64_t correlation = -1;
  std::int64_t ts = 0, tid = 0;
};

struct GpuOp {
  std::int64_t ts = 0, dur = 0;
  std::int64_t correlation = -1, external_id = -1;
  std::optional<std::int64_t> stream;
  std::uint32_t name = 0, cat = 0, ph = 0;  // NamePool ids
  std::optional<std::uint32_t> pg_name;     // "Process Group Name", when given
  bool nccl_name = false;                   // "nccl" in the name, any case
};

struct DeviceOps {
  std::vector<CpuOp> cpu;         // by ts; equal ts keep file order (Python's stable sort)
  std::vector<Launch> launches;   // by correlation
  std::vector<GpuOp> gpu;         // by ts, stable
  NamePool names;
  std::uint64_t memsets = 0;      // seen, never linked (Chakra does not)
  std::uint64_t events = 0;
  // Chakra refuses a trace where two launches share a correlation.
  std::optional<std::int64_t> duplicate_correlation;
};

// True for the CUDA and HIP calls Chakra counts as launches.
bool is_launch_name(std::string_view name);

class DeviceOpsBuilder {
 public:
  void add(const TraceEvent& e);
  // Sorts as Chakra does and checks the launch correlations.
  DeviceOps finish() &&;

 private:
  DeviceOps ops_;
};

}  // namespace chakrashim::tools::link
