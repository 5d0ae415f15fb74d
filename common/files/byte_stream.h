// A file as a std::streambuf, plain or gzip (zlib reads both), in fixed
// chunks. The readers parse from it with nlohmann's SAX interface, so memory
// never grows with the file's size. Every chunk is shown to an optional
// observer before the parser sees it: the HTA rank scan reads the raw bytes
// that way, and the progress bar counts them.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

namespace chakrashim::files {

class ByteStream final : public std::streambuf {
 public:
  using ChunkObserver = std::function<void(std::string_view chunk, std::uint64_t compressed_pos)>;

  // Opens `path`; ok() is false (and error() says why) when it cannot.
  explicit ByteStream(const std::string& path, ChunkObserver observer = {});
  ~ByteStream() override;
  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;

  bool ok() const { return error_.empty(); }
  // Empty while every read succeeded; else zlib's or the OS's reason.
  const std::string& error() const { return error_; }
  // Uncompressed bytes handed to the parser so far.
  std::uint64_t bytes_read() const { return bytes_read_; }

 protected:
  int_type underflow() override;

 private:
  gzFile file_ = nullptr;
  ChunkObserver observer_;
  std::vector<char> buffer_;
  std::string error_;
  std::uint64_t bytes_read_ = 0;
};

}  // namespace chakrashim::files
