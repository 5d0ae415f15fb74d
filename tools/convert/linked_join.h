// Convert's in-memory link: the EtPlus that reading `chakrashim link`'s ET+
// would give (et_plus_reader.h), made from the plain host ET as convert
// reads it (read_host_et) and link's plan (link::plan_rank), with no ET+
// text written or parsed. It models what link's node emitter does to a node
// (link/et_plus_node.h) as the reader then sees it:
//   host node: id and ctrl_deps renumbered; a timed node's exclusive_dur
//     (Python's int() of link's microseconds) and inter_thread_dep;
//   GPU child: a copy of its host node's inputs, outputs and attributes with
//     its own id, the host as parent, the GPU op's name, exclusive_dur and
//     stream, is_cpu_op false, pg_name for NCCL kernels.
// Equal to the text path byte for byte in the .et (tests/tools/test_convert.py
// checks both on generated pairs). Where the text path would decide
// something this model does not cover, it answers nullopt and the caller
// takes the text path: an ET that is not `ordinary` (HostEtRead), a node
// count unlike the plan's, a negative exclusive duration (the reader's
// error), a trace with no linked node (the reader's "never linked").
#pragma once

#include <optional>

#include "convert/et_encoding.h"
#include "convert/et_plus_reader.h"
#include "link/device_ops.h"
#include "link/et_plus_linker.h"

namespace chakrashim::tools::convert {

// Consumes `host`'s nodes.
std::optional<EtPlus> join_linked(HostEtRead& host, const link::LinkPlan& plan, const link::DeviceOps& device,
                                  NodeEncoder& encoder);

}  // namespace chakrashim::tools::convert
