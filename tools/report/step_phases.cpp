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
// covers it; then forward where a backward pass follows in the step, then
// the optimizer's step, then forward before it (no backward pass), then
// other.
enum Layer : int { kComm, kData, kBackward, kZeroGrad, kOptimizer, kLayers };

struct Edge {
  std::int64_t at;
  int layer;
  int delta;
};

// `forward_end`: the end of the step's last backward pass (where there is
// one): what runs before it, outside the layers above, is the forward of
// some micro-batch, wherever it sits (inside the optimizer step's closure,
// as Lightning runs it). `before_optimizer`: without a backward pass, the
// forward ends where the optimizer's step begins.
PhaseTimes phases_of_step(const std::vector<std::pair<std::int64_t, std::int64_t>> (&layers)[kLayers],
                          std::int64_t start, std::int64_t end, std::int64_t forward_end,
                          std::int64_t before_optimizer) {
  std::vector<Edge> edges;
  for (int l = 0; l < kLayers; ++l)
    for (const auto& [s, e] : layers[l]) {
      edges.push_back({s, l, +1});
      edges.push_back({e, l, -1});
    }
  edges.push_back({forward_end, kLayers, 0});  // boundaries only
  edges.push_back({before_optimizer, kLayers, 0});
  edges.push_back({end, kLayers, 0});
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.at < b.at; });
  PhaseTimes out{};
  int open[kLayers] = {};
  std::int64_t at = start;
  for (const auto& edge : edges) {
    const std::int64_t to = std::clamp(edge.at, start, end);
    if (to > at) {
      Phase p = Phase::other;
      if (open[kComm] > 0) p = Phase::communication;
      else if (open[kData] > 0) p = Phase::data;
      else if (open[kBackward] > 0) p = Phase::backward;
      else if (open[kZeroGrad] > 0) p = Phase::optimizer;
      else if (at < forward_end) p = Phase::forward;
      else if (open[kOptimizer] > 0) p = Phase::optimizer;
      else if (at < before_optimizer) p = Phase::forward;
      out[static_cast<int>(p)] += to - at;
      at = to;
    }
    if (edge.layer < kLayers) open[edge.layer] += edge.delta;
  }
  return out;
}

// The step's backward passes: its autograd spans, by start, joined while no
// other work starts between them (an op that starts after the pass so far
// ended, outside it: a micro-batch's forward). Collectives and the
// optimizer's records do not split a pass (DDP's reducer runs inside it).
std::vector<std::pair<std::int64_t, std::int64_t>> backward_passes(const std::vector<const HostSpan*>& spans,
                                                                    const std::vector<SpanRole>& roles) {
  std::vector<std::pair<std::int64_t, std::int64_t>> passes;
  bool open = false;
  for (const HostSpan* h : spans) {
    const SpanRole role = roles[h->name];
    if (role == SpanRole::backward) {
      if (open) {
        passes.back().second = std::max(passes.back().second, h->end);
      } else {
        passes.emplace_back(h->start, h->end);
        open = true;
      }
    } else if (open && (role == SpanRole::none || role == SpanRole::data) && h->start >= passes.back().second) {
      open = false;
    }
  }
  return passes;
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
  // The host spans, by start: backward passes end where other work starts.
  std::vector<const HostSpan*> spans;
  for (const auto& h : table.host) spans.push_back(&h);
  std::sort(spans.begin(), spans.end(), [](const HostSpan* a, const HostSpan* b) { return a->start < b->start; });
  // A span reaches into a step only if it starts at most this long before
  // it: each step looks at the spans that can touch it, not at all of them.
  std::int64_t longest = 0;
  for (const HostSpan* h : spans)
    if (roles[h->name] != SpanRole::none) longest = std::max(longest, h->end - h->start);

  StepPhases out;
  for (const auto& step : steps) {
    std::vector<std::pair<std::int64_t, std::int64_t>> layers[kLayers];
    std::vector<const HostSpan*> mine;  // the stepping thread's, in the step
    std::int64_t opt_first = std::numeric_limits<std::int64_t>::max();
    std::int64_t outer_comm_end = std::numeric_limits<std::int64_t>::min();
    const auto first = std::lower_bound(spans.begin(), spans.end(), step.start - longest,
                                        [](const HostSpan* h, std::int64_t t) { return h->start < t; });
    for (auto it = first; it != spans.end() && (*it)->start < step.end; ++it) {
      const HostSpan* h = *it;
      if (h->thread != step.thread || h->end <= step.start) continue;
      mine.push_back(h);
      const std::int64_t s = std::max(h->start, step.start), e = std::min(h->end, step.end);
      const std::string_view name = table.names[h->name];
      switch (roles[h->name]) {
        case SpanRole::communication:
          layers[kComm].emplace_back(s, e);
          if (h->start >= outer_comm_end) {  // not inside the collective before it
            out.collectives.push_back({step.step, h->start, h->end, table.names[h->name]});
            outer_comm_end = h->end;
          }
          break;
        case SpanRole::optimizer:
          layers[starts_with(name, "Optimizer.zero_grad#") ? kZeroGrad : kOptimizer].emplace_back(s, e);
          opt_first = std::min(opt_first, s);
          break;
        case SpanRole::data: layers[kData].emplace_back(s, e); break;
        case SpanRole::backward:
        case SpanRole::none: break;
      }
    }
    std::int64_t forward_end = step.start;
    for (const auto& [s, e] : backward_passes(mine, roles)) {
      layers[kBackward].emplace_back(std::max(s, step.start), std::min(e, step.end));
      forward_end = std::max(forward_end, std::min(e, step.end));
    }
    const std::int64_t before_optimizer = layers[kBackward].empty() ? std::min(opt_first, step.end) : step.start;
    out.per_step.push_back(phases_of_step(layers, step.start, step.end, forward_end, before_optimizer));
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
