#include "files/byte_stream.h"

#include <cerrno>
#include <cstring>

namespace chakrashim::files {

namespace {
// Large enough that zlib and the parser's per-character calls dominate, small
// enough to stay negligible next to a trace.
constexpr std::size_t kChunkBytes = 256 * 1024;
}  // namespace

ByteStream::ByteStream(const std::string& path, ChunkObserver observer)
    : observer_(std::move(observer)), buffer_(kChunkBytes) {
  file_ = gzopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    error_ = std::strerror(errno != 0 ? errno : ENOENT);
    return;
  }
  gzbuffer(file_, kChunkBytes);
}

ByteStream::~ByteStream() {
  if (file_ != nullptr) gzclose(file_);
}

ByteStream::int_type ByteStream::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (file_ == nullptr || !error_.empty()) return traits_type::eof();
  const int n = gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
  if (n < 0) {
    int code = 0;
    const char* why = gzerror(file_, &code);
    error_ = code == Z_ERRNO ? std::strerror(errno) : (why != nullptr ? why : "read error");
    return traits_type::eof();
  }
  if (n == 0) {
    // A gzip member cut short reads as a clean end; zlib reports it here.
    int code = 0;
    const char* why = gzerror(file_, &code);
    if (code != Z_OK && code != Z_STREAM_END && why != nullptr) error_ = why;
    return traits_type::eof();
  }
  bytes_read_ += static_cast<std::uint64_t>(n);
  if (observer_) {
    observer_(std::string_view(buffer_.data(), static_cast<std::size_t>(n)),
              static_cast<std::uint64_t>(gzoffset(file_)));
  }
  setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
  return traits_type::to_int_type(*gptr());
}

}  // namespace chakrashim::files
