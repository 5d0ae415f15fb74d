#include "report/scale_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "report/kernel_kind.h"

namespace chakrashim::tools::report {

namespace {

std::string ms(std::int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.3f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

const StepTime* find_step(const RankStats& r, std::uint64_t step) {
  for (const auto& s : r.steps)
    if (s.step == step) return &s;
  return nullptr;
}

StepFigures figures_of(const RankStats& r, const StepTime& s) {
  StepFigures f;
  f.rank = r.rank;
  const auto k = static_cast<std::size_t>(&s - r.steps.data());
  if (k < r.phases.size()) f.phases = r.phases[k];
  f.step_ns = s.dur_ns;
  f.ops_self_ns = s.ops_self_ns;
  f.outside_ops_ns = s.outside_ops_ns;
  if (r.gpu) {
    f.gpu_busy = r.gpu->busy_share();
    f.compute_ns = r.gpu->kind_ns[static_cast<int>(GpuKind::compute)];
    f.comm_ns = r.gpu->kind_ns[static_cast<int>(GpuKind::communication)];
    f.memory_ns = r.gpu->kind_ns[static_cast<int>(GpuKind::memory)];
    if (r.gpu->comm_ns > 0) f.comm_under_compute = r.gpu->overlap_share();
  }
  return f;
}

// The phase of the step (or the GPU kind) that grew most against the
// median rank's: what makes this rank slow.
std::string why_slow(const StepFigures& mine, const StepFigures& median) {
  std::vector<std::pair<std::int64_t, std::string>> parts;
  for (int p = 0; p < kPhases; ++p)
    parts.emplace_back(mine.phases[p] - median.phases[p], std::string(phase_name(static_cast<Phase>(p))));
  if (mine.comm_ns && median.comm_ns) parts.emplace_back(*mine.comm_ns - *median.comm_ns, "GPU communication");
  if (mine.compute_ns && median.compute_ns) parts.emplace_back(*mine.compute_ns - *median.compute_ns, "GPU compute");
  if (mine.memory_ns && median.memory_ns) parts.emplace_back(*mine.memory_ns - *median.memory_ns, "GPU memory");
  const auto it = std::max_element(parts.begin(), parts.end(), [](auto& a, auto& b) { return a.first < b.first; });
  if (it->first <= 0) return "no one part: longer throughout";
  return it->second + " " + ms(it->first);
}

std::string steps_text(const std::vector<std::uint64_t>& steps) {
  std::string out;
  for (const auto s : steps) out += (out.empty() ? "" : ",") + std::to_string(s);
  return out.empty() ? "none" : out;
}

std::uint64_t dropped_records(const RankStats& r) {
  if (!r.meta || !r.meta->is_object()) return 0;
  const auto d = r.meta->find("device_trace");
  if (d == r.meta->end() || !d->is_object()) return 0;
  const auto n = d->find("dropped_records");
  return n != d->end() && n->is_number_unsigned() ? n->get<std::uint64_t>() : 0;
}

void structure_notes(const GroupReport& g, ScaleSummary& out) {
  // What most ranks have is the norm; a rank that differs is named.
  std::map<std::vector<std::uint64_t>, std::uint32_t> step_sets;
  std::uint32_t with_gpu = 0, readable = 0;
  for (const auto& r : g.ranks) {
    if (!r.error.empty()) continue;
    ++readable;
    std::vector<std::uint64_t> steps;
    for (const auto& s : r.steps) steps.push_back(s.step);
    ++step_sets[steps];
    with_gpu += r.gpu.has_value();
  }
  std::vector<std::uint64_t> usual;
  std::uint32_t best = 0;
  for (const auto& [steps, n] : step_sets)
    if (n > best) usual = steps, best = n;
  const bool gpu_usual = 2 * with_gpu > readable;
  for (const auto& r : g.ranks) {
    std::vector<std::string> what;
    if (!r.error.empty()) {
      what.push_back("cannot report: " + r.error);
    } else {
      std::vector<std::uint64_t> steps;
      for (const auto& s : r.steps) steps.push_back(s.step);
      if (steps != usual) what.push_back("steps " + steps_text(steps) + " (most ranks: " + steps_text(usual) + ")");
      if (gpu_usual && !r.gpu) what.push_back("no GPU ops (most ranks have them)");
      if (!gpu_usual && r.gpu) what.push_back("GPU ops (most ranks have none)");
      for (const auto& s : r.steps)
        if (s.partial) what.push_back("step " + std::to_string(s.step) + " partial");
      if (const auto n = dropped_records(r); n > 0) what.push_back(std::to_string(n) + " CUPTI records dropped");
    }
    if (what.empty()) continue;
    std::string line;
    for (const auto& w : what) line += (line.empty() ? "" : "; ") + w;
    out.differ.push_back({r.rank, line});
  }
}

}  // namespace

std::int64_t percentile(const std::vector<std::int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto n = static_cast<double>(sorted.size());
  std::size_t k = static_cast<std::size_t>(std::ceil(p * n));
  k = std::clamp<std::size_t>(k, 1, sorted.size());
  return sorted[k - 1];
}

ScaleSummary summarize_group(const GroupReport& g, std::size_t top_ranks, std::size_t top_ops) {
  ScaleSummary out;
  out.group = g.label;
  out.ranks = static_cast<std::uint32_t>(g.ranks.size());
  // Per step: each readable rank's complete step time.
  std::map<std::uint64_t, std::vector<std::pair<std::int64_t, const RankStats*>>> by_step;
  for (const auto& r : g.ranks) {
    if (!r.error.empty()) continue;
    ++out.readable;
    for (const auto& s : r.steps)
      if (!s.partial) by_step[s.step].emplace_back(s.dur_ns, &r);
  }
  std::map<std::uint64_t, const RankStats*> median_rank;
  std::map<std::uint64_t, std::int64_t> median_ns;
  for (auto& [step, list] : by_step) {
    std::stable_sort(list.begin(), list.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<std::int64_t> times;
    for (const auto& [t, r] : list) times.push_back(t);
    StepDistribution d;
    d.step = step;
    d.ranks = static_cast<std::uint32_t>(times.size());
    d.min_ns = times.front();
    d.max_ns = times.back();
    d.median_ns = percentile(times, 0.5);
    d.p95_ns = percentile(times, 0.95);
    // Through a copy: clang 14 cannot capture a structured binding.
    const auto this_step = step;
    d.setup = std::any_of(list.begin(), list.end(), [&](const auto& x) {
      const StepTime* st = find_step(*x.second, this_step);
      return st && st->setup;
    });
    out.steps.push_back(d);
    median_rank[step] = list[(list.size() - 1) / 2].second;
    median_ns[step] = d.median_ns;
  }
  // Each rank's worst step against that step's median; step 0 (setup) is
  // slow everywhere and says nothing about one rank.
  for (const auto& r : g.ranks) {
    if (!r.error.empty()) continue;
    std::optional<SlowRank> worst;
    for (const auto& s : r.steps) {
      if (!counted_step(s) || median_ns[s.step] <= 0) continue;
      const double over = static_cast<double>(s.dur_ns) / static_cast<double>(median_ns[s.step]) - 1.0;
      if (over > kSlowShare && (!worst || over > worst->over_median)) {
        SlowRank slow;
        slow.step = s.step;
        slow.over_median = over;
        slow.figures = figures_of(r, s);
        const RankStats* m = median_rank[s.step];
        if (const StepTime* ms = find_step(*m, s.step)) slow.median = figures_of(*m, *ms);
        slow.why = why_slow(slow.figures, slow.median);
        worst = slow;
      }
    }
    if (worst) out.slow.push_back(*worst);
  }
  std::stable_sort(out.slow.begin(), out.slow.end(), [](const SlowRank& a, const SlowRank& b) {
    return a.over_median > b.over_median;
  });
  out.slow_total = out.slow.size();
  if (out.slow.size() > top_ranks) out.slow.resize(top_ranks);
  structure_notes(g, out);
  // Top ops: self time summed over ranks (each rank keeps its top 100).
  std::map<std::string, SummaryOp> ops;
  for (const auto& r : g.ranks) {
    for (const auto& op : r.ops) {
      SummaryOp& o = ops[op.name];
      o.name = op.name;
      o.self_ns += op.totals.self_ns;
      o.calls += op.totals.calls;
      ++o.ranks;
    }
  }
  for (auto& [name, op] : ops) out.ops.push_back(std::move(op));
  std::stable_sort(out.ops.begin(), out.ops.end(), [](const SummaryOp& a, const SummaryOp& b) { return a.self_ns > b.self_ns; });
  if (out.ops.size() > top_ops) out.ops.resize(top_ops);
  return out;
}

}  // namespace chakrashim::tools::report
