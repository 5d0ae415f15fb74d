// Unit tests for the streaming JSON emitter and its escaping
// (common/json/json_emitter.h): commas placed by the emitter, `"key": value` with
// one space (HTA's rank regex), and strings that always parse whatever bytes
// they were given.
#include "json/json_emitter.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "files/byte_sink.h"

namespace chakrashim::writers {
namespace {

using nlohmann::json;

std::string escaped(std::string_view text) {
  std::string out;
  append_escaped(out, text);
  return out;
}

// The escaped text inside quotes, parsed back by nlohmann.
std::string round_trip(std::string_view text) {
  return json::parse("\"" + escaped(text) + "\"").get<std::string>();
}

// A sink that records each write, to see the emitter's flushes.
class RecordingSink final : public files::ByteSink {
 public:
  bool write(std::string_view bytes) override {
    writes.emplace_back(bytes);
    return !fail;
  }
  bool ok() const override { return !fail; }
  std::string text() const {
    std::string all;
    for (const auto& w : writes) all += w;
    return all;
  }
  std::vector<std::string> writes;
  bool fail = false;
};

// --- structure ------------------------------------------------------------

TEST(JsonEmitter, NestedObjectsAndArraysProduceValidJsonWithCommasRight) {
  files::StringSink sink;
  JsonEmitter j(sink);
  j.begin_object();
  j.key("a").value(1);
  j.key("empty_object").begin_object().end_object();
  j.key("empty_array").begin_array().end_array();
  j.key("list").begin_array();
  j.value(1).value("two").begin_object().key("x").null().key("y").value(false).end_object();
  j.begin_array().begin_array().end_array().value(true).end_array();
  j.end_array();
  j.key("obj").begin_object().key("inner").begin_object().key("k").value("v").end_object().end_object();
  j.key("last").raw("1.500");
  j.end_object();
  ASSERT_TRUE(j.flush());

  const std::string& text = sink.text();
  json doc;
  ASSERT_NO_THROW(doc = json::parse(text)) << text;
  const json expected = json::parse(R"({
      "a": 1, "empty_object": {}, "empty_array": [],
      "list": [1, "two", {"x": null, "y": false}, [[], true]],
      "obj": {"inner": {"k": "v"}}, "last": 1.5})");
  EXPECT_EQ(doc, expected);
  // Exactly one comma between elements, none after the last or before the first.
  EXPECT_EQ(text.find(",,"), std::string::npos) << text;
  EXPECT_EQ(text.find(", ,"), std::string::npos) << text;
  EXPECT_EQ(text.find("[,"), std::string::npos) << text;
  EXPECT_EQ(text.find("{,"), std::string::npos) << text;
  EXPECT_EQ(text.find(", ]"), std::string::npos) << text;
  EXPECT_EQ(text.find(", }"), std::string::npos) << text;
  EXPECT_EQ(text.find(",]"), std::string::npos) << text;
  EXPECT_EQ(text.find(",}"), std::string::npos) << text;
}

TEST(JsonEmitter, KeysAreWrittenWithExactlyOneSpaceAfterTheColon) {
  files::StringSink sink;
  JsonEmitter j(sink);
  j.begin_object().key("rank").value(std::uint64_t{3}).key("b").begin_object().end_object()
      .key("c").value("s").key("d").begin_array().end_array().key("e").null().end_object();
  j.flush();
  const std::string& text = sink.text();
  EXPECT_EQ(text, R"({"rank": 3, "b": {}, "c": "s", "d": [], "e": null})");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"("rank":\s+(\d+))")));
  EXPECT_EQ(m[1], "3");
}

TEST(JsonEmitter, NewlinesBetweenTopLevelItemsKeepTheDocumentValid) {
  files::StringSink sink;
  JsonEmitter j(sink);
  j.begin_object().newline();
  j.key("a").value(1).newline();
  j.key("b").begin_array().newline();
  j.value(1).newline().value(2).newline();
  j.end_array().newline();
  j.end_object().newline();
  j.flush();
  const json doc = json::parse(sink.text());
  EXPECT_EQ(doc, json::parse(R"({"a": 1, "b": [1, 2]})"));
  EXPECT_EQ(sink.text().back(), '\n');
}

TEST(JsonEmitter, KeysAreEscapedLikeValues) {
  files::StringSink sink;
  JsonEmitter j(sink);
  j.begin_object().key("a\"b\n").value("v").key("\xff").value(1).end_object();
  j.flush();
  const json doc = json::parse(sink.text());
  EXPECT_EQ(doc.at("a\"b\n"), "v");
  EXPECT_EQ(doc.at("\xef\xbf\xbd"), 1);
}

TEST(JsonEmitter, IntegerExtremesRoundTrip) {
  files::StringSink sink;
  JsonEmitter j(sink);
  const auto i64min = std::numeric_limits<std::int64_t>::min();
  const auto i64max = std::numeric_limits<std::int64_t>::max();
  const auto u64max = std::numeric_limits<std::uint64_t>::max();
  j.begin_array().value(i64min).value(i64max).value(u64max).value(std::uint64_t{0}).value(-1)
      .end_array();
  j.flush();
  EXPECT_EQ(sink.text(),
            "[-9223372036854775808, 9223372036854775807, 18446744073709551615, 0, -1]");
  const json doc = json::parse(sink.text());
  EXPECT_EQ(doc[0].get<std::int64_t>(), i64min);
  EXPECT_EQ(doc[1].get<std::int64_t>(), i64max);
  EXPECT_EQ(doc[2].get<std::uint64_t>(), u64max);
  EXPECT_EQ(doc[3].get<std::uint64_t>(), 0u);
  EXPECT_EQ(doc[4].get<std::int64_t>(), -1);
}

TEST(JsonEmitter, NothingReachesTheSinkBeforeFlushForSmallDocuments) {
  RecordingSink sink;
  JsonEmitter j(sink);
  j.begin_object().key("a").value(1).end_object();
  EXPECT_TRUE(sink.writes.empty());
  EXPECT_TRUE(j.flush());
  EXPECT_EQ(sink.text(), R"({"a": 1})");
  // A second flush with nothing buffered writes nothing more.
  const auto count = sink.writes.size();
  EXPECT_TRUE(j.flush());
  EXPECT_EQ(sink.writes.size(), count);
}

TEST(JsonEmitter, LargeOutputIsFlushedInPiecesAndIsComplete) {
  RecordingSink sink;
  JsonEmitter j(sink);
  j.begin_object().key("events").begin_array();
  constexpr int kEvents = 20000;
  for (int i = 0; i < kEvents; ++i) {
    j.begin_object().key("i").value(i).key("name").value("op \"" + std::to_string(i) + "\"\n")
        .key("ts").raw("12.345").end_object();
  }
  j.end_array().key("big").value(std::string(100000, 'z')).end_object();
  ASSERT_TRUE(j.flush());

  const std::string text = sink.text();
  EXPECT_GT(text.size(), 64u * 1024);
  EXPECT_GT(sink.writes.size(), 2u) << "the emitter should flush on its own as it goes";
  json doc;
  ASSERT_NO_THROW(doc = json::parse(text));
  ASSERT_EQ(doc["events"].size(), static_cast<std::size_t>(kEvents));
  for (int i = 0; i < kEvents; ++i) {
    ASSERT_EQ(doc["events"][i]["i"], i);
    ASSERT_EQ(doc["events"][i]["name"], "op \"" + std::to_string(i) + "\"\n");
  }
  EXPECT_EQ(doc["big"].get<std::string>(), std::string(100000, 'z'));
}

TEST(JsonEmitter, FlushReportsAFailedSink) {
  RecordingSink sink;
  sink.fail = true;
  JsonEmitter j(sink);
  j.begin_array().value(1).end_array();
  EXPECT_FALSE(j.flush());
  EXPECT_FALSE(j.ok());
}

// --- append_escaped -------------------------------------------------------

TEST(AppendEscaped, QuotesAndBackslashesAreEscaped) {
  EXPECT_EQ(escaped("a\"b\\"), "a\\\"b\\\\");
  EXPECT_EQ(round_trip("a\"b\\"), "a\"b\\");
  EXPECT_EQ(escaped("plain / text"), "plain / text");
}

TEST(AppendEscaped, NewlineTabAndCarriageReturnUseShortEscapes) {
  EXPECT_EQ(escaped("\n\t\r"), "\\n\\t\\r");
  EXPECT_EQ(round_trip("x\ny\tz\r"), "x\ny\tz\r");
}

TEST(AppendEscaped, OtherControlCharactersBecomeUnicodeEscapes) {
  EXPECT_EQ(escaped(std::string_view("\x00", 1)), "\\u0000");
  EXPECT_EQ(escaped("\x01"), "\\u0001");
  EXPECT_EQ(escaped("\x08\x0c"), "\\u0008\\u000c");
  EXPECT_EQ(escaped("\x1f"), "\\u001f");
  EXPECT_EQ(escaped("\x1b[0m"), "\\u001b[0m");
  std::string all_controls;
  for (int c = 0; c < 0x20; ++c) all_controls += static_cast<char>(c);
  EXPECT_EQ(round_trip(all_controls), all_controls);
  // DEL is not a control character for JSON and passes through.
  EXPECT_EQ(escaped("\x7f"), "\x7f");
}

TEST(AppendEscaped, AppendsToWhatIsAlreadyThere) {
  std::string out = "prefix:";
  append_escaped(out, "\"");
  EXPECT_EQ(out, "prefix:\\\"");
}

TEST(AppendEscaped, ValidMultibyteUtf8IsKept) {
  for (const std::string s : {"é", "日本", "\xf0\x9f\x98\x80" /* U+1F600 */, "\xf4\x8f\xbf\xbf"
                              /* U+10FFFF */, "\xef\xbf\xbd" /* U+FFFD itself */,
                              "\xc2\x80" /* U+0080 */, "\xe0\xa0\x80" /* U+0800 */,
                              "\xf0\x90\x80\x80" /* U+10000 */}) {
    EXPECT_EQ(escaped(s), s);
    EXPECT_EQ(round_trip(s), s);
  }
  EXPECT_EQ(escaped("aé日\xf0\x9f\x98\x80z"), "aé日\xf0\x9f\x98\x80z");
}

TEST(AppendEscaped, InvalidUtf8BecomesReplacementCharacters) {
  struct Case {
    const char* what;
    std::string in;
    std::string out;
  };
  const std::vector<Case> cases = {
      {"lone 0xff", "\xff", "\\ufffd"},
      {"lone 0xfe", "\xfe", "\\ufffd"},
      {"lone continuation", "\x80", "\\ufffd"},
      {"truncated 3-byte sequence", "\xe6\x97", "\\ufffd\\ufffd"},
      {"truncated at the end after text", "ab\xe6", "ab\\ufffd"},
      {"truncated then ASCII", "\xe6\x97x", "\\ufffd\\ufffdx"},
      {"overlong slash", "\xc0\xaf", "\\ufffd\\ufffd"},
      {"overlong 3-byte NUL", "\xe0\x80\x80", "\\ufffd\\ufffd\\ufffd"},
      {"surrogate", "\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd"},
      {"past U+10FFFF", "\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"},
      {"5-byte lead", "\xf8\x88\x80\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"},
      {"valid after invalid", "\xff\xc3\xa9", "\\ufffd\xc3\xa9"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(escaped(c.in), c.out) << c.what;
    std::string parsed;
    ASSERT_NO_THROW(parsed = round_trip(c.in)) << c.what;
    EXPECT_NE(parsed.find("\xef\xbf\xbd"), std::string::npos) << c.what;
  }
}

TEST(AppendEscaped, RandomBytesAlwaysGiveAParsableString) {
  std::mt19937 rng(20240523);
  std::uniform_int_distribution<int> length(0, 64);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> pick(0, 3);
  // Some strings are biased towards the interesting ranges: control
  // characters, quotes, and UTF-8 lead/continuation bytes.
  const std::string specials = std::string("\"\\\n\t\r\x01\x1f\x7f", 8) +
                               "\x80\xbf\xc0\xc1\xc2\xdf\xe0\xed\xef\xf0\xf4\xf5\xff";
  for (int n = 0; n < 2000; ++n) {
    std::string s;
    const int len = length(rng);
    const bool biased = n % 2 == 1;
    for (int i = 0; i < len; ++i) {
      if (biased && pick(rng) != 0)
        s += specials[static_cast<std::size_t>(byte(rng)) % specials.size()];
      else
        s += static_cast<char>(byte(rng));
    }
    const std::string e = escaped(s);
    json parsed;
    ASSERT_NO_THROW(parsed = json::parse("{\"k\": \"" + e + "\"}")) << "case " << n;
    // Escaping valid input changes nothing but the escapes: plain printable
    // ASCII comes back as it was.
    bool printable_ascii = true;
    for (unsigned char c : s) printable_ascii = printable_ascii && c >= 0x20 && c < 0x80;
    if (printable_ascii) {
      ASSERT_EQ(parsed["k"].get<std::string>(), s) << "case " << n;
    }
  }
}

TEST(AppendEscaped, ValidUtf8RoundTripsExactly) {
  // Every code point class, encoded by nlohmann and escaped by us, comes back.
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> cp_dist(0, 0x10ffff);
  for (int n = 0; n < 500; ++n) {
    std::string s;
    for (int i = 0; i < 8; ++i) {
      std::uint32_t cp = cp_dist(rng);
      if (cp >= 0xd800 && cp <= 0xdfff) cp = 0x41;
      if (cp < 0x80) {
        s += static_cast<char>(cp);
      } else if (cp < 0x800) {
        s += static_cast<char>(0xc0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3f));
      } else if (cp < 0x10000) {
        s += static_cast<char>(0xe0 | (cp >> 12));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        s += static_cast<char>(0x80 | (cp & 0x3f));
      } else {
        s += static_cast<char>(0xf0 | (cp >> 18));
        s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        s += static_cast<char>(0x80 | (cp & 0x3f));
      }
    }
    ASSERT_EQ(round_trip(s), s) << "case " << n;
  }
}

}  // namespace
}  // namespace chakrashim::writers
