// HTA's rank lookup, replayed on raw bytes: HTA takes the first match of the
// regex "rank":\s+(\d+) in the file's text (docs/trace-format.md). A compact
// "rank":0 does not match, so HTA then reads rank 0 for every file, silently.
// The scan is fed chunk by chunk, so it runs in the same pass as the parser.
//   feed("{\"distributedInfo\": {\"rank\": 3, ...") -> rank() == 3
//   feed("{\"rank\":3}") then finish()              -> rank() == nullopt
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace chakrashim::tools {

class HtaRankScan {
 public:
  void feed(std::string_view chunk);
  // The end of the input: a match whose digits run to the end completes.
  void finish();
  bool done() const { return state_ == State::matched; }
  // The first match's number, once done().
  std::optional<std::uint64_t> rank() const;
  // Where the match starts (byte offset), once done().
  std::uint64_t offset() const { return match_start_; }

 private:
  enum class State { literal, space, more_space, digits, matched };
  void step(char c);
  void restart(char c);

  State state_ = State::literal;
  std::size_t literal_pos_ = 0;  // chars of "rank": matched so far
  std::uint64_t value_ = 0;
  std::uint64_t pos_ = 0;          // offset of the next byte
  std::uint64_t match_start_ = 0;  // offset of the candidate's opening quote
};

}  // namespace chakrashim::tools
