#include "files/gzip_sink.h"

namespace chakrashim::files {

namespace {
constexpr std::size_t kOutChunk = 1 << 18;
constexpr int kGzipWindowBits = 15 + 16;  // +16: a gzip header and trailer, not zlib's
}  // namespace

GzipSink::GzipSink(ByteSink& out) : out_(out), buffer_(kOutChunk, '\0') {
  ok_ = deflateInit2(&z_, 1, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) == Z_OK;
}

GzipSink::~GzipSink() { deflateEnd(&z_); }

bool GzipSink::pump(int flush) {
  do {
    z_.next_out = reinterpret_cast<Bytef*>(buffer_.data());
    z_.avail_out = static_cast<uInt>(buffer_.size());
    const int rc = deflate(&z_, flush);
    if (rc == Z_STREAM_ERROR) return ok_ = false;
    const std::size_t produced = buffer_.size() - z_.avail_out;
    if (produced > 0 && !out_.write(std::string_view(buffer_.data(), produced))) return ok_ = false;
    if (flush == Z_FINISH && rc == Z_STREAM_END) return true;
  } while (z_.avail_out == 0 || (flush == Z_FINISH));
  return true;
}

bool GzipSink::write(std::string_view bytes) {
  if (!ok()) return false;
  z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z_.avail_in = static_cast<uInt>(bytes.size());
  return pump(Z_NO_FLUSH);
}

bool GzipSink::finish() {
  if (!ok()) return false;
  z_.next_in = nullptr;
  z_.avail_in = 0;
  return pump(Z_FINISH);
}

}  // namespace chakrashim::files
