// The bytes of a Chakra protobuf ET: the global metadata record, then one
// record per node of the graph, in its order (Chakra's protolib framing,
// et_encoding.h). Apart from publishing the file (convert_runner.cpp), so
// that the fuzz target writes exactly what the command writes.
#pragma once

#include "convert/chakra_graph.h"
#include "convert/et_encoding.h"
#include "convert/et_plus_reader.h"

namespace chakrashim::files {
class ByteSink;
}

namespace chakrashim::tools::convert {

// False if a write to the sink failed.
bool write_chakra_et(files::ByteSink& sink, const EtPlus& trace, const ChakraGraph& graph,
                     NodeEncoder& encoder);

}  // namespace chakrashim::tools::convert
