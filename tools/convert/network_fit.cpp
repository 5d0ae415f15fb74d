#include "convert/network_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

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

// The median (the mean of the middle two for an even count); reorders.
double median_of(std::vector<double>& v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

}  // namespace

double astra_sim_time_ns(const CommSample& s, double latency_ns, double bandwidth_gbs) {
  const Terms t = terms(s);
  const double bytes_per_ns = bandwidth_gbs * kGiB / 1e9;
  return t.c0 + t.cl * latency_ns + t.cb * static_cast<double>(s.bytes) / bytes_per_ns;
}

std::optional<FittedNetwork> fit_network(const std::vector<CommSample>& samples) {
  // y = cl * L + (cb * S) * x, x the ns per byte; y = took - c0.
  // One row per kind of op (shape, ring, bytes): the mean of its times,
  // weighted by how many there were (the same latency and bandwidth as a
  // fit over every time). The mean, not the median: an op's time also holds
  // how long its peer kept it waiting, through skew and load the simulation
  // does not reproduce, and the simulated job must spend the time the
  // captured one spent in all (2-rank gloo DDP on a loaded machine: 0.92 of
  // the window on the mean's network, 0.46 on the median's). The error is
  // then measured against each kind's mean, where one ring either fits the
  // sizes or does not; how single ops varied is the spread, said apart.
  struct Row {
    double a, b, y, w;
    double mean;  // the kind's mean time, ns
  };
  std::map<std::tuple<CommShape, std::uint64_t, std::int64_t>, std::vector<double>> groups;
  for (const CommSample& s : samples) {
    if (s.took_ns <= 0 || s.bytes <= 0) continue;
    groups[{s.shape, std::max<std::uint64_t>(s.npus, 2), s.bytes}].push_back(static_cast<double>(s.took_ns));
  }
  if (groups.empty()) return std::nullopt;
  std::vector<Row> rows;
  std::int64_t smallest = 0, largest = 0;
  FittedNetwork net;
  std::vector<double> spread;
  for (auto& [key, times] : groups) {
    const auto& [shape, npus, bytes] = key;
    double mean = 0;
    for (const double t : times) mean += t / static_cast<double>(times.size());
    CommSample s;
    s.shape = shape;
    s.npus = npus;
    s.bytes = bytes;
    const Terms t = terms(s);
    rows.push_back({t.cl, t.cb * static_cast<double>(bytes), mean - t.c0, static_cast<double>(times.size()), mean});
    smallest = rows.size() == 1 ? bytes : std::min(smallest, bytes);
    largest = std::max(largest, bytes);
    net.samples += times.size();
    for (const double took : times) spread.push_back(std::fabs(took / mean - 1));
  }
  net.spread = median_of(spread);
  double latency = 0, per_byte = 0;
  // Sizes that vary by less than 2x cannot tell latency from bandwidth: the
  // bandwidth is held at the default, and the latency takes the rest.
  const bool sizes_vary = largest >= 2 * smallest;
  const auto latency_only = [&](double x) {
    double num = 0, den = 0;
    for (const Row& r : rows) num += r.w * r.a * (r.y - r.b * x), den += r.w * r.a * r.a;
    return std::max(0.0, num / den);
  };
  if (sizes_vary) {
    double saa = 0, sab = 0, sbb = 0, say = 0, sby = 0;
    for (const Row& r : rows)
      saa += r.w * r.a * r.a, sab += r.w * r.a * r.b, sbb += r.w * r.b * r.b, say += r.w * r.a * r.y,
          sby += r.w * r.b * r.y;
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
        for (const Row& r : rows) num += r.w * r.b * r.y, den += r.w * r.b * r.b;
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
  // Each op's error is its kind's: the fit against the kinds' means.
  std::vector<double> errors;
  for (const Row& r : rows) {
    const double fitted = r.a * net.latency_ns + r.b * per_byte + (r.mean - r.y);
    errors.insert(errors.end(), static_cast<std::size_t>(r.w), std::fabs(fitted / r.mean - 1));
  }
  net.median_error = median_of(errors);
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
