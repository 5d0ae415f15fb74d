// A c10d op's process group, read from its ProcessGroup input, for the ET
// recorder (issue #50): torch's own ET writes the group as "<Object>", so the
// collectives of a job of several groups (tensor x data parallel) could not
// be told apart. Adapter to torch's c10d; runs on the job's thread, for c10d
// ops only, and never throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/ivalue.h>

namespace chakrashim::bridge {

// The ET attrs of the first ProcessGroup among `count` inputs, name then JSON
// text value: pg_name ("\"3\""), pg_desc ("\"mesh_tp\""), pg_size ("2").
// Empty when there is none, or this torch cannot read it. A pointer and a
// count: RecordFunction::inputs() is an ArrayRef of const IValues before
// torch 2.5 and of IValues after (compat.sh's 2.4.1 row).
std::vector<std::pair<const char*, std::string>> c10d_group_attrs(const c10::IValue* inputs, std::size_t count);

// The groups of the c10d ops open on one recording buffer's thread, from
// their start record to their end record, by RecordFunction handle. Texts,
// not interned indices: the window may end (and the buffer's strings be
// taken) while the op runs. A handful at most: c10d ops do not nest.
class OpenGroups {
 public:
  using Attrs = std::vector<std::pair<const char*, std::string>>;
  void note(std::uint64_t handle, const c10::IValue* inputs, std::size_t count) {
    Attrs attrs = c10d_group_attrs(inputs, count);
    if (attrs.empty()) return;
    if (open_.size() > 16) open_.clear();  // ends that never came
    open_.emplace_back(handle, std::move(attrs));
  }
  // The op's attrs, and forgets them; empty if none were noted.
  Attrs take(std::uint64_t handle) {
    for (auto it = open_.begin(); it != open_.end(); ++it) {
      if (it->first != handle) continue;
      Attrs out = std::move(it->second);
      open_.erase(it);
      return out;
    }
    return {};
  }

 private:
  std::vector<std::pair<std::uint64_t, Attrs>> open_;
};

// "1" -> "\"1\"": an ET attr's value is JSON text (control bytes dropped).
std::string json_string(const std::string& text);

}  // namespace chakrashim::bridge
