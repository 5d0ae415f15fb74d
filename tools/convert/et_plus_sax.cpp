#include "convert/et_plus_sax.h"

#include <cmath>
#include <limits>

#include "common/time_text.h"
#include "common/tool_schema.h"
#include "convert/node_rules.h"
#include "convert/python_repr.h"

namespace chakrashim::tools::convert::detail {

namespace {

// Python's int() of an exclusive_dur (truncation), or nullopt.
std::optional<std::int64_t> truncated(const Scalar& v) {
  if (v.kind == Scalar::Kind::integer || v.kind == Scalar::Kind::boolean) return v.i;
  if (v.kind == Scalar::Kind::floating && std::isfinite(v.d) && std::fabs(v.d) < 9.2e18)
    return static_cast<std::int64_t>(v.d);
  return std::nullopt;
}

// What Python's multiplication would give for num_elem * elem_bytes, if it
// fits the int64 the attribute is.
std::optional<std::int64_t> product(std::optional<std::int64_t> a, std::optional<std::int64_t> b) {
  if (!a || !b) return std::nullopt;
  std::int64_t out = 0;
  if (__builtin_mul_overflow(*a, *b, &out)) return std::nullopt;
  return out;
}

std::optional<std::int64_t> sum(std::optional<std::int64_t> a, std::optional<std::int64_t> b) {
  if (!a || !b) return std::nullopt;
  std::int64_t out = 0;
  if (__builtin_add_overflow(*a, *b, &out)) return std::nullopt;
  return out;
}

// The six integer attributes, then op_schema.
constexpr std::array<std::string_view, 6> kIntAttrs = {"rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid"};

// The keys that open a Kineto device trace.
bool device_trace_key(std::string_view k) {
  return k == "schemaVersion" || k == "deviceProperties" || k == "distributedInfo" || k == "traceEvents" ||
         k == "traceName" || k == "displayTimeUnit" || k == "baseTimeNanoseconds";
}

}  // namespace


std::optional<std::int64_t> EtPlusSax::nanoseconds(const Scalar& v) const {
  // The microsecond text read exactly (common/time_text.h): link writes
  // three decimals, so the in-memory join's nanoseconds come back unchanged.
  if (v.kind == Scalar::Kind::integer) return v.i * 1000;
  if (v.kind == Scalar::Kind::floating) return micros_text_to_ns(token_);
  return std::nullopt;
}

std::string EtPlusSax::who() const {
  if (ns_.id) return "node " + std::to_string(node_.id);
  return "node #" + std::to_string(nodes_read_) + " (no id yet)";
}

bool EtPlusSax::key(string_t& k) {
  switch (frame()) {
    case Frame::top:
      if (device_trace_key(k))
        return fail("a device trace (Kineto format, key '" + k +
                    "'), not an ET+: link it with its host ET first (chakrashim link)");
      key_ = k;
      break;
    case Frame::node:
    case Frame::io:
    case Frame::attr: key_ = k; break;
    case Frame::repr: writer_->key(k); break;
    default: break;
  }
  return true;
}

bool EtPlusSax::scalar(const Scalar& v) {
  if (!started_) return fail("not an ET+: the document is not a JSON object");
  const bool ok = dispatch(v);
  big_ = 0;
  token_.clear();
  return ok;
}

bool EtPlusSax::dispatch(const Scalar& v) {
  switch (frame()) {
    case Frame::top: return top_value(v);
    case Frame::node: return node_value(v);
    case Frame::io:
      if (key_ == "values" || key_ == "shapes" || key_ == "types") {
        start_field(key_);
        repr_scalar(v);
        target_ = nullptr;
        writer_.reset();
        track_ = Track::none;
      }
      return true;
    case Frame::repr: repr_scalar(v); return true;
    case Frame::attr: attr_value(v); return true;
    case Frame::nodes: return fail("'nodes' holds a value that is not an object");
    default: return true;
  }
}

bool EtPlusSax::top_value(const Scalar& v) {
  MetadataFields& m = out_.meta;
  const auto unsigned_value = [&](std::uint64_t& into, int slot) {
    top_seen_[slot] = true;
    if (v.kind == Scalar::Kind::integer && v.i >= 0) into = static_cast<std::uint64_t>(v.i);
    else if (v.kind == Scalar::Kind::big && big_ != 0) into = big_;
    else return fail("'" + key_ + "' is not a non-negative integer");
    return true;
  };
  if (key_ == names::kEtSchema) {
    top_seen_[0] = true;
    if (v.kind != Scalar::Kind::string) return fail("'schema' is not a string");
    m.schema = std::string(v.s);
    if (!converter_reads_schema(m.schema)) {
      std::string known;
      for (const auto s : names::kConverterSchemas) known += (known.empty() ? "" : ", ") + std::string(s);
      return fail("ET schema '" + m.schema + "' is not one chakra_converter reads (" + known + ")");
    }
  } else if (key_ == names::kEtTime) {
    top_seen_[2] = true;
    if (v.kind != Scalar::Kind::string) return fail("'time' is not a string");
    m.time = std::string(v.s);
  } else if (key_ == names::kEtPid) {
    return unsigned_value(m.pid, 1);
  } else if (key_ == names::kEtStartTs) {
    return unsigned_value(m.start_ts, 3);
  } else if (key_ == names::kEtFinishTs) {
    return unsigned_value(m.finish_ts, 4);
  } else if (key_ == names::kEtNodes) {
    return fail("'nodes' is not a list");
  }
  return true;
}

bool EtPlusSax::node_value(const Scalar& v) {
  using K = Scalar::Kind;
  auto note = [&](std::string why) {
    if (ns_.error.empty()) ns_.error = std::move(why);
  };
  if (key_ == names::kEtId) {
    if (ns_.id_keys++ > 0) ordinary_ = false;
    if (v.kind == K::integer && v.i >= 0) node_.id = static_cast<std::uint64_t>(v.i);
    else if (v.kind == K::big && big_ != 0) node_.id = big_;
    else note("its id is not a non-negative integer");
    ns_.id = v.kind == K::integer || v.kind == K::big;
  } else if (key_ == names::kEtName) {
    if (ns_.name) ordinary_ = false;
    ns_.name = true;
    if (v.kind == K::string) node_.name = std::string(v.s);
    else note("its name is not a string");
  } else if (key_ == names::kEtCtrlDeps) {
    if (ns_.ctrl) ordinary_ = false;
    ns_.ctrl = true;
    if (v.kind == K::integer && v.i >= 0) node_.parent = static_cast<std::uint64_t>(v.i);
    else if (v.kind == K::big && big_ != 0) node_.parent = big_;
    else if (v.kind != K::null && v.kind != K::integer) note("its ctrl_deps is not an integer");
  } else if (key_ == "exclusive_dur") {
    ++linked_nodes_;
    ordinary_ = false;
    const auto d = truncated(v);
    if (!d) note("its exclusive_dur is not a number");
    else if (*d < 0) note("its exclusive_dur is negative");
    else node_.exclusive_dur = *d;
    node_.exclusive_ns = nanoseconds(v).value_or(0);
  } else if (key_ == "inclusive_dur") {
    ++linked_nodes_;
    node_.inclusive_ns = nanoseconds(v).value_or(0);
  } else if (key_ == "ts") {
    const auto ns = nanoseconds(v);
    node_.timed = ns.has_value();
    node_.ts_ns = ns.value_or(0);
  } else if (key_ == "inter_thread_dep") {
    ordinary_ = false;
    if (v.kind == K::integer && v.i < 0) note("its inter_thread_dep is negative");
    else if (v.kind == K::integer) node_.inter_thread_dep = static_cast<std::uint64_t>(v.i);
    else if (v.kind == K::big && big_ != 0) node_.inter_thread_dep = big_;
    else if (v.kind == K::boolean) node_.inter_thread_dep = static_cast<std::uint64_t>(v.i);
    else if (v.kind != K::null) note("its inter_thread_dep is not an integer");
  } else if (key_ == "cat") {
    ordinary_ = false;
    node_.gpu = v.kind != K::null;
    if (node_.gpu) ++linked_nodes_;
  } else if (key_ == "stream") {
    ordinary_ = false;
    if (v.kind == K::null) tail_.stream.reset();
    else if (v.kind == K::integer || v.kind == K::boolean) tail_.stream = v.i;
    else note("its stream is not an integer");
  } else if (key_ == "pg_name") {
    ordinary_ = false;
    if (v.kind == K::string) node_.pg_name = std::string(v.s);
  } else if (key_ == "inputs" || key_ == "outputs") {
    note("its " + key_ + " is not an object");
  } else if (key_ == names::kEtAttrs && v.kind != K::null) {
    note("its attrs is not a list");
  }
  return true;
}

void EtPlusSax::start_field(std::string_view which) {
  IoText& io = in_inputs_ ? tail_.inputs : tail_.outputs;
  auto& seen = in_inputs_ ? ns_.in_fields : ns_.out_fields;
  const int slot = which == "values" ? 0 : which == "shapes" ? 1 : 2;
  seen[slot] = true;
  target_ = slot == 0 ? &io.values : slot == 1 ? &io.shapes : &io.types;
  target_->clear();
  writer_.emplace(*target_);
  rdepth_ = 0;
  track_ = !in_inputs_ ? Track::none : slot == 0 ? Track::values : slot == 2 ? Track::types : Track::none;
}

void EtPlusSax::repr_scalar(const Scalar& v) {
  using K = Scalar::Kind;
  switch (v.kind) {
    case K::null: writer_->null(); break;
    case K::boolean: writer_->boolean(v.i != 0); break;
    case K::integer: writer_->integer(v.i); break;
    case K::big:
      if (!token_.empty() && big_ == 0) writer_->number_token(token_, v.d);
      else writer_->unsigned_integer(big_);
      break;
    case K::floating: writer_->number_token(token_, v.d); break;
    case K::string: writer_->string(v.s); break;
  }
  const std::optional<std::int64_t> as_int =
      v.kind == K::integer ? std::optional<std::int64_t>(v.i) : std::nullopt;
  if (track_ == Track::values) {
    if (rdepth_ == 1) {
      elems_.push_back({});  // a scalar element has no size
      elems_.back().integer = as_int;
    } else if (rdepth_ == 2) {
      if (pos_[2] == 3) e3_ = as_int;
      if (pos_[2] == 4) e4_ = as_int;
      elem_scalar_items_ = true;  // not a list of tensors then
      ++pos_[2];
    } else if (rdepth_ == 3) {
      if (pos_[3] == 3) i3_ = as_int;
      if (pos_[3] == 4) i4_ = as_int;
      ++pos_[3];
    }
  } else if (track_ == Track::types && rdepth_ == 1) {
    std::uint8_t c = 3;
    if (v.kind == K::string) {
      c = v.s.find("Tensor") == std::string_view::npos ? 0 : v.s.rfind("GenericList[Tensor", 0) == 0 ? 2 : 1;
    }
    type_class_.push_back(c);
  }
}

void EtPlusSax::attr_value(const Scalar& v) {
  if (key_ == names::kEtName) {
    attr_name_ = v.kind == Scalar::Kind::string ? std::string(v.s) : std::string();
  } else if (key_ == names::kEtAttrValue) {
    attr_has_value_ = true;
    attr_kind_ = v.kind;
    attr_int_ = v.i;
    if (v.kind == Scalar::Kind::string) attr_str_ = std::string(v.s);
  }
}

bool EtPlusSax::open(bool object) {
  if (!started_) {
    started_ = true;
    if (!object) return fail("not an ET+: the document is a JSON list, not an object");
    frames_.push_back(Frame::top);
    return true;
  }
  Frame next = Frame::skip;
  switch (frame()) {
    case Frame::top:
      if (key_ == names::kEtNodes) {
        top_seen_[5] = true;
        if (object) return fail("'nodes' is not a list");
        next = Frame::nodes;
      }
      break;
    case Frame::nodes:
      if (!object) return fail("'nodes' holds a value that is not an object");
      next = Frame::node;
      ns_ = NodeState{};
      node_ = EtPlusNode{};
      tail_.stream = 0;  // the converter's default when a node has none
      tail_.inputs = tail_.outputs = IoText{};
      tail_.op_schema.clear();
      elems_.clear();
      type_class_.clear();
      break;
    case Frame::node:
      if (key_ == "cat" || key_ == "stream" || key_ == "pg_name" || key_ == "exclusive_dur" ||
          key_ == "inter_thread_dep")
        ordinary_ = false;
      if (key_ == "inputs" || key_ == "outputs") {
        if (!object) {
          if (ns_.error.empty()) ns_.error = "its " + key_ + " is not an object";
        } else {
          next = Frame::io;
          in_inputs_ = key_ == "inputs";
          (in_inputs_ ? ns_.inputs : ns_.outputs) = true;
        }
      } else if (key_ == names::kEtAttrs && !object) {
        next = Frame::attrs;
      } else if (key_ == "cat") {
        node_.gpu = true;
        ++linked_nodes_;
      } else if (key_ == names::kEtCtrlDeps || key_ == names::kEtId || key_ == names::kEtName ||
                 key_ == "exclusive_dur" || key_ == "inter_thread_dep" || key_ == "stream") {
        if (key_ == names::kEtCtrlDeps) ns_.ctrl = true;
        if (key_ == names::kEtId) {
          ns_.id = false;
          ordinary_ = false;
        }
        if (key_ == names::kEtName) ns_.name = true;
        if (ns_.error.empty()) ns_.error = "its " + key_ + " is not a single value";
      }
      break;
    case Frame::io:
      if (key_ == "values" || key_ == "shapes" || key_ == "types") {
        start_field(key_);
        next = Frame::repr;
        if (track_ == Track::values) ns_.values_list = !object;
        if (track_ == Track::types) ns_.types_list = !object;
        rdepth_ = 1;
        object ? writer_->begin_dict() : writer_->begin_list();
        frames_.push_back(next);
        return true;
      }
      break;
    case Frame::repr:
      object ? writer_->begin_dict() : writer_->begin_list();
      if (track_ == Track::values) {
        if (rdepth_ == 1) {
          pos_[2] = 0;
          e3_ = e4_ = std::nullopt;
          list_sum_ = object ? std::nullopt : std::optional<std::int64_t>(0);
          elem_scalar_items_ = object;
        } else if (rdepth_ == 2) {
          pos_[3] = 0;
          i3_ = i4_ = std::nullopt;
          if (object) list_sum_ = std::nullopt;
        }
      } else if (track_ == Track::types && rdepth_ == 1) {
        type_class_.push_back(3);
      }
      ++rdepth_;
      next = Frame::repr;
      break;
    case Frame::attrs:
      if (object) {
        next = Frame::attr;
        attr_name_.clear();
        attr_has_value_ = attr_nested_ = false;
        attr_kind_ = Scalar::Kind::null;
      }
      break;
    case Frame::attr:
      if (key_ == names::kEtAttrValue) attr_has_value_ = attr_nested_ = true;
      break;
    default: break;
  }
  frames_.push_back(next);
  return true;
}

bool EtPlusSax::close(bool object) {
  if (frames_.empty()) return true;
  const Frame closed = frames_.back();
  frames_.pop_back();
  switch (closed) {
    case Frame::repr: {
      object ? writer_->end_dict() : writer_->end_list();
      --rdepth_;
      if (track_ == Track::values) {
        if (rdepth_ == 1) {  // an element of values closed
          ElemSize e;
          if (!object) e.tensor = product(e3_, e4_);
          if (!elem_scalar_items_) e.list = list_sum_;
          elems_.push_back(e);
          ++pos_[1];
        } else if (rdepth_ == 2) {  // an inner tensor of a list element closed
          list_sum_ = object ? std::nullopt : sum(list_sum_, product(i3_, i4_));
          ++pos_[2];
        } else if (rdepth_ == 3) {
          ++pos_[3];
        }
      }
      if (rdepth_ == 0) {
        target_ = nullptr;
        writer_.reset();
        track_ = Track::none;
      }
      break;
    }
    case Frame::attr: return finish_attr();
    case Frame::node: return finish_node();
    default: break;
  }
  return true;
}

bool EtPlusSax::finish_attr() {
  if (!attr_has_value_) return true;  // no value: the converter's setattr would fail
  auto note = [&](std::string why) {
    if (ns_.error.empty()) ns_.error = std::move(why);
  };
  using K = Scalar::Kind;
  for (std::size_t i = 0; i < kIntAttrs.size(); ++i) {
    if (attr_name_ != kIntAttrs[i]) continue;
    ns_.attrs[i] = true;
    if (attr_nested_ || (attr_kind_ != K::integer && attr_kind_ != K::boolean)) {
      note("its attr " + attr_name_ + " is not an int64");
      return true;
    }
    std::int64_t* slots[] = {&tail_.rf_id, &tail_.fw_parent, &tail_.seq_id, &tail_.scope, &tail_.tid, &tail_.fw_tid};
    *slots[i] = attr_int_;
    return true;
  }
  if (attr_name_ == "op_schema") {
    ns_.attrs[6] = true;
    if (attr_nested_ || attr_kind_ != K::string) note("its attr op_schema is not a string");
    else tail_.op_schema = attr_str_;
  } else if (attr_name_ == "stream") {
    ordinary_ = false;
    // Every attr becomes a field of the converter's node, so it overrides.
    if (attr_nested_ || (attr_kind_ != K::integer && attr_kind_ != K::null && attr_kind_ != K::boolean))
      note("its attr stream is not an integer");
    else if (attr_kind_ == K::null) tail_.stream.reset();
    else tail_.stream = attr_int_;
  } else if (attr_name_ == "pg_name") {
    // chakrashim's recorder names each c10d op's group (issue #50); the
    // in-memory join keeps it as the file path does (tools.convert's
    // InMemory tests compare the two byte for byte).
    if (!attr_nested_ && attr_kind_ == K::string) node_.pg_name = attr_str_;
  }
  return true;
}

bool EtPlusSax::finish_node() {
  const auto missing = [&](const char* what) { return fail(who() + ": no " + std::string(what)); };
  if (!ns_.id && ns_.error.empty()) return missing("integer 'id'");
  if (!ns_.error.empty()) return fail(who() + ": " + ns_.error);
  if (!ns_.name) return missing("'name'");
  if (!ns_.ctrl) return missing("'ctrl_deps'");
  if (!ns_.inputs) return missing("'inputs'");
  if (!ns_.outputs) return missing("'outputs'");
  static constexpr const char* kFields[] = {"values", "shapes", "types"};
  for (int i = 0; i < 3; ++i) {
    if (!ns_.in_fields[i]) return fail(who() + ": its inputs have no '" + kFields[i] + "'");
    if (!ns_.out_fields[i]) return fail(who() + ": its outputs have no '" + kFields[i] + "'");
  }
  for (std::size_t i = 0; i < kIntAttrs.size(); ++i) {
    if (!ns_.attrs[i]) return fail(who() + ": no attr " + std::string(kIntAttrs[i]));
  }
  if (!ns_.attrs[6]) return fail(who() + ": no attr op_schema");
  // comm_size over zip(values, types), as the converter sums it.
  if (ns_.values_list && ns_.types_list) {
    std::optional<std::int64_t> size = 0;
    const std::size_t n = std::min(elems_.size(), type_class_.size());
    for (std::size_t i = 0; i < n && size; ++i) {
      switch (type_class_[i]) {
        case 0: break;
        case 1: size = sum(size, elems_[i].tensor); break;
        case 2: size = sum(size, elems_[i].list); break;
        default: size = std::nullopt;
      }
    }
    node_.comm_size = size;
  }
  if (host_p2p_kind(node_.name) && elems_.size() >= 4 && type_class_.size() >= 4) {
    node_.p2p_peer = elems_[2].integer;
    node_.p2p_tag = elems_[3].integer;
  }
  tail_.is_cpu_op = !node_.gpu;
  if (node_.gpu) node_.stream = tail_.stream;
  ++nodes_read_;
  if (host_ != nullptr) {
    host_->push_back({std::move(node_), tail_});
    return true;
  }
  node_.tail = encoder_.tail(tail_);
  out_.nodes.push_back(std::move(node_));
  return true;
}

bool EtPlusSax::finish() {
  static constexpr const char* kTop[] = {"schema", "pid", "time", "start_ts", "finish_ts", "nodes"};
  for (int i = 0; i < 6; ++i) {
    if (!top_seen_[i]) {
      return fail(std::string("no top-level '") + kTop[i] + "'" +
                  (i == 5 ? ": not an ET+" : i == 4 ? " (an ET whose writer never finished?)" : ""));
    }
  }
  if (host_ == nullptr && !out_.nodes.empty() && linked_nodes_ == 0) {
    return fail("a host ET that was never linked (no node has exclusive_dur or a device child): "
                "run chakrashim link first, or convert the capture folder");
  }
  return true;
}

}  // namespace chakrashim::tools::convert::detail
