// The pipe between link's writer and convert's reader: every byte arrives
// in order, a reader that quits never blocks the writer, a writer that
// quits ends the reader's input.
#include "common/chunk_pipe.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <istream>
#include <iterator>
#include <memory>
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
  // The writer runs on a thread of its own so that a blocked one fails the
  // test instead of hanging it: left behind then, with the pipe it waits on.
  auto pipe = std::make_unique<ChunkPipe>(16, 1);
  std::thread reader([p = pipe.get()] {
    char c = 0;
    p->source().sgetn(&c, 1);
    p->abandon();
  });
  const auto wrote_all = std::make_shared<std::promise<void>>();
  std::future<void> done = wrote_all->get_future();
  std::thread writer([p = pipe.get(), wrote_all] {
    const std::string block(1000, 'x');
    for (int i = 0; i < 100; ++i) p->sink().write(block);  // would block for good without abandon
    p->close();
    wrote_all->set_value();
  });
  reader.join();
  if (done.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    writer.detach();
    static_cast<void>(pipe.release());
    FAIL() << "the writer still blocks 30 s after the reader abandoned the pipe";
  }
  writer.join();
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
