#include "report/timeline.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace chakrashim::tools::report {

namespace {

BarKind bar_kind(GpuKind k) {
  switch (k) {
    case GpuKind::compute: return BarKind::compute;
    case GpuKind::communication: return BarKind::communication;
    case GpuKind::memory: return BarKind::memory;
  }
  return BarKind::compute;
}

// Nesting depth of each host span of the step, thread by thread, the same
// parent-before-child order as step_stats' self times.
void add_host_bars(const EventTable& table, const StepSpan& step, std::vector<TimelineBar>& bars,
                   std::map<std::uint32_t, std::uint32_t>& thread_rows) {
  std::vector<const HostSpan*> spans;
  for (const auto& h : table.host)
    if (h.end > step.start && h.start < step.end) spans.push_back(&h);
  std::sort(spans.begin(), spans.end(), [](const HostSpan* a, const HostSpan* b) {
    if (a->thread != b->thread) return a->thread < b->thread;
    return a->start != b->start ? a->start < b->start : a->end > b->end;
  });
  std::vector<std::int64_t> open_ends;
  std::uint32_t thread = UINT32_MAX;
  for (const HostSpan* h : spans) {
    if (h->thread != thread) open_ends.clear();
    thread = h->thread;
    while (!open_ends.empty() && open_ends.back() <= h->start) open_ends.pop_back();
    thread_rows.try_emplace(h->thread, 0);
    bars.push_back({std::max(h->start, step.start) - step.start, std::min(h->end, step.end) - step.start,
                    h->thread, static_cast<std::uint32_t>(open_ends.size()), h->name, BarKind::host});
    open_ends.push_back(h->end);
  }
}

}  // namespace

Timeline build_timeline(const EventTable& table, const StepSpan& step, std::size_t max_bars) {
  Timeline out;
  out.step = step.step;
  out.dur_ns = step.end - step.start;
  std::vector<TimelineBar> bars;  // row is a thread or lane index until renumbered
  std::map<std::uint32_t, std::uint32_t> thread_rows;
  add_host_bars(table, step, bars, thread_rows);
  const std::size_t host_bars = bars.size();
  std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> lane_rows;
  for (const auto& g : table.gpu) {
    if (g.end <= step.start || g.start >= step.end) continue;
    lane_rows.try_emplace(table.lanes[g.lane], g.lane);
    bars.push_back({std::max(g.start, step.start) - step.start, std::min(g.end, step.end) - step.start, g.lane,
                    0, g.name, bar_kind(g.kind)});
  }
  // Rows: the stepping thread first, other threads, then devices and streams.
  std::vector<std::uint32_t> thread_order{step.thread};
  for (const auto& [t, unused] : thread_rows)
    if (t != step.thread) thread_order.push_back(t);
  for (const auto t : thread_order) {
    thread_rows[t] = static_cast<std::uint32_t>(out.rows.size());
    const auto tid = table.threads[t].second;
    out.rows.push_back({"thread " + std::to_string(tid) + (t == step.thread ? " (steps)" : ""), 1});
  }
  std::unordered_map<std::uint32_t, std::uint32_t> lane_to_row;
  for (const auto& [lane, index] : lane_rows) {
    lane_to_row[index] = static_cast<std::uint32_t>(out.rows.size());
    out.rows.push_back({"GPU " + std::to_string(lane.first) + " stream " + std::to_string(lane.second), 1});
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    // The step itself is the stepping thread's first level, so its ops sit
    // one level down and the time outside any op shows as bare step.
    if (i < host_bars && bars[i].row == step.thread) ++bars[i].depth;
    bars[i].row = i < host_bars ? thread_rows[bars[i].row] : lane_to_row[bars[i].row];
  }

  const auto too_deep = [](const TimelineBar& b) { return b.depth >= kTimelineMaxDepth; };
  out.left_out = static_cast<std::uint64_t>(std::count_if(bars.begin(), bars.end(), too_deep));
  std::erase_if(bars, too_deep);
  if (bars.size() > max_bars) {
    std::stable_sort(bars.begin(), bars.end(),
                     [](const TimelineBar& a, const TimelineBar& b) { return a.end - a.start > b.end - b.start; });
    out.left_out += bars.size() - max_bars;
    bars.resize(max_bars);
  }
  std::unordered_map<std::uint32_t, std::uint32_t> names;
  for (auto& b : bars) {
    const auto [it, inserted] = names.try_emplace(b.name, static_cast<std::uint32_t>(out.names.size()));
    if (inserted) out.names.push_back(table.names[b.name]);
    b.name = it->second;
    out.rows[b.row].depth = std::max(out.rows[b.row].depth, b.depth + 1);
  }
  out.names.push_back("ProfilerStep#" + std::to_string(step.step));
  bars.insert(bars.begin(), {0, out.dur_ns, 0, 0, static_cast<std::uint32_t>(out.names.size() - 1), BarKind::step});
  out.bars = std::move(bars);
  return out;
}

}  // namespace chakrashim::tools::report
