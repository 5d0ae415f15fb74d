// Unit tests for the SVG building blocks of tools/report/svg_charts.h.
#include "report/svg_charts.h"

#include <gtest/gtest.h>

namespace chakrashim::tools::report {
namespace {

TEST(XmlEscape, EscapesMarkupCharacters) {
  EXPECT_EQ(xml_escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
  EXPECT_EQ(xml_escape("void f<int>()"), "void f&lt;int&gt;()");
}

TEST(NiceTick, PicksOneTwoOrFiveTimesAPowerOfTen) {
  EXPECT_DOUBLE_EQ(nice_tick(7.3, 5), 2);
  EXPECT_DOUBLE_EQ(nice_tick(130, 5), 50);
  EXPECT_NEAR(nice_tick(0.04, 4), 0.01, 1e-12);
  EXPECT_DOUBLE_EQ(nice_tick(0, 5), 1);
}

TEST(GroupedBarChart, DrawsABarPerPresentValueWithItsTitle) {
  GroupedBars c;
  c.y_label = "ms";
  c.categories = {"step 1", "step 2"};
  c.series = {"rank 0", "rank <1>"};
  c.values = {{1.5, 2.0}, {3.0, -1}};
  const std::string svg = grouped_bar_chart(c);
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_NE(svg.find("rank 0, step 2: 2.000 ms"), std::string::npos);
  EXPECT_NE(svg.find("rank &lt;1&gt;, step 1: 3.000 ms"), std::string::npos);
  EXPECT_EQ(svg.find("rank &lt;1&gt;, step 2"), std::string::npos);  // absent
  EXPECT_EQ(svg.find("http"), std::string::npos);
}

TEST(StackedBarChart, DrawsEachNonEmptySegment) {
  StackedBars c;
  c.rows = {"rank 0"};
  c.segments = {"a", "b", "c"};
  c.colors = {"#111111", "#222222", "#333333"};
  c.values = {{1, 0, 2}};
  const std::string svg = stacked_bar_chart(c);
  EXPECT_NE(svg.find("rank 0, a: 1.000 ms"), std::string::npos);
  EXPECT_EQ(svg.find("rank 0, b:"), std::string::npos);
  EXPECT_NE(svg.find("rank 0, c: 2.000 ms"), std::string::npos);
}

}  // namespace
}  // namespace chakrashim::tools::report
