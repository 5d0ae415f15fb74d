#include "common/trace_reader.h"

#include <functional>
#include <string_view>

#include "chakrashim/trace_schema.h"
#include "common/json_capture.h"
#include "common/sax_frames.h"
#include "common/time_text.h"
#include "common/tool_schema.h"

namespace chakrashim::tools {

namespace {

namespace s = chakrashim::schema;
using json = nlohmann::json;

enum class Frame : std::uint8_t { top, events, event, args, devices, other };
enum class Field : std::uint8_t { none, ph, cat, name, pid, tid, ts, dur, args };
enum class Arg : std::uint8_t { none, external_id, record_function_id, correlation, stream, process_group_name };

Field field_of(std::string_view k) {
  if (k == s::kPh) return Field::ph;
  if (k == s::kCat) return Field::cat;
  if (k == s::kName) return Field::name;
  if (k == s::kPid) return Field::pid;
  if (k == s::kTid) return Field::tid;
  if (k == s::kTs) return Field::ts;
  if (k == s::kDur) return Field::dur;
  if (k == s::kArgs) return Field::args;
  return Field::none;
}

Arg arg_of(std::string_view k) {
  if (k == s::kExternalId) return Arg::external_id;
  if (k == s::kRecordFunctionId) return Arg::record_function_id;
  if (k == names::kCorrelation) return Arg::correlation;
  if (k == names::kStream) return Arg::stream;
  if (k == names::kProcessGroupName) return Arg::process_group_name;
  return Arg::none;
}

class DeviceSax final : public FramedSax<DeviceSax, Frame> {
 public:
  DeviceSax(TraceSummary& summary, const EventConsumer& consumer)
      : FramedSax(summary.parse), summary_(summary), consumer_(consumer) {}

  bool null() override { return scalar(json(nullptr), {}, {}); }
  bool boolean(bool v) override { return scalar(json(v), {}, {}); }
  bool number_integer(number_integer_t v) override { return scalar(json(v), v, {}); }
  bool number_unsigned(number_unsigned_t v) override {
    const auto i = v > static_cast<number_unsigned_t>(INT64_MAX) ? std::optional<std::int64_t>{}
                                                                 : static_cast<std::int64_t>(v);
    return scalar(json(v), i, {});
  }
  bool number_float(number_float_t v, const string_t& text) override {
    return scalar(json(v), {}, text);
  }
  bool string(string_t& v) override;
  bool binary(binary_t&) override { return scalar(json(nullptr), {}, {}); }
  bool key(string_t& k) override;

 private:
  friend FramedSax<DeviceSax, Frame>;
  bool scalar(json v, std::optional<std::int64_t> integer, std::optional<std::string_view> text);
  bool start(bool object);
  bool end();
  void set_time(std::optional<std::int64_t>& out, std::optional<std::int64_t> integer,
                std::optional<std::string_view> text);

  TraceSummary& summary_;
  const EventConsumer& consumer_;
  std::string top_key_;
  Field field_ = Field::none;
  Arg arg_ = Arg::none;
  TraceEvent event_;
  JsonCapture capture_;
  std::optional<json>* capture_target_ = nullptr;
};

bool DeviceSax::key(string_t& k) {
  if (capture_.active()) {
    capture_.key(k);
    return true;
  }
  switch (frame()) {
    case Frame::top:
      top_key_ = k;
      if (!summary_.has_trace_events && k != s::kTraceEvents) summary_.keys_before_events.push_back(k);
      break;
    case Frame::event: field_ = field_of(k); break;
    case Frame::args: arg_ = arg_of(k); break;
    default: break;
  }
  return true;
}

bool DeviceSax::string(string_t& v) {
  if (!capture_.active() && frame() == Frame::event) {
    switch (field_) {
      case Field::ph: event_.ph = v; return true;
      case Field::cat: event_.cat = v; return true;
      case Field::name: event_.name = v; return true;
      case Field::pid: event_.pid = static_cast<std::int64_t>(std::hash<std::string>{}(v)); return true;
      case Field::tid: event_.tid = static_cast<std::int64_t>(std::hash<std::string>{}(v)); return true;
      default: break;
    }
  }
  if (!capture_.active() && frame() == Frame::args && arg_ == Arg::process_group_name) {
    event_.has_process_group_name = true;
    event_.process_group_name = v;
    return true;
  }
  return scalar(json(v), {}, {});
}

void DeviceSax::set_time(std::optional<std::int64_t>& out, std::optional<std::int64_t> integer,
                         std::optional<std::string_view> text) {
  std::int64_t ns = 0;
  // Past int64 nanoseconds (292 years) a time is unreadable, as in the text
  // path; multiplying blindly was signed overflow (found by trace_reader_fuzz).
  if (integer) out = __builtin_mul_overflow(*integer, 1000, &ns) ? std::nullopt : std::optional(ns);
  else if (text) out = micros_text_to_ns(*text);
}

bool DeviceSax::scalar(json v, std::optional<std::int64_t> integer,
                       std::optional<std::string_view> text) {
  if (capture_.active()) {
    capture_.scalar(std::move(v));
    if (capture_.done()) *capture_target_ = capture_.value();
    return true;
  }
  switch (frame()) {
    case Frame::top:
      if (top_key_ == s::kDistributedInfo) summary_.distributed_info = std::move(v);
      else if (top_key_ == s::kChakrashim) summary_.chakrashim = std::move(v);
      else if (top_key_ == "baseTimeNanoseconds" && integer) summary_.base_time_ns = *integer;
      return true;
    case Frame::event:
      if (field_ == Field::pid && integer) event_.pid = *integer;
      else if (field_ == Field::tid && integer) event_.tid = *integer;
      else if (field_ == Field::ts) set_time(event_.ts_ns, integer, text);
      else if (field_ == Field::dur) set_time(event_.dur_ns, integer, text);
      return true;
    case Frame::args: {
      IntArg* a = nullptr;
      switch (arg_) {
        case Arg::external_id: a = &event_.external_id; break;
        case Arg::record_function_id: a = &event_.record_function_id; break;
        case Arg::correlation: a = &event_.correlation; break;
        case Arg::stream: a = &event_.stream; break;
        case Arg::process_group_name:
        case Arg::none: return true;
      }
      a->present = true;
      a->value = integer;
      return true;
    }
    default: return true;
  }
}

bool DeviceSax::start(bool object) {
  if (capture_.active()) {
    capture_.start_container(object);
    return true;
  }
  if (frames_.begin_document(object)) return true;
  Frame next = Frame::other;
  switch (frame()) {
    case Frame::top:
      if (top_key_ == s::kTraceEvents && !object) {
        next = Frame::events;
      } else if (top_key_ == s::kDeviceProperties && !object) {
        next = Frame::devices;
      } else if (top_key_ == s::kDistributedInfo || top_key_ == s::kChakrashim) {
        capture_target_ = top_key_ == s::kChakrashim ? &summary_.chakrashim : &summary_.distributed_info;
        capture_.begin();
        capture_.start_container(object);
        return true;
      }
      break;
    case Frame::events:
      if (object) {
        next = Frame::event;
        event_.clear();
        field_ = Field::none;
      }
      break;
    case Frame::event:
      if (object && field_ == Field::args) next = Frame::args;
      break;
    case Frame::devices:
      if (object) ++summary_.devices;
      break;
    default: break;
  }
  frames_.push(next);
  return true;
}

bool DeviceSax::end() {
  if (capture_.active()) {
    capture_.end_container();
    if (capture_.done()) *capture_target_ = capture_.value();
    return true;
  }
  const std::optional<Frame> closed = frames_.pop();
  if (!closed) return true;
  if (*closed == Frame::event) {
    ++summary_.events;
    consumer_(event_);
  } else if (*closed == Frame::events) {
    summary_.has_trace_events = true;
  }
  return true;
}

}  // namespace

TraceSummary read_device_trace(std::istream& in, const EventConsumer& consumer) {
  return read_with<DeviceSax, TraceSummary>(in, consumer);
}

}  // namespace chakrashim::tools
