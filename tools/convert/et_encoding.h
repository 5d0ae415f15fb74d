// Chakra ET records, encoded by libprotobuf (chakra_et.proto). A node is
// encoded in three parts, each a serialized Node: the head (id, name, type,
// deps, duration: fields 1-7, known only once the whole graph is built), the
// tail (inputs, outputs and the per-node attributes: fields 8-10, known as
// soon as the node has been read) and the comm attributes (more of field 10).
// A protobuf message's serialization is the concatenation of its fields'
// in field-number order, and serializations concatenate as a merge: so head
// + tail + comm is byte for byte the Node that Python's protobuf writes for
// chakra_converter, while only the small head is built per node at the end.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chakrashim::files {
class ByteSink;
}

namespace chakrashim::tools::convert {

// The values of Chakra's NodeType enum.
enum class NodeKind : int { metadata = 1, comp = 4, comm_send = 5, comm_recv = 6, comm_coll = 7 };
// The values of Chakra's CollectiveCommType enum the converter writes.
enum class CollKind : std::int64_t { all_reduce = 0, all_gather = 2, broadcast = 5, all_to_all = 6, reduce_scatter = 7 };

struct IoText {
  std::string values, shapes, types;  // str() of each, as Python prints it
};

// What chakra_converter writes from one JSON node, before any dependency.
struct TailFields {
  IoText inputs, outputs;
  std::int64_t rf_id = 0, fw_parent = 0, seq_id = 0, scope = 0, tid = 0, fw_tid = 0;
  std::string op_schema;
  bool is_cpu_op = true;
  std::optional<std::int64_t> stream;
};

struct HeadFields {
  std::uint64_t id = 0;
  std::string_view name;
  NodeKind kind = NodeKind::comp;
  std::optional<std::uint64_t> ctrl_dep;
  const std::vector<std::uint64_t>* data_deps = nullptr;
  std::uint64_t duration_micros = 0;
};

// GlobalMetadata attributes of ours (MetadataFields below).
inline constexpr const char* kWindowNsAttr = "chakrashim_window_ns";
inline constexpr const char* kWindowStepsAttr = "chakrashim_window_steps";
inline constexpr const char* kCostTakenNsAttr = "chakrashim_cost_taken_ns";

struct MetadataFields {
  std::string schema, time;
  std::uint64_t pid = 0, start_ts = 0, finish_ts = 0;
  // Ours, after Chakra's attributes (never under --chakra-exact), for
  // `chakrashim simulate`: the captured window (ProfilerStep#N spans of the
  // steps written) and the recording cost taken out of the timeline.
  std::optional<std::uint64_t> window_ns, window_steps, cost_taken_ns;
};

// Reuses its scratch messages: one per thread.
class NodeEncoder {
 public:
  NodeEncoder();
  ~NodeEncoder();
  NodeEncoder(const NodeEncoder&) = delete;
  NodeEncoder& operator=(const NodeEncoder&) = delete;

  std::string tail(const TailFields& f);
  // Collectives carry comm_type; send/recv do not. pg_name only when set.
  std::string comm(std::optional<CollKind> type, std::int64_t size, std::string_view pg_name);
  // A point-to-point op's attributes as ASTRA-sim's workload reads them:
  // comm_src, comm_dst (global ranks), comm_tag, comm_size; pg_name if set.
  std::string p2p(std::int64_t size, std::uint64_t src, std::uint64_t dst, std::int64_t tag,
                  std::string_view pg_name);
  std::string head(const HeadFields& f);
  // `tail` with is_cpu_op false: a host collective written as a comm node,
  // which ASTRA-sim's workload refuses on the CPU ("Comm node should not be
  // on CPU"). Empty when `tail` does not parse.
  std::string device_tail(std::string_view tail);

 private:
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
};

// Writes length-delimited records as Chakra's protolib does (a varint
// length, then the message) into a sink, in large chunks.
class EtRecordWriter {
 public:
  explicit EtRecordWriter(files::ByteSink& sink);
  ~EtRecordWriter();
  EtRecordWriter(const EtRecordWriter&) = delete;
  EtRecordWriter& operator=(const EtRecordWriter&) = delete;

  void metadata(const MetadataFields& m);
  // One record made of the given serialized parts of one message.
  void record(std::initializer_list<std::string_view> parts);
  // Hands what is buffered to the sink; false if a write failed.
  bool flush();

 private:
  files::ByteSink& sink_;
  std::string buffer_;
  bool ok_ = true;
};

}  // namespace chakrashim::tools::convert
