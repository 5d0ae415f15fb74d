#include "common/et_reader.h"

#include <string_view>

#include "common/json_capture.h"
#include "common/sax_frames.h"
#include "chakrashim/trace_schema.h"
#include "common/tool_schema.h"

namespace chakrashim::tools {

namespace {

using json = nlohmann::json;
enum class Frame : std::uint8_t { top, nodes, node, inputs, input_values, attrs, attr, other };

class EtSax final : public FramedSax<EtSax, Frame> {
 public:
  EtSax(EtSummary& summary, const NodeConsumer& consumer)
      : FramedSax(summary.parse), summary_(summary), consumer_(consumer) {}

  bool null() override { return captured(nullptr) || true; }
  bool boolean(bool v) override { return captured(v) || true; }
  bool number_integer(number_integer_t v) override {
    if (captured(v)) return true;
    return integer(v < 0 ? std::optional<std::uint64_t>{} : static_cast<std::uint64_t>(v));
  }
  bool number_unsigned(number_unsigned_t v) override { return captured(v) || integer(v); }
  bool number_float(number_float_t v, const string_t&) override { return captured(v) || integer({}); }
  bool string(string_t& v) override;
  bool binary(binary_t&) override { return true; }
  bool key(string_t& k) override;

 private:
  friend FramedSax<EtSax, Frame>;
  bool integer(std::optional<std::uint64_t> v);
  bool start(bool object);
  bool end();
  void close_attr();

  // A scalar inside the chakrashim object, if one is being captured.
  bool captured(json v) {
    if (!capture_.active()) return false;
    capture_.scalar(std::move(v));
    if (capture_.done()) summary_.chakrashim = capture_.value();
    return true;
  }

  EtSummary& summary_;
  const NodeConsumer& consumer_;
  JsonCapture capture_;  // the top-level chakrashim object
  std::string key_;  // the last key in the innermost object we track
  EtNode node_;
  std::string attr_name_;
  std::optional<std::uint64_t> attr_value_;
};

bool EtSax::key(string_t& k) {
  if (capture_.active()) {
    capture_.key(k);
    return true;
  }
  const Frame f = frame();
  if (f == Frame::top) summary_.top_keys.push_back(k);
  if (f == Frame::top || f == Frame::node || f == Frame::inputs || f == Frame::attr) key_ = k;
  return true;
}

bool EtSax::string(string_t& v) {
  if (captured(v)) return true;
  switch (frame()) {
    case Frame::top:
      if (key_ == names::kEtSchema) summary_.schema = v;
      break;
    case Frame::node:
      if (key_ == names::kEtName) node_.name = v;
      break;
    case Frame::attr:
      if (key_ == names::kEtName) attr_name_ = v;
      break;
    case Frame::input_values:
      // Writers put "name" before "inputs" (torch's observer and ours), so
      // the node is known by now; one string of one node is all we keep.
      if (node_.name == names::kEtProcessGroupName && !node_.process_groups) node_.process_groups = v;
      break;
    default: break;
  }
  return true;
}

bool EtSax::integer(std::optional<std::uint64_t> v) {
  if (frame() == Frame::top && key_ == names::kEtPid) {
    summary_.pid = v;
  } else if (frame() == Frame::node) {
    if (key_ == names::kEtId) node_.id = v;
    else if (key_ == names::kEtCtrlDeps) node_.parent = v;
  } else if (frame() == Frame::attr && key_ == names::kEtAttrValue) {
    attr_value_ = v;
  }
  return true;
}

bool EtSax::start(bool object) {
  if (capture_.active()) {
    capture_.start_container(object);
    return true;
  }
  if (frames_.begin_document(object)) return true;
  Frame next = Frame::other;
  switch (frame()) {
    case Frame::top:
      if (!object && key_ == names::kEtNodes) {
        next = Frame::nodes;
      } else if (object && key_ == schema::kChakrashim) {
        capture_.begin();
        capture_.start_container(true);
        return true;
      }
      break;
    case Frame::nodes:
      if (object) {
        next = Frame::node;
        node_ = EtNode{};
      }
      break;
    case Frame::node:
      if (!object && key_ == names::kEtAttrs) next = Frame::attrs;
      else if (object && key_ == names::kEtInputs) next = Frame::inputs;
      break;
    case Frame::inputs:
      if (!object && key_ == names::kEtValues) next = Frame::input_values;
      break;
    case Frame::attrs:
      if (object) {
        next = Frame::attr;
        attr_name_.clear();
        attr_value_.reset();
      }
      break;
    default: break;
  }
  frames_.push(next);
  // Keys of a node are only tracked directly inside it; a nested object
  // (inputs, outputs) must not leave its last key behind.
  if (next == Frame::other) key_.clear();
  return true;
}

void EtSax::close_attr() {
  for (std::size_t i = 0; i < names::kEtRequiredAttrs.size(); ++i) {
    if (attr_name_ == names::kEtRequiredAttrs[i]) node_.attr_mask |= static_cast<std::uint8_t>(1u << i);
  }
  if (attr_name_ == names::kEtRfId) node_.rf_id = attr_value_;
}

bool EtSax::end() {
  if (capture_.active()) {
    capture_.end_container();
    if (capture_.done()) summary_.chakrashim = capture_.value();
    return true;
  }
  const std::optional<Frame> closed = frames_.pop();
  if (!closed) return true;
  if (*closed == Frame::attr) {
    close_attr();
  } else if (*closed == Frame::node) {
    ++summary_.nodes;
    consumer_(node_);
  }
  key_.clear();
  return true;
}

}  // namespace

EtSummary read_execution_trace(std::istream& in, const NodeConsumer& consumer) {
  return read_with<EtSax, EtSummary>(in, consumer);
}

}  // namespace chakrashim::tools
