#include "report/step_phases.h"

#include <algorithm>
#include <limits>

#include "report/module_totals.h"

namespace chakrashim::tools::report {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "AddmmBackward0", "MulBackward1": autograd's node names.
bool is_backward_node(std::string_view name) {
  std::size_t digits = 0;
  while (digits < name.size() && name[name.size() - 1 - digits] >= '0' && name[name.size() - 1 - digits] <= '9')
    ++digits;
  if (digits == 0) return false;
  const std::string_view stem = name.substr(0, name.size() - digits);
  return stem.size() > 8 && stem.substr(stem.size() - 8) == "Backward";
}

// The sweep's layers, highest first: an instant counts in the first that
// covers it.
enum Layer : int { kComm, kOptimizer, kData, kBackward, kLayers };

struct Edge {
  std::int64_t at;
  int layer;
  int delta;
};

PhaseTimes phases_of_step(const std::vector<std::pair<std::int64_t, std::int64_t>> (&layers)[kLayers],
                          std::int64_t start, std::int64_t end, std::int64_t forward_end) {
  std::vector<Edge> edges;
  for (int l = 0; l < kLayers; ++l)
    for (const auto& [s, e] : layers[l]) {
      edges.push_back({s, l, +1});
      edges.push_back({e, l, -1});
    }
  edges.push_back({forward_end, kLayers, 0});  // a boundary only
  edges.push_back({end, kLayers, 0});
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.at < b.at; });
  PhaseTimes out{};
  int open[kLayers] = {};
  std::int64_t at = start;
  for (const auto& edge : edges) {
    const std::int64_t to = std::clamp(edge.at, start, end);
    if (to > at) {
      Phase p = at < forward_end ? Phase::forward : Phase::other;
      if (open[kComm] > 0) p = Phase::communication;
      else if (open[kOptimizer] > 0) p = Phase::optimizer;
      else if (open[kData] > 0) p = Phase::data;
      else if (open[kBackward] > 0) p = Phase::backward;
      out[static_cast<int>(p)] += to - at;
      at = to;
    }
    if (edge.layer < kLayers) open[edge.layer] += edge.delta;
  }
  return out;
}

}  // namespace

std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::optimizer: return "optimizer";
    case Phase::data: return "data";
    case Phase::communication: return "communication";
    case Phase::other: return "other";
  }
  return "other";
}

SpanRole role_of(std::string_view name) {
  if (starts_with(name, "Optimizer.step#") || starts_with(name, "Optimizer.zero_grad#")) return SpanRole::optimizer;
  if (starts_with(name, "enumerate(DataLoader)#")) return SpanRole::data;
  if (starts_with(name, "c10d::") || starts_with(name, "nccl:") || starts_with(name, "gloo:") ||
      name == "record_param_comms")
    return SpanRole::communication;
  if (is_backward_node(name) || starts_with(name, "autograd::engine::evaluate_function: ") ||
      name == "torch::autograd::AccumulateGrad")
    return SpanRole::backward;
  return SpanRole::none;
}

StepPhases step_phases(const EventTable& table, const std::vector<StepSpan>& steps) {
  std::vector<SpanRole> roles(table.names.size());
  for (std::size_t i = 0; i < table.names.size(); ++i) roles[i] = role_of(table.names[i]);
  // The stepping threads' spans that mark something, by start.
  std::vector<const HostSpan*> marked;
  for (const auto& h : table.host)
    if (roles[h.name] != SpanRole::none) marked.push_back(&h);
  std::sort(marked.begin(), marked.end(), [](const HostSpan* a, const HostSpan* b) { return a->start < b->start; });
  // A span reaches into a step only if it starts at most this long before
  // it: each step looks at the spans that can touch it, not at all of them.
  std::int64_t longest = 0;
  for (const HostSpan* h : marked) longest = std::max(longest, h->end - h->start);

  StepPhases out;
  for (const auto& step : steps) {
    std::vector<std::pair<std::int64_t, std::int64_t>> layers[kLayers];
    bool backward = false;
    std::int64_t bwd_first = std::numeric_limits<std::int64_t>::max(), bwd_last = 0;
    std::int64_t opt_first = std::numeric_limits<std::int64_t>::max();
    std::int64_t outer_comm_end = std::numeric_limits<std::int64_t>::min();
    const auto first = std::lower_bound(marked.begin(), marked.end(), step.start - longest,
                                        [](const HostSpan* h, std::int64_t t) { return h->start < t; });
    for (auto it = first; it != marked.end() && (*it)->start < step.end; ++it) {
      const HostSpan* h = *it;
      if (h->thread != step.thread || h->end <= step.start) continue;
      const std::int64_t s = std::max(h->start, step.start), e = std::min(h->end, step.end);
      switch (roles[h->name]) {
        case SpanRole::communication:
          layers[kComm].emplace_back(s, e);
          if (h->start >= outer_comm_end) {  // not inside the collective before it
            out.collectives.push_back({step.step, h->start, h->end, table.names[h->name]});
            outer_comm_end = h->end;
          }
          break;
        case SpanRole::optimizer:
          layers[kOptimizer].emplace_back(s, e);
          opt_first = std::min(opt_first, s);
          break;
        case SpanRole::data: layers[kData].emplace_back(s, e); break;
        case SpanRole::backward:
          backward = true;
          bwd_first = std::min(bwd_first, s);
          bwd_last = std::max(bwd_last, e);
          break;
        case SpanRole::none: break;
      }
    }
    if (backward) layers[kBackward].emplace_back(bwd_first, bwd_last);
    const std::int64_t forward_end = backward ? bwd_first : std::min(opt_first, step.end);
    out.per_step.push_back(phases_of_step(layers, step.start, step.end, forward_end));
  }
  return out;
}

std::vector<ScopeTotal> scope_totals(const EventTable& table) {
  std::vector<ScopeTotal> by_name(table.names.size());
  for (const auto& h : table.host) {
    const std::string& name = table.names[h.name];
    // "## process_group:init ##" and torch's other "## ... ##" records are
    // bookkeeping, not work of the job's.
    if (!h.annotation || role_of(name) != SpanRole::none || starts_with(name, "## ") ||
        is_module_scope(name))
      continue;
    ScopeTotal& t = by_name[h.name];
    t.name = h.name;
    ++t.calls;
    t.total_ns += h.end - h.start;
  }
  return called_by_total(by_name);
}

}  // namespace chakrashim::tools::report
