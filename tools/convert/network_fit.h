// A network for ASTRA-sim fitted to the communication a capture measured
// (issue #50, item 4): the latency and bandwidth of a ring that makes
// ASTRA-sim's analytical, congestion-unaware backend take, for each
// captured collective or message, the time it took in the job.
//
// What ASTRA-sim (518bd51, the system configuration of
// tests/support/astra_sim.py: ring algorithms, 4 chunks, one active, an
// endpoint delay of 10 cycles) takes, measured on single-op workloads
// (docs/simulate.md): with L the latency (ns), B the bandwidth (GB/s as
// it reads it: 2^30 bytes a second) and S the bytes,
//   send / receive:               L + S / B
//   all-reduce on a ring of N:    8(N-1) L + 2(N-1)/N S / B + 80(N-1) + 40
//   all-gather, reduce-scatter:   half of the all-reduce's steps
// The time a collective took in the job is its backend's async record
// (gloo:all_reduce, ...) from issue to completion, the least over the
// ranks: the rank that arrived last waited for no one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chakrashim::tools::convert {

enum class CommShape : std::uint8_t { p2p, all_reduce, half_ring };

struct CommSample {
  CommShape shape = CommShape::p2p;
  std::uint64_t npus = 2;    // the ring's size (a collective's group)
  std::int64_t bytes = 0;
  std::int64_t took_ns = 0;  // as the job measured it
};

struct FittedNetwork {
  double latency_ns = 0;
  double bandwidth_gbs = 0;  // ASTRA-sim's GB/s (2^30 bytes a second)
  bool bandwidth_fitted = false;  // false: held at the default (one size only)
  std::uint64_t samples = 0;
  // How far the fit's times are from the measured ones: the median over
  // the samples of |fitted / measured - 1|, each measured as the mean of
  // its kind (shape, ring, bytes); large when one ring cannot describe the
  // job's sizes (convert warns beyond kFitWarnError).
  double median_error = 0;
  // How much single ops varied around their kind's mean: the median of
  // |took / mean - 1| (waits for a peer, the machine's load).
  double spread = 0;
};

// A fit error above which convert warns that the simulated communication
// will be off by about as much.
constexpr double kFitWarnError = 0.25;

// The default bandwidth when the samples cannot tell it (one message size).
constexpr double kDefaultBandwidthGbs = 50.0;

// The time ASTRA-sim takes for one sample's op on the given network, ns.
double astra_sim_time_ns(const CommSample& s, double latency_ns, double bandwidth_gbs);

// Least squares over each kind's mean time (shape, ring size, bytes),
// weighted by its count (latency and the time per byte, neither below
// zero). nullopt without a usable sample.
std::optional<FittedNetwork> fit_network(const std::vector<CommSample>& samples);

// ASTRA-sim's network configuration: one ring of `npus`.
std::string network_yml(const FittedNetwork& net, std::uint64_t npus);

}  // namespace chakrashim::tools::convert
