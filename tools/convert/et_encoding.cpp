#include "convert/et_encoding.h"

#include <google/protobuf/io/coded_stream.h>

#include "convert/chakra_et.pb.h"
#include "files/byte_sink.h"

namespace chakrashim::tools::convert {

namespace pb = chakrashim::et;

namespace {

constexpr std::size_t kChunk = 1 << 20;

void set_io(pb::IOInfo* io, const IoText& text) {
  io->set_values(text.values);
  io->set_shapes(text.shapes);
  io->set_types(text.types);
}

void add_int(pb::Node& node, const char* name, std::int64_t v) {
  pb::Attribute* a = node.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

// pg_name, only when the node has one (none: ASTRA-sim's default group).
void add_pg_name(pb::Node& node, std::string_view pg_name) {
  if (pg_name.empty()) return;
  pb::Attribute* pg = node.add_attr();
  pg->set_name("pg_name");
  pg->set_string_val(std::string(pg_name));
}

}  // namespace

struct NodeEncoder::Scratch {
  pb::Node node;
  std::string out;
};

NodeEncoder::NodeEncoder() : scratch_(std::make_unique<Scratch>()) {}
NodeEncoder::~NodeEncoder() = default;

std::string NodeEncoder::tail(const TailFields& f) {
  pb::Node& n = scratch_->node;
  n.Clear();
  set_io(n.mutable_inputs(), f.inputs);
  set_io(n.mutable_outputs(), f.outputs);
  // The converter's order: rf_id, fw_parent, seq_id, scope, tid, fw_tid,
  // op_schema, is_cpu_op, then stream when the node has one.
  add_int(n, "rf_id", f.rf_id);
  add_int(n, "fw_parent", f.fw_parent);
  add_int(n, "seq_id", f.seq_id);
  add_int(n, "scope", f.scope);
  add_int(n, "tid", f.tid);
  add_int(n, "fw_tid", f.fw_tid);
  pb::Attribute* schema = n.add_attr();
  schema->set_name("op_schema");
  schema->set_string_val(f.op_schema);
  pb::Attribute* cpu = n.add_attr();
  cpu->set_name("is_cpu_op");
  cpu->set_bool_val(f.is_cpu_op);
  if (f.stream) add_int(n, "stream", *f.stream);
  return n.SerializeAsString();
}

std::string NodeEncoder::comm(std::optional<CollKind> type, std::int64_t size, std::string_view pg_name) {
  pb::Node& n = scratch_->node;
  n.Clear();
  if (type) add_int(n, "comm_type", static_cast<std::int64_t>(*type));
  add_int(n, "comm_size", size);
  add_pg_name(n, pg_name);
  return n.SerializeAsString();
}

std::string NodeEncoder::p2p(std::int64_t size, std::uint64_t src, std::uint64_t dst, std::int64_t tag,
                             std::string_view pg_name) {
  pb::Node& n = scratch_->node;
  n.Clear();
  add_int(n, "comm_src", static_cast<std::int64_t>(src));
  add_int(n, "comm_dst", static_cast<std::int64_t>(dst));
  add_int(n, "comm_tag", tag);
  add_int(n, "comm_size", size);
  add_pg_name(n, pg_name);
  return n.SerializeAsString();
}

std::string NodeEncoder::head(const HeadFields& f) {
  pb::Node& n = scratch_->node;
  n.Clear();
  n.set_id(f.id);
  n.set_name(std::string(f.name));
  n.set_type(static_cast<pb::NodeType>(f.kind));
  if (f.ctrl_dep) n.add_ctrl_deps(*f.ctrl_dep);
  if (f.data_deps) {
    n.mutable_data_deps()->Reserve(static_cast<int>(f.data_deps->size()));
    for (const auto d : *f.data_deps) n.add_data_deps(d);
  }
  n.set_duration_micros(f.duration_micros);
  return n.SerializeAsString();
}

std::string NodeEncoder::device_tail(std::string_view tail) {
  pb::Node& n = scratch_->node;
  n.Clear();
  if (!n.ParseFromArray(tail.data(), static_cast<int>(tail.size()))) return {};
  for (pb::Attribute& a : *n.mutable_attr()) {
    if (a.name() == "is_cpu_op") a.set_bool_val(false);
  }
  return n.SerializeAsString();
}

EtRecordWriter::EtRecordWriter(files::ByteSink& sink) : sink_(sink) { buffer_.reserve(kChunk + 4096); }
EtRecordWriter::~EtRecordWriter() = default;

void EtRecordWriter::metadata(const MetadataFields& m) {
  pb::GlobalMetadata meta;
  auto add = [&meta](const char* name) {
    pb::Attribute* a = meta.add_attr();
    a->set_name(name);
    return a;
  };
  add("schema")->set_string_val(m.schema);
  add("pid")->set_uint64_val(m.pid);
  add("time")->set_string_val(m.time);
  add("start_ts")->set_uint64_val(m.start_ts);
  add("finish_ts")->set_uint64_val(m.finish_ts);
  if (m.window_ns) add(kWindowNsAttr)->set_uint64_val(*m.window_ns);
  if (m.window_steps) add(kWindowStepsAttr)->set_uint64_val(*m.window_steps);
  if (m.cost_taken_ns) add(kCostTakenNsAttr)->set_uint64_val(*m.cost_taken_ns);
  const std::string bytes = meta.SerializeAsString();
  record({bytes});
}

void EtRecordWriter::record(std::initializer_list<std::string_view> parts) {
  std::size_t size = 0;
  for (const auto p : parts) size += p.size();
  google::protobuf::uint8 length[10];
  const auto* end = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(
      static_cast<google::protobuf::uint32>(size), length);
  buffer_.append(reinterpret_cast<const char*>(length), static_cast<std::size_t>(end - length));
  for (const auto p : parts) buffer_.append(p);
  if (buffer_.size() >= kChunk) flush();
}

bool EtRecordWriter::flush() {
  if (!buffer_.empty()) {
    ok_ = sink_.write(buffer_) && ok_;
    buffer_.clear();
  }
  return ok_ && sink_.ok();
}

}  // namespace chakrashim::tools::convert
