// A ByteSink that gzips into another ByteSink (the output file): the device
// trace with CHAKRA_GZIP=1, and `link --gzip`. Level 1: ET+ files are large and repetitive, so the fastest
// level already shrinks them about tenfold and keeps the write from
// dominating the run.
#pragma once

#include <zlib.h>

#include <string>
#include <string_view>

#include "files/byte_sink.h"

namespace chakrashim::files {

class GzipSink final : public ByteSink {
 public:
  explicit GzipSink(ByteSink& out);
  ~GzipSink() override;
  GzipSink(const GzipSink&) = delete;
  GzipSink& operator=(const GzipSink&) = delete;

  bool write(std::string_view bytes) override;
  bool ok() const override { return ok_ && out_.ok(); }
  // Writes the gzip trailer; call once, after the last write.
  bool finish();

 private:
  bool pump(int flush);

  ByteSink& out_;
  z_stream z_{};
  std::string buffer_;
  bool ok_ = false;
};

}  // namespace chakrashim::files
