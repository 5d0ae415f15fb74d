#include "simulate/sim_compare.h"

#include <cmath>
#include <cstdio>
#include <regex>

namespace chakrashim::tools::simulate {

namespace {

constexpr std::size_t kListed = 8;  // ranks named per kind of problem

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string or_dash(const std::optional<std::uint64_t>& ns) { return ns ? duration_text(*ns) : "-"; }

std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// Appends "rank A: ...", at most kListed, then "and N more ranks ...".
void add_listed(std::vector<std::string>& out, const std::vector<std::string>& lines, const std::string& more) {
  for (std::size_t i = 0; i < lines.size() && i < kListed; ++i) out.push_back(lines[i]);
  if (lines.size() > kListed) out.push_back(std::to_string(lines.size() - kListed) + " more ranks " + more);
}

}  // namespace

std::map<std::uint64_t, std::uint64_t> finished_cycles(std::string_view output) {
  static const std::regex kFinished(R"(sys\[([0-9]{1,9})\] finished, ([0-9]{1,19}) cycles)");
  std::map<std::uint64_t, std::uint64_t> out;
  const std::string text(output);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kFinished); it != std::sregex_iterator(); ++it)
    out[std::stoull((*it)[1].str())] = std::stoull((*it)[2].str());
  return out;
}

std::vector<RankRow> compare(const std::vector<RankWindow>& ranks,
                             const std::map<std::uint64_t, std::uint64_t>& finished, double tolerance) {
  std::vector<RankRow> rows;
  for (const RankWindow& w : ranks) {
    RankRow r;
    r.rank = w.rank;
    r.captured_ns = w.window_ns;
    r.steps = w.window_steps;
    r.cost_ns = w.cost_taken_ns;
    if (w.window_ns) {
      const std::uint64_t cost = w.cost_taken_ns.value_or(0);
      r.expected_ns = *w.window_ns > cost ? *w.window_ns - cost : 0;
    }
    if (const auto f = finished.find(w.rank); f != finished.end()) r.simulated_ns = f->second;
    if (r.expected_ns && r.simulated_ns && *r.expected_ns > 0) {
      r.ratio = static_cast<double>(*r.simulated_ns) / static_cast<double>(*r.expected_ns);
      r.beyond = std::fabs(*r.ratio - 1.0) > tolerance;
    }
    rows.push_back(r);
  }
  return rows;
}

std::vector<std::string> table_lines(const std::vector<RankRow>& rows) {
  std::vector<std::string> out;
  out.push_back("rank    captured  steps  cost taken out    expected     simulated   ratio");
  for (const RankRow& r : rows) {
    std::string line = pad(std::to_string(r.rank), 4);
    line += pad(or_dash(r.captured_ns), 12);
    line += pad(r.steps ? std::to_string(*r.steps) : "-", 7);
    line += pad(or_dash(r.cost_ns), 16);
    line += pad(or_dash(r.expected_ns), 12);
    line += pad(r.simulated_ns ? duration_text(*r.simulated_ns) : "not finished", 14);
    line += pad(r.ratio ? fixed(*r.ratio, 3) : "-", 8);
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> problem_lines(const std::vector<RankRow>& rows, double tolerance) {
  std::vector<std::string> unfinished, beyond, unknown;
  const std::string limit = "±" + fixed(tolerance * 100, 0) + "%";
  for (const RankRow& r : rows) {
    const std::string rank = "rank " + std::to_string(r.rank);
    if (!r.simulated_ns) {
      unfinished.push_back(rank + " did not finish in ASTRA-sim (no \"sys[" + std::to_string(r.rank) +
                           "] finished\" line): its simulated time is unknown");
    } else if (!r.captured_ns) {
      unknown.push_back(rank +
                        "'s .et has no captured window (written by another tool, from an ET+ file, or from a "
                        "capture without ProfilerStep#N spans): nothing to compare its simulated time with");
    } else if (r.beyond) {
      std::string why = "captured " + duration_text(*r.captured_ns);
      if (r.cost_ns && *r.cost_ns > 0) why += " less " + duration_text(*r.cost_ns) + " of recording cost";
      beyond.push_back(rank + " simulated to " + fixed(*r.ratio, 3) + " of its expected window (" + why +
                       "): beyond " + limit + " (docs/simulate.md, \"When the simulation does not match\")");
    }
  }
  std::vector<std::string> out;
  add_listed(out, unfinished, "did not finish");
  add_listed(out, beyond, "simulated beyond " + limit + " of their expected window");
  add_listed(out, unknown, "have no captured window");
  return out;
}

std::string duration_text(std::uint64_t ns) {
  const double v = static_cast<double>(ns);
  if (ns >= 10'000'000'000ULL) return fixed(v / 1e9, 2) + " s";
  if (ns >= 1'000'000'000ULL) return fixed(v / 1e9, 3) + " s";
  if (ns >= 1'000'000ULL) return fixed(v / 1e6, 2) + " ms";
  if (ns >= 1'000ULL) return fixed(v / 1e3, 1) + " us";
  return std::to_string(ns) + " ns";
}

}  // namespace chakrashim::tools::simulate
