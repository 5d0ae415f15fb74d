// The collector's device events (chakrashim/events.h) as the in-process
// unit tests build them by hand; torch- and tools-free, so that the
// sanitizer variants build these tests without the tools (tests/CMakeLists.txt).
// Inline, in a named namespace: the unit tests compile as unity builds.
#pragma once

#include <cstdint>

#include "chakrashim/events.h"

namespace chakrashim::testing_support {

// One of the collector's device events over [start_ns, end_ns).
inline DeviceEvent device_event(DeviceEventKind kind, std::int64_t start_ns, std::int64_t end_ns,
                                std::uint32_t correlation = 0, std::uint64_t external_id = 0,
                                std::uint32_t stream = 0) {
  DeviceEvent e;
  e.kind = kind;
  e.start_ns = start_ns;
  e.end_ns = end_ns;
  e.correlation = correlation;
  e.external_id = external_id;
  e.stream = stream;
  return e;
}

}  // namespace chakrashim::testing_support
