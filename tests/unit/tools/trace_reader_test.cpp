// Unit tests for the streaming device-trace reader (tools/common/
// trace_reader.h), including the contract with our own writer: a trace that
// KinetoTraceWriter writes reads back with every field the check needs.
#include "common/trace_reader.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "files/byte_sink.h"
#include "writers/kineto_trace_writer.h"

namespace chakrashim::tools {
namespace {

struct Read {
  TraceSummary summary;
  std::vector<TraceEvent> events;
};

Read read_events(const std::string& text) {
  std::istringstream in(text);
  Read r;
  r.summary = read_device_trace(in, [&](const TraceEvent& e) { r.events.push_back(e); });
  return r;
}

TEST(TraceReader, HandsOverEachEventWithItsArgs) {
  const auto r = read_events(R"({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 4458676416788.066, "dur": 41.407,
     "args": {"External id": 12, "correlation": 57541, "stream": 7, "grid": [1, 2, 3], "nested": {"stream": 9}}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 11, "ts": 5, "dur": 2,
     "args": {"External id": "odd", "Record function id": 4}}
  ]})");
  ASSERT_TRUE(r.summary.parse.ok);
  ASSERT_EQ(r.events.size(), 2u);
  const auto& k = r.events[0];
  EXPECT_EQ(k.cat, "kernel");
  EXPECT_EQ(k.tid, 7);
  EXPECT_EQ(k.ts_ns, 4458676416788066);
  EXPECT_EQ(k.dur_ns, 41407);
  EXPECT_EQ(k.external_id.value, 12);
  EXPECT_EQ(k.correlation.value, 57541);
  EXPECT_EQ(k.stream.value, 7);  // not the nested one
  EXPECT_FALSE(k.record_function_id.present);
  const auto& op = r.events[1];
  EXPECT_EQ(op.ts_ns, 5000);
  EXPECT_TRUE(op.external_id.present);
  EXPECT_FALSE(op.external_id.value.has_value());
  EXPECT_EQ(op.record_function_id.value, 4);
  EXPECT_FALSE(op.stream.present);  // cleared between events
}

TEST(TraceReader, KeepsTheHeaderKeysAndOurMetadataOnly) {
  const auto r = read_events(R"({"schemaVersion": 1, "deviceProperties": [{"id": 0}],
    "distributedInfo": {"rank": 2, "pg_config": [{"ranks": [0, 1]}]},
    "traceEvents": [], "traceName": "t", "chakrashim": {"steps": {"captured": [3]}, "ranks": {"world_size": 4}}})");
  ASSERT_TRUE(r.summary.parse.ok);
  EXPECT_EQ(r.summary.keys_before_events,
            (std::vector<std::string>{"schemaVersion", "deviceProperties", "distributedInfo"}));
  EXPECT_TRUE(r.summary.has_trace_events);
  ASSERT_TRUE(r.summary.distributed_info);
  EXPECT_EQ((*r.summary.distributed_info)["rank"], 2);
  EXPECT_EQ((*r.summary.distributed_info)["pg_config"][0]["ranks"][1], 1);
  ASSERT_TRUE(r.summary.chakrashim);
  EXPECT_EQ((*r.summary.chakrashim)["ranks"]["world_size"], 4);
}

TEST(TraceReader, AnIntegerTimePastInt64NanosecondsIsUnreadableNotOverflowed) {
  // Found by tests/fuzz/trace_reader_fuzz.cpp: ts * 1000 overflowed int64.
  const auto r = read_events(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1111189073625086408, "dur": -9223372036854775807},
    {"ph": "X", "cat": "cpu_op", "name": "b", "ts": 9223372036854775, "dur": 2}
  ]})");
  ASSERT_TRUE(r.summary.parse.ok);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_FALSE(r.events[0].ts_ns.has_value());
  EXPECT_FALSE(r.events[0].dur_ns.has_value());
  EXPECT_EQ(r.events[1].ts_ns, 9223372036854775000);
  EXPECT_EQ(r.events[1].dur_ns, 2000);
}

TEST(TraceReader, TellsACutOffFileFromASyntaxError) {
  const auto cut = read_events(R"({"traceEvents": [{"ph": "X", "name": "a"}, {"ph": "X")");
  EXPECT_FALSE(cut.summary.parse.ok);
  EXPECT_TRUE(cut.summary.parse.truncated);
  EXPECT_EQ(cut.summary.events, 1u);
  const auto bad = read_events(R"({"traceEvents": [{"ph": X}]})");
  EXPECT_FALSE(bad.summary.parse.ok);
  EXPECT_FALSE(bad.summary.parse.truncated);
}

TEST(TraceReader, ReadsWhatOurWriterWrites) {
  files::StringSink sink;
  constexpr std::int64_t kBase = 1710720000000000000;
  writers::KinetoTraceWriter w(sink, kBase);
  writers::TraceHeader header;
  header.distributed.rank = 3;
  header.distributed.world_size = 4;
  w.begin(header);
  HostSpan span;
  span.name = "aten::mm";
  span.pid = 1;
  span.tid = 2;
  span.start_ns = kBase + 1234567;
  span.end_ns = kBase + 2234568;
  span.external_id = 9;
  span.rf_id = 77;
  w.host_span(span);
  StepSpan step{5, 1, 2, kBase + 1000000, kBase + 3000000, 10};
  w.step_span(step);
  writers::TraceTrailer trailer;
  trailer.steps.captured = {5};
  trailer.world_size = 4;
  trailer.dropped_records = 2;
  ASSERT_TRUE(w.end(trailer));

  const auto r = read_events(sink.text());
  ASSERT_TRUE(r.summary.parse.ok) << r.summary.parse.error;
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].cat, "cpu_op");
  EXPECT_EQ(r.events[0].ts_ns, 1234567);
  EXPECT_EQ(r.events[0].dur_ns, 1000001);
  EXPECT_EQ(r.events[0].record_function_id.value, 77);
  EXPECT_EQ(r.events[1].name, "ProfilerStep#5");
  EXPECT_FALSE(r.events[1].record_function_id.present);
  ASSERT_TRUE(r.summary.chakrashim);
  EXPECT_EQ((*r.summary.chakrashim)["ranks"]["world_size"], 4);
  EXPECT_EQ((*r.summary.chakrashim)["device_trace"]["dropped_records"], 2);
  EXPECT_EQ(r.summary.keys_before_events.back(), "distributedInfo");
}

}  // namespace
}  // namespace chakrashim::tools
