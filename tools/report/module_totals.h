// Top modules (docs/report.md, "Top modules"): time per torch.nn.Module
// path, from the "nn.Module: <path>" scopes that CHAKRA_MODULE_SCOPES=1
// records (and torch.profiler's with_modules-style names, which share the
// prefix). Per path: calls, total (inclusive) time, and self time (total
// less the module calls directly inside it on the same thread), all
// threads, by total time. Forward only: the hooks see module calls, and
// autograd runs the backward pass outside them. Pure.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "report/event_table.h"

namespace chakrashim::tools::report {

inline constexpr std::string_view kModulePrefix = "nn.Module: ";

struct ModuleTotal {
  std::uint32_t name = 0;  // index into EventTable::names ("nn.Module: ...")
  std::uint64_t calls = 0;
  std::int64_t total_ns = 0;
  std::int64_t self_ns = 0;
};

bool is_module_scope(std::string_view name);
std::vector<ModuleTotal> module_totals(const EventTable& table);

}  // namespace chakrashim::tools::report
