#include "common/json_capture.h"

namespace chakrashim::tools {

void JsonCapture::begin() {
  root_ = nullptr;
  stack_.clear();
  pending_key_.clear();
  active_ = true;
  started_ = true;
}

// Puts v where the next value goes and returns it; pointers into the tree stay
// valid because a container is only appended to while it is the innermost.
nlohmann::json* JsonCapture::place(nlohmann::json v) {
  if (stack_.empty()) {
    root_ = std::move(v);
    return &root_;
  }
  nlohmann::json& parent = *stack_.back();
  if (parent.is_object()) {
    nlohmann::json& slot = parent[pending_key_];
    slot = std::move(v);
    return &slot;
  }
  parent.push_back(std::move(v));
  return &parent.back();
}

void JsonCapture::scalar(nlohmann::json v) {
  place(std::move(v));
  if (stack_.empty()) active_ = false;
}

void JsonCapture::start_container(bool object) {
  stack_.push_back(place(object ? nlohmann::json::object() : nlohmann::json::array()));
}

void JsonCapture::end_container() {
  if (!stack_.empty()) stack_.pop_back();
  if (stack_.empty()) active_ = false;
}

}  // namespace chakrashim::tools
