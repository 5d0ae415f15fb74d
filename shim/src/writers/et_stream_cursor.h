// A thread's native ET records in order (et_records.h): walks the chunks of
// one EtThreadStream record by record, for the writer's merge by sequence
// number (et_json_writer.cpp). Torch-free; reads nothing past a chunk.
#pragma once

#include <cstdint>
#include <cstring>

#include "writers/et_json_writer.h"

namespace chakrashim::writers {

// A thread's records in order: walks its chunks record by record.
struct StreamCursor {
  const EtThreadStream* stream = nullptr;
  std::size_t chunk = 0;
  std::size_t offset = 0;
  std::uint64_t seq = 0;  // of the record at (chunk, offset), when valid()
  const std::uint8_t* record = nullptr;
  std::uint32_t size = 0;

  // Moves to the next readable record; false at the end. A record whose
  // size is impossible ends its chunk (counted as corrupt by the caller).
  bool settle(std::uint64_t& corrupt) {
    while (chunk < stream->chunks.size()) {
      const auto& [base, length] = stream->chunks[chunk];
      if (offset + 13 <= length) {
        std::uint32_t n = 0;
        std::memcpy(&n, base + offset, sizeof n);
        if (n >= 13 && n <= length - offset) {
          record = base + offset;
          size = n;
          std::memcpy(&seq, record + 5, sizeof seq);
          return true;
        }
        ++corrupt;
      } else if (offset != length) {
        ++corrupt;
      }
      ++chunk;
      offset = 0;
    }
    return false;
  }
};

}  // namespace chakrashim::writers
