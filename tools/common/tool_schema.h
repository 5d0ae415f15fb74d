// Names that tools/ reads beyond shim/include/chakrashim/trace_schema.h
// (the ET's, which torch writes); the device trace's come from there.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "chakrashim/trace_schema.h"

namespace chakrashim::tools::names {

// Device-trace event args and categories (docs/trace-format.md "Events").
inline constexpr std::string_view kCorrelation = chakrashim::schema::kCorrelation;
inline constexpr std::string_view kStream = chakrashim::schema::kStream;
inline constexpr std::string_view kProcessGroupName = "Process Group Name";
inline constexpr std::string_view kCatCudaRuntime = chakrashim::schema::kCatCudaRuntime;
inline constexpr std::string_view kCatCudaDriver = chakrashim::schema::kCatCudaDriver;
inline constexpr std::string_view kCatKernel = chakrashim::schema::kCatKernel;
inline constexpr std::string_view kCatGpuMemcpy = chakrashim::schema::kCatGpuMemcpy;
inline constexpr std::string_view kCatGpuMemset = chakrashim::schema::kCatGpuMemset;

// The only CUDA calls chakra_trace_link counts as launches.
inline constexpr std::array<std::string_view, 9> kChakraLaunchNames = {
    "cudaLaunchKernel",   "cudaLaunchKernelExC",         "cuLaunchKernel",
    "cuLaunchKernelEx",   "cudaLaunchCooperativeKernel", "cudaMemcpy",
    "cudaMemcpyAsync",    "cudaMemcpyFromSymbol",        "cudaMemcpyToSymbol"};

// The host Execution Trace (written by torch's observer).
inline constexpr std::string_view kEtSchema = "schema";
inline constexpr std::string_view kEtPid = "pid";
inline constexpr std::string_view kEtTime = "time";
inline constexpr std::string_view kEtStartTs = "start_ts";
inline constexpr std::string_view kEtFinishTs = "finish_ts";
inline constexpr std::string_view kEtNodes = "nodes";
inline constexpr std::string_view kEtId = "id";
inline constexpr std::string_view kEtName = "name";
inline constexpr std::string_view kEtCtrlDeps = "ctrl_deps";
inline constexpr std::string_view kEtAttrs = "attrs";
inline constexpr std::string_view kEtInputs = "inputs";
inline constexpr std::string_view kEtValues = "values";
inline constexpr std::string_view kEtAttrValue = "value";
inline constexpr std::string_view kEtRfId = "rf_id";
// Every node carries these seven attrs (torch writes them; Chakra reads them).
inline constexpr std::array<std::string_view, 7> kEtRequiredAttrs = {
    "rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid", "op_schema"};
inline constexpr std::array<std::string_view, 6> kEtTopLevelKeys = {
    "schema", "pid", "time", "start_ts", "finish_ts", "nodes"};
inline constexpr std::uint64_t kEtRootId = 1;
inline constexpr std::string_view kEtRootName = "[pytorch|profiler|execution_trace|process]";
// Structural nodes: the root, one per thread, and the process-group node.
inline constexpr std::string_view kEtStructuralPrefix = "[pytorch|profiler|execution_trace|";
inline constexpr std::string_view kEtProcessGroupName = "## process_group:init ##";
// Its one input is torch's pg_config_info as JSON: one object per process
// group, the default group (the world) named "0", its size in group_size.
inline constexpr std::string_view kPgName = "pg_name";
inline constexpr std::string_view kPgGroupSize = "group_size";
inline constexpr std::string_view kDefaultPgName = "0";
inline constexpr std::string_view kDefaultStepMarker = "Optimizer.step#";

// ET schema versions each Chakra tool accepts (docs/trace-format.md). The
// converter (PyTorchNode at Chakra 21585d8) parses nodes only of these four,
// each with the -chakra.0.0.4 suffix; it also lists 1.1.1-chakra.1.0.0, but
// reads no field of its nodes and then fails.
inline constexpr std::array<std::string_view, 4> kConverterSchemas = {
    "1.0.2-chakra.0.0.4", "1.0.3-chakra.0.0.4", "1.1.0-chakra.0.0.4", "1.1.1-chakra.0.0.4"};
// The ET schema each torch release writes, read from the format string in
// that release's libtorch_cpu.so (2.0.1, 2.1.2, 2.2.2, 2.3.1, 2.4.1, 2.14.1;
// docs/compat.md says how), so that `check`
// can name the torch that wrote a file and why the converter refuses it.
struct EtSchemaWriter {
  std::string_view schema;
  std::string_view torch;
};
inline constexpr std::array<EtSchemaWriter, 6> kEtSchemaWriters = {{
    {"1.0.1", "torch 2.0 or 2.1, whose nodes carry rf_id as a field, not in attrs"},
    {"1.0.2-chakra.0.0.4", "torch 2.2 or 2.3"},
    {"1.0.3-chakra.0.0.4", "a torch between releases: no release from 2.1 to 2.4"},
    {"1.0.4", "a torch between releases: no release from 2.1 to 2.4"},
    {"1.1.0-chakra.0.0.4", "torch 2.4"},
    {"1.1.1-chakra.0.0.4", "torch 2.5 to 2.15"},
}};
inline constexpr std::array<std::string_view, 6> kLinkerSchemas = {
    "1.0.1", "1.0.2", "1.0.3", "1.0.4", "1.1.0", "1.1.1-chakra.0.0.4"};

}  // namespace chakrashim::tools::names
