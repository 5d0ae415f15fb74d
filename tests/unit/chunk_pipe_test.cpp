// The pipe between link's writer and convert's reader: every byte arrives
// in order, a reader that quits never blocks the writer, a writer that
// quits ends the reader's input.
#include "common/chunk_pipe.h"

#include <gtest/gtest.h>

#include <istream>
#include <iterator>
#include <string>
#include <thread>

namespace chakrashim::tools {
namespace {

TEST(ChunkPipe, BytesArriveWholeAndInOrder) {
  ChunkPipe pipe(64, 2);  // tiny chunks and queue: the writer waits often
  std::string expected;
  for (int i = 0; i < 5000; ++i) expected += std::to_string(i) + (i % 7 == 0 ? "\n" : ",");
  std::string got;
  std::thread reader([&] {
    std::istream in(&pipe.source());
    got.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  });
  for (std::size_t at = 0; at < expected.size();) {
    const std::size_t n = std::min<std::size_t>(1 + at % 97, expected.size() - at);
    EXPECT_TRUE(pipe.sink().write(std::string_view(expected).substr(at, n)));
    at += n;
  }
  pipe.close();
  reader.join();
  EXPECT_EQ(got, expected);
}

TEST(ChunkPipe, AReaderThatQuitsNeverBlocksTheWriter) {
  ChunkPipe pipe(16, 1);
  std::thread reader([&] {
    char c = 0;
    pipe.source().sgetn(&c, 1);
    pipe.abandon();
  });
  const std::string block(1000, 'x');
  for (int i = 0; i < 100; ++i) pipe.sink().write(block);  // would deadlock without abandon
  pipe.close();
  reader.join();
  SUCCEED();
}

TEST(ChunkPipe, AWriterThatWritesNothingEndsTheInput) {
  ChunkPipe pipe;
  std::thread writer([&] { pipe.close(); });
  std::istream in(&pipe.source());
  const std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  writer.join();
  EXPECT_TRUE(got.empty());
}

}  // namespace
}  // namespace chakrashim::tools
