#include "report/module_totals.h"

#include <algorithm>
#include <tuple>

namespace chakrashim::tools::report {

bool is_module_scope(std::string_view name) { return name.substr(0, kModulePrefix.size()) == kModulePrefix; }

std::vector<ModuleTotal> module_totals(const EventTable& table) {
  // The module spans, by thread, then outermost first.
  std::vector<const HostSpan*> spans;
  for (const auto& h : table.host)
    if (h.annotation && is_module_scope(table.names[h.name])) spans.push_back(&h);
  std::sort(spans.begin(), spans.end(), [](const HostSpan* a, const HostSpan* b) {
    return std::make_tuple(a->thread, a->start, -a->end) < std::make_tuple(b->thread, b->start, -b->end);
  });
  std::vector<ModuleTotal> by_name(table.names.size());
  // The open module spans of the thread being walked: each child's time
  // comes off its parent's self time.
  std::vector<const HostSpan*> open;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const HostSpan& s = *spans[i];
    if (i > 0 && spans[i - 1]->thread != s.thread) open.clear();
    while (!open.empty() && open.back()->end <= s.start) open.pop_back();
    const std::int64_t dur = s.end - s.start;
    ModuleTotal& t = by_name[s.name];
    t.name = s.name;
    ++t.calls;
    t.total_ns += dur;
    t.self_ns += dur;
    if (!open.empty()) {
      // Clipped to the parent: a child that outlives it (never, when the
      // records nest) takes off only what lies inside.
      const HostSpan& parent = *open.back();
      by_name[parent.name].self_ns -= std::min(s.end, parent.end) - s.start;
    }
    open.push_back(&s);
  }
  return called_by_total(by_name);
}

}  // namespace chakrashim::tools::report
