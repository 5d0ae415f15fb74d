// What the streaming SAX readers (et_reader.cpp, trace_reader.cpp) share:
// the stack of containers they are inside, innermost last, each as the
// reader's own Frame, an enum with `top` (the document's object) and `other`
// (a container it does not track); the container callbacks, which go to the
// reader's start(object) and end(); and a parse error kept as a ParseOutcome.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/sax_outcome.h"

namespace chakrashim::tools {

template <class Frame>
class SaxFrames {
 public:
  // The innermost container's frame; `other` outside every container.
  Frame current() const { return frames_.empty() ? Frame::other : frames_.back(); }

  // At the document's first container: opens `top` (`other` for an array)
  // and returns true. False once the document has begun.
  bool begin_document(bool object) {
    if (started_) return false;
    started_ = true;
    frames_.push_back(object ? Frame::top : Frame::other);
    return true;
  }

  void push(Frame frame) { frames_.push_back(frame); }

  // The frame of the container that ends; nullopt when none is open.
  std::optional<Frame> pop() {
    if (frames_.empty()) return std::nullopt;
    const Frame closed = frames_.back();
    frames_.pop_back();
    return closed;
  }

 private:
  std::vector<Frame> frames_;
  bool started_ = false;
};

// Reader is the class deriving from this one (it befriends it): its
// `bool start(bool object)` and `bool end()` take the containers.
template <class Reader, class Frame>
class FramedSax : public nlohmann::json::json_sax_t {
 public:
  explicit FramedSax(ParseOutcome& parse) : parse_(parse) {}

  bool start_object(std::size_t) final { return reader().start(true); }
  bool start_array(std::size_t) final { return reader().start(false); }
  bool end_object() final { return reader().end(); }
  bool end_array() final { return reader().end(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) final {
    parse_ = outcome_of_error(ex);
    return false;
  }

 protected:
  Frame frame() const { return frames_.current(); }

  SaxFrames<Frame> frames_;

 private:
  Reader& reader() { return static_cast<Reader&>(*this); }

  ParseOutcome& parse_;
};

}  // namespace chakrashim::tools
