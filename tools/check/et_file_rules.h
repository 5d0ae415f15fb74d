// `chakrashim check` on Chakra protobuf .et files: what ASTRA-sim's feeder
// (Chakra feeder_v3) and Workload need of them, as pure rules over decoded
// nodes (convert/et_file_reader.h decodes the files). Per file:
//   et.read          the file is a GlobalMetadata record, then Node records
//   et.ids           no node id twice
//   et.dep_missing   every data and ctrl dep names a node of the file (the
//                    feeder: "Node N in ctrl_dep graph, but not found in index")
//   et.cycle         no cycle over data and ctrl deps together (the feeder
//                    resolves both), and some node has no dep at all
//   et.node_type     MEM_LOAD, MEM_STORE, COMP, COMM_SEND, COMM_RECV or
//                    COMM_COLL (INVALID is skipped: a warning; METADATA makes
//                    ASTRA-sim's statistics assert: an error)
//   et.node_attrs    is_cpu_op on every node (the Workload reads it with no
//                    default); a comm node not on the CPU ("Comm node
//                    should not be on CPU")
//   et.comm_attrs    a collective has comm_type (one ASTRA-sim runs:
//                    ALL_REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL,
//                    REDUCE_SCATTER) and comm_size; send/recv comm_size and
//                    comm_dst/comm_src, the file's own rank at its own
//                    end (ASTRA-sim: "Send node should be issued by the
//                    sender"); pg_name, when set, an integer (ASTRA-sim
//                    reads it with std::stoi)
// Across the files of one prefix:
//   et.collectives_match  the same collectives in the same order on every
//                    rank of a group (type, then size: a warning)
//   et.p2p_match     each message sent is received: as many sends as
//                    receives of each (src, dst, tag, size), where both
//                    ranks have a file (ASTRA-sim matches the k-th send to
//                    the k-th receive; one without its partner hangs)
//   et.no_collectives     (warning) a world above 1 without a collective
//   et.rank_missing       (warning) a rank below the world with no file
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chakrashim::tools::check {

struct EtFileNode {
  std::uint64_t id = 0;
  std::string name;
  int type = 0;  // Chakra's NodeType
  std::vector<std::uint64_t> ctrl_deps, data_deps;
  std::optional<bool> is_cpu_op;
  std::optional<std::int64_t> comm_type, comm_size, comm_src, comm_dst, comm_tag;
  std::optional<std::string> pg_name;
  std::uint64_t duration_micros = 0;
  // From the process-group node's groups ("## process_group:init ##",
  // METADATA in Chakra's files, COMP in ours): the largest group_size.
  std::optional<std::uint64_t> world;
};

struct EtFile {
  std::optional<std::uint64_t> rank;  // from PREFIX.R.et
  std::string path;
  std::string read_error;  // set: the file could not be decoded
  std::vector<EtFileNode> nodes;
  // What `chakrashim convert` put in the GlobalMetadata (et_encoding.h):
  // the captured window of the steps written, and the recording cost taken
  // out of the timeline; absent in files of other tools.
  std::optional<std::uint64_t> window_ns, window_steps, cost_taken_ns;
};

enum class EtSeverity : std::uint8_t { error, warning };

struct EtFinding {
  std::optional<std::uint64_t> rank;  // nullopt: about the whole set
  EtSeverity severity = EtSeverity::error;
  std::string rule;    // "et.dep_missing"
  std::string detail;  // what was found, with the file
  std::string fix;
};

struct EtFileFigures {
  std::uint64_t nodes = 0, collectives = 0, sends = 0, receives = 0, comp = 0;
};

std::vector<EtFinding> check_et_file(const EtFile& file, EtFileFigures* figures = nullptr);
std::vector<EtFinding> check_et_set(const std::vector<EtFile>& files);

}  // namespace chakrashim::tools::check
