#include "report/svg_charts.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace chakrashim::tools::report {

namespace {

constexpr std::array<std::string_view, 10> kPalette = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                                       "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr const char* kFont = "font-family=\"sans-serif\" font-size=\"12\"";

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// 2.5 -> "2.5"   3 -> "3"   0.125 -> "0.125"
std::string tick_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string text(double x, double y, std::string_view s, std::string_view anchor = "start") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + std::string(anchor) + "\">" +
         xml_escape(s) + "</text>\n";
}

std::string rect(double x, double y, double w, double h, std::string_view fill, std::string_view title) {
  return "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(w, 0.5)) + "\" height=\"" +
         num(h) + "\" fill=\"" + std::string(fill) + "\"><title>" + xml_escape(title) + "</title></rect>\n";
}

std::string line(double x1, double y1, double x2, double y2, std::string_view stroke = "#ccc") {
  return "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) +
         "\" stroke=\"" + std::string(stroke) + "\"/>\n";
}

std::string open_svg(double w, double h) {
  // Inline SVG in HTML needs no xmlns, and the page then names no URL at all.
  return "<svg width=\"" + num(w) + "\" height=\"" + num(h) +
         "\" viewBox=\"0 0 " + num(w) + " " + num(h) + "\" " + kFont + ">\n";
}

std::string ms(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f ms", v);
  return buf;
}

// Legend entries in a row from (x, y), wrapping at `width`; returns the
// height used.
double legend(std::string& out, const std::vector<std::string>& names, const std::vector<std::string>& colors,
              double x, double y, double width) {
  double cx = x, cy = y;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string label = names[i].size() > 48 ? names[i].substr(0, 45) + "..." : names[i];
    const double w = 24 + 7.0 * static_cast<double>(label.size());
    if (cx + w > x + width && cx > x) {
      cx = x;
      cy += 18;
    }
    out += rect(cx, cy - 10, 12, 12, colors[i], names[i]);
    out += text(cx + 16, cy, label);
    cx += w;
  }
  return cy - y + 18;
}

std::string host_depth_color(std::uint32_t depth) {
  return std::string(palette_color(depth % 5 == 0 ? 0 : depth % 5 + 4));
}

}  // namespace

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string_view palette_color(std::size_t i) { return kPalette[i % kPalette.size()]; }

double nice_tick(double max, int count) {
  if (!(max > 0) || count <= 0) return 1;
  const double raw = max / count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0})
    if (raw <= m * mag * 1.0000001) return m * mag;
  return 10 * mag;
}

std::string grouped_bar_chart(const GroupedBars& c) {
  constexpr double kWidth = 1000, kPlotH = 260, kLeft = 70, kTop = 20, kRight = 20;
  double max = 0;
  for (const auto& s : c.values)
    for (const double v : s) max = std::max(max, v);
  const double tick = nice_tick(max, 5);
  const double top = std::max(tick, std::ceil(max / tick) * tick);
  std::vector<std::string> colors;
  for (std::size_t i = 0; i < c.series.size(); ++i) colors.emplace_back(palette_color(i));
  std::string body;
  const double base = kTop + kPlotH, plot_w = kWidth - kLeft - kRight;
  for (double t = 0; t <= top * 1.0000001; t += tick) {
    const double y = base - kPlotH * t / top;
    body += line(kLeft, y, kWidth - kRight, y) + text(kLeft - 6, y + 4, tick_text(t), "end");
  }
  const double group_w = plot_w / std::max<std::size_t>(1, c.categories.size());
  const double bar_w = group_w * 0.8 / std::max<std::size_t>(1, c.series.size());
  for (std::size_t g = 0; g < c.categories.size(); ++g) {
    const double gx = kLeft + g * group_w + group_w * 0.1;
    for (std::size_t s = 0; s < c.series.size(); ++s) {
      const double v = c.values[s][g];
      if (v < 0) continue;
      const double h = kPlotH * v / top;
      const bool mark = s < c.marked.size() && g < c.marked[s].size() && c.marked[s][g];
      const std::string title = c.series[s] + ", " + c.categories[g] + ": " + ms(v) + (mark ? " (" + c.mark_label + ")" : "");
      if (mark) {
        body += "<rect x=\"" + num(gx + s * bar_w) + "\" y=\"" + num(base - h) + "\" width=\"" +
                num(std::max(bar_w * 0.92, 0.5)) + "\" height=\"" + num(h) + "\" fill=\"" + colors[s] +
                "\" fill-opacity=\"0.35\" stroke=\"" + colors[s] + "\" stroke-dasharray=\"3 2\"><title>" +
                xml_escape(title) + "</title></rect>\n";
      } else {
        body += rect(gx + s * bar_w, base - h, bar_w * 0.92, h, colors[s], title);
      }
    }
    body += text(gx + group_w * 0.4, base + 16, c.categories[g], "middle");
  }
  body += line(kLeft, base, kWidth - kRight, base, "#333");
  body += "<text transform=\"translate(16 " + num(kTop + kPlotH / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
          xml_escape(c.y_label) + "</text>\n";
  std::string legend_svg;
  double legend_h = legend(legend_svg, c.series, colors, kLeft, base + 40, plot_w);
  const bool any_mark = std::any_of(c.marked.begin(), c.marked.end(),
                                    [](const auto& v) { return std::find(v.begin(), v.end(), true) != v.end(); });
  if (any_mark) {
    legend_svg += text(kLeft, base + 40 + legend_h, "faint dashed bars: " + c.mark_label +
                                                        " (left out of mean, min and max)");
    legend_h += 18;
  }
  return open_svg(kWidth, base + 30 + legend_h + 6) + body + legend_svg + "</svg>\n";
}

std::string stacked_bar_chart(const StackedBars& c) {
  constexpr double kWidth = 1000, kLeft = 90, kRight = 20, kTop = 10, kRowH = 26;
  double max = 0;
  for (const auto& row : c.values) {
    double total = 0;
    for (const double v : row) total += v;
    max = std::max(max, total);
  }
  const double tick = nice_tick(max, 5);
  const double top = std::max(tick, std::ceil(max / tick) * tick);
  const double plot_w = kWidth - kLeft - kRight, base = kTop + kRowH * c.rows.size();
  std::string body;
  for (double t = 0; t <= top * 1.0000001; t += tick) {
    const double x = kLeft + plot_w * t / top;
    body += line(x, kTop, x, base) + text(x, base + 14, tick_text(t), "middle");
  }
  for (std::size_t r = 0; r < c.rows.size(); ++r) {
    const double y = kTop + r * kRowH;
    body += text(kLeft - 8, y + kRowH * 0.62, c.rows[r], "end");
    double x = kLeft;
    for (std::size_t s = 0; s < c.segments.size(); ++s) {
      const double v = c.values[r][s];
      if (v <= 0) continue;
      const double w = plot_w * v / top;
      body += rect(x, y + 4, w, kRowH - 8, c.colors[s], c.rows[r] + ", " + c.segments[s] + ": " + ms(v));
      x += w;
    }
  }
  body += text(kLeft + plot_w / 2, base + 30, "ms", "middle");
  std::string legend_svg;
  const double legend_h = legend(legend_svg, c.segments, c.colors, kLeft, base + 52, plot_w);
  return open_svg(kWidth, base + 40 + legend_h + 6) + body + legend_svg + "</svg>\n";
}

std::string timeline_chart(const Timeline& t) {
  constexpr double kWidth = 1300, kLeft = 170, kRight = 20, kTop = 24, kSubRowH = 14, kGap = 8;
  const double plot_w = kWidth - kLeft - kRight;
  std::vector<double> row_y;
  double y = kTop;
  for (const auto& row : t.rows) {
    row_y.push_back(y);
    y += row.depth * kSubRowH + kGap;
  }
  const double bottom = y;
  const double dur_ms = std::max(1e-6, static_cast<double>(t.dur_ns) / 1e6);
  const double tick = nice_tick(dur_ms, 10);
  std::string body;
  bool any_gpu = false;
  for (double v = 0; v <= dur_ms * 1.0000001; v += tick) {
    const double x = kLeft + plot_w * v / dur_ms;
    body += line(x, kTop - 4, x, bottom) + text(x, kTop - 8, tick_text(v), "middle");
  }
  body += text(kWidth - kRight, bottom + 16, "ms from the start of step " + std::to_string(t.step), "end");
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    body += text(kLeft - 8, row_y[r] + 11, t.rows[r].label, "end");
    if (r > 0) body += line(4, row_y[r] - kGap / 2, kWidth - kRight, row_y[r] - kGap / 2, "#eee");
  }
  for (const auto& b : t.bars) {
    const double x = kLeft + plot_w * static_cast<double>(b.start) / static_cast<double>(t.dur_ns);
    const double w = plot_w * static_cast<double>(b.end - b.start) / static_cast<double>(t.dur_ns);
    std::string_view fill;
    switch (b.kind) {
      case BarKind::step: fill = "#9aa7b8"; break;
      case BarKind::host: fill = host_depth_color(b.depth); break;
      case BarKind::compute: fill = palette_color(2); break;
      case BarKind::communication: fill = palette_color(3); break;
      case BarKind::memory: fill = palette_color(1); break;
    }
    any_gpu = any_gpu || (b.kind != BarKind::step && b.kind != BarKind::host);
    body += rect(x, row_y[b.row] + b.depth * kSubRowH, w, kSubRowH - 2, fill,
                 t.names[b.name] + ": " + ms(static_cast<double>(b.end - b.start) / 1e6));
  }
  // The legend says what the colours are: host ops by nesting depth (the
  // colour cycles every five levels), and GPU kinds only where GPU rows are.
  std::vector<std::string> names = {"step", "host op, depth 0", "depth 1", "depth 2", "depth 3", "depth 4"};
  std::vector<std::string> colors = {"#9aa7b8"};
  for (std::uint32_t d = 0; d < 5; ++d) colors.emplace_back(host_depth_color(d));
  if (any_gpu) {
    names.insert(names.end(), {"GPU compute", "GPU communication", "GPU memory"});
    colors.insert(colors.end(), {std::string(palette_color(2)), std::string(palette_color(3)), std::string(palette_color(1))});
  }
  std::string legend_svg;
  const double legend_h = legend(legend_svg, names, colors, kLeft, bottom + 40, plot_w);
  return open_svg(kWidth, bottom + 30 + legend_h + 6) + body + legend_svg + "</svg>\n";
}

std::string_view heat_color(double ratio) {
  if (!(ratio > 1.05)) return "#deebf7";
  if (ratio <= 1.10) return "#9ecae1";
  if (ratio <= 1.25) return "#fdd49e";
  if (ratio <= 1.5) return "#fc8d59";
  return "#b30000";
}

std::string heatmap_chart(const Heatmap& c) {
  constexpr double kLeft = 80, kTop = 20, kRowH = 22, kPlotW = 1100, kRight = 20;
  const double cell_w = std::clamp(kPlotW / std::max<std::size_t>(1, c.ranks.size()), 2.0, 40.0);
  const double plot_w = cell_w * static_cast<double>(c.ranks.size());
  const double bottom = kTop + kRowH * static_cast<double>(c.steps.size());
  std::string body;
  for (std::size_t k = 0; k < c.steps.size(); ++k)
    body += text(kLeft - 8, kTop + kRowH * static_cast<double>(k) + 15, "step " + std::to_string(c.steps[k]), "end");
  // Rank ticks: about ten labels whatever the count.
  const std::size_t every = std::max<std::size_t>(1, static_cast<std::size_t>(nice_tick(static_cast<double>(c.ranks.size()), 10)));
  for (std::size_t i = 0; i < c.ranks.size(); i += every) {
    const double x = kLeft + cell_w * (static_cast<double>(i) + 0.5);
    body += line(x, bottom, x, bottom + 4, "#333") + text(x, bottom + 16, std::to_string(c.ranks[i]), "middle");
  }
  body += text(kLeft + plot_w / 2, bottom + 32, "rank", "middle");
  for (std::size_t i = 0; i < c.ranks.size(); ++i) {
    for (std::size_t k = 0; k < c.steps.size(); ++k) {
      const double v = c.ms[i][k];
      if (v < 0) continue;
      const double median = c.median_ms[k];
      const double ratio = median > 0 ? v / median : 1.0;
      const bool partial = c.partial[i][k];
      char vs[64];
      std::snprintf(vs, sizeof vs, " (%+.1f%% against the step's median)", 100.0 * (ratio - 1.0));
      const std::string title = "rank " + std::to_string(c.ranks[i]) + ", step " + std::to_string(c.steps[k]) + ": " +
                                ms(v) + (partial ? " (partial step)" : std::string(vs));
      body += rect(kLeft + cell_w * static_cast<double>(i), kTop + kRowH * static_cast<double>(k) + 1, cell_w,
                   kRowH - 2, partial ? "#d9d9d9" : heat_color(ratio), title);
    }
  }
  const std::vector<std::string> names = {"within 5% of the step's median", "5-10% over", "10-25% over", "25-50% over",
                                          "more than 50% over", "partial step"};
  const std::vector<std::string> colors = {"#deebf7", "#9ecae1", "#fdd49e", "#fc8d59", "#b30000", "#d9d9d9"};
  std::string legend_svg;
  const double legend_h = legend(legend_svg, names, colors, kLeft, bottom + 56, std::max(plot_w, 700.0));
  return open_svg(kLeft + std::max(plot_w, 700.0) + kRight, bottom + 46 + legend_h + 6) + body + legend_svg + "</svg>\n";
}

}  // namespace chakrashim::tools::report
