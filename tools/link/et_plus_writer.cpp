#include "link/et_plus_writer.h"

#include <charconv>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/json_stream_parser.h"
#include "common/sax_outcome.h"
#include "common/tool_schema.h"
#include "link/et_plus_node.h"
#include "link/json_text.h"
#include "link/node_spool.h"

namespace chakrashim::tools::link {

namespace {

using json = nlohmann::json;
enum class Frame : std::uint8_t { top, nodes, node };

// Copies the ET: top-level values and node fields are captured as text
// (JsonText), nodes are handed to the NodeEmitter when they close.
class EtPlusSax final : public json::json_sax_t {
 public:
  EtPlusSax(const LinkPlan& plan, const DeviceOps& device, files::ByteSink& sink, const std::string& spool_dir,
            WriteOutcome& outcome)
      : plan_(plan), sink_(sink), emitter_(plan, device), spool_dir_(spool_dir), outcome_(outcome) {}

  bool null() override { return raw("null"); }
  bool boolean(bool v) override { return raw(v ? "true" : "false"); }
  bool number_integer(number_integer_t v) override { return number(v); }
  bool number_unsigned(number_unsigned_t v) override { return number(v); }
  bool number_float(number_float_t, const string_t& text) override { return raw(text); }
  bool string(string_t& v) override;
  bool binary(binary_t&) override { return raw("null"); }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(true); }
  bool end_array() override { return close(false); }
  bool key(string_t& k) override;
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
    return fail(outcome_of_error(ex).error);
  }

 private:
  bool capturing() const { return capture_depth_ > 0 || capture_pending_; }
  template <typename T>
  bool number(T v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return raw(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
  }
  bool raw(std::string_view text);
  bool open(bool object);
  bool close(bool object);
  void value_done();
  bool top_value(std::string_view key, std::string_view value);
  bool node_done();
  bool nodes_done();
  bool put(std::string_view text) { return sink_.write(text) || fail("cannot write the output"); }
  bool fail(std::string why) {
    if (outcome_.error.empty()) outcome_.error = std::move(why);
    return false;
  }

  const LinkPlan& plan_;
  files::ByteSink& sink_;
  NodeEmitter emitter_;
  const std::string& spool_dir_;
  WriteOutcome& outcome_;
  std::vector<Frame> frames_;
  JsonText text_;
  // A value being captured: pending from its key until its first event,
  // then open while depth > 0.
  bool capture_pending_ = false;
  int capture_depth_ = 0;
  std::string top_key_, top_value_;
  bool top_first_ = true;
  NodeFields node_;
  std::string node_out_;
  std::size_t node_index_ = 0;
  bool wrote_node_ = false;  // a node is out: the next one needs a comma
  std::unique_ptr<NodeSpool> spool_;
};

bool EtPlusSax::key(string_t& k) {
  if (capture_depth_ > 0) {
    text_.key(k);
    return true;
  }
  if (frames_.back() == Frame::top) {
    top_key_ = k;
    if (k == names::kEtNodes) return true;  // handled when its array opens
    top_value_.clear();
    text_.start(&top_value_);
  } else if (frames_.back() == Frame::node) {
    NodeFields::Field& f = node_.add();
    f.key = k;
    text_.start(&f.value);
  }
  capture_pending_ = true;
  return true;
}

bool EtPlusSax::string(string_t& v) {
  if (!capturing()) return true;
  text_.scalar_string(v);
  if (capture_depth_ == 0) value_done();
  return outcome_.error.empty();
}

bool EtPlusSax::raw(std::string_view text) {
  if (!capturing()) return true;
  text_.scalar_raw(text);
  if (capture_depth_ == 0) value_done();
  return outcome_.error.empty();
}

bool EtPlusSax::open(bool object) {
  if (capturing()) {
    capture_pending_ = false;
    ++capture_depth_;
    text_.open(object);
    return true;
  }
  if (frames_.empty()) {
    frames_.push_back(Frame::top);
    return put("{");
  }
  if (frames_.back() == Frame::top && top_key_ == names::kEtNodes && !object) {
    frames_.push_back(Frame::nodes);
    if (!top_first_ && !put(",\n")) return false;
    top_first_ = false;
    if (!plan_.in_file_order) {
      spool_ = std::make_unique<NodeSpool>(spool_dir_);
      if (!spool_->error().empty()) return fail(spool_->error());
    }
    return put("\"nodes\":[\n");
  }
  if (frames_.back() == Frame::nodes && object) {
    frames_.push_back(Frame::node);
    node_.clear();
    return true;
  }
  return fail("unexpected JSON structure in the ET");
}

bool EtPlusSax::close(bool object) {
  if (capture_depth_ > 0) {
    text_.close(object);
    if (--capture_depth_ == 0) value_done();
    return outcome_.error.empty();
  }
  const Frame closed = frames_.back();
  frames_.pop_back();
  if (closed == Frame::node) return node_done();
  if (closed == Frame::nodes) return nodes_done();
  return put("\n}\n");
}

void EtPlusSax::value_done() {
  capture_pending_ = false;
  if (frames_.back() == Frame::top) top_value(top_key_, top_value_);
}

bool EtPlusSax::top_value(std::string_view key, std::string_view value) {
  std::string line = top_first_ ? "" : ",\n";
  top_first_ = false;
  append_quoted(line, key);
  line.push_back(':');
  line.append(value);
  return put(line);
}

bool EtPlusSax::node_done() {
  if (node_index_ >= plan_.nodes.size()) return fail("the ET has more nodes than on the first read: did it change?");
  node_out_.clear();
  const bool dropped = plan_.nodes[node_index_].dropped;
  // A left-out node keeps its place in the spool (positions are file
  // positions) as an empty text that write_order never names.
  if (!dropped) emitter_.emit(node_, node_index_, node_out_);
  ++node_index_;
  if (!dropped) outcome_.nodes_written += 1 + plan_.nodes[node_index_ - 1].children;
  if (spool_) return spool_->add(node_out_) || fail(spool_->error());
  if (dropped) return true;
  if (wrote_node_ && !put(",\n")) return false;
  wrote_node_ = true;
  return put(node_out_);
}

bool EtPlusSax::nodes_done() {
  if (node_index_ != plan_.nodes.size()) return fail("the ET has fewer nodes than on the first read: did it change?");
  if (spool_ && !spool_->copy_out(plan_.write_order, sink_)) {
    return fail(spool_->error().empty() ? "cannot write the output" : spool_->error());
  }
  return put("\n]");
}

}  // namespace

WriteOutcome write_et_plus(std::istream& et, const LinkPlan& plan, const DeviceOps& device,
                           files::ByteSink& sink, const std::string& spool_dir) {
  WriteOutcome outcome;
  EtPlusSax sax(plan, device, sink, spool_dir, outcome);
  const JsonStreamOutcome parsed = parse_json_stream(*et.rdbuf(), sax);
  if (!parsed.ok && !parsed.stopped && outcome.error.empty()) outcome.error = "the ET: " + parsed.error;
  outcome.ok = parsed.ok && outcome.error.empty() && sink.ok();
  if (!outcome.ok && outcome.error.empty()) outcome.error = "cannot write the output";
  return outcome;
}

}  // namespace chakrashim::tools::link
