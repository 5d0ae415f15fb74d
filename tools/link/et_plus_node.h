// One ET node's output: the node as read, with chakra_trace_link's changes,
// followed by its GPU child nodes. Each child is a copy of the (changed)
// host node with the GPU op's fields on top, in Chakra's key order: keys
// already present are replaced where they stand, new ones are appended
//   host:  ..., "inclusive_dur", "exclusive_dur", "ts", "inter_thread_dep"
//   child: ..., "cat", "ph", "stream"[, "pg_name"]
// pg_name is copied from "Process Group Name" for ncclDevKernel ops only, as
// Chakra does. Times are microseconds with three decimals.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "link/device_ops.h"
#include "link/et_plus_linker.h"

namespace chakrashim::tools::link {

// A node's top-level keys and their values as JSON text, in file order.
struct NodeFields {
  struct Field {
    std::string key, value;
  };
  std::vector<Field> fields;  // only [0, size) are in use; the rest keep capacity
  std::size_t size = 0;

  void clear() { size = 0; }
  Field& add() {
    if (size == fields.size()) fields.emplace_back();
    Field& f = fields[size++];
    f.key.clear();
    f.value.clear();
    return f;
  }
};

class NodeEmitter {
 public:
  NodeEmitter(const LinkPlan& plan, const DeviceOps& device) : plan_(plan), device_(device) {}

  // Appends the node at file position `index` and its children to `out`,
  // one node per line, each line but the first preceded by ",\n".
  void emit(const NodeFields& node, std::size_t index, std::string& out);

 private:
  struct Override {
    std::string_view key;
    std::string_view value;
    bool append = true;  // false: replace if present, never add
  };
  using View = std::pair<std::string_view, std::string_view>;
  static void apply(std::vector<View>& fields, const Override* begin, const Override* end);
  static void write(const std::vector<View>& fields, std::string& out);
  void emit_child(std::uint32_t gpu_index, std::uint64_t child_id, std::string_view parent_id, std::string& out);

  const LinkPlan& plan_;
  const DeviceOps& device_;
  std::vector<View> host_, child_;
  // Texts of the values written in place of the node's own.
  std::string id_, parent_, ts_, incl_, excl_, dep_;
  std::string c_id_, c_ts_, c_incl_, c_excl_, c_stream_, c_name_, c_cat_, c_ph_, c_pg_;
};

}  // namespace chakrashim::tools::link
