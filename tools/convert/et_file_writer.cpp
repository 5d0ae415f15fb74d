#include "convert/et_file_writer.h"

#include "convert/node_rules.h"

namespace chakrashim::tools::convert {

bool write_chakra_et(files::ByteSink& sink, const EtPlus& trace, const ChakraGraph& graph,
                     NodeEncoder& encoder) {
  EtRecordWriter writer(sink);
  writer.metadata(trace.meta);
  for (const ChakraNode& c : graph.nodes) {
    const EtPlusNode& n = trace.nodes[c.index];
    HeadFields head;
    head.id = c.id.value_or(n.id);
    head.name = c.comm_done ? std::string_view(kCommDoneName) : std::string_view(n.name);
    head.kind = c.kind;
    head.ctrl_dep = c.ctrl_dep;
    head.data_deps = &c.data_deps;
    // int(exclusive_dur), zeroed for Optimizer.step as the converter does.
    head.duration_micros = zero_duration_name(n.name) ? 0 : static_cast<std::uint64_t>(n.exclusive_dur);
    if (c.duration) head.duration_micros = *c.duration;
    const std::string encoded = encoder.head(head);
    writer.record({encoded, c.tail.empty() ? std::string_view(n.tail) : std::string_view(c.tail), c.comm});
  }
  return writer.flush();
}

}  // namespace chakrashim::tools::convert
