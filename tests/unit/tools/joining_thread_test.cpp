// tools/common/joining_thread.h: a thread joined on every way out of its
// owner's scope (issue #34: an exception before join() destroyed a joinable
// std::thread, and std::terminate ended the CLI).
#include "common/joining_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <istream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/chunk_pipe.h"

namespace chakrashim::tools {
namespace {

TEST(JoiningThread, AnExceptionUnblocksTheThreadThenJoinsIt) {
  // As convert's reader: a thread that reads a pipe to its end, while the
  // writer throws before it closes the pipe.
  ChunkPipe pipe(4, 1);
  std::string got;
  std::atomic<int> unblocked{0};
  std::atomic<bool> ended{false};
  EXPECT_THROW(
      {
        JoiningThread reader(
            [&] {
              std::istream in(&pipe.source());
              got.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
              ended = true;
            },
            [&] {
              ++unblocked;
              pipe.abandon();
            });
        pipe.sink().write("some bytes");
        throw std::runtime_error("link failed");
      },
      std::runtime_error);
  EXPECT_TRUE(ended);  // joined before the exception left the scope
  EXPECT_EQ(unblocked, 1);
}

TEST(JoiningThread, AJoinTheCodeReachesDoesNotUnblock) {
  ChunkPipe pipe(4, 1);
  std::string got;
  int unblocked = 0;
  {
    JoiningThread reader(
        [&] {
          std::istream in(&pipe.source());
          got.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        },
        [&] { ++unblocked; });
    pipe.sink().write("every byte, in order");
    pipe.close();
    reader.join();
  }
  EXPECT_EQ(got, "every byte, in order");
  EXPECT_EQ(unblocked, 0);
}

TEST(JoiningThread, WhatTheBodyThrowsComesOutOfJoin) {
  JoiningThread t([] { throw std::length_error("too long"); });
  EXPECT_THROW(t.join(), std::length_error);
}

TEST(JoiningThread, WithoutUnblockTheOwnerWaitsForTheBody) {
  std::atomic<bool> ended{false};
  EXPECT_THROW(
      {
        JoiningThread t([&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          ended = true;
        });
        throw std::runtime_error("plan failed");
      },
      std::runtime_error);
  EXPECT_TRUE(ended);
}

}  // namespace
}  // namespace chakrashim::tools
