#include "writers/kineto_trace_writer.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "chakrashim/trace_schema.h"

namespace chakrashim::writers {

namespace s = chakrashim::schema;

std::int64_t base_time_ns(std::int64_t first_event_ns) {
  constexpr std::int64_t kNinetyDaysNs = 90LL * 24 * 3600 * 1000000000LL;
  if (first_event_ns < 0) return 0;
  return first_event_ns - first_event_ns % kNinetyDaysNs;
}

std::string format_us(std::int64_t ns, std::int64_t base_ns) {
  const std::int64_t d = ns - base_ns;
  const std::uint64_t mag = d < 0 ? static_cast<std::uint64_t>(-(d + 1)) + 1 : static_cast<std::uint64_t>(d);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%llu.%03llu", d < 0 ? "-" : "",
                static_cast<unsigned long long>(mag / 1000),
                static_cast<unsigned long long>(mag % 1000));
  return buf;
}

void KinetoTraceWriter::begin(const TraceHeader& header) {
  json_.begin_object().newline();
  json_.key(s::kSchemaVersion).value(1).newline();
  json_.key(s::kDeviceProperties).begin_array();
  for (const auto& device : header.device_properties_json) json_.raw(device);
  json_.end_array().newline();
  const auto& d = header.distributed;
  json_.key(s::kDistributedInfo).begin_object();
  if (!d.backend.empty()) json_.key(s::kBackend).value(d.backend);
  json_.key(s::kRank).value(d.rank);
  if (d.world_size) json_.key(s::kWorldSize).value(*d.world_size);
  if (d.pg_count) json_.key(s::kPgCount).value(*d.pg_count);
  if (d.pg_config_json) json_.key(s::kPgConfig).raw(*d.pg_config_json);
  json_.end_object().newline();
  json_.key(s::kTraceEvents).begin_array().newline();
}

void KinetoTraceWriter::span_head(std::string_view cat, std::string_view name, std::int64_t pid,
                                  std::int64_t tid, std::int64_t start_ns, std::int64_t end_ns) {
  json_.begin_object();
  json_.key(s::kPh).value("X");
  json_.key(s::kCat).value(cat);
  json_.key(s::kName).value(name);
  json_.key(s::kPid).value(pid);
  json_.key(s::kTid).value(tid);
  json_.key(s::kTs).raw(format_us(start_ns, base_ns_));
  json_.key(s::kDur).raw(format_us(end_ns, start_ns));
}

namespace {
void write_extra_args(JsonEmitter& json, const std::vector<std::pair<std::string, std::string>>* extra) {
  if (!extra) return;
  for (const auto& [name, value] : *extra) {
    // Raw only when it really is one JSON value: the file must stay valid
    // whatever a torch version hands us.
    json.key(name);
    if (nlohmann::json::accept(value)) json.raw(value);
    else json.value(value);
  }
}
}  // namespace

void KinetoTraceWriter::host_span(const HostSpan& span, const KinetoInputs* inputs) {
  const auto cat = span.category == HostCategory::cpu_op ? s::kCatCpuOp : s::kCatUserAnnotation;
  // Only our steps are ProfilerStep#N; the job's own (its torch.profiler's)
  // are renamed, as in the native ET (trace_schema.h).
  if (s::is_step_like_name(span.name)) {
    span_head(cat, std::string(s::kJobStepPrefix) + span.name, span.pid, span.tid, span.start_ns, span.end_ns);
  } else {
    span_head(cat, span.name, span.pid, span.tid, span.start_ns, span.end_ns);
  }
  json_.key(s::kArgs).begin_object();
  json_.key(s::kExternalId).value(span.external_id);
  if (span.rf_id != 0) json_.key(s::kRecordFunctionId).value(span.rf_id);
  if (span.sequence_nr) json_.key(s::kSequenceNumber).value(*span.sequence_nr);
  if (span.fwd_thread_id) json_.key(s::kFwdThreadId).value(*span.fwd_thread_id);
  write_extra_args(json_, &span.extra_args);
  if (inputs && span.category == HostCategory::cpu_op) {
    // Valid JSON arrays: InputsByRfId checked each text once.
    json_.key(s::kInputDims).raw(inputs->dims);
    json_.key(s::kInputType).raw(inputs->types);
  }
  json_.end_object();
  json_.end_object().newline();
}

void KinetoTraceWriter::step_span(const StepSpan& step) {
  const std::string name = std::string(s::kProfilerStepPrefix) + std::to_string(step.step);
  span_head(s::kCatUserAnnotation, name, step.pid, step.tid, step.start_ns, step.end_ns);
  json_.key(s::kArgs).begin_object();
  json_.key(s::kExternalId).value(step.external_id);
  json_.end_object();
  json_.end_object().newline();
}

namespace {
bool is_launch(DeviceEventKind k) { return k == DeviceEventKind::runtime || k == DeviceEventKind::driver; }
}  // namespace


void KinetoTraceWriter::gpu_op_args(const DeviceEvent& e) {
  json_.key(s::kDevice).value(e.device);
  json_.key(s::kContext).value(e.context);
  json_.key(s::kStream).value(e.stream);
  json_.key(s::kCorrelation).value(e.correlation);
}

void KinetoTraceWriter::device_event(const DeviceEvent& e, std::string_view name, std::int64_t pid,
                                     const std::vector<std::pair<std::string, std::string>>* extra) {
  const auto dev = static_cast<std::int64_t>(e.device);
  const auto stream = static_cast<std::int64_t>(e.stream);
  switch (e.kind) {
    case DeviceEventKind::runtime:
    case DeviceEventKind::driver:
      // On the calling thread; no "stream" key: HTA tells CPU from GPU by it.
      span_head(e.kind == DeviceEventKind::runtime ? s::kCatCudaRuntime : s::kCatCudaDriver, name, pid,
                e.tid, e.start_ns, e.end_ns);
      json_.key(s::kArgs).begin_object();
      if (e.external_id) json_.key(s::kExternalId).value(e.external_id);
      json_.key(s::kCbid).value(e.context);
      json_.key(s::kCorrelation).value(e.correlation);
      json_.end_object();
      break;
    case DeviceEventKind::kernel:
      span_head(s::kCatKernel, name, dev, stream, e.start_ns, e.end_ns);
      json_.key(s::kArgs).begin_object();
      if (e.external_id) json_.key(s::kExternalId).value(e.external_id);
      json_.key(s::kQueued).value(e.extra);
      gpu_op_args(e);
      json_.key(s::kRegistersPerThread).value(e.registers);
      json_.key(s::kSharedMemory).value(e.shared_memory);
      json_.key(s::kGrid).begin_array().value(e.grid[0]).value(e.grid[1]).value(e.grid[2]).end_array();
      json_.key(s::kBlock).begin_array().value(e.block[0]).value(e.block[1]).value(e.block[2]).end_array();
      write_extra_args(json_, extra);
      json_.end_object();
      break;
    case DeviceEventKind::memcpy:
    case DeviceEventKind::memset: {
      span_head(e.kind == DeviceEventKind::memcpy ? s::kCatGpuMemcpy : s::kCatGpuMemset, name, dev, stream,
                e.start_ns, e.end_ns);
      json_.key(s::kArgs).begin_object();
      if (e.external_id) json_.key(s::kExternalId).value(e.external_id);
      gpu_op_args(e);
      json_.key(s::kBytes).value(e.extra);
      // bytes per ns = GB/s, as Kineto computes it.
      if (e.end_ns > e.start_ns) {
        char bw[32];
        std::snprintf(bw, sizeof bw, "%.6g",
                      static_cast<double>(e.extra) / static_cast<double>(e.end_ns - e.start_ns));
        json_.key(s::kMemoryBandwidth).raw(bw);
      }
      json_.end_object();
      break;
    }
    case DeviceEventKind::sync:
      // GPU-side by Kineto's convention (pid device, tid stream); CUPTI
      // gives a context, not a device, so device 0 stands for "unknown".
      span_head(s::kCatCudaSync, name, dev, e.stream == 0xffffffffu ? -1 : stream, e.start_ns, e.end_ns);
      json_.key(s::kArgs).begin_object();
      if (e.external_id) json_.key(s::kExternalId).value(e.external_id);
      json_.key(s::kCorrelation).value(e.correlation);
      json_.key(s::kContext).value(e.context);
      json_.end_object();
      break;
    case DeviceEventKind::overhead:
      span_head(s::kCatOverhead, name, pid, 0, e.start_ns, e.end_ns);
      json_.key(s::kArgs).begin_object().end_object();
      break;
  }
  json_.end_object().newline();
}

void KinetoTraceWriter::flow(const DeviceEvent& e, std::int64_t pid) {
  const bool start = is_launch(e.kind);
  json_.begin_object();
  json_.key(s::kPh).value(start ? "s" : "f");
  json_.key(s::kId).value(e.correlation);
  json_.key(s::kPid).value(start ? pid : static_cast<std::int64_t>(e.device));
  json_.key(s::kTid).value(start ? e.tid : static_cast<std::int64_t>(e.stream));
  json_.key(s::kTs).raw(format_us(e.start_ns, base_ns_));
  json_.key(s::kCat).value(s::kCatAc2g);
  json_.key(s::kName).value(s::kCatAc2g);
  if (!start) json_.key(s::kBp).value("e");
  json_.end_object().newline();
}

void KinetoTraceWriter::process_name(std::int64_t pid, std::string_view name) {
  json_.begin_object();
  json_.key(s::kName).value("process_name").key(s::kPh).value("M");
  json_.key(s::kTs).value(0).key(s::kPid).value(pid).key(s::kTid).value(0);
  json_.key(s::kArgs).begin_object().key(s::kName).value(name).end_object();
  json_.end_object().newline();
}

void KinetoTraceWriter::thread_name(std::int64_t pid, std::int64_t tid, std::string_view name) {
  json_.begin_object();
  json_.key(s::kName).value("thread_name").key(s::kPh).value("M");
  json_.key(s::kTs).value(0).key(s::kPid).value(pid).key(s::kTid).value(tid);
  json_.key(s::kArgs).begin_object().key(s::kName).value(name).end_object();
  json_.end_object().newline();
}

bool KinetoTraceWriter::end(const TraceTrailer& t) {
  json_.end_array().newline();
  json_.key(s::kTraceName).value(t.trace_name).newline();
  json_.key(s::kDisplayTimeUnit).value("ms").newline();
  json_.key(s::kBaseTimeNanoseconds).value(base_ns_).newline();
  json_.key(s::kChakrashim).begin_object();
  json_.key(s::kMetaVersion).value(t.version);
  json_.key(s::kMetaTorchVersion).value(t.torch_version);
  json_.key(s::kMetaSteps).begin_object();
  json_.key(s::kMetaStart).value(t.steps.start).key(s::kMetaEnd).value(t.steps.end);
  json_.key(s::kMetaWarmup).value(t.steps.warmup).key(s::kMetaActive).value(t.steps.active);
  json_.key(s::kMetaCaptured).begin_array();
  for (auto step : t.steps.captured) json_.value(step);
  json_.end_array();
  json_.key(s::kMetaCutShort).value(t.steps.cut_short);
  json_.key(s::kMetaPartialLastStep);
  if (t.steps.partial_last_step) json_.value(*t.steps.partial_last_step);
  else json_.null();
  json_.key(s::kMetaReason).value(t.steps.reason);
  if (!t.steps.merged.empty()) {
    json_.key(s::kMetaMerged).begin_array();
    for (const auto& m : t.steps.merged) {
      json_.begin_object();
      json_.key(s::kMetaMergedStep).value(m.step);
      json_.key(s::kMetaMergedIterations).value(m.iterations);
      json_.key(s::kMetaMergedWhy).value(m.why);
      json_.end_object();
    }
    json_.end_array();
  }
  json_.end_object();
  json_.key(s::kMetaRanks).begin_object();
  json_.key(s::kMetaFilter);
  if (t.ranks_filter) json_.value(*t.ranks_filter);
  else json_.null();
  json_.key(s::kWorldSize);
  if (t.world_size) json_.value(*t.world_size);
  else json_.null();
  json_.key(s::kMetaRun);
  if (!t.run_id.empty()) json_.value(t.run_id);
  else json_.null();
  json_.end_object();
  json_.key(s::kMetaHostTrace).value(t.host_trace);
  json_.key(s::kMetaRecordingCost);
  if (const auto& c = t.recording_cost) {
    json_.begin_object().key(s::kMetaPerOpNs).value(c->per_op_ns);
    json_.key(s::kMetaFrom).value(c->from_steps ? "steps" : "gaps");
    json_.key(s::kMetaGapNs);
    if (c->pairs > 0) json_.value(c->gap_ns);
    else json_.null();
    json_.key(s::kMetaPairs).value(c->pairs);
    json_.key(s::kMetaMedianNs);
    if (c->pairs > 0) json_.value(c->median_ns);
    else json_.null();
    json_.key(s::kMetaStepNs);
    if (c->step_ns) json_.value(*c->step_ns);
    else json_.null();
    json_.key(s::kMetaUnrecordedSteps).value(c->unrecorded_steps);
    json_.key(s::kMetaStepRefused);
    if (!c->step_refused.empty()) json_.value(c->step_refused);
    else json_.null();
    json_.end_object();
  } else {
    json_.null();
  }
  json_.key(s::kMetaDeviceTrace).begin_object();
  json_.key(s::kMetaCupti).value(t.cupti);
  json_.key(s::kMetaDroppedRecords).value(t.dropped_records);
  json_.key(s::kMetaInvalidRecords).value(t.invalid_records);
  json_.key(s::kMetaUnattributedGpuOps).value(t.unattributed_gpu_ops);
  json_.key(s::kMetaClock).value(t.clock);
  json_.key(s::kMetaDeviceSync).value(t.device_sync);
  json_.key(s::kMetaTruncatedAt);
  if (t.truncated_at_ns) json_.raw(format_us(*t.truncated_at_ns, base_ns_));
  else json_.null();
  json_.end_object();
  json_.end_object().newline();
  json_.end_object().newline();
  return json_.flush();
}

}  // namespace chakrashim::writers
