#include "bridge/device_side.h"

#include <cstdlib>

#include "bridge/bridge_log.h"
#include "bridge/torch_version.h"

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/profiler/orchestration/observer.h>

namespace chakrashim::bridge {
namespace {

bool torch_profiler_running() {
  // isProfilerEnabledInMainThread (a profiler started on another thread,
  // the job's main one, say) is torch 2.5's (pytorch#128743); torch 2.4 has
  // only this thread's profiler state.
#if CHAKRA_TORCH_AT_LEAST(2, 5)
  if (torch::autograd::profiler::isProfilerEnabledInMainThread()) return true;
#endif
  return torch::profiler::impl::profilerEnabled();
}

}  // namespace

collector::CollectorConfig DeviceSide::collector_config() const {
  collector::CollectorConfig cc;
  if (config_->cupti_lib) cc.cupti_lib = config_->cupti_lib;
  if (config_->cuda_home) cc.cuda_home = config_->cuda_home;
  cc.buffer_bytes = config_->cupti_buffers;
  cc.budget = budget_;
  cc.sync_records = config_->cupti_sync != 0;
  cc.overhead_records = config_->cupti_overhead != 0;
  return cc;
}

bool DeviceSide::cuda_present() const {
  return collector::Collector::cuda_present(collector_config());
}

void DeviceSide::start(std::optional<bool> cuda) {
  const collector::CollectorConfig cc = collector_config();
  if (!(cuda ? *cuda : collector::Collector::cuda_present(cc))) {
    state_ = "absent";  // said once, in the summary line
    return;
  }
  if (torch_profiler_running()) {
    state_ = "profiler_active";
    log_info("torch.profiler is running in this process: chakrashim leaves CUPTI to it, and the "
             "device trace holds host ops only");
    return;
  }
  const auto outcome = collector::Collector::instance().start(cc);
  state_ = outcome.status;
  started_ = outcome.status == "ok";
  if (!outcome.message.empty()) log_info(outcome.message);
}

DeviceCapture DeviceSide::stop(std::chrono::milliseconds timeout) {
  // Every way a window ends comes here (its end step, a signal, the memory
  // cap, exit): a torch.profiler that the job started since the last step
  // boundary shares CUPTI with us now, and a disable and flush would pull
  // its activity kinds and buffers from under it.
  stand_back_if_profiler_started();
  if (!started_) return DeviceCapture{};
  started_ = false;
  // Bounded: a device stuck in a collective must not keep the job from
  // finalizing and dying of its SIGTERM.
  DeviceCapture capture = collector::Collector::instance().stop(timeout);
  capture.cupti = state_;
  return capture;
}

void DeviceSide::release_if_profiler_stopped() {
  // One check per step, whichever counts it (the step callback or the
  // optimizer hooks): without it a window ended by a signal or the cap
  // would leave our kinds on for the rest of the job.
  if (release_pending_ && !torch_profiler_running()) {
    collector::Collector::instance().release_after_stand_back();
    release_pending_ = false;
  }
}

void DeviceSide::stand_back_if_profiler_started() {
  if (!started_ || !torch_profiler_running()) return;
  collector::Collector::instance().stand_back();
  started_ = false;
  release_pending_ = true;
  state_ = "profiler_active";
  log_info("the job started torch.profiler in the capture window: chakrashim leaves CUPTI to it, "
           "and this window's device trace holds host ops only");
}

}  // namespace chakrashim::bridge
