// Turns the native recorder's records (et_records.h) into the Execution Trace
// JSON that torch's ExecutionTraceObserver writes for the same callbacks
// (torch 2.13, schema "1.1.1-chakra.0.0.4"; docs/et-recorder.md lists the
// rules and the few deliberate differences). Torch-free: runs on the writer
// thread after the window, and in unit and fuzz tests on made-up records.
//
// How torch's ids come out the same: torch takes every id (thread nodes, op
// nodes, tensors, storages) from one counter, inside the callbacks, keyed by
// TensorImpl and storage data pointers. The writer replays the records of
// every thread merged by their sequence number, assigning ids in the order
// the callbacks ran, with the same rules; nodes come out in the order torch
// writes them (a thread node at its thread's first op, an op node at its end).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "files/byte_sink.h"
#include "writers/kineto_inputs.h"

namespace chakrashim::writers {

// One recording thread's records: its string table and its chunks of
// records (no record straddles two chunks).
struct EtThreadStream {
  const std::vector<std::string>* strings = nullptr;
  std::vector<std::pair<const std::uint8_t*, std::size_t>> chunks;
};

struct EtHeader {
  std::int64_t pid = 0;
  std::string time;            // local wall time, "%Y-%m-%d %X"
  std::int64_t start_ts = 0;   // steady clock, ms, as torch's observer
  std::int64_t finish_ts = 0;
  // torch.distributed's process groups (the pg_config JSON text), when known
  // by the time the ET is written: if the records hold no "## process_group:
  // init ##" node (its record, made on the watch thread once Python answers,
  // came after a short window on a loaded machine), the node is written from
  // this, on thread `process_groups_tid`, after the recorded ones (Chakra
  // reads it by name). Empty: nothing is added.
  std::string process_groups;
  std::uint64_t process_groups_tid = 0;
  // Where recording stopped (the recorder's sequence number then, one per
  // stop: the window's end, a cut, a warm-up's start): every op still open
  // there is closed there, its node written with no outputs, as a span
  // that straddles the window's edge is closed at the edge (issue #49: a
  // record_function around the whole iteration lost its last node, and its
  // children named a parent that was not in the file). Its end, if it
  // comes after, is ignored.
  std::vector<std::uint64_t> edges;
  // chakrashim's metadata, a JSON object's text ("{...}"), written as the
  // document's last key, "chakrashim", after finish_ts (Chakra's tools and
  // HTA read the keys they know by name; issue #49): whether the window
  // has a device trace, the run it belongs to. The writer adds
  // "closed_at_edge", the ids of the nodes it closed at an edge. Empty:
  // no such key.
  std::string meta_json;
};

struct EtWriteStats {
  std::uint64_t nodes = 0;       // op nodes written (thread and root nodes not counted)
  std::uint64_t unfinished = 0;  // started, never ended: closed at an edge (EtHeader::edges)
  std::uint64_t corrupt = 0;     // records that could not be read (a stream stops there)
  bool process_groups_added = false;  // written from EtHeader::process_groups
};

// Writes the whole document. False if the sink failed. `inputs`, when
// given, gets each op node's inputs as Kineto writes them on its cpu_op
// (kineto_inputs.h), by rf_id, for the device trace written next.
bool write_et_json(files::ByteSink& sink, const EtHeader& header,
                   const std::vector<EtThreadStream>& threads, EtWriteStats* stats = nullptr,
                   InputsByRfId* inputs = nullptr);

}  // namespace chakrashim::writers
