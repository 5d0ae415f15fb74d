#include "buffer_decoder.h"

namespace chakrashim::collector {

namespace {

// Kineto's spellings (libkineto cupti_strings.cpp), so that tools keyed on
// its names (HTA's memcpy/memset classification) read ours alike.
const char* memcpy_kind_string(std::uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "<unknown>";
  }
}

const char* memory_kind_string(std::uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN: return "Unknown";
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "Device Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "Managed Static";
    default: return "Unrecognized";
  }
}

const char* sync_type_string(std::uint32_t t) {
  switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "Event Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "Stream Wait Event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "Stream Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "Context Sync";
    default: return "Unknown Sync";
  }
}

const char* overhead_kind_string(std::uint32_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "Driver Compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "Buffer Flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "Instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "Resource";
    default: return "Unknown";
  }
}

}  // namespace

BufferDecoder::BufferDecoder(RecordDecoder decoder, NextRecordFn next, CallbackNameFn names,
                             std::int64_t clock_offset_ns, MemoryBudget* budget)
    : decoder_(decoder), next_(next), names_(names), offset_(clock_offset_ns), budget_(budget) {}

bool BufferDecoder::room(std::size_t count, std::size_t size, std::size_t& charged) {
  if (!budget_ || (count + 1) * size <= charged) return true;
  if (!budget_->try_charge(kChargeBlock)) return false;
  charged += kChargeBlock;
  return true;
}

std::uint32_t BufferDecoder::intern(std::string name) {
  auto it = name_index_.find(name);
  if (it != name_index_.end()) return it->second;
  const auto index = static_cast<std::uint32_t>(capture_.names.size());
  capture_.names.push_back(name);
  name_index_.emplace(std::move(name), index);
  return index;
}

template <typename Make>
std::uint32_t BufferDecoder::keyed(std::uint64_t key, Make make) {
  auto it = keyed_name_.find(key);
  if (it != keyed_name_.end()) return it->second;
  const std::uint32_t index = intern(make(key));
  keyed_name_.emplace(key, index);
  return index;
}

void BufferDecoder::decode(std::uint8_t* buffer, std::size_t valid) {
  if (!next_ || valid == 0) return;
  CUpti_Activity* record = nullptr;
  const char* last_ptr = nullptr;
  std::uint32_t last_index = 0;
  while (next_(buffer, valid, &record) == CUPTI_SUCCESS) {
    Decoded d = decoder_.decode(record);
    switch (d.outcome) {
      case DecodeOutcome::skipped:
        continue;
      case DecodeOutcome::invalid:
        ++capture_.invalid_records;
        continue;
      case DecodeOutcome::correlation:
        if (!room(capture_.correlations.size(), sizeof(CorrelationLink), correlations_charged_)) {
          // Over CHAKRA_MAX_MEMORY: the GPU ops of this launch lose their op.
          ++capture_.dropped_records;
          continue;
        }
        capture_.correlations.push_back(CorrelationLink{d.corr_correlation, d.corr_external});
        continue;
      case DecodeOutcome::event:
        break;
    }
    DeviceEvent& e = d.event;
    // Onto the host clock; a time the offset would push out of int64 is as
    // unusable as a zero one.
    if (__builtin_add_overflow(e.start_ns, offset_, &e.start_ns) ||
        __builtin_add_overflow(e.end_ns, offset_, &e.end_ns)) {
      ++capture_.invalid_records;
      continue;
    }
    if (!room(capture_.events.size(), sizeof(DeviceEvent), events_charged_)) {
      // Over CHAKRA_MAX_MEMORY: counted, and the trace says where it was cut.
      ++capture_.dropped_records;
      if (!capture_.truncated_at_ns) capture_.truncated_at_ns = e.start_ns;
      continue;
    }
    switch (e.kind) {
      case DeviceEventKind::kernel:
        if (e.extra) e.extra += static_cast<std::uint64_t>(offset_);
        // Kernels of one module share CUPTI's name pointer: one lookup for
        // a run of the same kernel, one hash probe otherwise.
        if (d.kernel_name && d.kernel_name == last_ptr) {
          e.name = last_index;
        } else {
          auto it = kernel_name_by_ptr_.find(d.kernel_name);
          if (it == kernel_name_by_ptr_.end()) {
            const std::uint32_t index = intern(d.kernel_name ? d.kernel_name : "<unnamed kernel>");
            it = kernel_name_by_ptr_.emplace(d.kernel_name, index).first;
          }
          e.name = last_index = it->second;
          last_ptr = d.kernel_name;
        }
        break;
      case DeviceEventKind::runtime:
      case DeviceEventKind::driver: {
        const bool runtime = e.kind == DeviceEventKind::runtime;
        e.name = keyed((std::uint64_t{runtime ? 1u : 2u} << 32) | e.context, [&](std::uint64_t k) {
          const auto cbid = static_cast<std::uint32_t>(k);
          const char* raw = nullptr;
          if (names_ && names_(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, cbid,
                               &raw) == CUPTI_SUCCESS && raw)
            return std::string(strip_version_suffix(raw));
          return std::string(runtime ? "cuda_runtime_cbid_" : "cuda_driver_cbid_") + std::to_string(cbid);
        });
        break;
      }
      case DeviceEventKind::memcpy:
        e.name = keyed((3ULL << 32) | e.copy[0] | (e.copy[1] << 8) | (e.copy[2] << 16), [](std::uint64_t k) {
          return std::string("Memcpy ") + memcpy_kind_string(k & 0xff) + " (" +
                 memory_kind_string((k >> 8) & 0xff) + " -> " + memory_kind_string((k >> 16) & 0xff) + ")";
        });
        break;
      case DeviceEventKind::memset:
        e.name = keyed((4ULL << 32) | e.copy[1], [](std::uint64_t k) {
          return std::string("Memset (") + memory_kind_string(k & 0xff) + ")";
        });
        break;
      case DeviceEventKind::sync:
        e.name = keyed((5ULL << 32) | e.name, [](std::uint64_t k) {
          return std::string(sync_type_string(static_cast<std::uint32_t>(k)));
        });
        break;
      case DeviceEventKind::overhead:
        e.name = keyed((6ULL << 32) | e.name, [](std::uint64_t k) {
          return std::string(overhead_kind_string(static_cast<std::uint32_t>(k)));
        });
        break;
    }
    capture_.events.push_back(e);
  }
}

}  // namespace chakrashim::collector
