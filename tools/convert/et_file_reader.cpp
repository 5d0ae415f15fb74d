#include "convert/et_file_reader.h"

#include <fstream>
#include <iterator>
#include <regex>

#include "convert/chakra_et.pb.h"
#include "convert/comm_groups.h"
#include "convert/et_encoding.h"

namespace chakrashim::tools::convert {

namespace {

// A varint length at `at`; false when the bytes end inside it.
bool read_length(const std::string& bytes, std::size_t& at, std::uint64_t& length) {
  length = 0;
  for (int shift = 0; shift < 64 && at < bytes.size(); shift += 7) {
    const auto b = static_cast<std::uint8_t>(bytes[at++]);
    length |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

check::EtFileNode decoded(const et::Node& pb) {
  check::EtFileNode n;
  n.id = pb.id();
  n.name = pb.name();
  n.type = static_cast<int>(pb.type());
  n.duration_micros = pb.duration_micros();
  n.ctrl_deps.assign(pb.ctrl_deps().begin(), pb.ctrl_deps().end());
  n.data_deps.assign(pb.data_deps().begin(), pb.data_deps().end());
  for (const et::Attribute& a : pb.attr()) {
    const std::string& name = a.name();
    // ASTRA-sim reads these as integers of any width: take what is there.
    const auto integer = [&a]() -> std::optional<std::int64_t> {
      switch (a.value_case()) {
        case et::Attribute::kInt64Val: return a.int64_val();
        case et::Attribute::kInt32Val: return a.int32_val();
        case et::Attribute::kUint64Val: return static_cast<std::int64_t>(a.uint64_val());
        case et::Attribute::kUint32Val: return a.uint32_val();
        default: return std::nullopt;
      }
    };
    if (name == "is_cpu_op" && a.value_case() == et::Attribute::kBoolVal) n.is_cpu_op = a.bool_val();
    else if (name == "comm_type") n.comm_type = integer();
    else if (name == "comm_size") n.comm_size = integer();
    else if (name == "comm_src") n.comm_src = integer();
    else if (name == "comm_dst") n.comm_dst = integer();
    else if (name == "comm_tag") n.comm_tag = integer();
    else if (name == "pg_name" && a.value_case() == et::Attribute::kStringVal) n.pg_name = a.string_val();
  }
  if (n.type == et::METADATA_NODE || n.name.find("process_group:init") != std::string::npos) {
    if (const auto groups = process_groups_of(pb.inputs().values())) {
      for (const auto& g : *groups) n.world = std::max(n.world.value_or(0), std::max<std::uint64_t>(g.size, g.ranks.size()));
    }
  }
  return n;
}

// Our GlobalMetadata attributes (et_encoding.h), where convert wrote them.
void read_ours(const et::GlobalMetadata& meta, check::EtFile& out) {
  for (const et::Attribute& a : meta.attr()) {
    if (a.value_case() != et::Attribute::kUint64Val) continue;
    if (a.name() == kWindowNsAttr) out.window_ns = a.uint64_val();
    else if (a.name() == kWindowStepsAttr) out.window_steps = a.uint64_val();
    else if (a.name() == kCostTakenNsAttr) out.cost_taken_ns = a.uint64_val();
  }
}

// The file, and `out`'s path and rank; read_error set when it cannot be opened.
std::ifstream open_et(const std::string& path, check::EtFile& out) {
  out.path = path;
  out.rank = et_file_rank(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) out.read_error = "cannot be opened";
  return in;
}

}  // namespace

check::EtFile read_et_metadata(const std::string& path) {
  check::EtFile out;
  std::ifstream in = open_et(path, out);
  if (!in) return out;
  // The length varint, then the record: a few hundred bytes of a file that
  // may hold gigabytes.
  std::string head(10, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  std::size_t at = 0;
  std::uint64_t length = 0;
  if (!read_length(head, at, length) || length > (1u << 26)) {
    out.read_error = "does not start with a Chakra GlobalMetadata record";
    return out;
  }
  std::string record = head.substr(at);
  if (record.size() < length) {
    std::string rest(length - record.size(), '\0');
    in.read(rest.data(), static_cast<std::streamsize>(rest.size()));
    rest.resize(static_cast<std::size_t>(in.gcount()));
    record += rest;
  }
  et::GlobalMetadata meta;
  if (record.size() < length || !meta.ParseFromArray(record.data(), static_cast<int>(length))) {
    out.read_error = "does not start with a Chakra GlobalMetadata record";
    return out;
  }
  read_ours(meta, out);
  return out;
}

check::EtFile read_et_file(const std::string& path) {
  check::EtFile out;
  std::ifstream in = open_et(path, out);
  if (!in) return out;
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() >= 2 && static_cast<std::uint8_t>(bytes[0]) == 0x1f && static_cast<std::uint8_t>(bytes[1]) == 0x8b) {
    out.read_error = "is gzip: ASTRA-sim reads plain .et files; gunzip it";
    return out;
  }
  std::size_t at = 0;
  std::uint64_t records = 0;
  et::Node node;
  while (at < bytes.size()) {
    std::uint64_t length = 0;
    const std::size_t start = at;
    if (!read_length(bytes, at, length) || length > bytes.size() - at) {
      out.read_error = "ends early, inside record " + std::to_string(records) + " (at byte " + std::to_string(start) +
                       "): a file cut short";
      return out;
    }
    const char* data = bytes.data() + at;
    const int size = static_cast<int>(length);
    if (records == 0) {
      et::GlobalMetadata meta;
      if (!meta.ParseFromArray(data, size)) {
        out.read_error = "does not start with a Chakra GlobalMetadata record";
        return out;
      }
      read_ours(meta, out);
    } else if (!node.ParseFromArray(data, size)) {
      out.read_error = "record " + std::to_string(records) + " (at byte " + std::to_string(start) +
                       ") is not a Chakra Node";
      return out;
    } else {
      out.nodes.push_back(decoded(node));
    }
    at += length;
    ++records;
  }
  if (records == 0) out.read_error = "is empty";
  return out;
}

std::optional<std::uint64_t> et_file_rank(const std::string& path) {
  static const std::regex kName(R"(\.([0-9]{1,9})\.et$)");
  std::smatch m;
  if (!std::regex_search(path, m, kName)) return std::nullopt;
  return std::stoull(m[1].str());
}

}  // namespace chakrashim::tools::convert
