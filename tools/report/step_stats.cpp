#include "report/step_stats.h"

#include <algorithm>
#include <set>

namespace chakrashim::tools::report {

namespace {

struct Node {
  std::int64_t start, end;
  std::uint32_t thread;
  bool is_step;
  std::size_t index;  // into the result vector
};

// Parents before children: by thread, then start, then the longer first;
// a step before an op of exactly its bounds, so the step stays the parent.
bool nests_before(const Node& a, const Node& b) {
  if (a.thread != b.thread) return a.thread < b.thread;
  if (a.start != b.start) return a.start < b.start;
  if (a.end != b.end) return a.end > b.end;
  return a.is_step && !b.is_step;
}

}  // namespace

std::vector<std::int64_t> self_times(const std::vector<HostSpan>& spans, const std::vector<StepSpan>& steps,
                                     std::vector<std::int32_t>* step_of) {
  std::vector<Node> nodes;
  nodes.reserve(spans.size() + steps.size());
  for (std::size_t i = 0; i < spans.size(); ++i)
    nodes.push_back({spans[i].start, spans[i].end, spans[i].thread, false, i});
  for (std::size_t k = 0; k < steps.size(); ++k)
    nodes.push_back({steps[k].start, steps[k].end, steps[k].thread, true, spans.size() + k});
  std::sort(nodes.begin(), nodes.end(), nests_before);

  std::vector<std::int64_t> self(nodes.size());
  for (const auto& n : nodes) self[n.index] = n.end - n.start;
  if (step_of != nullptr) step_of->assign(spans.size(), -1);
  struct Open {
    std::int64_t end;
    std::size_t index;
    std::int32_t step;
  };
  std::vector<Open> stack;
  std::uint32_t thread = 0;
  for (const auto& n : nodes) {
    if (stack.empty() || n.thread != thread) stack.clear();
    thread = n.thread;
    while (!stack.empty() && stack.back().end <= n.start) stack.pop_back();
    std::int32_t step = -1;
    if (!stack.empty()) {
      // A child that runs past its parent (a broken trace) only takes what
      // it covers of the parent.
      self[stack.back().index] -= std::min(n.end, stack.back().end) - n.start;
      step = stack.back().step;
    }
    if (n.is_step) step = static_cast<std::int32_t>(n.index - spans.size());
    else if (step_of != nullptr) (*step_of)[n.index] = step;
    stack.push_back({n.end, n.index, step});
  }
  return self;
}

StepSummary summarize(const std::vector<StepTime>& steps) {
  const bool any_counted = std::any_of(steps.begin(), steps.end(), [](const StepTime& s) { return counted_step(s); });
  StepSummary out;
  std::int64_t sum = 0;
  for (const auto& s : steps) {
    if (!counted_step(s) && any_counted) continue;
    out.min_ns = out.count == 0 ? s.dur_ns : std::min(out.min_ns, s.dur_ns);
    out.max_ns = out.count == 0 ? s.dur_ns : std::max(out.max_ns, s.dur_ns);
    sum += s.dur_ns;
    ++out.count;
  }
  if (out.count > 0) out.mean_ns = sum / static_cast<std::int64_t>(out.count);
  return out;
}

std::vector<StepSpan> unique_steps(std::vector<StepSpan> steps) {
  std::set<std::uint64_t> seen;
  std::erase_if(steps, [&seen](const StepSpan& s) { return !seen.insert(s.step).second; });
  std::sort(steps.begin(), steps.end(), [](const StepSpan& a, const StepSpan& b) { return a.start < b.start; });
  return steps;
}

HostStats host_stats(const EventTable& table, std::optional<std::uint64_t> partial_step) {
  const std::vector<StepSpan> steps = unique_steps(table.steps);
  std::vector<std::int32_t> step_of;
  const std::vector<std::int64_t> self = self_times(table.host, steps, &step_of);

  HostStats out;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const auto& s = steps[k];
    out.steps.push_back({s.step, s.start, s.end - s.start, 0, self[table.host.size() + k],
                         partial_step && *partial_step == s.step});
  }
  std::vector<OpTotal> by_name(table.names.size());
  for (std::size_t i = 0; i < table.host.size(); ++i) {
    const HostSpan& h = table.host[i];
    OpTotal& op = by_name[h.name];
    op.name = h.name;
    ++op.calls;
    op.self_ns += self[i];
    op.total_ns += h.end - h.start;
    if (step_of[i] >= 0) {
      op.in_steps_self_ns += self[i];
      out.steps[static_cast<std::size_t>(step_of[i])].ops_self_ns += self[i];
    }
  }
  for (auto& op : by_name)
    if (op.calls > 0) out.ops.push_back(op);
  std::sort(out.ops.begin(), out.ops.end(), [](const OpTotal& a, const OpTotal& b) {
    return a.self_ns != b.self_ns ? a.self_ns > b.self_ns : a.name < b.name;
  });
  out.summary = summarize(out.steps);
  return out;
}

}  // namespace chakrashim::tools::report
