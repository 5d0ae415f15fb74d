// `chakrashim convert` on one ET+, in memory: the ET+ reader, the converter's
// graph rules and the record writer, as the command runs them. Whatever the
// input, no crash; and when a graph is built:
//   - every node is written once, and every data dep names a node that is
//     written (the graph's own check, which the .et relies on). A ctrl dep
//     may name a dropped node: chakra_converter drops a parent that nothing
//     data-depends on (the process root above the thread roots) and keeps
//     its children's ctrl deps, and we write what it writes;
//   - the bytes decode as Chakra's records: the metadata, then one Node per
//     graph node with the graph's id, type and deps, and nothing after.
#include <cstdint>
#include <sstream>
#include <string>
#include <unordered_set>

#include <google/protobuf/io/coded_stream.h>

#include "convert/chakra_et.pb.h"
#include "convert/chakra_graph.h"
#include "convert/et_encoding.h"
#include "convert/et_file_writer.h"
#include "convert/et_plus_reader.h"
#include "files/byte_sink.h"
#include "fuzz_support.h"

using namespace chakrashim::tools::convert;

namespace {

// One length-delimited record, as Chakra's protolib reads it.
template <typename Message>
bool read_record(google::protobuf::io::CodedInputStream& in, Message& m) {
  std::uint32_t size = 0;
  if (!in.ReadVarint32(&size)) return false;
  const auto limit = in.PushLimit(static_cast<int>(size));
  const bool ok = m.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
  in.PopLimit(limit);
  return ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::stringbuf in{std::string(chakrashim::fuzz::as_text(data, size))};
  const EtPlusRead read = read_et_plus(in);
  if (!read.ok) return 0;
  NodeEncoder encoder;
  const ChakraGraph graph = build_chakra_graph(read.trace, encoder);
  if (!graph.ok) return 0;

  std::unordered_set<std::uint64_t> written;
  for (const ChakraNode& c : graph.nodes) {
    CHAKRA_FUZZ_REQUIRE(c.index < read.trace.nodes.size());
    CHAKRA_FUZZ_REQUIRE(written.insert(read.trace.nodes[c.index].id).second);
  }
  for (const ChakraNode& c : graph.nodes) {
    for (const std::uint64_t d : c.data_deps) CHAKRA_FUZZ_REQUIRE(written.count(d));
  }

  chakrashim::files::StringSink sink;
  CHAKRA_FUZZ_REQUIRE(write_chakra_et(sink, read.trace, graph, encoder));
  const std::string& bytes = sink.text();
  google::protobuf::io::CodedInputStream coded(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                               static_cast<int>(bytes.size()));
  chakrashim::et::GlobalMetadata meta;
  CHAKRA_FUZZ_REQUIRE(read_record(coded, meta));
  for (const ChakraNode& c : graph.nodes) {
    chakrashim::et::Node node;
    CHAKRA_FUZZ_REQUIRE(read_record(coded, node));
    CHAKRA_FUZZ_REQUIRE(node.id() == read.trace.nodes[c.index].id);
    CHAKRA_FUZZ_REQUIRE(static_cast<int>(node.type()) == static_cast<int>(c.kind));
    CHAKRA_FUZZ_REQUIRE(node.ctrl_deps_size() == (c.ctrl_dep ? 1 : 0));
    CHAKRA_FUZZ_REQUIRE(node.data_deps_size() == static_cast<int>(c.data_deps.size()));
  }
  CHAKRA_FUZZ_REQUIRE(coded.ExpectAtEnd());
  return 0;
}
