// MemoryBudget (CHAKRA_MAX_MEMORY): one refusal ends the window for every
// store; a charge past the cap (the span of an op under way at the cut) is
// taken, counted, and ends the window too.
#include "chakrashim/memory_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace chakrashim {
namespace {

TEST(MemoryBudget, ChargesUpToTheCapThenRefusesEverything) {
  MemoryBudget b(100);
  EXPECT_TRUE(b.try_charge(60));
  EXPECT_TRUE(b.try_charge(40));
  EXPECT_FALSE(b.exhausted());
  EXPECT_FALSE(b.try_charge(1));
  EXPECT_TRUE(b.exhausted());
  // One refusal is the end: even a charge that would fit is refused now.
  EXPECT_FALSE(b.try_charge(0));
  EXPECT_EQ(b.used(), 100u);
}

TEST(MemoryBudget, AnOverflowingChargeIsRefused) {
  MemoryBudget b(~0ull);
  EXPECT_TRUE(b.try_charge(10));
  EXPECT_FALSE(b.try_charge(~0ull - 5));
  EXPECT_EQ(b.used(), 10u);
}

TEST(MemoryBudget, AChargePastTheCapIsTakenAndEndsTheWindow) {
  MemoryBudget b(100);
  EXPECT_TRUE(b.try_charge(90));
  b.charge_past_cap(50);
  EXPECT_EQ(b.used(), 140u);
  EXPECT_TRUE(b.exhausted());
  EXPECT_FALSE(b.try_charge(1));
}

TEST(MemoryBudget, ResetStartsANewWindow) {
  MemoryBudget b(10);
  EXPECT_FALSE(b.try_charge(11));
  b.reset(20);
  EXPECT_FALSE(b.exhausted());
  EXPECT_TRUE(b.try_charge(20));
  EXPECT_EQ(b.cap(), 20u);
}

TEST(MemoryBudget, ConcurrentChargesNeverExceedTheCap) {
  MemoryBudget b(1000);
  std::vector<std::thread> threads;
  std::atomic<int> granted{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i)
        if (b.try_charge(1)) granted.fetch_add(1);
    });
  for (auto& t : threads) t.join();
  EXPECT_LE(b.used(), 1000u);
  EXPECT_EQ(static_cast<std::uint64_t>(granted.load()), b.used());
}

}  // namespace
}  // namespace chakrashim
