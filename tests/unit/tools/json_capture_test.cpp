// Unit tests for JsonCapture (tools/common/json_capture.h), which keeps small
// subtrees whole while a SAX parse goes by.
#include "common/json_capture.h"

#include <gtest/gtest.h>

namespace chakrashim::tools {
namespace {

TEST(JsonCapture, RebuildsNestedObjectsAndArrays) {
  JsonCapture c;
  c.begin();
  c.start_container(true);
  c.key("rank");
  c.scalar(3);
  c.key("pg_config");
  c.start_container(false);
  c.start_container(true);
  c.key("ranks");
  c.start_container(false);
  c.scalar(0);
  c.scalar(1);
  c.end_container();
  c.end_container();
  c.scalar("x");
  c.end_container();
  EXPECT_TRUE(c.active());
  c.end_container();
  EXPECT_TRUE(c.done());
  EXPECT_EQ(c.value(), nlohmann::json::parse(R"({"rank": 3, "pg_config": [{"ranks": [0, 1]}, "x"]})"));
}

TEST(JsonCapture, TakesAScalarAsAWholeValue) {
  JsonCapture c;
  c.begin();
  c.scalar(nullptr);
  EXPECT_TRUE(c.done());
  EXPECT_TRUE(c.value().is_null());
}

}  // namespace
}  // namespace chakrashim::tools
