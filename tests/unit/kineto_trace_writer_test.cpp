// Unit tests for the device-trace writer (writers/kineto_trace_writer.h)
// against docs/trace-format.md: top-level key order, HTA's rank regex, event
// fields and times, and our `chakrashim` metadata object.
#include "writers/kineto_trace_writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "chakrashim/events.h"
#include "chakrashim/trace_schema.h"
#include "files/byte_sink.h"
#include "support/device_builders.h"

namespace chakrashim::writers {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using testing_support::device_event;

constexpr std::int64_t kNinetyDaysNs = 90LL * 24 * 3600 * 1000000000LL;
constexpr std::int64_t kT0 = 1716423322416788000;  // 2024-05-23, the first event
constexpr std::int64_t kPid = 4242;
constexpr std::int64_t kTid = 4243;

// Raw number tokens of every "ts" and "dur" key, in document order.
class RawTimes final : public nlohmann::json_sax<json> {
 public:
  struct Token {
    std::string key;
    std::string raw;  // empty for integers (nlohmann gives no raw text for them)
    bool is_float = false;
  };
  std::vector<Token> tokens;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return record("", false); }
  bool number_unsigned(number_unsigned_t) override { return record("", false); }
  bool number_float(number_float_t, const string_t& s) override { return record(s, true); }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t& k) override {
    last_key_ = k;
    return true;
  }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  bool record(const std::string& raw, bool is_float) {
    if (last_key_ == "ts" || last_key_ == "dur") tokens.push_back({last_key_, raw, is_float});
    return true;
  }
  std::string last_key_;
};

// "1234.567" -> 1234567 (ns); exact, no floating point.
std::int64_t raw_us_to_ns(const std::string& raw) {
  const bool negative = !raw.empty() && raw[0] == '-';
  const std::string body = negative ? raw.substr(1) : raw;
  const auto dot = body.find('.');
  const std::int64_t whole = std::stoll(body.substr(0, dot));
  const std::int64_t frac = std::stoll(body.substr(dot + 1));
  const std::int64_t ns = whole * 1000 + frac;
  return negative ? -ns : ns;
}

HostSpan host(HostCategory cat, std::string name, std::int64_t start, std::int64_t end,
              std::uint64_t external_id, std::uint64_t rf_id,
              std::optional<std::int64_t> seq = std::nullopt,
              std::optional<std::uint64_t> fwd = std::nullopt) {
  return {cat, std::move(name), kPid, kTid, start, end, external_id, rf_id, seq, fwd, {}};
}

StepSpan step(std::uint64_t n, std::int64_t start, std::int64_t end, std::uint64_t external_id) {
  return {n, kPid, kTid, start, end, external_id};
}

TraceHeader header(std::uint64_t rank = 3) {
  TraceHeader h;
  h.distributed.backend = "gloo";
  h.distributed.rank = rank;
  h.distributed.world_size = 8;
  return h;
}

TraceTrailer trailer() {
  TraceTrailer t;
  t.trace_name = "rank-3";
  t.version = "0.1.0";
  t.torch_version = "2.5.1";
  t.steps.start = 5;
  t.steps.end = 6;
  t.steps.warmup = 0;
  t.steps.active = 2;
  t.steps.captured = {5, 6};
  t.world_size = 8;
  return t;
}

// The spans of the standard trace, in the order they are written.
std::vector<HostSpan> standard_spans() {
  return {
      // cpu_op with every optional field.
      host(HostCategory::cpu_op, "aten::mm", kT0 + 1000, kT0 + 5999, 11, 17, 5, 1),
      // user_annotation without rf_id, sequence number or fwd thread.
      host(HostCategory::user_annotation, "Optimizer.step#SGD.step", kT0 + 6000, kT0 + 9000, 12,
           0),
      // a name that needs escaping; a negative sequence number.
      host(HostCategory::cpu_op, "aten::\"weird\"\nname\t\\end", kT0 + 1, kT0 + 2, 13, 18, -1),
      // fwd thread id only; zero duration.
      host(HostCategory::user_annotation, "nccl:all_reduce", kT0 + 9000, kT0 + 9000, 14, 19,
           std::nullopt, 77),
      // long-running op: more than a second.
      host(HostCategory::cpu_op, "aten::long", kT0 + 10000, kT0 + 1234567891, 15, 20),
  };
}

std::vector<StepSpan> standard_steps() {
  return {step(5, kT0, kT0 + 9000, 21), step(6, kT0 + 9000, kT0 + 1300000000, 22)};
}

std::string write_standard_trace(const TraceTrailer& t = trailer(), TraceHeader h = header()) {
  files::StringSink sink;
  KinetoTraceWriter w(sink, base_time_ns(kT0));
  w.begin(h);
  w.process_name(kPid, "python");
  w.thread_name(kPid, kTid, "main thread");
  for (const auto& s : standard_spans()) w.host_span(s);
  for (const auto& s : standard_steps()) w.step_span(s);
  EXPECT_TRUE(w.end(t));
  return sink.text();
}

// Every key name anywhere inside a JSON value.
void collect_keys(const json& v, std::vector<std::string>& keys) {
  if (v.is_object()) {
    for (const auto& [k, child] : v.items()) {
      keys.push_back(k);
      collect_keys(child, keys);
    }
  } else if (v.is_array()) {
    for (const auto& child : v) collect_keys(child, keys);
  }
}

// --- base time and number format -------------------------------------------

TEST(KinetoBaseTime, FloorsToANinetyDayBoundary) {
  const std::int64_t base = base_time_ns(kT0);
  EXPECT_EQ(base, 1710720000000000000);
  EXPECT_EQ(base % kNinetyDaysNs, 0);
  EXPECT_LE(base, kT0);
  EXPECT_LT(kT0 - base, kNinetyDaysNs);
}

TEST(KinetoBaseTime, IsAtMostTheInputAndWithinNinetyDaysForManyInputs) {
  const std::vector<std::int64_t> inputs = {1,
                                            999,
                                            kNinetyDaysNs - 1,
                                            kNinetyDaysNs,
                                            kNinetyDaysNs + 1,
                                            kT0,
                                            1700000000123456789,
                                            2000000000000000000,
                                            std::numeric_limits<std::int64_t>::max()};
  for (const std::int64_t t : inputs) {
    const std::int64_t base = base_time_ns(t);
    EXPECT_LE(base, t) << t;
    EXPECT_GE(base, 0) << t;
    EXPECT_EQ(base % kNinetyDaysNs, 0) << t;
    EXPECT_LT(t - base, kNinetyDaysNs) << t;
  }
  EXPECT_EQ(base_time_ns(0), 0);
  EXPECT_EQ(base_time_ns(kNinetyDaysNs), kNinetyDaysNs);
  EXPECT_EQ(base_time_ns(kNinetyDaysNs - 1), 0);
}

TEST(KinetoBaseTime, RanksStartingSecondsApartShareTheBase) {
  EXPECT_EQ(base_time_ns(kT0), base_time_ns(kT0 + 5LL * 1000000000));
  EXPECT_EQ(base_time_ns(kT0), base_time_ns(kT0 - 3LL * 1000000000));
}

TEST(KinetoFormatUs, GivesMicrosecondsWithExactlyThreeDecimals) {
  const std::int64_t base = base_time_ns(kT0);
  EXPECT_EQ(format_us(base + 1234567, base), "1234.567");
  EXPECT_EQ(format_us(base, base), "0.000");
  EXPECT_EQ(format_us(999, 0), "0.999");
  EXPECT_EQ(format_us(1, 0), "0.001");
  EXPECT_EQ(format_us(1000, 0), "1.000");
  EXPECT_EQ(format_us(1001, 0), "1.001");
  EXPECT_EQ(format_us(1010, 0), "1.010");
  EXPECT_EQ(format_us(5703322416788000, 0), "5703322416788.000");
}

TEST(KinetoFormatUs, NegativeOffsetsKeepTheSign) {
  EXPECT_EQ(format_us(-1, 0), "-0.001");
  EXPECT_EQ(format_us(0, 1), "-0.001");
  EXPECT_EQ(format_us(-999, 0), "-0.999");
  EXPECT_EQ(format_us(-1000, 0), "-1.000");
  EXPECT_EQ(format_us(-1234567, 0), "-1234.567");
  EXPECT_EQ(format_us(100, 1234667), "-1234.567");
}

TEST(KinetoFormatUs, HandlesTheInt64Extremes) {
  EXPECT_EQ(format_us(std::numeric_limits<std::int64_t>::max(), 0), "9223372036854775.807");
  EXPECT_EQ(format_us(std::numeric_limits<std::int64_t>::min(), 0), "-9223372036854775.808");
}

// --- the document ---------------------------------------------------------

TEST(KinetoTraceWriter, TheTraceParsesAsJson) {
  const std::string text = write_standard_trace();
  json doc;
  ASSERT_NO_THROW(doc = json::parse(text)) << text;
  EXPECT_TRUE(doc.is_object());
}

TEST(KinetoTraceWriter, TopLevelKeysComeInKinetosOrder) {
  const std::string text = write_standard_trace();
  const std::vector<std::string> order = {
      "schemaVersion", "deviceProperties", "distributedInfo",     "traceEvents",
      "traceName",     "displayTimeUnit",  "baseTimeNanoseconds", "chakrashim"};
  std::size_t last = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto pos = text.find("\"" + order[i] + "\": ");
    ASSERT_NE(pos, std::string::npos) << order[i];
    if (i > 0) {
      EXPECT_GT(pos, last) << order[i] << " comes before " << order[i - 1];
    }
    last = pos;
  }
  // And nothing else at the top level, in exactly this order.
  const ordered_json doc = ordered_json::parse(text);
  std::vector<std::string> keys;
  for (const auto& [k, v] : doc.items()) keys.push_back(k);
  EXPECT_EQ(keys, order);
  EXPECT_EQ(doc["schemaVersion"], 1);
  EXPECT_TRUE(doc["deviceProperties"].is_array());
  EXPECT_EQ(doc["traceName"], "rank-3");
  EXPECT_EQ(doc["displayTimeUnit"], "ms");
  EXPECT_EQ(doc["baseTimeNanoseconds"].get<std::int64_t>(), base_time_ns(kT0));
}

TEST(KinetoTraceWriter, HtasRankRegexReadsTheRankFirst) {
  const std::string text = write_standard_trace();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(std::string(schema::kHtaRankRegex))));
  EXPECT_EQ(m[1], "3");
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"("rank":\s+(\d+))")));
  EXPECT_EQ(m[1], "3");
  // The match lies inside distributedInfo, before traceEvents.
  EXPECT_LT(static_cast<std::size_t>(m.position(0)), text.find("\"traceEvents\""));
  EXPECT_GT(static_cast<std::size_t>(m.position(0)), text.find("\"distributedInfo\""));
}

TEST(KinetoTraceWriter, DistributedInfoHoldsBackendRankAndWorldSize) {
  const json doc = json::parse(write_standard_trace());
  const json& d = doc["distributedInfo"];
  EXPECT_EQ(d["backend"], "gloo");
  EXPECT_EQ(d["rank"], 3);
  EXPECT_EQ(d["world_size"], 8);
  EXPECT_FALSE(d.contains("pg_count"));
  EXPECT_FALSE(d.contains("pg_config"));
}

TEST(KinetoTraceWriter, RankZeroAndProcessGroupsAndDevicesAreWritten) {
  TraceHeader h;
  h.distributed.backend = "nccl";
  h.distributed.rank = 0;
  h.distributed.world_size = 2;
  h.distributed.pg_count = 1;
  h.distributed.pg_config_json =
      R"([{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "ranks": [0, 1]}])";
  h.device_properties_json = {
      R"({"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150000000000, "computeMajor": 9})",
      R"({"id": 1, "name": "NVIDIA H200", "totalGlobalMem": 150000000000, "computeMajor": 9})"};
  const std::string text = write_standard_trace(trailer(), h);
  const json doc = json::parse(text);
  ASSERT_EQ(doc["deviceProperties"].size(), 2u);
  EXPECT_EQ(doc["deviceProperties"][1]["id"], 1);
  EXPECT_EQ(doc["distributedInfo"]["pg_count"], 1);
  EXPECT_EQ(doc["distributedInfo"]["pg_config"][0]["ranks"], json::parse("[0, 1]"));
  EXPECT_EQ(doc["distributedInfo"]["backend"], "nccl");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(std::string(schema::kHtaRankRegex))));
  EXPECT_EQ(m[1], "0");
}

TEST(KinetoTraceWriter, TheChakrashimObjectNeverHoldsAKeyNamedRank) {
  TraceTrailer t = trailer();
  t.ranks_filter = "0,3";
  t.steps.partial_last_step = 6;
  t.truncated_at_ns = kT0 + 500;
  const json doc = json::parse(write_standard_trace(t));
  ASSERT_TRUE(doc.contains("chakrashim"));
  std::vector<std::string> keys;
  collect_keys(doc["chakrashim"], keys);
  EXPECT_GT(keys.size(), 15u);
  for (const auto& k : keys) EXPECT_NE(k, "rank");
}

TEST(KinetoTraceWriter, HostEventsCarryPhCatPidTidAndArgs) {
  const json doc = json::parse(write_standard_trace());
  const auto spans = standard_spans();
  const json& events = doc["traceEvents"];
  // Two metadata events, the host spans, then the steps.
  ASSERT_EQ(events.size(), 2 + spans.size() + 2);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const json& e = events[2 + i];
    const HostSpan& s = spans[i];
    SCOPED_TRACE(s.name);
    EXPECT_EQ(e["ph"], "X");
    EXPECT_EQ(e["cat"], s.category == HostCategory::cpu_op ? "cpu_op" : "user_annotation");
    EXPECT_EQ(e["name"], s.name);
    EXPECT_EQ(e["pid"], kPid);
    EXPECT_EQ(e["tid"], kTid);
    EXPECT_TRUE(e["ts"].is_number_float());
    EXPECT_TRUE(e["dur"].is_number_float());
    EXPECT_FALSE(e.contains("stream")) << "CPU events never carry a stream";
    const json& args = e["args"];
    EXPECT_EQ(args["External id"], s.external_id);
    if (s.rf_id != 0) {
      EXPECT_EQ(args["Record function id"], s.rf_id);
    } else {
      EXPECT_FALSE(args.contains("Record function id"));
    }
    if (s.sequence_nr) {
      EXPECT_EQ(args["Sequence number"], *s.sequence_nr);
    } else {
      EXPECT_FALSE(args.contains("Sequence number"));
    }
    if (s.fwd_thread_id) {
      EXPECT_EQ(args["Fwd thread id"], *s.fwd_thread_id);
    } else {
      EXPECT_FALSE(args.contains("Fwd thread id"));
    }
  }
}

TEST(KinetoTraceWriter, EveryEventHasAnExternalIdAndOnlyRealRecordFunctionIds) {
  const json doc = json::parse(write_standard_trace());
  int spans = 0, with_rf = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++spans;
    EXPECT_TRUE(e["args"].contains("External id")) << e.dump();
    if (e["args"].contains("Record function id")) {
      ++with_rf;
      EXPECT_NE(e["args"]["Record function id"], 0) << e.dump();
    }
  }
  EXPECT_EQ(spans, 7);
  EXPECT_EQ(with_rf, 4);  // rf_id 0 and the two steps have none
}

TEST(KinetoTraceWriter, StepsAreProfilerStepUserAnnotations) {
  const json doc = json::parse(write_standard_trace());
  const json& events = doc["traceEvents"];
  const auto steps = standard_steps();
  const std::size_t first = events.size() - steps.size();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const json& e = events[first + i];
    EXPECT_EQ(e["ph"], "X");
    EXPECT_EQ(e["cat"], "user_annotation");
    EXPECT_EQ(e["name"], "ProfilerStep#" + std::to_string(steps[i].step));
    EXPECT_EQ(e["pid"], kPid);
    EXPECT_EQ(e["tid"], kTid);
    EXPECT_EQ(e["args"]["External id"], steps[i].external_id);
    EXPECT_FALSE(e["args"].contains("Record function id"));
    EXPECT_FALSE(e.contains("stream"));
  }
  EXPECT_EQ(events[first]["name"], "ProfilerStep#5");
  EXPECT_EQ(events[first + 1]["name"], "ProfilerStep#6");
}

// Issue #34 item 3: the job's own torch.profiler opens "ProfilerStep#N"
// records; only our steps may carry that name (HTA takes every name that
// starts with "ProfilerStep" for a step).
TEST(KinetoTraceWriter, TheJobsOwnStepRecordsAreRenamed) {
  files::StringSink sink;
  KinetoTraceWriter w(sink, base_time_ns(kT0));
  w.begin(header());
  w.host_span(host(HostCategory::user_annotation, "ProfilerStep#0", kT0 + 10, kT0 + 9010, 31, 41));
  w.host_span(host(HostCategory::user_annotation, "ProfilerStepX", kT0 + 20, kT0 + 30, 32, 42));
  w.host_span(host(HostCategory::user_annotation, "my ProfilerStep#1", kT0 + 40, kT0 + 50, 33, 43));
  w.step_span(step(5, kT0, kT0 + 9000, 21));
  EXPECT_TRUE(w.end(trailer()));
  const json events = json::parse(sink.text())["traceEvents"];
  std::vector<std::string> names;
  for (const auto& e : events) names.push_back(e["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"job:ProfilerStep#0", "job:ProfilerStepX", "my ProfilerStep#1",
                                             "ProfilerStep#5"}));
  EXPECT_EQ(events[0]["args"]["Record function id"], 41);
  EXPECT_EQ(events[0]["cat"], "user_annotation");
}

TEST(KinetoTraceWriter, ProcessAndThreadNamesAreMetadataEvents) {
  const json doc = json::parse(write_standard_trace());
  const json& events = doc["traceEvents"];
  EXPECT_EQ(events[0]["ph"], "M");
  EXPECT_EQ(events[0]["name"], "process_name");
  EXPECT_EQ(events[0]["pid"], kPid);
  EXPECT_EQ(events[0]["args"]["name"], "python");
  EXPECT_EQ(events[1]["ph"], "M");
  EXPECT_EQ(events[1]["name"], "thread_name");
  EXPECT_EQ(events[1]["pid"], kPid);
  EXPECT_EQ(events[1]["tid"], kTid);
  EXPECT_EQ(events[1]["args"]["name"], "main thread");
}

TEST(KinetoTraceWriter, TimesAreMicrosecondsWithThreeDecimalsRelativeToTheBase) {
  const std::string text = write_standard_trace();
  const json doc = json::parse(text);
  const std::int64_t base = doc["baseTimeNanoseconds"].get<std::int64_t>();
  ASSERT_EQ(base, base_time_ns(kT0));

  RawTimes raw;
  ASSERT_TRUE(json::sax_parse(text, &raw));

  // Expected (start, end) of every X event, in document order.
  std::vector<std::pair<std::int64_t, std::int64_t>> expected;
  for (const auto& s : standard_spans()) expected.emplace_back(s.start_ns, s.end_ns);
  for (const auto& s : standard_steps()) expected.emplace_back(s.start_ns, s.end_ns);

  const std::regex three_decimals(R"(^-?\d+\.\d{3}$)");
  std::size_t t = 0, x = 0;
  for (const auto& e : doc["traceEvents"]) {
    ASSERT_LT(t, raw.tokens.size());
    ASSERT_EQ(raw.tokens[t].key, "ts");
    if (e["ph"] != "X") {
      ++t;
      continue;
    }
    ASSERT_LT(x, expected.size());
    const auto [start, end] = expected[x++];
    const auto& ts = raw.tokens[t++];
    ASSERT_LT(t, raw.tokens.size());
    const auto& dur = raw.tokens[t++];
    ASSERT_EQ(dur.key, "dur");
    SCOPED_TRACE(e["name"].get<std::string>() + " ts " + ts.raw + " dur " + dur.raw);
    ASSERT_TRUE(ts.is_float);
    ASSERT_TRUE(dur.is_float);
    EXPECT_TRUE(std::regex_match(ts.raw, three_decimals));
    EXPECT_TRUE(std::regex_match(dur.raw, three_decimals));
    // Exact, from the raw text.
    EXPECT_EQ(raw_us_to_ns(ts.raw) + base, start);
    EXPECT_EQ(raw_us_to_ns(dur.raw), end - start);
    // And as a reader computing in doubles sees it: within 1 ns.
    const long double ts_us = e["ts"].get<double>();
    EXPECT_NEAR(static_cast<double>(ts_us * 1000 + base - start), 0.0, 1.0);
    const long double dur_us = e["dur"].get<double>();
    EXPECT_NEAR(static_cast<double>(dur_us * 1000 - (end - start)), 0.0, 1.0);
  }
  EXPECT_EQ(x, expected.size());
  EXPECT_EQ(t, raw.tokens.size()) << "a ts or dur outside traceEvents";
}

TEST(KinetoTraceWriter, SubMicrosecondAndZeroDurationsAreWrittenExactly) {
  const std::string text = write_standard_trace();
  // aten::"weird"... lasts 1 ns and starts 1 ns after kT0.
  const std::string start = format_us(kT0 + 1, base_time_ns(kT0));
  EXPECT_NE(text.find("\"ts\": " + start + ", \"dur\": 0.001"), std::string::npos) << text;
  // nccl:all_reduce lasts 0 ns.
  EXPECT_NE(text.find("\"dur\": 0.000"), std::string::npos);
  // aten::mm lasts 4999 ns.
  EXPECT_NE(text.find("\"dur\": 4.999"), std::string::npos);
}

TEST(KinetoTraceWriter, EventNamesWithQuotesAndNewlinesAreEscaped) {
  const std::string text = write_standard_trace();
  EXPECT_NE(text.find(R"("name": "aten::\"weird\"\nname\t\\end")"), std::string::npos) << text;
  const json doc = json::parse(text);
  bool found = false;
  for (const auto& e : doc["traceEvents"])
    found = found || e["name"] == "aten::\"weird\"\nname\t\\end";
  EXPECT_TRUE(found);
}

TEST(KinetoTraceWriter, InvalidUtf8InNamesStillParses) {
  files::StringSink sink;
  KinetoTraceWriter w(sink, base_time_ns(kT0));
  w.begin(header());
  w.process_name(kPid, "py\xff");
  w.host_span(host(HostCategory::cpu_op, "bad\xc0\xaf\x01name", kT0, kT0 + 10, 1, 1));
  w.step_span(step(0, kT0, kT0 + 20, 2));
  ASSERT_TRUE(w.end(trailer()));
  json doc;
  ASSERT_NO_THROW(doc = json::parse(sink.text()));
  EXPECT_EQ(doc["traceEvents"][1]["name"], "bad\xef\xbf\xbd\xef\xbf\xbd\x01name");
}

// --- the chakrashim metadata --------------------------------------------------

TEST(KinetoTraceWriter, MetadataOfACompleteWindow) {
  const json doc = json::parse(write_standard_trace());
  const json& m = doc["chakrashim"];
  EXPECT_EQ(m["version"], "0.1.0");
  EXPECT_EQ(m["torch_version"], "2.5.1");
  const json& steps = m["steps"];
  EXPECT_EQ(steps["start"], 5);
  EXPECT_EQ(steps["end"], 6);
  EXPECT_EQ(steps["warmup"], 0);
  EXPECT_EQ(steps["active"], 2);
  EXPECT_EQ(steps["captured"], json::parse("[5, 6]"));
  EXPECT_EQ(steps["cut_short"], false);
  ASSERT_TRUE(steps.contains("partial_last_step"));
  EXPECT_TRUE(steps["partial_last_step"].is_null());
  EXPECT_EQ(steps["reason"], "end_step");
  const json& ranks = m["ranks"];
  ASSERT_TRUE(ranks.contains("filter"));
  EXPECT_TRUE(ranks["filter"].is_null());
  EXPECT_EQ(ranks["world_size"], 8);
  EXPECT_EQ(m["host_trace"], "on");
  ASSERT_TRUE(m.contains("recording_cost"));
  EXPECT_TRUE(m["recording_cost"].is_null());
  const json& dev = m["device_trace"];
  EXPECT_EQ(dev["cupti"], "absent");
  EXPECT_EQ(dev["dropped_records"], 0);
  EXPECT_EQ(dev["clock"], "realtime");
  ASSERT_TRUE(dev.contains("truncated_at"));
  EXPECT_TRUE(dev["truncated_at"].is_null());
}

TEST(KinetoTraceWriter, MetadataOfAWindowCutShortBySignal) {
  TraceTrailer t = trailer();
  t.steps.captured = {5};
  t.steps.cut_short = true;
  t.steps.partial_last_step = 6;
  t.steps.reason = "signal:SIGTERM";
  t.ranks_filter = "0,3";
  t.world_size = std::nullopt;
  t.host_trace = "off";
  t.cupti = "ok";
  t.dropped_records = 12;
  t.clock = "calibrated";
  t.truncated_at_ns = kT0 + 123456789;
  // From the steps: 1900 ns, above the gaps' 1032 (2350 gaps, median 627), 2 steps before.
  t.recording_cost = RecordingCost{1900, true, 1032, 2350, 627, 1900, 2, ""};
  const std::string text = write_standard_trace(t);
  const json doc = json::parse(text);
  const json& m = doc["chakrashim"];
  EXPECT_EQ(m["steps"]["captured"], json::parse("[5]"));
  EXPECT_EQ(m["steps"]["cut_short"], true);
  EXPECT_EQ(m["steps"]["partial_last_step"], 6);
  EXPECT_EQ(m["steps"]["reason"], "signal:SIGTERM");
  EXPECT_EQ(m["ranks"]["filter"], "0,3");
  EXPECT_TRUE(m["ranks"]["world_size"].is_null());
  EXPECT_EQ(m["host_trace"], "off");
  EXPECT_EQ(m["recording_cost"], json::parse(R"({"per_op_ns": 1900, "from": "steps", "gap_ns": 1032, "pairs": 2350,
                                                   "median_ns": 627, "step_ns": 1900, "unrecorded_steps": 2, "step_refused": null})"));
  EXPECT_EQ(m["device_trace"]["cupti"], "ok");
  EXPECT_EQ(m["device_trace"]["dropped_records"], 12);
  EXPECT_EQ(m["device_trace"]["clock"], "calibrated");
  ASSERT_TRUE(m["device_trace"]["truncated_at"].is_number());
  // A timestamp on the same scale as ts.
  const std::string expected = format_us(kT0 + 123456789, base_time_ns(kT0));
  EXPECT_NE(text.find("\"truncated_at\": " + expected), std::string::npos) << text;
}

TEST(KinetoTraceWriter, AnEmptyCaptureListIsAnEmptyArray) {
  TraceTrailer t = trailer();
  t.steps.captured.clear();
  const json doc = json::parse(write_standard_trace(t));
  EXPECT_TRUE(doc["chakrashim"]["steps"]["captured"].is_array());
  EXPECT_TRUE(doc["chakrashim"]["steps"]["captured"].empty());
}

TEST(KinetoTraceWriter, ATraceWithNoEventsIsStillValid) {
  files::StringSink sink;
  KinetoTraceWriter w(sink, 0);
  w.begin(header(0));
  ASSERT_TRUE(w.end(trailer()));
  const json doc = json::parse(sink.text());
  EXPECT_TRUE(doc["traceEvents"].is_array());
  EXPECT_TRUE(doc["traceEvents"].empty());
  EXPECT_EQ(doc["baseTimeNanoseconds"], 0);
}

TEST(KinetoTraceWriter, ManyEventsAreAllWritten) {
  files::StringSink sink;
  const std::int64_t base = base_time_ns(kT0);
  KinetoTraceWriter w(sink, base);
  w.begin(header());
  constexpr int kSpans = 5000;
  for (int i = 0; i < kSpans; ++i)
    w.host_span(host(HostCategory::cpu_op, "aten::add_" + std::to_string(i), kT0 + i * 100,
                     kT0 + i * 100 + 50, static_cast<std::uint64_t>(i + 1),
                     static_cast<std::uint64_t>(i + 1)));
  w.step_span(step(3, kT0, kT0 + kSpans * 100, kSpans + 1));
  ASSERT_TRUE(w.end(trailer()));
  EXPECT_GT(sink.text().size(), 64u * 1024);
  const json doc = json::parse(sink.text());
  ASSERT_EQ(doc["traceEvents"].size(), static_cast<std::size_t>(kSpans + 1));
  EXPECT_EQ(doc["traceEvents"][kSpans - 1]["args"]["External id"], kSpans);
  EXPECT_EQ(doc["chakrashim"]["steps"]["reason"], "end_step");
}

TEST(KinetoTraceWriter, EndReportsAFailingSink) {
  class FailingSink final : public files::ByteSink {
   public:
    bool write(std::string_view) override { return false; }
    bool ok() const override { return false; }
  } sink;
  KinetoTraceWriter w(sink, 0);
  w.begin(header());
  EXPECT_FALSE(w.end(trailer()));
}


// ---- GPU events (the collector's DeviceCapture) -----------------------------

TEST(KinetoGpuEvents, EveryCategoryCarriesTheFieldsTraceFormatAsksFor) {
  const std::int64_t base = base_time_ns(kT0);
  files::StringSink sink;
  KinetoTraceWriter w(sink, base);
  w.begin(header());
  DeviceEvent launch = device_event(DeviceEventKind::runtime, kT0 + 1000, kT0 + 1500, 77, 11);
  launch.context = 211;  // cbid
  launch.tid = kTid;
  launch.flow = true;
  DeviceEvent k = device_event(DeviceEventKind::kernel, kT0 + 3000, kT0 + 8000, 77, 11, 7);
  k.device = 1;
  k.context = 2;
  k.grid[0] = 4, k.grid[1] = 1, k.grid[2] = 1;
  k.block[0] = 128, k.block[1] = 1, k.block[2] = 1;
  k.registers = 32;
  k.shared_memory = 1024;
  k.extra = kT0 + 2000;
  k.flow = true;
  DeviceEvent m = device_event(DeviceEventKind::memcpy, kT0 + 9000, kT0 + 10000, 78, 12, 7);
  m.extra = 4096;
  w.device_event(launch, "cudaLaunchKernel", kPid);
  w.flow(launch, kPid);
  w.device_event(k, "fake_gemm(float const*)", kPid);
  w.flow(k, kPid);
  w.device_event(m, "Memcpy HtoD (Pinned -> Device)", kPid);
  TraceTrailer t = trailer();
  t.cupti = "ok";
  t.dropped_records = 3;
  t.invalid_records = 2;
  ASSERT_TRUE(w.end(t));
  const json doc = json::parse(sink.text());
  const auto& ev = doc["traceEvents"];
  ASSERT_EQ(ev.size(), 5u);

  EXPECT_EQ(ev[0]["cat"], "cuda_runtime");
  EXPECT_EQ(ev[0]["name"], "cudaLaunchKernel");
  EXPECT_EQ(ev[0]["pid"], kPid);
  EXPECT_EQ(ev[0]["tid"], kTid);
  EXPECT_EQ(ev[0]["args"]["External id"], 11);
  EXPECT_EQ(ev[0]["args"]["correlation"], 77);
  EXPECT_EQ(ev[0]["args"]["cbid"], 211);
  EXPECT_FALSE(ev[0]["args"].contains("stream"));  // CPU side: no stream key

  EXPECT_EQ(ev[1]["ph"], "s");
  EXPECT_EQ(ev[1]["cat"], "ac2g");
  EXPECT_EQ(ev[1]["id"], 77);
  EXPECT_EQ(ev[1]["pid"], kPid);
  EXPECT_EQ(ev[1]["tid"], kTid);
  EXPECT_DOUBLE_EQ(ev[1]["ts"].get<double>(), ev[0]["ts"].get<double>());

  EXPECT_EQ(ev[2]["cat"], "kernel");
  EXPECT_EQ(ev[2]["pid"], 1);  // device
  EXPECT_EQ(ev[2]["tid"], 7);  // stream
  const auto& a = ev[2]["args"];
  EXPECT_EQ(a["External id"], 11);
  EXPECT_EQ(a["correlation"], 77);
  EXPECT_EQ(a["device"], 1);
  EXPECT_EQ(a["context"], 2);
  EXPECT_EQ(a["stream"], 7);
  EXPECT_EQ(a["registers per thread"], 32);
  EXPECT_EQ(a["shared memory"], 1024);
  EXPECT_EQ(a["grid"], json::array({4, 1, 1}));
  EXPECT_EQ(a["block"], json::array({128, 1, 1}));
  EXPECT_TRUE(a.contains("queued"));
  EXPECT_DOUBLE_EQ(ev[2]["dur"].get<double>(), 5.0);

  EXPECT_EQ(ev[3]["ph"], "f");
  EXPECT_EQ(ev[3]["bp"], "e");
  EXPECT_EQ(ev[3]["id"], 77);
  EXPECT_EQ(ev[3]["pid"], 1);
  EXPECT_EQ(ev[3]["tid"], 7);

  EXPECT_EQ(ev[4]["cat"], "gpu_memcpy");
  EXPECT_EQ(ev[4]["args"]["bytes"], 4096);
  EXPECT_DOUBLE_EQ(ev[4]["args"]["memory bandwidth (GB/s)"].get<double>(), 4.096);
  EXPECT_EQ(ev[4]["args"]["stream"], 7);

  const auto& dt = doc["chakrashim"]["device_trace"];
  EXPECT_EQ(dt["cupti"], "ok");
  EXPECT_EQ(dt["dropped_records"], 3);
  EXPECT_EQ(dt["invalid_records"], 2);
}


TEST(KinetoGpuEvents, CommArgsGoOntoTheKernelTheyAreGivenFor) {
  files::StringSink sink;
  KinetoTraceWriter w(sink, base_time_ns(kT0));
  w.begin(header());
  const DeviceEvent k = device_event(DeviceEventKind::kernel, kT0 + 3000, kT0 + 8000, 0, 11, 7);
  const std::vector<std::pair<std::string, std::string>> comm{
      {"Collective name", "\"allreduce\""}, {"Process Group Name", "\"0\""}, {"In msg nelems", "1024"},
      {"dtype", "Float"}};  // not JSON: written as a string
  w.device_event(k, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", kPid,
                 &comm);
  ASSERT_TRUE(w.end(trailer()));
  const json doc = json::parse(sink.text());
  const auto& a = doc["traceEvents"][0]["args"];
  EXPECT_EQ(a["Collective name"], "allreduce");
  EXPECT_EQ(a["Process Group Name"], "0");
  EXPECT_EQ(a["In msg nelems"], 1024);
  EXPECT_EQ(a["dtype"], "Float");
  EXPECT_EQ(a["External id"], 11);
}

}  // namespace
}  // namespace chakrashim::writers
