#include "writers/et_json_writer.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <queue>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "chakrashim/trace_schema.h"
#include "writers/et_json_text.h"
#include "writers/et_records.h"
#include "writers/et_stream_cursor.h"
#include "json/json_emitter.h"

namespace chakrashim::writers {

namespace {

using et::Cursor;
using et::ValueKind;

constexpr std::uint64_t kRootId = 1;
constexpr std::uint64_t kUserScope = 7;  // at::RecordScope::USER_SCOPE
constexpr std::string_view kProcessGroupsNode = "## process_group:init ##";
// Nesting deeper than this in one value is not something torch passes to an
// op; a corrupt record that claims it stops the stream instead of recursing.
constexpr int kMaxValueDepth = 64;

class Replay {
 public:
  Replay(files::ByteSink& sink, EtWriteStats& stats, InputsByRfId* inputs)
      : sink_(sink), stats_(stats), inputs_(inputs) {}

  void header(const EtHeader& h) {
    std::string& o = out_;
    o += "{\n  \"schema\": \"1.1.1-chakra.0.0.4\", \"pid\": ";
    append_int(o, h.pid);
    o += ", \"time\": \"";
    append_escaped(o, h.time);
    o += "\", \"start_ts\": ";
    append_int(o, h.start_ts);
    o += ",\n  \"nodes\": [";
  }

  // Handles one record; false if it could not be read (its stream stops).
  bool record(Cursor& c, const std::vector<std::string>& strings) {
    strings_ = &strings;
    const auto kind = static_cast<et::RecordKind>(c.u8());
    c.u64();  // seq: already used to merge
    if (c.failed()) return false;
    if (kind == et::RecordKind::start) return start(c);
    if (kind == et::RecordKind::end) return end(c);
    return false;
  }

  // Closes every op open now (an edge, EtHeader::edges): innermost first on
  // each thread, each written as its end would be, with no outputs. Ops
  // whose start logged no inputs are on no stack: they are forgotten, as
  // their end would write nothing either.
  void close_open() {
    static const ValueArrays kNone;
    for (auto& [tid, stack] : stacks_) {
      while (stack.size() > 1) {
        const std::uint64_t op = stack.back();
        stack.pop_back();
        const auto h = handle_of_op_.find(op);
        if (h == handle_of_op_.end()) continue;
        // A copy: the erase below frees the entry h points at.
        const auto handle = h->second;
        handle_of_op_.erase(h);
        const auto it = pending_.find(handle);
        if (it == pending_.end()) continue;
        write_node(it->second, handle, tid, kNone, {});
        closed_.push_back(op);
        ++stats_.unfinished;
        pending_.erase(it);
      }
    }
    for (const auto& [handle, p] : pending_) (void)p, handle_of_op_.erase(p.op_id);
    pending_.clear();
  }

  bool finish(const EtHeader& h) {
    close_open();
    if (!process_groups_written_ && !h.process_groups.empty()) {
      add_process_groups(h.process_groups, h.process_groups_tid);
      stats_.process_groups_added = true;
    }
    NodeFields root;
    root.name = "[pytorch|profiler|execution_trace|process]";
    root.id = kRootId;
    root.parent = kRootId;
    root.scope = kUserScope;
    node(root, false);
    out_ += "\n  ],\n  \"finish_ts\": ";
    append_int(out_, h.finish_ts);
    if (!h.meta_json.empty()) {
      auto meta = nlohmann::json::parse(h.meta_json, nullptr, false);
      if (meta.is_object()) {
        if (!closed_.empty()) meta["closed_at_edge"] = closed_;
        out_ += ",\n  \"chakrashim\": ";
        out_ += meta.dump();
      }
    }
    out_ += "\n}";
    flush();
    return sink_.ok();
  }

  void flush() {
    if (!out_.empty()) sink_.write(out_);
    out_.clear();
  }
  std::size_t buffered() const { return out_.size(); }

 private:
  struct NodeFields {
    std::string_view name;
    std::uint64_t id = 0, rf_id = 0, parent = 0, fw_parent = 0;
    std::int64_t seq_id = -1;
    std::uint64_t scope = 0, tid = 0, fw_tid = 0;
    const ValueArrays* inputs = nullptr;
    const ValueArrays* outputs = nullptr;
    std::string_view schema, kernel_backend, kernel_file;
    std::string_view extra_attrs;  // ", {...}, {...}" or empty
  };

  // An op between its start and end records (torch's FunctionCallContext).
  struct Pending {
    std::uint64_t op_id = 0, parent = 0, fw_parent = 0;
    std::uint64_t tid = 0, fw_tid = 0, scope = 0;
    std::int64_t seq_nr = -1;
    std::string name, schema, kernel_backend, kernel_file;
    ValueArrays inputs;
  };

  // The process-group node as torch records it (a USER_SCOPE record whose
  // one input is the JSON text), under its thread's node: made here when
  // the records hold none.
  void add_process_groups(const std::string& json, std::uint64_t tid) {
    std::string value = "\"";
    append_escaped(value, json);
    value += '"';
    const ValueArrays in{{"[]"}, {"[]"}, {"\"String\""}, {std::move(value)}};
    NodeFields n;
    n.name = kProcessGroupsNode;
    n.parent = thread_stack(tid).front();  // the thread's node: ops left open sit above it
    n.id = next_id_++;
    n.scope = kUserScope;
    n.tid = tid;
    n.inputs = &in;
    node(n, true);
    ++stats_.nodes;
  }

  // A thread's stack of open nodes, its thread node at the bottom: written
  // at the thread's first node, as torch writes it at the thread's first op.
  std::vector<std::uint64_t>& thread_stack(std::uint64_t tid) {
    auto& stack = stacks_[tid];
    if (stack.empty()) {
      stack.push_back(next_id_++);
      NodeFields t;
      t.name = "[pytorch|profiler|execution_trace|thread]";
      t.id = stack.front();
      t.parent = kRootId;
      t.scope = kUserScope;
      t.tid = tid;
      node(t, true);
    }
    return stack;
  }

  std::string_view str(std::uint32_t index, bool& ok) const {
    if (index < strings_->size()) return (*strings_)[index];
    ok = false;
    return {};
  }

  std::uint64_t object_id(std::uint64_t pointer) {
    auto [it, added] = object_ids_.try_emplace(pointer, 0);
    if (added) it->second = next_id_++;
    return it->second;
  }

  // torch's convertIValue: assigns tensor and storage ids as it goes.
  bool value(Cursor& c, bool base_type, int depth, ValueText& t) {
    if (depth > kMaxValueDepth) return false;
    const auto kind = static_cast<ValueKind>(c.u8());
    bool ok = !c.failed();
    // A nested item's type stays raw: it becomes part of its list's
    // "GenericList[...]" text, which is escaped once, as a whole, here.
    // (Names come from the string table: a dtype or tag with a quote in it
    // must not end the JSON string.)
    const auto quoted = [&](std::string type) {
      if (!base_type) return type;
      std::string text = "\"";
      append_escaped(text, type);
      text += '"';
      return text;
    };
    switch (kind) {
      case ValueKind::tensor: {
        const std::uint8_t flags = c.u8();
        const std::string_view dtype = str(c.u32(), ok);
        const std::uint64_t impl = c.u64();
        if (flags & et::kTensorShape) {
          const std::uint8_t dims = c.u8();
          std::string sizes = "[", strides = "[";
          std::array<std::int64_t, et::kMaxDims> size_of;  // [0, dims) written before read
          for (int i = 0; i < dims; ++i) {
            if (i) sizes += ',';
            size_of[i] = c.i64();
            append_int(sizes, size_of[i]);
          }
          std::array<std::int64_t, et::kMaxDims> stride_of;
          if (flags & et::kTensorRowMajor) {
            et::row_major_strides(size_of.data(), dims, [&](std::size_t i, std::int64_t s) {
              stride_of[i] = s;
              return true;
            });
          } else {
            for (int i = 0; i < dims; ++i) stride_of[i] = c.i64();
          }
          for (int i = 0; i < dims; ++i) {
            if (i) strides += ',';
            append_int(strides, stride_of[i]);
          }
          t.shape = sizes + "]";
          t.stride = strides + "]";
        } else {
          t.shape = "[]";
          t.stride = "[]";
        }
        t.type = quoted("Tensor(" + std::string(dtype) + ")");
        if (c.failed() || !ok) return false;
        const std::uint64_t tensor_id = object_id(impl);
        std::uint64_t storage_id = 0, offset = 0, numel = 0, itemsize = 0;
        std::string_view device;
        if (flags & et::kTensorStorage) {
          const std::uint64_t storage = c.u64();
          offset = c.u64();
          numel = c.u64();
          itemsize = c.u64();
          device = str(c.u32(), ok);
          if (c.failed() || !ok) return false;
          storage_id = object_id(storage);
        }
        // torch's observer: [tensor id, storage id, offset, numel, itemsize, device].
        std::string& v = t.value;
        v = "[";
        for (const std::uint64_t n : {tensor_id, storage_id, offset, numel, itemsize}) {
          append_uint(v, n);
          v += ',';
        }
        v += '"';
        append_escaped(v, device);
        v += "\"]";
        return true;
      }
      case ValueKind::list:
      case ValueKind::tuple: {
        const std::uint32_t n = c.u32();
        if (c.failed() || n > c.left()) return false;  // every item takes a byte at least
        std::vector<std::string> shapes, strides, types, values;
        shapes.reserve(n);
        strides.reserve(n);
        types.reserve(n);
        values.reserve(n);
        for (std::uint32_t i = 0; i < n; ++i) {
          ValueText item;
          if (!value(c, false, depth + 1, item)) return false;
          shapes.push_back(std::move(item.shape));
          strides.push_back(std::move(item.stride));
          types.push_back(std::move(item.type));
          values.push_back(std::move(item.value));
        }
        std::string type = kind == ValueKind::list ? "GenericList" : "Tuple";
        append_array(type, types);
        t.type = quoted(std::move(type));
        t.shape = array_text(shapes);
        t.stride = array_text(strides);
        t.value = array_text(values);
        return true;
      }
      default:
        break;
    }
    // Scalars: no shape, no strides.
    t.shape = "[]";
    t.stride = "[]";
    switch (kind) {
      case ValueKind::int_:
        t.type = quoted("Int");
        t.value.clear();
        append_int(t.value, c.i64());
        break;
      case ValueKind::double_:
        t.type = quoted("Double");
        t.value.clear();
        append_double(t.value, c.f64());
        break;
      case ValueKind::bool_:
        t.type = quoted("Bool");
        t.value = c.u8() ? "true" : "false";
        break;
      case ValueKind::string: {
        t.type = quoted("String");
        const std::uint32_t n = c.u32();
        const std::string_view s = c.bytes(n);
        t.value = "\"";
        append_escaped(t.value, s);
        t.value += '"';
        break;
      }
      case ValueKind::device: {
        t.type = quoted("Device");
        const std::string_view d = str(c.u32(), ok);
        t.value = "\"";
        append_escaped(t.value, d);
        t.value += '"';
        break;
      }
      case ValueKind::other: {
        const std::string_view tag = str(c.u32(), ok);
        t.type = quoted(std::string(tag));
        t.value = "\"<";
        append_escaped(t.value, tag);
        t.value += ">\"";
        break;
      }
      default:
        return false;
    }
    return ok && !c.failed();
  }

  bool values(Cursor& c, ValueArrays& a) {
    const std::uint32_t n = c.u32();
    if (c.failed() || n > c.left()) return false;
    for (std::uint32_t i = 0; i < n; ++i) {
      ValueText t;
      if (!value(c, true, 0, t)) return false;
      a.shapes.push_back(std::move(t.shape));
      a.strides.push_back(std::move(t.stride));
      a.types.push_back(std::move(t.type));
      a.values.push_back(std::move(t.value));
    }
    return true;
  }

  // torch's recordOperatorStart.
  bool start(Cursor& c) {
    bool ok = true;
    const std::uint64_t handle = c.u64();
    Pending p;
    p.tid = c.u64();
    p.fw_tid = c.u64();
    p.seq_nr = c.i64();
    p.scope = c.u8();
    p.name = std::string(str(c.u32(), ok));
    const std::uint32_t schema = c.u32();
    if (schema != 0) p.schema = std::string(str(schema - 1, ok));
    const std::uint8_t flags = c.u8();
    if (c.failed() || !ok) return false;

    auto& stack = thread_stack(p.tid);
    // All input ids come after the op's own.
    p.op_id = next_id_++;
    if (flags & et::kInputsLogged) {
      if (!values(c, p.inputs)) return false;
      if (flags & et::kKernelInfo) {
        p.kernel_backend = std::string(str(c.u32(), ok));
        const std::uint32_t file = c.u32();
        const std::int64_t stream = c.i64();
        if (c.failed() || !ok) return false;
        if (file != et::kNoString) {
          // Triton: the file's base name, and the stream as one more input
          // (torch adds no strides entry for it).
          p.kernel_file = std::string(str(file, ok));
          std::string v;
          append_int(v, stream);
          p.inputs.values.push_back(std::move(v));
          p.inputs.types.push_back("\"Int\"");
          p.inputs.shapes.push_back("[]");
        }
      }
      p.parent = stack.back();
      if (p.fw_tid != 0) {
        const auto fw = stacks_.find(p.fw_tid);
        // torch reads the top of an empty stack there (undefined); 0 here.
        if (fw != stacks_.end() && !fw->second.empty()) p.fw_parent = fw->second.back();
      }
      stack.push_back(p.op_id);
      handle_of_op_[p.op_id] = handle;
    }
    pending_[handle] = std::move(p);
    return true;
  }

  // torch's onFunctionExit.
  bool end(Cursor& c) {
    const std::uint64_t handle = c.u64();
    const std::uint64_t tid = c.u64();
    const std::uint8_t flags = c.u8();
    if (c.failed()) return false;
    auto it = pending_.find(handle);
    // An end whose start was not recorded (the op began before the window):
    // nothing, as torch; the caller moves on by the record's size.
    if (it == pending_.end()) return true;
    Pending p = std::move(it->second);
    pending_.erase(it);
    handle_of_op_.erase(p.op_id);
    if (!(flags & et::kOutputsLogged)) return true;
    ValueArrays outputs;
    if (!values(c, outputs)) return false;
    std::string extra;
    if (flags & et::kCommAttrs && !comm_attrs(c, extra)) return false;
    auto& stack = stacks_[tid];
    if (!stack.empty()) stack.pop_back();
    write_node(p, handle, tid, outputs, extra);
    return true;
  }

  void write_node(const Pending& p, std::uint64_t handle, std::uint64_t tid, const ValueArrays& outputs,
                  std::string_view extra) {
    NodeFields n;
    n.name = p.name;
    n.id = p.op_id;
    n.rf_id = handle;
    n.parent = p.parent;
    n.fw_parent = p.fw_parent;
    n.seq_id = p.seq_nr;
    n.scope = p.scope;
    n.tid = tid;
    n.fw_tid = p.fw_tid;
    n.inputs = &p.inputs;
    n.outputs = &outputs;
    n.schema = p.schema;
    n.kernel_backend = p.kernel_backend;
    n.kernel_file = p.kernel_file;
    n.extra_attrs = extra;
    node(n, true);
    ++stats_.nodes;
    if (n.name == kProcessGroupsNode) process_groups_written_ = true;
    if (inputs_ && !p.inputs.types.empty()) inputs_->add(handle, kineto_inputs(p.inputs.shapes, p.inputs.types));
  }

  // torch's getCommsNodeAttrs: ", " then each attr, comma-separated.
  bool comm_attrs(Cursor& c, std::string& out) {
    const std::uint32_t m = c.u32();
    if (c.failed() || m > c.left()) return false;
    bool ok = true;
    for (std::uint32_t i = 0; i < m; ++i) {
      const std::string_view name = str(c.u32(), ok);
      const std::string_view type = str(c.u32(), ok);
      const std::string_view raw = str(c.u32(), ok);
      if (c.failed() || !ok) return false;
      out += ", \n  {\"name\": \"";
      append_escaped(out, name);
      out += "\", \"type\": \"";
      append_escaped(out, type);
      out += "\", \"value\": ";
      // torch writes saveNcclMeta's text as it is (a number or a quoted
      // string); anything else is quoted, so that the file stays JSON.
      if (nlohmann::json::accept(raw)) {
        out += raw;
      } else {
        out += '"';
        append_escaped(out, raw);
        out += '"';
      }
      out += '}';
    }
    return true;
  }

  void node(const NodeFields& n, bool comma) {
    static const ValueArrays kEmpty;
    const ValueArrays& in = n.inputs ? *n.inputs : kEmpty;
    const ValueArrays& out = n.outputs ? *n.outputs : kEmpty;
    std::string& o = out_;
    o += "\n      {\n        \"id\": ";
    append_uint(o, n.id);
    o += ", \"name\": \"";
    // The job's own ProfilerStep#N records, named as in the device trace
    // (trace_schema.h), so both files name the record alike.
    if (schema::is_step_like_name(n.name)) o += schema::kJobStepPrefix;
    append_escaped(o, n.name);
    o += "\", \"ctrl_deps\": ";
    append_uint(o, n.parent);
    const auto arrays = [&](const char* key, const ValueArrays& a) {
      o += ",\n        \"";
      o += key;
      o += "\": {\"values\": ";
      append_array(o, a.values);
      o += ", \"shapes\": ";
      append_array(o, a.shapes);
      o += ", \"types\": ";
      append_array(o, a.types);
      o += ", \"strides\": ";
      append_array(o, a.strides);
      o += '}';
    };
    arrays("inputs", in);
    arrays("outputs", out);
    o += ",\n        \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": ";
    append_uint(o, n.rf_id);
    o += "},{\"name\": \"fw_parent\", \"type\": \"uint64\", \"value\": ";
    append_uint(o, n.fw_parent);
    o += "},{\"name\": \"seq_id\", \"type\": \"int64\", \"value\": ";
    append_int(o, n.seq_id);
    o += "},{\"name\": \"scope\", \"type\": \"uint64\", \"value\": ";
    append_uint(o, n.scope);
    o += "},{\"name\": \"tid\", \"type\": \"uint64\", \"value\": ";
    append_uint(o, n.tid);
    o += "},{\"name\": \"fw_tid\", \"type\": \"uint64\", \"value\": ";
    append_uint(o, n.fw_tid);
    o += "},{\"name\": \"op_schema\", \"type\": \"string\", \"value\": \"";
    append_escaped(o, n.schema);
    o += "\"},{\"name\": \"kernel_backend\", \"type\": \"string\", \"value\": \"";
    append_escaped(o, n.kernel_backend);
    o += "\"},{\"name\": \"kernel_file\", \"type\": \"string\", \"value\": \"";
    append_escaped(o, n.kernel_file);
    o += "\"},{\"name\": \"tensor_range\", \"type\": \"string\", \"value\": \"\"}";
    o += n.extra_attrs;
    o += "]\n      }";
    if (comma) o += ',';
  }

  files::ByteSink& sink_;
  EtWriteStats& stats_;
  InputsByRfId* inputs_;  // may be null
  std::string out_;
  const std::vector<std::string>* strings_ = nullptr;
  std::uint64_t next_id_ = 2;
  std::unordered_map<std::uint64_t, std::uint64_t> object_ids_;
  std::map<std::uint64_t, std::vector<std::uint64_t>> stacks_;
  std::unordered_map<std::uint64_t, Pending> pending_;
  std::unordered_map<std::uint64_t, std::uint64_t> handle_of_op_;  // op id -> rf handle, ops on a stack
  std::vector<std::uint64_t> closed_;  // node ids closed at an edge
  bool process_groups_written_ = false;
};

}  // namespace

bool write_et_json(files::ByteSink& sink, const EtHeader& header,
                   const std::vector<EtThreadStream>& threads, EtWriteStats* stats, InputsByRfId* inputs) {
  EtWriteStats local;
  EtWriteStats& st = stats ? *stats : local;
  Replay replay(sink, st, inputs);
  replay.header(header);

  std::vector<StreamCursor> cursors;
  for (const auto& t : threads) {
    if (!t.strings) continue;
    StreamCursor c;
    c.stream = &t;
    if (c.settle(st.corrupt)) cursors.push_back(c);
  }
  // Smallest seq first; ties (impossible from the recorder) by thread order.
  const auto later = [&](std::size_t a, std::size_t b) {
    return cursors[a].seq != cursors[b].seq ? cursors[a].seq > cursors[b].seq : a > b;
  };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> heap(later);
  for (std::size_t i = 0; i < cursors.size(); ++i) heap.push(i);
  std::size_t edge = 0;
  while (!heap.empty()) {
    const std::size_t i = heap.top();
    heap.pop();
    StreamCursor& sc = cursors[i];
    // Recording stopped before this record: what was open then is closed.
    for (; edge < header.edges.size() && header.edges[edge] < sc.seq; ++edge) replay.close_open();
    et::Cursor c(sc.record + 4, sc.size - 4);
    if (!replay.record(c, *sc.stream->strings)) {
      // Unreadable: this thread's remaining records are dropped (their ids
      // and stack would be wrong from here on).
      ++st.corrupt;
      continue;
    }
    sc.offset += sc.size;
    if (sc.settle(st.corrupt)) heap.push(i);
    if (replay.buffered() > (1u << 20)) replay.flush();
  }
  return replay.finish(header);
}

}  // namespace chakrashim::writers
