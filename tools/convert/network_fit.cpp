#include "convert/network_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace chakrashim::tools::convert {

namespace {

constexpr double kGiB = 1073741824.0;  // ASTRA-sim's "GB" per second, in bytes per second

// t = c0 + cl * L + cb * S / (B' bytes per ns)
struct Terms {
  double c0 = 0, cl = 1, cb = 1;
};

Terms terms(const CommSample& s) {
  const double n = static_cast<double>(std::max<std::uint64_t>(s.npus, 2));
  switch (s.shape) {
    case CommShape::p2p: return {0, 1, 1};
    case CommShape::all_reduce: return {80 * (n - 1) + 40, 8 * (n - 1), 2 * (n - 1) / n};
    case CommShape::half_ring: return {40 * (n - 1) + 40, 4 * (n - 1), (n - 1) / n};
  }
  return {};
}

}  // namespace

double astra_sim_time_ns(const CommSample& s, double latency_ns, double bandwidth_gbs) {
  const Terms t = terms(s);
  const double bytes_per_ns = bandwidth_gbs * kGiB / 1e9;
  return t.c0 + t.cl * latency_ns + t.cb * static_cast<double>(s.bytes) / bytes_per_ns;
}

std::optional<FittedNetwork> fit_network(const std::vector<CommSample>& samples) {
  // y = cl * L + (cb * S) * x, x the ns per byte; y = took - c0.
  struct Row {
    double a, b, y;
  };
  std::vector<Row> rows;
  std::int64_t smallest = 0, largest = 0;
  for (const CommSample& s : samples) {
    if (s.took_ns <= 0 || s.bytes <= 0) continue;
    const Terms t = terms(s);
    rows.push_back({t.cl, t.cb * static_cast<double>(s.bytes), static_cast<double>(s.took_ns) - t.c0});
    smallest = rows.size() == 1 ? s.bytes : std::min(smallest, s.bytes);
    largest = std::max(largest, s.bytes);
  }
  if (rows.empty()) return std::nullopt;
  FittedNetwork net;
  net.samples = rows.size();
  double latency = 0, per_byte = 0;
  // Sizes that vary by less than 2x cannot tell latency from bandwidth: the
  // bandwidth is held at the default, and the latency takes the rest.
  const bool sizes_vary = largest >= 2 * smallest;
  const auto latency_only = [&](double x) {
    double num = 0, den = 0;
    for (const Row& r : rows) num += r.a * (r.y - r.b * x), den += r.a * r.a;
    return std::max(0.0, num / den);
  };
  if (sizes_vary) {
    double saa = 0, sab = 0, sbb = 0, say = 0, sby = 0;
    for (const Row& r : rows) saa += r.a * r.a, sab += r.a * r.b, sbb += r.b * r.b, say += r.a * r.y, sby += r.b * r.y;
    const double det = saa * sbb - sab * sab;
    if (det > 0) {
      latency = (say * sbb - sby * sab) / det;
      per_byte = (saa * sby - sab * say) / det;
    }
    if (per_byte <= 0 || latency < 0) {
      // A negative part: that one is zero, the other fitted alone.
      if (per_byte <= 0) {
        per_byte = 0;
        latency = latency_only(0);
      } else {
        latency = 0;
        double num = 0, den = 0;
        for (const Row& r : rows) num += r.b * r.y, den += r.b * r.b;
        per_byte = std::max(0.0, num / den);
      }
    }
    net.bandwidth_fitted = per_byte > 0;
  }
  if (!net.bandwidth_fitted) {
    per_byte = 1e9 / (kDefaultBandwidthGbs * kGiB);
    latency = latency_only(per_byte);
  }
  net.latency_ns = latency;
  net.bandwidth_gbs = 1e9 / (per_byte * kGiB);
  std::vector<double> errors;
  for (const CommSample& s : samples) {
    if (s.took_ns <= 0 || s.bytes <= 0) continue;
    errors.push_back(std::fabs(astra_sim_time_ns(s, net.latency_ns, net.bandwidth_gbs) / static_cast<double>(s.took_ns) - 1));
  }
  std::nth_element(errors.begin(), errors.begin() + static_cast<std::ptrdiff_t>(errors.size() / 2), errors.end());
  net.median_error = errors[errors.size() / 2];
  return net;
}

std::string network_yml(const FittedNetwork& net, std::uint64_t npus) {
  char text[512];
  std::snprintf(text, sizeof text,
                "# Fitted by chakrashim convert to %llu captured collectives and messages (docs/simulate.md);\n"
                "# %s. Replace it with your target cluster's network for what-if runs.\n"
                "topology: [ Ring ]\nnpus_count: [ %llu ]\nbandwidth: [ %.6g ]  # GB/s (2^30 bytes)\n"
                "latency: [ %.6g ]  # ns\n",
                static_cast<unsigned long long>(net.samples),
                net.bandwidth_fitted ? "latency and bandwidth fitted"
                                     : "one message size: the latency fitted, the bandwidth held at 50 GB/s",
                static_cast<unsigned long long>(npus), net.bandwidth_gbs, net.latency_ns);
  return text;
}

}  // namespace chakrashim::tools::convert
