// Unit tests for the collector's paged storage (chakrashim/paged_vector.h).
#include "chakrashim/paged_vector.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "chakrashim/events.h"

namespace chakrashim {
namespace {

TEST(PagedVector, GrowsInPlaceKeepsRecordsAndMoves) {
  PagedVector<DeviceEvent> v;
  for (std::uint32_t i = 0; i < 100000; ++i) {
    DeviceEvent e;
    e.correlation = i;
    v.push_back(e);
  }
  ASSERT_EQ(v.size(), 100000u);
  for (std::uint32_t i = 0; i < 100000; i += 997) EXPECT_EQ(v[i].correlation, i);
  PagedVector<DeviceEvent> w = std::move(v);
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(w.back().correlation, 99999u);
  w.resize(10);
  EXPECT_EQ(w.size(), 10u);
  EXPECT_GE(w.mapped_bytes(), 100000 * sizeof(DeviceEvent));
}

}  // namespace
}  // namespace chakrashim
