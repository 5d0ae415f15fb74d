// Builds a small nlohmann::json value from SAX events, for the few subtrees
// that the readers keep whole (distributedInfo, our chakrashim object). The
// readers route events here only for those keys, never for traceEvents or
// nodes, so a capture stays as small as the subtree.
//   begin(); start_object(); key("a"); scalar(1); end_container() -> {"a": 1}, done()
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace chakrashim::tools {

class JsonCapture {
 public:
  void begin();
  bool active() const { return active_; }
  // True once the value that began is complete; value() then holds it.
  bool done() const { return !active_ && started_; }
  const nlohmann::json& value() const { return root_; }

  void scalar(nlohmann::json v);
  void key(const std::string& k) { pending_key_ = k; }
  void start_container(bool object);
  void end_container();

 private:
  nlohmann::json* place(nlohmann::json v);

  nlohmann::json root_;
  std::vector<nlohmann::json*> stack_;  // open containers, innermost last
  std::string pending_key_;
  bool active_ = false;
  bool started_ = false;
};

}  // namespace chakrashim::tools
