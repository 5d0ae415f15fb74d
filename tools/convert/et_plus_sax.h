// The streaming reader of an ET+ (or a plain host ET) that convert uses:
// a SAX handler over common/json_stream_parser, one node at a time, that
// keeps what Chakra's converter reads and prints values as Python's str()
// would (convert/python_repr.h). Internal to et_plus_reader.cpp; declared
// here so that the handler and the reading functions live apart.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convert/et_plus_reader.h"
#include "convert/python_repr.h"

namespace chakrashim::tools::convert::detail {

// Where the parser is. `repr` is anything inside inputs/outputs values,
// shapes or types, which is printed as Python's str() prints it.
enum class Frame : std::uint8_t { top, nodes, node, io, repr, attrs, attr, skip };

// A parsed scalar, for the fields whose kind matters.
struct Scalar {
  enum class Kind : std::uint8_t { null, boolean, integer, big, floating, string } kind = Kind::null;
  std::int64_t i = 0;      // integer, boolean
  double d = 0;            // floating
  std::string_view s;      // string (valid during the call only)
};

class EtPlusSax final : public nlohmann::json::json_sax_t {
 public:
  // `host`, when given, receives the nodes of a plain host ET (read_host_et)
  // with their tails as fields; out.nodes stays empty then.
  explicit EtPlusSax(EtPlus& out, std::vector<HostEtNode>* host = nullptr) : out_(out), host_(host) {}

  bool null() override { return scalar({}); }
  bool boolean(bool v) override { return scalar({Scalar::Kind::boolean, v ? 1 : 0, 0, {}}); }
  bool number_integer(number_integer_t v) override { return scalar({Scalar::Kind::integer, v, 0, {}}); }
  bool number_unsigned(number_unsigned_t v) override {
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      big_ = v;
      return scalar({Scalar::Kind::big, 0, static_cast<double>(v), {}});
    }
    return scalar({Scalar::Kind::integer, static_cast<std::int64_t>(v), 0, {}});
  }
  bool number_float(number_float_t v, const string_t& token) override {
    token_ = token;
    const bool integral = token.find_first_of(".eE") == std::string::npos;
    return scalar({integral ? Scalar::Kind::big : Scalar::Kind::floating, 0, v, {}});
  }
  bool string(string_t& v) override { return scalar({Scalar::Kind::string, 0, 0, v}); }
  bool binary(binary_t&) override { return scalar({}); }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(true); }
  bool end_array() override { return close(false); }
  bool key(string_t& k) override;
  // Syntax errors are the parser's to report (parse_json_stream).
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

  // Set when the handler stopped the parse (a problem other than syntax).
  const std::string& problem() const { return problem_; }
  // Checks after the document: required keys, linked or not.
  bool finish();
  bool ordinary() const { return ordinary_; }

 private:
  Frame frame() const { return frames_.empty() ? Frame::skip : frames_.back(); }
  bool fail(std::string why) {
    problem_ = std::move(why);
    return false;
  }
  std::string who() const;
  std::optional<std::int64_t> nanoseconds(const Scalar& v) const;
  bool scalar(const Scalar& v);
  bool dispatch(const Scalar& v);
  bool top_value(const Scalar& v);
  bool node_value(const Scalar& v);
  void attr_value(const Scalar& v);
  void repr_scalar(const Scalar& v);
  bool open(bool object);
  bool close(bool object);
  bool finish_attr();
  bool finish_node();
  void start_field(std::string_view which);

  EtPlus& out_;
  std::vector<HostEtNode>* host_;
  std::uint64_t nodes_read_ = 0;
  bool ordinary_ = true;  // HostEtRead::ordinary
  std::vector<Frame> frames_;
  bool started_ = false;
  std::string key_;
  std::string token_;       // the last float token
  std::uint64_t big_ = 0;   // the last uint64 above int64
  std::string problem_;
  std::array<bool, 6> top_seen_{};  // schema, pid, time, start_ts, finish_ts, nodes
  std::uint64_t linked_nodes_ = 0;
  NodeEncoder encoder_;

  // The node being read.
  struct NodeState {
    bool id = false, name = false, ctrl = false, inputs = false, outputs = false;
    int id_keys = 0;
    std::array<bool, 3> in_fields{}, out_fields{};  // values, shapes, types
    std::array<bool, 7> attrs{};                     // kIntAttrs, op_schema
    bool values_list = false, types_list = false;
    std::string error;  // the first problem, reported at the node's end
  } ns_;
  EtPlusNode node_;
  TailFields tail_;
  bool in_inputs_ = false;  // which io object is open
  // The str() being built: its target and nesting.
  std::string* target_ = nullptr;
  std::optional<PyReprWriter> writer_;
  int rdepth_ = 0;
  enum class Track : std::uint8_t { none, values, types } track_ = Track::none;
  // Sizes of inputs.values' elements as the converter's comm_size reads
  // them: a tensor [id, storage, offset, numel, itemsize, device] gives
  // numel * itemsize; a GenericList of tensors the sum of those.
  struct ElemSize {
    std::optional<std::int64_t> tensor, list;
    std::optional<std::int64_t> integer;  // an Int input's value
  };
  std::vector<ElemSize> elems_;
  std::vector<std::uint8_t> type_class_;  // 0 not a tensor, 1 Tensor, 2 GenericList[Tensor, 3 not a string
  std::array<int, 4> pos_{};              // item index inside the container at each depth
  std::optional<std::int64_t> e3_, e4_, i3_, i4_, list_sum_;
  bool elem_scalar_items_ = false;
  // The attribute being read.
  std::string attr_name_;
  Scalar::Kind attr_kind_ = Scalar::Kind::null;
  bool attr_has_value_ = false, attr_nested_ = false;
  std::int64_t attr_int_ = 0;
  std::string attr_str_;
};

}  // namespace chakrashim::tools::convert::detail
