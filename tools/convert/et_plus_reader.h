// Reads an ET+ (a host ET that chakra_trace_link or `chakrashim link` has
// joined with its device trace) the way chakra_converter's PyTorchNode reads
// it, in one streaming pass: per node the few fields the graph rules need,
// and the node's inputs, outputs and attributes already encoded (the tail,
// et_encoding.h). Inputs and outputs are never held as JSON.
//
// Rejected, each with one line: a file that is not JSON or ends early, a
// device trace, a schema the converter does not read, a host ET that was
// never linked, and a node the converter would fail on (a missing key or
// attribute, a value of the wrong kind).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "convert/et_encoding.h"

namespace chakrashim::tools::convert {

struct EtPlusNode {
  std::uint64_t id = 0;
  std::optional<std::uint64_t> parent;  // ctrl_deps; negative or null: none
  std::string name;
  bool gpu = false;                     // has a "cat" that is not null
  std::optional<std::int64_t> stream;   // a GPU node's (0 when it names none)
  std::int64_t exclusive_dur = 0;       // int() of it, 0 when absent
  // The linked times in nanoseconds (the ET+'s microsecond text read
  // exactly), for the timeline durations (sim_ready.h); `timed` when the
  // node has a "ts".
  bool timed = false;
  std::int64_t ts_ns = 0, inclusive_ns = 0, exclusive_ns = 0;
  std::uint64_t inter_thread_dep = 0;   // 0: none (the converter tests truthiness)
  std::string pg_name;                  // "" when absent
  std::optional<std::int64_t> comm_size;  // nullopt: inputs the converter cannot size
  // A point-to-point op's (c10d::send, c10d::recv_) integer inputs: its
  // peer, a rank of its process group, and its tag; nullopt for other ops,
  // or when the inputs are not (tensors, group, int, int).
  std::optional<std::int64_t> p2p_peer, p2p_tag;
  std::string tail;                     // encoded inputs, outputs, attributes
};

struct EtPlus {
  MetadataFields meta;
  std::vector<EtPlusNode> nodes;  // in file order
};

struct EtPlusRead {
  bool ok = false;
  std::string error;  // one line, without the path
  EtPlus trace;
};

// `progress`, when given, counts the file's bytes as they are read.
EtPlusRead read_et_plus(const std::string& path, std::atomic<std::uint64_t>* progress = nullptr);
// The same from bytes already open (the pipe from link's writer).
EtPlusRead read_et_plus(std::streambuf& in);

// A plain host ET (never linked) read the same way, for convert's in-memory
// join with link's plan (convert/linked_join.h): each node's tail is kept as
// fields, not encoded, since a node's GPU children share it with changes.
struct HostEtNode {
  EtPlusNode node;  // node.tail empty
  TailFields tail;
};
struct HostEtRead {
  bool ok = false;
  std::string error;  // one line, without the path
  MetadataFields meta;
  std::vector<HostEtNode> nodes;  // in file order
  // False when a node has a key the join does not model (one link sets or
  // Chakra's linker adds: exclusive_dur, inter_thread_dep, cat, stream,
  // pg_name; a stream or pg_name attr; a second id, name or ctrl_deps):
  // such an ET takes the text path (link writes the ET+, this reader reads it).
  bool ordinary = true;
};
HostEtRead read_host_et(const std::string& path);

// The schemas chakra_converter reads (PyTorchNode at Chakra 21585d8): it
// lists 1.1.1-chakra.1.0.0 too, but parses no node of that version.
bool converter_reads_schema(std::string_view schema);

}  // namespace chakrashim::tools::convert
