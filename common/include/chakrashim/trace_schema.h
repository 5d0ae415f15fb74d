// Every name of the Kineto-format device trace and of our `chakrashim`
// metadata object, spelled once. The writers and tools/ share this header
// (docs/trace-format.md is the contract).
#pragma once

#include <string_view>

namespace chakrashim::schema {

// Top level, before traceEvents.
inline constexpr std::string_view kSchemaVersion = "schemaVersion";
inline constexpr std::string_view kDeviceProperties = "deviceProperties";
inline constexpr std::string_view kDistributedInfo = "distributedInfo";
inline constexpr std::string_view kTraceEvents = "traceEvents";
// Top level, after traceEvents.
inline constexpr std::string_view kTraceName = "traceName";
inline constexpr std::string_view kDisplayTimeUnit = "displayTimeUnit";
inline constexpr std::string_view kBaseTimeNanoseconds = "baseTimeNanoseconds";
inline constexpr std::string_view kChakrashim = "chakrashim";

// distributedInfo. HTA reads the rank with the regex "rank":\s+(\d+), first
// match in the file, so "rank" is written with a space after the colon and
// appears nowhere before this object.
inline constexpr std::string_view kBackend = "backend";
inline constexpr std::string_view kRank = "rank";
inline constexpr std::string_view kWorldSize = "world_size";
inline constexpr std::string_view kPgCount = "pg_count";
inline constexpr std::string_view kPgConfig = "pg_config";
inline constexpr std::string_view kHtaRankRegex = R"("rank":\s+(\d+))";

// Event fields and categories.
inline constexpr std::string_view kPh = "ph";
inline constexpr std::string_view kCat = "cat";
inline constexpr std::string_view kName = "name";
inline constexpr std::string_view kPid = "pid";
inline constexpr std::string_view kTid = "tid";
inline constexpr std::string_view kTs = "ts";
inline constexpr std::string_view kDur = "dur";
inline constexpr std::string_view kArgs = "args";
inline constexpr std::string_view kCatCpuOp = "cpu_op";
inline constexpr std::string_view kCatUserAnnotation = "user_annotation";
inline constexpr std::string_view kProfilerStepPrefix = "ProfilerStep#";
// The job's own step records. torch.profiler's prof.step() opens a USER_SCOPE
// record "ProfilerStep#N" every step, numbered by the job's profiler, not by
// our window. Kept under that name they would stand beside our own
// ProfilerStep#N (two per step, or interleaved numbers), and Chakra's
// linker and HTA find steps by it: HTA takes names that start with
// "ProfilerStep" (its step regex is anchored), so the writers put the
// job's records, in both files, as "job:ProfilerStep#N". That keeps
// "ProfilerStep" inside the name, which Chakra's linker tests with `in` to
// leave step records out of its CPU ops, as it does torch's own.
inline constexpr std::string_view kProfilerStepStem = "ProfilerStep";
inline constexpr std::string_view kJobStepPrefix = "job:";
// A name the job gave a record that HTA would take for a step.
constexpr bool is_step_like_name(std::string_view name) {
  return name.substr(0, kProfilerStepStem.size()) == kProfilerStepStem;
}
inline constexpr std::string_view kExternalId = "External id";
inline constexpr std::string_view kRecordFunctionId = "Record function id";
inline constexpr std::string_view kSequenceNumber = "Sequence number";
// On cpu_op events, from the ET's inputs (shim/src/writers/kineto_inputs.h).
inline constexpr std::string_view kInputDims = "Input Dims";
inline constexpr std::string_view kInputType = "Input type";
inline constexpr std::string_view kFwdThreadId = "Fwd thread id";
// GPU side (Kineto's names).
inline constexpr std::string_view kCatCudaRuntime = "cuda_runtime";
inline constexpr std::string_view kCatCudaDriver = "cuda_driver";
inline constexpr std::string_view kCatKernel = "kernel";
inline constexpr std::string_view kCatGpuMemcpy = "gpu_memcpy";
inline constexpr std::string_view kCatGpuMemset = "gpu_memset";
inline constexpr std::string_view kCatCudaSync = "cuda_sync";
inline constexpr std::string_view kCatOverhead = "overhead";
inline constexpr std::string_view kCatAc2g = "ac2g";
inline constexpr std::string_view kId = "id";
inline constexpr std::string_view kBp = "bp";
inline constexpr std::string_view kCbid = "cbid";
inline constexpr std::string_view kCorrelation = "correlation";
inline constexpr std::string_view kQueued = "queued";
inline constexpr std::string_view kDevice = "device";
inline constexpr std::string_view kContext = "context";
inline constexpr std::string_view kStream = "stream";
inline constexpr std::string_view kRegistersPerThread = "registers per thread";
inline constexpr std::string_view kSharedMemory = "shared memory";
inline constexpr std::string_view kGrid = "grid";
inline constexpr std::string_view kBlock = "block";
inline constexpr std::string_view kBytes = "bytes";
inline constexpr std::string_view kMemoryBandwidth = "memory bandwidth (GB/s)";

// Our metadata object. It must never hold a key named "rank".
inline constexpr std::string_view kMetaVersion = "version";
inline constexpr std::string_view kMetaTorchVersion = "torch_version";
inline constexpr std::string_view kMetaSteps = "steps";
inline constexpr std::string_view kMetaStart = "start";
inline constexpr std::string_view kMetaEnd = "end";
inline constexpr std::string_view kMetaWarmup = "warmup";
inline constexpr std::string_view kMetaActive = "active";
inline constexpr std::string_view kMetaCaptured = "captured";
inline constexpr std::string_view kMetaCutShort = "cut_short";
inline constexpr std::string_view kMetaPartialLastStep = "partial_last_step";
// Steps that hold more than one iteration (issue #49): a list of
// {"step": N, "iterations": K, "why": "grad_scaler_skipped"}.
inline constexpr std::string_view kMetaMerged = "merged";
inline constexpr std::string_view kMetaMergedStep = "step";
inline constexpr std::string_view kMetaMergedIterations = "iterations";
inline constexpr std::string_view kMetaMergedWhy = "why";
inline constexpr std::string_view kMergedGradScaler = "grad_scaler_skipped";
// The op a GradScaler runs once per iteration (scaler.update()): a step that
// holds more than one ran iterations whose optimizer step it skipped.
inline constexpr std::string_view kAmpUpdateScaleOp = "aten::_amp_update_scale_";
inline constexpr std::string_view kMetaReason = "reason";
inline constexpr std::string_view kMetaRanks = "ranks";
inline constexpr std::string_view kMetaFilter = "filter";
// The launch a file belongs to, the same on all its ranks (issue #49):
// "slurm:JOB.STEP", "torchrun:ID", "pid:PID@HOST", ... (identity.h); in the
// device trace's ranks object and the ET's chakrashim object, with
// world_size beside it. Files of one capture with two runs' ids are two
// captures mixed.
inline constexpr std::string_view kMetaRun = "run";
inline constexpr std::string_view kMetaHostTrace = "host_trace";
// What each recorded op cost the job (shim/src/writers/recording_cost.h):
// {"per_op_ns": N, "from": "steps"|"gaps", "gap_ns": G, "pairs": P,
// "median_ns": M, "step_ns": S, "unrecorded_steps": K, "step_refused": W}
// (G, M, S null where unknown; W null unless S was larger and not taken),
// or null. `convert` takes per_op_ns out of the timeline.
inline constexpr std::string_view kMetaRecordingCost = "recording_cost";
inline constexpr std::string_view kMetaPerOpNs = "per_op_ns";
inline constexpr std::string_view kMetaFrom = "from";
inline constexpr std::string_view kMetaGapNs = "gap_ns";
inline constexpr std::string_view kMetaPairs = "pairs";
inline constexpr std::string_view kMetaMedianNs = "median_ns";
inline constexpr std::string_view kMetaStepNs = "step_ns";
inline constexpr std::string_view kMetaUnrecordedSteps = "unrecorded_steps";
// Why the steps' figure was not taken (writers/recording_cost.h); null: taken, or not larger.
inline constexpr std::string_view kMetaStepRefused = "step_refused";
inline constexpr std::string_view kMetaDeviceTrace = "device_trace";
inline constexpr std::string_view kMetaCupti = "cupti";
inline constexpr std::string_view kMetaDroppedRecords = "dropped_records";
inline constexpr std::string_view kMetaInvalidRecords = "invalid_records";
inline constexpr std::string_view kMetaUnattributedGpuOps = "unattributed_gpu_ops";
inline constexpr std::string_view kMetaClock = "clock";
inline constexpr std::string_view kMetaTruncatedAt = "truncated_at";
// How the device sync before CUPTI's flush went: "ok", "none" (no CUDA
// context to wait for), "timed_out" (past CHAKRA_EXIT_TIMEOUT; GPU records
// of the last moments may be missing).
inline constexpr std::string_view kMetaDeviceSync = "device_sync";

}  // namespace chakrashim::schema
