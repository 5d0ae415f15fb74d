// The second pass over the host ET: every node is read again and written
// with its link (et_plus_node.h), and every other top-level key is copied
// as it was. Nodes come out in id order, as Chakra sorts them. An ET already
// in id order (the usual case) streams straight through; otherwise each
// node's output goes to a spool file first and is copied out in order, so
// memory stays a few numbers per node either way.
#pragma once

#include <cstdint>
#include <istream>
#include <string>

#include "files/byte_sink.h"
#include "link/device_ops.h"
#include "link/et_plus_linker.h"

namespace chakrashim::tools::link {

struct WriteOutcome {
  bool ok = false;
  std::string error;
  std::uint64_t nodes_written = 0;  // host and GPU child nodes
};

// `spool_dir` holds the spool file when one is needed (removed at once).
WriteOutcome write_et_plus(std::istream& et, const LinkPlan& plan, const DeviceOps& device,
                           files::ByteSink& sink, const std::string& spool_dir);

}  // namespace chakrashim::tools::link
