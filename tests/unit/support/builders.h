// What the tools' unit tests build by hand, once: device-trace events as
// the readers of check, link and report hand them on (tools/common/
// trace_event.h), ET nodes as the ET reader does (tools/common/et_reader.h),
// and the collector's device events (device_builders.h). A test sets the
// fields its case is about on top.
//
// Inline functions in a named namespace: the unit tests compile as unity
// builds (tests/CMakeLists.txt), where two files' helpers of one name in one
// anonymous namespace would become an overload set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "common/et_reader.h"
#include "common/trace_event.h"
#include "support/device_builders.h"

namespace chakrashim::testing_support {

// An integer argument that is present.
inline tools::IntArg int_arg(std::int64_t v) { return {true, v}; }

// A complete ("X") event; times in ns.
inline tools::TraceEvent complete_event(std::string cat, std::string name, std::int64_t ts_ns,
                                        std::int64_t dur_ns, std::int64_t pid = 0, std::int64_t tid = 0) {
  tools::TraceEvent e;
  e.ph = "X";
  e.cat = std::move(cat);
  e.name = std::move(name);
  e.pid = pid;
  e.tid = tid;
  e.ts_ns = ts_ns;
  e.dur_ns = dur_ns;
  return e;
}

// A GPU op on `stream` of `device` (Kineto's pid and tid for it), with its
// stream argument.
inline tools::TraceEvent gpu_event(std::string cat, std::string name, std::int64_t ts_ns, std::int64_t dur_ns,
                                   std::int64_t device, std::int64_t stream) {
  tools::TraceEvent e = complete_event(std::move(cat), std::move(name), ts_ns, dur_ns, device, stream);
  e.stream = int_arg(stream);
  return e;
}

// An ET node; by default with every attribute check requires.
inline tools::EtNode et_node(std::uint64_t id, std::string name, std::optional<std::uint64_t> parent,
                             std::optional<std::uint64_t> rf_id, std::uint8_t attr_mask = 0x7f) {
  tools::EtNode n;
  n.id = id;
  n.name = std::move(name);
  n.parent = parent;
  n.rf_id = rf_id;
  n.attr_mask = attr_mask;
  return n;
}

}  // namespace chakrashim::testing_support
