// Unit tests for the op-span store (shim/src/bridge/span_store.h): spans of
// ops still open when the window's spans are taken are closed at the edge
// (issue #49: a record_function around the whole iteration lost its span,
// and its end then fed the next window), and an op's end after that adds
// nothing.
#include "bridge/span_store.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace chakrashim::bridge {
namespace {

SpanRecord record(const char* name, std::int64_t start, std::int64_t end, std::uint64_t rf) {
  SpanRecord r;
  r.name = name;
  r.tid = 7;
  r.start_ns = start;
  r.end_ns = end;
  r.rf_id = rf;
  r.external_id = rf;
  return r;
}

void open_as(SpanStore& store, SpanStore::ThreadBuffer& b, OpenSpan& o, const char* name, std::int64_t start,
             std::uint64_t rf) {
  o.name = name;
  o.tid = 7;
  o.rf_id = rf;
  o.external_id = rf;
  o.category = HostCategory::user_annotation;
  store.open(b, o);
  o.start_ns.store(start);
}

std::vector<HostSpan> spans_of(const std::vector<ThreadSpans>& taken) {
  std::vector<HostSpan> out;
  for (const auto& t : taken)
    for (const auto& chunk : t.chunks)
      for (const auto& s : chunk) out.push_back(t.expand(s));
  return out;
}

// Each test on a thread of its own: SpanStore::local() keeps the calling
// thread's buffer in a thread_local (one store per process, in the shim),
// handed back to the store at thread exit, so the store outlives the thread.
template <typename F>
void on_a_thread(F f) {
  SpanStore store;
  std::thread([&] { f(store); }).join();
}

TEST(SpanStore, AnOpOpenAtTheEdgeIsClosedThereAndItsLaterEndAddsNothing) {
  on_a_thread([](SpanStore& store) {
  MemoryBudget budget(1u << 30);
  store.set_budget(&budget);
  SpanStore::ThreadBuffer& b = *store.local();
  OpenSpan outer, inner, late;
  open_as(store, b, outer, "train_step", 100, 1);
  open_as(store, b, inner, "aten::add", 110, 2);
  EXPECT_TRUE(store.end(b, inner, record("aten::add", 110, 120, 2)));
  open_as(store, b, late, "begun at the edge", 0, 3);  // its time not read yet
  OpenSpan after;
  open_as(store, b, after, "begun after the edge", 205, 4);  // another thread's, as the window closed
  const auto taken = spans_of(store.take_all(/*edge_ns=*/200));
  ASSERT_EQ(taken.size(), 4u);
  EXPECT_EQ(taken[0].name, "aten::add");
  EXPECT_EQ(taken[1].name, "train_step");
  EXPECT_EQ(taken[1].start_ns, 100);
  EXPECT_EQ(taken[1].end_ns, 200);
  EXPECT_EQ(taken[1].rf_id, 1u);
  EXPECT_EQ(taken[1].category, HostCategory::user_annotation);
  // Each op the ET may hold keeps a span: a point where it began.
  EXPECT_EQ(taken[2].name, "begun at the edge");
  EXPECT_EQ(taken[2].start_ns, 200);
  EXPECT_EQ(taken[2].end_ns, 200);
  EXPECT_EQ(taken[3].start_ns, 205);
  EXPECT_EQ(taken[3].end_ns, 205);
  // Their ends come after: nothing goes into the next window's spans.
  EXPECT_TRUE(store.end(b, outer, record("train_step", 100, 250, 1)));
  EXPECT_TRUE(store.end(b, late, record("begun at the edge", 199, 260, 3)));
  EXPECT_TRUE(store.end(b, after, record("begun after the edge", 205, 260, 4)));
  EXPECT_TRUE(spans_of(store.take_all(300)).empty());
  });
}

TEST(SpanStore, OpsThatEndInTheirWindowAreKeptWithTheirOwnEnd) {
  on_a_thread([](SpanStore& store) {
  SpanStore::ThreadBuffer& b = *store.local();
  OpenSpan a;
  open_as(store, b, a, "aten::mm", 10, 1);
  EXPECT_TRUE(store.end(b, a, record("aten::mm", 10, 20, 1)));
  const auto taken = spans_of(store.take_all(100));
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].end_ns, 20);
  });
}

}  // namespace
}  // namespace chakrashim::bridge
