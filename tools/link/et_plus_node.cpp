#include "link/et_plus_node.h"

#include "common/time_text.h"
#include "link/json_text.h"

namespace chakrashim::tools::link {

namespace {

void set_text(std::string& out, std::uint64_t v) { out = std::to_string(v); }
void set_text(std::string& out, std::int64_t v) { out = std::to_string(v); }

}  // namespace

void NodeEmitter::apply(std::vector<View>& fields, const Override* begin, const Override* end) {
  for (const Override* o = begin; o != end; ++o) {
    bool found = false;
    for (auto& f : fields) {
      if (f.first == o->key) {
        f.second = o->value;
        found = true;
        break;
      }
    }
    if (!found && o->append) fields.emplace_back(o->key, o->value);
  }
}

void NodeEmitter::write(const std::vector<View>& fields, std::string& out) {
  out.push_back('{');
  bool first = true;
  for (const auto& [key, value] : fields) {
    if (!first) out.push_back(',');
    first = false;
    append_quoted(out, key);
    out.push_back(':');
    out.append(value);
  }
  out.push_back('}');
}

void NodeEmitter::emit(const NodeFields& node, std::size_t index, std::string& out) {
  const LinkedNode& linked = plan_.nodes[index];
  host_.clear();
  for (std::size_t i = 0; i < node.size; ++i) host_.emplace_back(node.fields[i].key, node.fields[i].value);
  set_text(id_, linked.new_id);
  if (linked.new_parent) set_text(parent_, *linked.new_parent);
  Override overrides[6];
  std::size_t n = 0;
  overrides[n++] = {"id", id_};
  if (linked.new_parent) overrides[n++] = {"ctrl_deps", parent_, false};
  if (linked.timing) {
    const NodeTiming& t = plan_.timings[*linked.timing];
    incl_ = us_text(t.inclusive);
    excl_ = us_text(t.exclusive);
    ts_ = us_text(t.ts);
    if (t.inter_thread_dep) set_text(dep_, *t.inter_thread_dep);
    else dep_ = "null";
    overrides[n++] = {"inclusive_dur", incl_};
    overrides[n++] = {"exclusive_dur", excl_};
    overrides[n++] = {"ts", ts_};
    overrides[n++] = {"inter_thread_dep", dep_};
  }
  apply(host_, overrides, overrides + n);
  write(host_, out);
  for (std::uint32_t c = 0; c < linked.children; ++c) {
    out.append(",\n");
    emit_child(plan_.child_ops[linked.first_child + c], linked.new_id + 1 + c, id_, out);
  }
}

void NodeEmitter::emit_child(std::uint32_t gpu_index, std::uint64_t child_id, std::string_view parent_id,
                             std::string& out) {
  const GpuOp& g = device_.gpu[gpu_index];
  child_ = host_;
  set_text(c_id_, child_id);
  c_name_.clear();
  append_quoted(c_name_, device_.names.at(g.name));
  c_cat_.clear();
  append_quoted(c_cat_, device_.names.at(g.cat));
  c_ph_.clear();
  append_quoted(c_ph_, device_.names.at(g.ph));
  c_incl_ = us_text(g.dur);
  c_excl_ = c_incl_;  // GPU ops keep their whole duration as exclusive
  c_ts_ = us_text(g.ts);
  if (g.stream) set_text(c_stream_, *g.stream);
  else c_stream_ = "null";
  const bool with_pg =
      g.pg_name && device_.names.at(g.name).find("ncclDevKernel") != std::string_view::npos;
  if (with_pg) {
    c_pg_.clear();
    append_quoted(c_pg_, device_.names.at(*g.pg_name));
  }
  // Chakra's dict.update order.
  const Override overrides[] = {
      {"id", c_id_},          {"ctrl_deps", parent_id},  {"cat", c_cat_},       {"name", c_name_},
      {"ph", c_ph_},          {"inclusive_dur", c_incl_}, {"exclusive_dur", c_excl_}, {"ts", c_ts_},
      {"stream", c_stream_},  {"pg_name", c_pg_}};
  apply(child_, overrides, overrides + (with_pg ? 10 : 9));
  write(child_, out);
}

}  // namespace chakrashim::tools::link
