// Test helper: decodes a Chakra ET (.et, plain or gzip) with our schema
// (tools/convert/chakra_et.proto) and prints it as JSON lines: the global
// metadata first, then one object per node, attributes in file order as
// [name, kind, value]. The convert tests compare and check traces with it.
//
//   chakrashim_et_dump FILE.et[.gz]
#include <google/protobuf/io/coded_stream.h>

#include <cstdio>
#include <istream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "files/byte_stream.h"
#include "convert/chakra_et.pb.h"

namespace {

using json = nlohmann::json;
namespace pb = chakrashim::et;

json attr_json(const pb::Attribute& a) {
  json out = json::array({a.name()});
  switch (a.value_case()) {
    case pb::Attribute::kInt64Val: out.push_back("int64"); out.push_back(a.int64_val()); break;
    case pb::Attribute::kUint64Val: out.push_back("uint64"); out.push_back(a.uint64_val()); break;
    case pb::Attribute::kInt32Val: out.push_back("int32"); out.push_back(a.int32_val()); break;
    case pb::Attribute::kUint32Val: out.push_back("uint32"); out.push_back(a.uint32_val()); break;
    case pb::Attribute::kBoolVal: out.push_back("bool"); out.push_back(a.bool_val()); break;
    case pb::Attribute::kStringVal: out.push_back("string"); out.push_back(a.string_val()); break;
    case pb::Attribute::kDoubleVal: out.push_back("double"); out.push_back(a.double_val()); break;
    case pb::Attribute::kFloatVal: out.push_back("float"); out.push_back(a.float_val()); break;
    case pb::Attribute::VALUE_NOT_SET: out.push_back("unset"); out.push_back(nullptr); break;
    default: out.push_back("other"); out.push_back(static_cast<int>(a.value_case())); break;
  }
  return out;
}

json io_json(const pb::IOInfo& io) { return {{"values", io.values()}, {"shapes", io.shapes()}, {"types", io.types()}}; }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fputs("usage: chakrashim_et_dump FILE.et[.gz]\n", stderr);
    return 2;
  }
  chakrashim::files::ByteStream stream(argv[1]);
  if (!stream.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[1], stream.error().c_str());
    return 1;
  }
  std::istream in(&stream);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  google::protobuf::io::CodedInputStream coded(reinterpret_cast<const google::protobuf::uint8*>(bytes.data()),
                                               static_cast<int>(bytes.size()));
  bool first = true;
  while (coded.CurrentPosition() < static_cast<int>(bytes.size())) {
    google::protobuf::uint32 size = 0;
    if (!coded.ReadVarint32(&size)) {
      std::fprintf(stderr, "%s: a record length cannot be read at byte %d\n", argv[1], coded.CurrentPosition());
      return 1;
    }
    const auto limit = coded.PushLimit(static_cast<int>(size));
    json line;
    bool ok = false;
    if (first) {
      pb::GlobalMetadata meta;
      ok = meta.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
      line["version"] = meta.version();
      line["attr"] = json::array();
      for (const auto& a : meta.attr()) line["attr"].push_back(attr_json(a));
    } else {
      pb::Node n;
      ok = n.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
      line = {{"id", n.id()},
              {"name", n.name()},
              {"type", static_cast<int>(n.type())},
              {"ctrl_deps", json(std::vector<std::uint64_t>(n.ctrl_deps().begin(), n.ctrl_deps().end()))},
              {"data_deps", json(std::vector<std::uint64_t>(n.data_deps().begin(), n.data_deps().end()))},
              {"start_time_micros", n.start_time_micros()},
              {"duration_micros", n.duration_micros()},
              {"has_inputs", n.has_inputs()},
              {"inputs", io_json(n.inputs())},
              {"outputs", io_json(n.outputs())},
              {"attr", json::array()}};
      for (const auto& a : n.attr()) line["attr"].push_back(attr_json(a));
    }
    coded.PopLimit(limit);
    if (!ok) {
      std::fprintf(stderr, "%s: record %s does not parse\n", argv[1], first ? "0 (metadata)" : "of a node");
      return 1;
    }
    std::printf("%s\n", line.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    first = false;
  }
  return 0;
}
