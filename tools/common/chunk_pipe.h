// Bytes from a writer on one thread to a reader on another, in bounded
// chunks: `convert` parses the ET+ while `link` is still writing it, so the
// two steps of one rank run on two cores. The writer side is a ByteSink,
// the reader side a std::streambuf. Either side may quit early: a reader
// that stops (abandon) lets the writer run on without blocking, a writer
// that stops (close) ends the reader's input.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <streambuf>
#include <string>
#include <string_view>

#include "files/byte_sink.h"

namespace chakrashim::tools {

class ChunkPipe {
 public:
  explicit ChunkPipe(std::size_t chunk_bytes = 1 << 20, std::size_t max_chunks = 16);

  files::ByteSink& sink() { return sink_; }
  std::streambuf& source() { return source_; }

  // Writer: no more bytes (flushes what is pending).
  void close();
  // Reader: no more reads; later writes are dropped.
  void abandon();

 private:
  class Sink final : public files::ByteSink {
   public:
    explicit Sink(ChunkPipe& pipe) : pipe_(pipe) {}
    bool write(std::string_view bytes) override;
    bool ok() const override { return true; }

   private:
    ChunkPipe& pipe_;
  };
  class Source final : public std::streambuf {
   public:
    explicit Source(ChunkPipe& pipe) : pipe_(pipe) {}

   protected:
    int_type underflow() override;

   private:
    ChunkPipe& pipe_;
    std::string current_;
  };

  void push(bool final);
  bool pop(std::string& into);

  const std::size_t chunk_bytes_, max_chunks_;
  std::string pending_;  // the writer's chunk being filled
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;
  bool closed_ = false, abandoned_ = false;
  Sink sink_{*this};
  Source source_{*this};
};

// Writes everything to two sinks; ok while the first is (the second is the
// pipe to a reader, which never fails a write).
class TeeSink final : public files::ByteSink {
 public:
  TeeSink(files::ByteSink& first, files::ByteSink& second) : first_(first), second_(second) {}
  bool write(std::string_view bytes) override {
    second_.write(bytes);
    return first_.write(bytes);
  }
  bool ok() const override { return first_.ok(); }

 private:
  files::ByteSink& first_;
  files::ByteSink& second_;
};

}  // namespace chakrashim::tools
