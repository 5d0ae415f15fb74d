#include "record_decoder.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include <cupti_activity.h>

namespace chakrashim::collector {

namespace {

// The fields we read sit at the same offsets in every record version the
// supported CUPTI releases emit, so one reader serves them all. Checked
// against the older layouts that cupti_activity_deprecated.h still carries.
#define CHAKRA_SAME_OFFSET(A, B, field) \
  static_assert(offsetof(A, field) == offsetof(B, field), #A " and " #B " differ at " #field)
#define CHAKRA_KERNEL_FIELDS(A, B)                                                           \
  CHAKRA_SAME_OFFSET(A, B, registersPerThread);                                              \
  CHAKRA_SAME_OFFSET(A, B, start);                                                           \
  CHAKRA_SAME_OFFSET(A, B, end);                                                             \
  CHAKRA_SAME_OFFSET(A, B, deviceId);                                                        \
  CHAKRA_SAME_OFFSET(A, B, contextId);                                                       \
  CHAKRA_SAME_OFFSET(A, B, streamId);                                                        \
  CHAKRA_SAME_OFFSET(A, B, gridX);                                                           \
  CHAKRA_SAME_OFFSET(A, B, blockZ);                                                          \
  CHAKRA_SAME_OFFSET(A, B, staticSharedMemory);                                              \
  CHAKRA_SAME_OFFSET(A, B, dynamicSharedMemory);                                             \
  CHAKRA_SAME_OFFSET(A, B, correlationId);                                                   \
  CHAKRA_SAME_OFFSET(A, B, name);                                                            \
  CHAKRA_SAME_OFFSET(A, B, queued)
CHAKRA_KERNEL_FIELDS(CUpti_ActivityKernel10, CUpti_ActivityKernel9);
#define CHAKRA_COPY_FIELDS(A, B)                                                             \
  CHAKRA_SAME_OFFSET(A, B, copyKind);                                                        \
  CHAKRA_SAME_OFFSET(A, B, srcKind);                                                         \
  CHAKRA_SAME_OFFSET(A, B, dstKind);                                                         \
  CHAKRA_SAME_OFFSET(A, B, bytes);                                                           \
  CHAKRA_SAME_OFFSET(A, B, start);                                                           \
  CHAKRA_SAME_OFFSET(A, B, end);                                                             \
  CHAKRA_SAME_OFFSET(A, B, deviceId);                                                        \
  CHAKRA_SAME_OFFSET(A, B, contextId);                                                       \
  CHAKRA_SAME_OFFSET(A, B, streamId);                                                        \
  CHAKRA_SAME_OFFSET(A, B, correlationId)
CHAKRA_COPY_FIELDS(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy5);
CHAKRA_COPY_FIELDS(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP3);
#define CHAKRA_SET_FIELDS(A, B)                                                              \
  CHAKRA_SAME_OFFSET(A, B, bytes);                                                           \
  CHAKRA_SAME_OFFSET(A, B, start);                                                           \
  CHAKRA_SAME_OFFSET(A, B, end);                                                             \
  CHAKRA_SAME_OFFSET(A, B, deviceId);                                                        \
  CHAKRA_SAME_OFFSET(A, B, contextId);                                                       \
  CHAKRA_SAME_OFFSET(A, B, streamId);                                                        \
  CHAKRA_SAME_OFFSET(A, B, correlationId);                                                   \
  CHAKRA_SAME_OFFSET(A, B, memoryKind)
CHAKRA_SET_FIELDS(CUpti_ActivityMemset4, CUpti_ActivityMemset3);
CHAKRA_SAME_OFFSET(CUpti_ActivitySynchronization2, CUpti_ActivitySynchronization, correlationId);
CHAKRA_SAME_OFFSET(CUpti_ActivitySynchronization2, CUpti_ActivitySynchronization, streamId);
CHAKRA_SAME_OFFSET(CUpti_ActivityOverhead3, CUpti_ActivityOverhead2, start);
CHAKRA_SAME_OFFSET(CUpti_ActivityOverhead3, CUpti_ActivityOverhead2, end);
#undef CHAKRA_SAME_OFFSET

std::int64_t ns(std::uint64_t t) { return static_cast<std::int64_t>(t); }

// An enum field's bits, read without loading the enum: a value CUPTI added
// after our headers (or a damaged record) must not be undefined behaviour.
template <typename E>
std::uint32_t bits(const E& field) {
  static_assert(sizeof(E) == sizeof(std::uint32_t));
  std::uint32_t v;
  std::memcpy(&v, &field, sizeof v);
  return v;
}

// Zero, inverted, or beyond int64: CUPTI writes 0 for an unfinished
// activity, and such a record would draw a span from 1970 or a negative dur.
bool bad_times(std::uint64_t start, std::uint64_t end) {
  return start == 0 || end < start || end > static_cast<std::uint64_t>(INT64_MAX);
}

template <typename K>
void read_kernel(const K& k, Decoded& d) {
  DeviceEvent& e = d.event;
  e.kind = DeviceEventKind::kernel;
  e.start_ns = ns(k.start);
  e.end_ns = ns(k.end);
  e.correlation = k.correlationId;
  e.device = k.deviceId;
  e.context = k.contextId;
  e.stream = k.streamId;
  e.grid[0] = k.gridX, e.grid[1] = k.gridY, e.grid[2] = k.gridZ;
  e.block[0] = k.blockX, e.block[1] = k.blockY, e.block[2] = k.blockZ;
  e.registers = k.registersPerThread;
  // In 64 bits: two int32 fields of a damaged record must not overflow.
  const std::int64_t shared = std::int64_t{k.staticSharedMemory} + k.dynamicSharedMemory;
  e.shared_memory = static_cast<std::int32_t>(std::clamp<std::int64_t>(shared, INT32_MIN, INT32_MAX));
  // CUPTI writes 0 or CUPTI_TIMESTAMP_UNKNOWN when queued times are off.
  e.extra = (k.queued == CUPTI_TIMESTAMP_UNKNOWN) ? 0 : k.queued;
  d.kernel_name = k.name;
  d.outcome = DecodeOutcome::event;
}

template <typename M>
void read_copy(const M& m, Decoded& d) {
  DeviceEvent& e = d.event;
  e.kind = DeviceEventKind::memcpy;
  e.start_ns = ns(m.start);
  e.end_ns = ns(m.end);
  e.correlation = m.correlationId;
  e.device = m.deviceId;
  e.context = m.contextId;
  e.stream = m.streamId;
  e.extra = m.bytes;
  e.copy[0] = m.copyKind, e.copy[1] = m.srcKind, e.copy[2] = m.dstKind;
  d.outcome = DecodeOutcome::event;
}

}  // namespace

Decoded RecordDecoder::decode(const void* raw) const {
  const auto* record = static_cast<const CUpti_Activity*>(raw);
  Decoded d;
  if (!record) return d;
  std::uint64_t start = 0, end = 0;
  switch (bits(record->kind)) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      if (cuda13_) {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        start = k->start, end = k->end;
        read_kernel(*k, d);
      } else {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel9*>(record);
        start = k->start, end = k->end;
        read_kernel(*k, d);
      }
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      start = m->start, end = m->end;
      read_copy(*m, d);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      start = m->start, end = m->end;
      read_copy(*m, d);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      start = m->start, end = m->end;
      DeviceEvent& e = d.event;
      e.kind = DeviceEventKind::memset;
      e.start_ns = ns(m->start);
      e.end_ns = ns(m->end);
      e.correlation = m->correlationId;
      e.device = m->deviceId;
      e.context = m->contextId;
      e.stream = m->streamId;
      e.extra = m->bytes;
      e.copy[1] = static_cast<std::uint8_t>(m->memoryKind);
      d.outcome = DecodeOutcome::event;
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      start = a->start, end = a->end;
      DeviceEvent& e = d.event;
      e.kind = bits(record->kind) == CUPTI_ACTIVITY_KIND_RUNTIME ? DeviceEventKind::runtime
                                                            : DeviceEventKind::driver;
      e.start_ns = ns(a->start);
      e.end_ns = ns(a->end);
      e.correlation = a->correlationId;
      e.name = a->cbid;  // the session maps it to a name index
      e.context = a->cbid;
      e.device = a->processId;
      e.stream = a->threadId;
      d.outcome = DecodeOutcome::event;
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* c = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      if (bits(c->externalKind) != external_kind_) return d;
      d.corr_correlation = c->correlationId;
      d.corr_external = c->externalId;
      d.outcome = DecodeOutcome::correlation;
      return d;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      start = s->start, end = s->end;
      DeviceEvent& e = d.event;
      e.kind = DeviceEventKind::sync;
      e.start_ns = ns(s->start);
      e.end_ns = ns(s->end);
      e.correlation = s->correlationId;
      e.context = s->contextId;
      // CUPTI_SYNCHRONIZATION_INVALID_VALUE: not a stream sync.
      e.stream = s->streamId;
      e.name = bits(s->type);
      d.outcome = DecodeOutcome::event;
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto* o = reinterpret_cast<const CUpti_ActivityOverhead3*>(record);
      start = o->start, end = o->end;
      DeviceEvent& e = d.event;
      e.kind = DeviceEventKind::overhead;
      e.start_ns = ns(o->start);
      e.end_ns = ns(o->end);
      e.name = bits(o->overheadKind);
      d.outcome = DecodeOutcome::event;
      break;
    }
    default:
      return d;
  }
  if (bad_times(start, end)) {
    d = Decoded{};
    d.outcome = DecodeOutcome::invalid;
  }
  return d;
}

std::string_view strip_version_suffix(std::string_view name) {
  const auto pos = name.rfind("_v");
  if (pos == std::string_view::npos || pos + 2 == name.size()) return name;
  for (std::size_t i = pos + 2; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return name.substr(0, pos);
}

}  // namespace chakrashim::collector
