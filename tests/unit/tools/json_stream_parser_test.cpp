// parse_json_stream against nlohmann's own sax_parse: the same SAX events
// for the same documents (at any buffer boundary), the same refusals, and
// Python's NaN/Infinity on top.
#include "common/json_stream_parser.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace chakrashim::tools {
namespace {

using json = nlohmann::json;

// Records every event as text.
class Recorder final : public json::json_sax_t {
 public:
  std::vector<std::string> events;
  bool null() override { return add("null"); }
  bool boolean(bool v) override { return add(v ? "true" : "false"); }
  bool number_integer(number_integer_t v) override { return add("int " + std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override { return add("uint " + std::to_string(v)); }
  bool number_float(number_float_t v, const string_t& s) override {
    std::ostringstream o;
    o.precision(17);
    o << "float " << v << " '" << s << "'";
    return add(o.str());
  }
  bool string(string_t& v) override { return add("string " + v); }
  bool binary(binary_t&) override { return add("binary"); }
  bool start_object(std::size_t) override { return add("{"); }
  bool key(string_t& k) override { return add("key " + k); }
  bool end_object() override { return add("}"); }
  bool start_array(std::size_t) override { return add("["); }
  bool end_array() override { return add("]"); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return add("error");
  }

 private:
  bool add(std::string e) {
    events.push_back(std::move(e));
    return true;
  }
};

JsonStreamOutcome ours(const std::string& text, std::vector<std::string>& events) {
  std::istringstream in(text);
  Recorder r;
  const auto out = parse_json_stream(*in.rdbuf(), r);
  events = r.events;
  return out;
}

std::vector<std::string> theirs(const std::string& text) {
  Recorder r;
  json::sax_parse(text, &r);
  return r.events;
}

TEST(JsonStreamParser, SameEventsAsNlohmann) {
  const std::vector<std::string> docs = {
      R"({"a": [1, -2, 3.5, 1e-05, -0, 0, 18446744073709551615, 18446744073709551616, -9223372036854775808,
          -9223372036854775809, 123456789012345678, 1234567890123456789, 2.50, 1E5],
          "b": {"c": null, "d": true, "e": false, "f": "x\"y\\z\/\b\f\n\r\t\u00e9\ud83d\ude00"}, "": [], "g": {}})",
      "[]",
      "  \n\t[ 1 , 2 ]  \n",
      R"("caf\u00e9 é")",
      "-12",
  };
  for (const auto& d : docs) {
    std::vector<std::string> events;
    const auto out = ours(d, events);
    EXPECT_TRUE(out.ok) << d << ": " << out.error;
    EXPECT_EQ(events, theirs(d)) << d;
  }
}

TEST(JsonStreamParser, TokensStraddlingBufferEdgesParseAlike) {
  // A document much larger than the parser's 1 MiB buffer, with strings,
  // escapes and numbers at every offset.
  std::string d = "[";
  for (int i = 0; i < 60000; ++i) {
    d += R"({"name": "op\u00e9\n)" + std::string(static_cast<std::size_t>(i % 37), 'x') + R"(", "v": )" +
         std::to_string(i * 7919) + ", \"f\": " + std::to_string(i) + ".25, \"n\": -" + std::to_string(i) + "},";
  }
  d += "null]";
  std::vector<std::string> events;
  const auto out = ours(d, events);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(events, theirs(d));
}

TEST(JsonStreamParser, PythonsNonFiniteLiterals) {
  std::vector<std::string> events;
  ASSERT_TRUE(ours("[NaN, Infinity, -Infinity]", events).ok);
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[1], "float nan 'NaN'");
  EXPECT_EQ(events[2], "float inf 'Infinity'");
  EXPECT_EQ(events[3], "float -inf '-Infinity'");
}

TEST(JsonStreamParser, RefusesWhatIsNotJson) {
  for (const std::string bad : {"[01]", "[1.]", "[.5]", "[-]", "[1e]", "{\"a\" 1}", "{1: 2}", "[1,]", "[1 2]",
                                "\"a\tb\"", "\"\\x\"", "[tru]", "\"\\ud800\"", "\"\xff\"", "[1] x", "{\"a\": 1,}"}) {
    std::vector<std::string> events;
    const auto out = ours(bad, events);
    EXPECT_FALSE(out.ok) << bad;
    EXPECT_FALSE(out.truncated) << bad << ": " << out.error;
    EXPECT_NE(out.error.find("syntax error at byte"), std::string::npos) << out.error;
  }
}

// The byte named is where the parser stopped, counted from the file's
// start (it once counted from the buffer's address: "byte 18446604193460797424").
TEST(JsonStreamParser, NamesTheByteWhereItStopped) {
  std::vector<std::string> events;
  EXPECT_EQ(ours("pid:1@host", events).position, 0u);
  const auto out = ours("[1, 2, x]", events);
  EXPECT_EQ(out.position, 7u);
  EXPECT_NE(out.error.find("syntax error at byte 7:"), std::string::npos) << out.error;
}

TEST(JsonStreamParser, TellsAnInputCutShort) {
  const std::string d = R"({"a": [1, 2.5, "text", {"b": true}]})";
  for (std::size_t cut = 1; cut < d.size(); ++cut) {
    std::vector<std::string> events;
    const auto out = ours(d.substr(0, cut), events);
    EXPECT_FALSE(out.ok) << cut;
    // A number cut short may still be a whole number ("2." is not, "2" is).
    if (d.substr(0, cut).back() != '.') {
      EXPECT_TRUE(out.truncated) << d.substr(0, cut) << ": " << out.error;
    }
  }
  std::vector<std::string> events;
  EXPECT_TRUE(ours("", events).truncated);
}

TEST(JsonStreamParser, AHandlerCanStopIt) {
  class Stopper final : public json::json_sax_t {
   public:
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t v) override { return v != 2; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
  } stopper;
  std::istringstream in("[1, 2, 3]");
  const auto out = parse_json_stream(*in.rdbuf(), stopper);
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.stopped);
  EXPECT_TRUE(out.error.empty());
}

}  // namespace
}  // namespace chakrashim::tools
