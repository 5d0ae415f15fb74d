// The network fit (tools/convert/network_fit.h): its time model against
// what ASTRA-sim 518bd51 took for single-op workloads (measured with
// tests/support/et_proto.py files and tests/support/astra_sim.py's system
// configuration), and the fit recovering a network from its own times.
#include "convert/network_fit.h"

#include <gtest/gtest.h>

namespace chakrashim::tools::convert {
namespace {

CommSample sample(CommShape shape, std::uint64_t npus, std::int64_t bytes, std::int64_t took = 0) {
  CommSample s;
  s.shape = shape;
  s.npus = npus;
  s.bytes = bytes;
  s.took_ns = took;
  return s;
}

TEST(NetworkFit, TheModelIsWhatAstraSimTook) {
  // sys[0] finished, N cycles, for one op on 2 or 4 NPUs.
  EXPECT_NEAR(astra_sim_time_ns(sample(CommShape::p2p, 2, 4096), 10, 1.0), 3824, 2);
  EXPECT_NEAR(astra_sim_time_ns(sample(CommShape::all_reduce, 2, 4096), 1000, 1e6), 8120, 2);
  EXPECT_NEAR(astra_sim_time_ns(sample(CommShape::all_reduce, 2, 4096), 100000, 1e6), 800120, 2);
  EXPECT_NEAR(astra_sim_time_ns(sample(CommShape::all_reduce, 4, 4096), 1000, 1e6), 24280, 2);
  EXPECT_NEAR(astra_sim_time_ns(sample(CommShape::all_reduce, 2, 1 << 20), 10, 1.0), 977732, 1000);
  EXPECT_NEAR(astra_sim_time_ns(sample(CommShape::all_reduce, 4, 1 << 20), 10, 0.1), 14650384, 15000);
}

TEST(NetworkFit, RecoversLatencyAndBandwidthFromTheirTimes) {
  std::vector<CommSample> samples;
  for (std::int64_t bytes : {4096, 65536, 1 << 20, 1 << 22}) {
    for (CommShape shape : {CommShape::p2p, CommShape::all_reduce}) {
      CommSample s = sample(shape, 2, bytes);
      s.took_ns = static_cast<std::int64_t>(astra_sim_time_ns(s, 30000, 2.5));
      samples.push_back(s);
    }
  }
  const auto net = fit_network(samples);
  ASSERT_TRUE(net);
  EXPECT_TRUE(net->bandwidth_fitted);
  EXPECT_NEAR(net->latency_ns, 30000, 30);
  EXPECT_NEAR(net->bandwidth_gbs, 2.5, 0.01);
  EXPECT_LT(net->median_error, 0.001);
  EXPECT_EQ(net->samples, 8u);
}

TEST(NetworkFit, OneMessageSizeHoldsTheBandwidthAndFitsTheLatency) {
  // gloo's 2-rank DDP on loopback: one bucket, milliseconds each.
  const std::vector<CommSample> samples = {sample(CommShape::all_reduce, 2, 8480, 3000000),
                                           sample(CommShape::all_reduce, 2, 8480, 4000000),
                                           sample(CommShape::all_reduce, 2, 8480, 5000000)};
  const auto net = fit_network(samples);
  ASSERT_TRUE(net);
  EXPECT_FALSE(net->bandwidth_fitted);
  EXPECT_EQ(net->bandwidth_gbs, kDefaultBandwidthGbs);
  // The mean time: 4 ms = 8 L + the bytes' time + 120 ns.
  EXPECT_NEAR(astra_sim_time_ns(samples[1], net->latency_ns, net->bandwidth_gbs), 4000000, 1);
  EXPECT_NEAR(net->median_error, 0, 1e-9);  // the kind's mean is met
  EXPECT_NEAR(net->spread, 0.25, 1e-9);     // 1/4, 0 and 1/4 around it
  const std::string yml = network_yml(*net, 2);
  EXPECT_NE(yml.find("topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]"), std::string::npos) << yml;
  EXPECT_NE(yml.find("the bandwidth held at 50 GB/s"), std::string::npos) << yml;
}

TEST(NetworkFit, AFewLongWaitsAreKeptInTheTotalAndSaidAsTheSpread) {
  // Sends that mostly took 50 us, two that waited 5 ms for their receiver:
  // the simulated job spends what the captured one spent in all (the mean,
  // 875 us), the fit meets its kind exactly, and the spread says how much
  // single sends differed from it.
  std::vector<CommSample> samples(10, sample(CommShape::p2p, 2, 4096, 50000));
  samples.push_back(sample(CommShape::p2p, 2, 4096, 5000000));
  samples.push_back(sample(CommShape::p2p, 2, 4096, 5000000));
  const auto net = fit_network(samples);
  ASSERT_TRUE(net);
  EXPECT_NEAR(astra_sim_time_ns(samples[0], net->latency_ns, net->bandwidth_gbs), 875000, 1);
  EXPECT_NEAR(net->median_error, 0, 1e-9);
  EXPECT_NEAR(net->spread, 1 - 50000.0 / 875000, 1e-9);
  EXPECT_EQ(net->samples, 12u);
}

TEST(NetworkFit, SizesOneRingCannotDescribeAreAFitErrorAboveTheWarning) {
  // 4 KiB in 1 ms, 64 KiB in 10 us, 1 MiB in 1 ms: no latency and
  // bandwidth give all three.
  std::vector<CommSample> samples = {sample(CommShape::p2p, 2, 4096, 1000000),
                                     sample(CommShape::p2p, 2, 65536, 10000),
                                     sample(CommShape::p2p, 2, 1 << 20, 1000000)};
  const auto net = fit_network(samples);
  ASSERT_TRUE(net);
  EXPECT_GT(net->median_error, kFitWarnError);
  // Times that a ring gives are no error.
  for (auto& s : samples) s.took_ns = static_cast<std::int64_t>(astra_sim_time_ns(s, 20000, 1.0));
  EXPECT_LT(fit_network(samples)->median_error, 0.001);
}

TEST(NetworkFit, NothingToFitWithoutATimedSample) {
  EXPECT_FALSE(fit_network({}));
  EXPECT_FALSE(fit_network({sample(CommShape::p2p, 2, 512, 0), sample(CommShape::p2p, 2, 0, 100)}));
}

}  // namespace
}  // namespace chakrashim::tools::convert
