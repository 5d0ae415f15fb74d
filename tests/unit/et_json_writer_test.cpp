// Unit tests for the native recorder's JSON writer (writers/et_json_writer.h)
// on made-up records: torch 2.13 observer's id rules (one counter for thread
// nodes, ops, tensors and storages; op ids before their inputs', outputs'
// at the end), ctrl_deps and fw_parent from the per-thread stacks, value
// texts (types, shapes, strides, None, doubles, lists), node order, and
// records that cannot be read.
#include "writers/et_json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "files/byte_sink.h"
#include "writers/et_records.h"

namespace chakrashim::writers {
namespace {

using nlohmann::json;
using namespace et;

// One thread's stream, built with the recorder's own Encoder.
struct Thread {
  std::vector<std::string> strings;
  std::vector<std::uint8_t> bytes;
  std::uint32_t s(const std::string& text) {
    for (std::uint32_t i = 0; i < strings.size(); ++i)
      if (strings[i] == text) return i;
    strings.push_back(text);
    return static_cast<std::uint32_t>(strings.size() - 1);
  }
};

struct Tensor {
  std::uint64_t impl = 0, storage = 0;
  std::vector<std::int64_t> sizes{2, 3}, strides{3, 1};
  std::uint64_t offset = 0, numel = 6, itemsize = 4;
  std::string dtype = "float", device = "cpu";
  bool defined = true, has_storage = true;
  bool row_major = false;  // strides left out (kTensorRowMajor), as the recorder writes a contiguous one
};

void put_tensor(Thread& t, Encoder& e, const Tensor& x) {
  e.value_kind(ValueKind::tensor);
  e.u8((x.defined ? kTensorShape : 0) | (x.has_storage ? kTensorStorage : 0) |
       (x.defined && x.row_major ? kTensorRowMajor : 0));
  e.u32(t.s(x.dtype));
  e.u64(x.impl);
  if (x.defined) {
    e.u8(static_cast<std::uint8_t>(x.sizes.size()));
    for (auto v : x.sizes) e.i64(v);
    if (!x.row_major)
      for (auto v : x.strides) e.i64(v);
  }
  if (x.has_storage) {
    e.u64(x.storage);
    e.u64(x.offset);
    e.u64(x.numel);
    e.u64(x.itemsize);
    e.u32(t.s(x.device));
  }
}

void put_int(Encoder& e, std::int64_t v) {
  e.value_kind(ValueKind::int_);
  e.i64(v);
}

struct Start {
  std::uint64_t seq = 0, handle = 0, tid = 1, fw_tid = 0;
  std::int64_t seq_nr = -1;
  std::uint8_t scope = 0;
  std::string name = "aten::op", schema{};
  bool inputs_logged = true;
};

// A start record; `inputs` writes the values (and returns how many).
template <typename F>
void start(Thread& t, const Start& s, F inputs) {
  Encoder e(t.bytes);
  e.begin(RecordKind::start, s.seq);
  e.u64(s.handle);
  e.u64(s.tid);
  e.u64(s.fw_tid);
  e.i64(s.seq_nr);
  e.u8(s.scope);
  e.u32(t.s(s.name));
  e.u32(s.schema.empty() ? 0 : t.s(s.schema) + 1);
  e.u8(s.inputs_logged ? kInputsLogged : 0);
  if (s.inputs_logged) {
    const std::size_t n = e.placeholder_u32();
    e.patch_u32(n, inputs(e));
  }
  e.close();
}
void start(Thread& t, const Start& s) {
  start(t, s, [](Encoder&) { return 0u; });
}

template <typename F>
void end(Thread& t, std::uint64_t seq, std::uint64_t handle, std::uint64_t tid, F outputs) {
  Encoder e(t.bytes);
  e.begin(RecordKind::end, seq);
  e.u64(handle);
  e.u64(tid);
  e.u8(kOutputsLogged);
  const std::size_t n = e.placeholder_u32();
  e.patch_u32(n, outputs(e));
  e.close();
}
void end(Thread& t, std::uint64_t seq, std::uint64_t handle, std::uint64_t tid = 1) {
  end(t, seq, handle, tid, [](Encoder&) { return 0u; });
}

json write(std::vector<Thread*> threads, EtWriteStats* stats = nullptr,
           std::string* text_out = nullptr, const std::string& process_groups = "",
           std::uint64_t process_groups_tid = 0, std::vector<std::uint64_t> edges = {}) {
  std::vector<EtThreadStream> streams;
  for (auto* t : threads) {
    EtThreadStream s;
    s.strings = &t->strings;
    if (!t->bytes.empty()) s.chunks.emplace_back(t->bytes.data(), t->bytes.size());
    streams.push_back(s);
  }
  EtHeader h;
  h.pid = 77;
  h.time = "2026-01-02 03:04:05";
  h.start_ts = 1000;
  h.finish_ts = 2000;
  h.process_groups = process_groups;
  h.process_groups_tid = process_groups_tid;
  h.edges = std::move(edges);
  files::StringSink sink;
  EXPECT_TRUE(write_et_json(sink, h, streams, stats));
  if (text_out) *text_out = sink.text();
  return json::parse(sink.text());
}

json attr(const json& node, const std::string& name) {
  for (const auto& a : node["attrs"])
    if (a["name"] == name) return a["value"];
  return nullptr;
}

TEST(EtJsonWriter, EmptyWindowHasHeaderRootAndFinish) {
  const json et = write({});
  EXPECT_EQ(et["schema"], "1.1.1-chakra.0.0.4");
  EXPECT_EQ(et["pid"], 77);
  EXPECT_EQ(et["time"], "2026-01-02 03:04:05");
  EXPECT_EQ(et["start_ts"], 1000);
  EXPECT_EQ(et["finish_ts"], 2000);
  ASSERT_EQ(et["nodes"].size(), 1u);
  const json& root = et["nodes"][0];
  EXPECT_EQ(root["id"], 1);
  EXPECT_EQ(root["ctrl_deps"], 1);
  EXPECT_EQ(root["name"], "[pytorch|profiler|execution_trace|process]");
  EXPECT_EQ(attr(root, "scope"), 7);
  EXPECT_EQ(attr(root, "seq_id"), -1);
  EXPECT_EQ(attr(root, "tensor_range"), "");
}

// aten::linear(x, w, b) calling aten::t(w) -> wt: the order torch takes ids
// in (the example from a real torch 2.13 trace: 3, inputs 4..9, t 10, its
// output 11... wait for it at its end).
TEST(EtJsonWriter, IdsFollowTorchsOrder) {
  Thread t;
  const Tensor x{0x100, 0x1000}, w{0x200, 0x2000}, b{0x300, 0x3000};
  Tensor wt{0x400, 0x2000};  // a view: w's storage
  start(t, {.seq = 1, .handle = 11, .seq_nr = 0, .name = "aten::linear",
            .schema = "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"},
        [&](Encoder& e) {
          put_tensor(t, e, x);
          put_tensor(t, e, w);
          put_tensor(t, e, b);
          return 3u;
        });
  start(t, {.seq = 2, .handle = 12, .name = "aten::t"}, [&](Encoder& e) {
    put_tensor(t, e, w);
    return 1u;
  });
  end(t, 3, 12, 1, [&](Encoder& e) {
    put_tensor(t, e, wt);
    return 1u;
  });
  Tensor out{0x500, 0x5000};
  end(t, 4, 11, 1, [&](Encoder& e) {
    put_tensor(t, e, out);
    return 1u;
  });
  const json et = write({&t});
  const auto& nodes = et["nodes"];
  ASSERT_EQ(nodes.size(), 4u);  // thread, t, linear, root
  EXPECT_EQ(nodes[0]["name"], "[pytorch|profiler|execution_trace|thread]");
  EXPECT_EQ(nodes[0]["id"], 2);
  EXPECT_EQ(nodes[0]["ctrl_deps"], 1);
  EXPECT_EQ(attr(nodes[0], "tid"), 1);
  const json& tnode = nodes[1];
  const json& linear = nodes[2];
  EXPECT_EQ(linear["id"], 3);
  EXPECT_EQ(linear["ctrl_deps"], 2);
  EXPECT_EQ(linear["inputs"]["values"],
            json::parse(R"J([[4,5,0,6,4,"cpu"],[6,7,0,6,4,"cpu"],[8,9,0,6,4,"cpu"]])J"));
  EXPECT_EQ(tnode["id"], 10);
  EXPECT_EQ(tnode["ctrl_deps"], 3);
  EXPECT_EQ(tnode["inputs"]["values"], json::parse(R"J([[6,7,0,6,4,"cpu"]])J"));
  EXPECT_EQ(tnode["outputs"]["values"], json::parse(R"J([[11,7,0,6,4,"cpu"]])J"));
  EXPECT_EQ(linear["outputs"]["values"], json::parse(R"J([[12,13,0,6,4,"cpu"]])J"));
  EXPECT_EQ(linear["inputs"]["types"], json::parse(R"J(["Tensor(float)","Tensor(float)","Tensor(float)"])J"));
  EXPECT_EQ(linear["inputs"]["shapes"], json::parse("[[2,3],[2,3],[2,3]]"));
  EXPECT_EQ(linear["inputs"]["strides"], json::parse("[[3,1],[3,1],[3,1]]"));
  EXPECT_EQ(attr(linear, "rf_id"), 11);
  EXPECT_EQ(attr(linear, "seq_id"), 0);
  EXPECT_EQ(attr(linear, "op_schema"),
            "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor");
  EXPECT_EQ(attr(tnode, "op_schema"), "");
  EXPECT_EQ(nodes[3]["id"], 1);
}

// torch keys tensors and storages in one map: an address seen before, for
// whichever kind, keeps its id (a freed TensorImpl's address reused).
TEST(EtJsonWriter, AddressesKeepTheirIdsAcrossKinds) {
  Thread t;
  Tensor a{0x100, 0x200};
  Tensor b{0x200, 0x100};  // b's impl is a's storage address and vice versa
  start(t, {.seq = 1, .handle = 1}, [&](Encoder& e) {
    put_tensor(t, e, a);
    put_tensor(t, e, b);
    put_tensor(t, e, a);
    return 3u;
  });
  end(t, 2, 1);
  const json et = write({&t});
  EXPECT_EQ(et["nodes"][1]["inputs"]["values"],
            json::parse(R"J([[4,5,0,6,4,"cpu"],[5,4,0,6,4,"cpu"],[4,5,0,6,4,"cpu"]])J"));
}

TEST(EtJsonWriter, ScalarsListsAndNone) {
  Thread t;
  start(t, {.seq = 1, .handle = 1, .name = "aten::as_strided"}, [&](Encoder& e) {
    put_tensor(t, e, Tensor{0x10, 0x20});
    e.value_kind(ValueKind::list);
    e.u32(2);
    put_int(e, 16);
    put_int(e, 32);
    e.value_kind(ValueKind::list);
    e.u32(0);
    e.value_kind(ValueKind::other);
    e.u32(t.s("None"));
    e.value_kind(ValueKind::double_);
    e.f64(-0.05);
    e.value_kind(ValueKind::double_);
    e.f64(std::numeric_limits<double>::infinity());
    e.value_kind(ValueKind::bool_);
    e.u8(0);
    e.value_kind(ValueKind::string);
    e.u32(5);
    e.raw("a\"b\n\\", 5);
    e.value_kind(ValueKind::device);
    e.u32(t.s("cuda:1"));
    e.value_kind(ValueKind::tuple);
    e.u32(2);
    put_tensor(t, e, Tensor{0x30, 0x40, {4}, {1}});
    put_int(e, 3);
    return 10u;
  });
  end(t, 2, 1);
  std::string text;
  const json et = write({&t}, nullptr, &text);
  const json& n = et["nodes"][1];
  EXPECT_EQ(n["inputs"]["types"],
            json::parse(R"J(["Tensor(float)","GenericList[Int,Int]","GenericList[]","None","Double",
                            "Double","Bool","String","Device","Tuple[Tensor(float),Int]"])J"));
  EXPECT_EQ(n["inputs"]["shapes"], json::parse("[[2,3],[[],[]],[],[],[],[],[],[],[],[[4],[]]]"));
  EXPECT_EQ(n["inputs"]["strides"], json::parse("[[3,1],[[],[]],[],[],[],[],[],[],[],[[1],[]]]"));
  EXPECT_EQ(n["inputs"]["values"],
            json::parse(R"J([[4,5,0,6,4,"cpu"],[16,32],[],"<None>",-0.05,"inf",false,"a\"b\n\\",
                            "cuda:1",[[6,7,0,6,4,"cpu"],3]])J"));
  // torch's std::to_string: six decimals.
  EXPECT_NE(text.find("-0.050000"), std::string::npos);
}

TEST(EtJsonWriter, UndefinedTensorAndNoStorage) {
  Thread t;
  Tensor undefined{0x900, 0, {}, {}};
  undefined.defined = false;
  undefined.has_storage = false;
  undefined.dtype = "nullptr (uninitialized)";
  start(t, {.seq = 1, .handle = 1}, [&](Encoder& e) {
    put_tensor(t, e, undefined);
    return 1u;
  });
  end(t, 2, 1);
  const json n = write({&t})["nodes"][1];
  EXPECT_EQ(n["inputs"]["values"], json::parse(R"J([[4,0,0,0,0,""]])J"));
  EXPECT_EQ(n["inputs"]["shapes"], json::parse("[[]]"));
  EXPECT_EQ(n["inputs"]["types"], json::parse(R"J(["Tensor(nullptr (uninitialized))"])J"));
}

// A tensor recorded without its strides (row-major: the recorder left them
// out) gets torch's contiguous strides back, a size of 0 counting as 1; its
// neighbours' fields read on.
TEST(EtJsonWriter, RowMajorStridesAreRebuiltAsTorchComputesThem) {
  Thread t;
  Tensor a{0x100, 0x200, {4, 0, 3}, {}};
  a.row_major = true;
  Tensor b{0x300, 0x400, {2, 1, 5, 7}, {}};
  b.row_major = true;
  Tensor scalar{0x500, 0x600, {}, {}};
  scalar.row_major = true;
  Tensor transposed{0x700, 0x200, {3, 2}, {1, 3}};
  start(t, {.seq = 1, .handle = 1}, [&](Encoder& e) {
    for (const Tensor* x : {&a, &b, &scalar, &transposed}) put_tensor(t, e, *x);
    return 4u;
  });
  end(t, 2, 1);
  const json n = write({&t})["nodes"][1];
  EXPECT_EQ(n["inputs"]["shapes"], json::parse("[[4,0,3],[2,1,5,7],[],[3,2]]"));
  EXPECT_EQ(n["inputs"]["strides"], json::parse("[[3,3,1],[35,35,7,1],[],[1,3]]"));
  // The last tensor's fields read on after three without strides: its
  // storage is the first one's, then offset, numel, itemsize and device.
  const json& last = n["inputs"]["values"][3];
  EXPECT_EQ(last[1], n["inputs"]["values"][0][1]);
  EXPECT_EQ(json(std::vector<json>(last.begin() + 2, last.end())), json::parse(R"J([0,6,4,"cpu"])J"));
}

// The recorder's test and the writer's rebuild are one function: strides
// are left out exactly where they equal what the writer makes of the sizes.
TEST(EtRecords, RowMajorStridesAreTorchsContiguousOnes) {
  auto strides_of = [](std::vector<std::int64_t> sizes) {
    std::vector<std::int64_t> out(sizes.size());
    row_major_strides(sizes.data(), sizes.size(), [&](std::size_t i, std::int64_t s) {
      out[i] = s;
      return true;
    });
    return out;
  };
  EXPECT_EQ(strides_of({2, 3}), (std::vector<std::int64_t>{3, 1}));
  EXPECT_EQ(strides_of({4, 0, 3}), (std::vector<std::int64_t>{3, 3, 1}));
  EXPECT_EQ(strides_of({}), (std::vector<std::int64_t>{}));
  EXPECT_EQ(strides_of({1, 1, 8}), (std::vector<std::int64_t>{8, 8, 1}));
  // A test that stops early stops the walk.
  int calls = 0;
  const std::vector<std::int64_t> sizes{5, 6, 7};
  EXPECT_FALSE(row_major_strides(sizes.data(), 3, [&](std::size_t, std::int64_t) { return ++calls < 2; }));
  EXPECT_EQ(calls, 2);
}

// Type names come from the string table: a quote, a backslash or a newline
// in one (a dtype, a tag, or one nested in a list) is escaped, and the file
// stays JSON (found by fuzz.et_json_writer).
TEST(EtJsonWriter, TypeNamesAreEscaped) {
  Thread t;
  Tensor odd{0x10, 0x20};
  odd.dtype = "q\"\\\n";
  start(t, {.seq = 1, .handle = 1}, [&](Encoder& e) {
    put_tensor(t, e, odd);
    e.value_kind(ValueKind::list);
    e.u32(1);
    put_tensor(t, e, odd);
    e.value_kind(ValueKind::other);
    e.u32(t.s("a\"b"));
    return 3u;
  });
  end(t, 2, 1);
  const json n = write({&t})["nodes"][1];
  EXPECT_EQ(n["inputs"]["types"],
            json({"Tensor(q\"\\\n)", "GenericList[Tensor(q\"\\\n)]", "a\"b"}));
}

// Issue #34 item 3: the job's own torch.profiler's "ProfilerStep#N" records
// get the device trace's name for them, so the two files agree on the rf_id.
TEST(EtJsonWriter, TheJobsOwnStepRecordsAreRenamedAsInTheDeviceTrace) {
  Thread t;
  start(t, {.seq = 1, .handle = 7, .scope = 7, .name = "ProfilerStep#3"});
  start(t, {.seq = 2, .handle = 8});
  end(t, 3, 8);
  end(t, 4, 7);
  const json nodes = write({&t})["nodes"];
  std::vector<std::string> names;
  for (const auto& n : nodes) names.push_back(n["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"[pytorch|profiler|execution_trace|thread]", "aten::op",
                                             "job:ProfilerStep#3", "[pytorch|profiler|execution_trace|process]"}));
  EXPECT_EQ(attr(nodes[2], "rf_id"), 7);
  EXPECT_EQ(nodes[1]["ctrl_deps"], nodes[2]["id"]);
}

// Two threads merged by seq; a backward op on thread 2 takes its fw_parent
// from the top of thread 1's stack at its start.
TEST(EtJsonWriter, ThreadsMergeBySeqAndFwParent) {
  Thread a, b;
  start(a, {.seq = 1, .handle = 1, .tid = 1, .name = "outer"});
  start(b, {.seq = 2, .handle = 2, .tid = 2, .fw_tid = 1, .seq_nr = 5, .scope = 1,
            .name = "AddBackward0"});
  end(b, 3, 2, 2);
  end(a, 4, 1, 1);
  const json et = write({&a, &b});
  const auto& nodes = et["nodes"];
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_EQ(nodes[0]["id"], 2);  // thread 1
  EXPECT_EQ(attr(nodes[0], "tid"), 1);
  EXPECT_EQ(nodes[1]["id"], 4);  // thread 2 (outer took 3)
  EXPECT_EQ(attr(nodes[1], "tid"), 2);
  const json& bw = nodes[2];
  EXPECT_EQ(bw["name"], "AddBackward0");
  EXPECT_EQ(bw["id"], 5);
  EXPECT_EQ(bw["ctrl_deps"], 4);
  EXPECT_EQ(attr(bw, "fw_parent"), 3);
  EXPECT_EQ(attr(bw, "fw_tid"), 1);
  EXPECT_EQ(attr(bw, "scope"), 1);
  EXPECT_EQ(attr(bw, "seq_id"), 5);
  EXPECT_EQ(nodes[3]["name"], "outer");
}

// Ops whose start came before the window have no node; ops still open at its
// end are closed there (issue #49: a record_function around the whole
// iteration lost its node, and its children named a parent not in the
// file); neither shifts ids.
TEST(EtJsonWriter, UnmatchedEndsAndOpsOpenAtTheEnd) {
  Thread t;
  end(t, 1, 99);  // started before the window
  start(t, {.seq = 2, .handle = 1, .name = "open"});
  start(t, {.seq = 3, .handle = 2, .name = "closed"});
  end(t, 4, 2);
  EtWriteStats stats;
  const json et = write({&t}, &stats);
  ASSERT_EQ(et["nodes"].size(), 4u);
  EXPECT_EQ(et["nodes"][1]["name"], "closed");
  EXPECT_EQ(et["nodes"][1]["id"], 4);
  EXPECT_EQ(et["nodes"][1]["ctrl_deps"], 3);
  EXPECT_EQ(et["nodes"][2]["name"], "open");
  EXPECT_EQ(et["nodes"][2]["id"], 3);
  EXPECT_EQ(et["nodes"][2]["outputs"]["values"], json::array());
  EXPECT_EQ(stats.nodes, 2u);
  EXPECT_EQ(stats.unfinished, 1u);
}

// Recording stopped at seq 5 (an edge: a warm-up step, a cut): A and B, open
// then, are closed there, innermost first; B's later end is ignored; C,
// begun after recording went on again, sits under the thread's node.
TEST(EtJsonWriter, OpsOpenAtAnEdgeAreClosedThere) {
  Thread t;
  start(t, {.seq = 1, .handle = 1, .name = "A"});
  start(t, {.seq = 2, .handle = 2, .name = "B"});
  start(t, {.seq = 3, .handle = 3, .name = "inner"});
  end(t, 4, 3);
  end(t, 6, 2);  // B ends after the edge
  start(t, {.seq = 7, .handle = 4, .name = "C"});
  end(t, 8, 4);
  EtWriteStats stats;
  const json et = write({&t}, &stats, nullptr, "", 0, {5});
  std::vector<std::string> names;
  for (const auto& n : et["nodes"]) names.push_back(n["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"[pytorch|profiler|execution_trace|thread]", "inner", "B", "A", "C",
                                             "[pytorch|profiler|execution_trace|process]"}));
  const std::uint64_t thread = et["nodes"][0]["id"];
  EXPECT_EQ(et["nodes"][3]["ctrl_deps"], thread);                   // A
  EXPECT_EQ(et["nodes"][2]["ctrl_deps"], et["nodes"][3]["id"]);     // B in A
  EXPECT_EQ(et["nodes"][1]["ctrl_deps"], et["nodes"][2]["id"]);     // inner in B
  EXPECT_EQ(et["nodes"][4]["ctrl_deps"], thread);                   // C
  EXPECT_EQ(stats.unfinished, 2u);
  EXPECT_EQ(stats.nodes, 4u);
}

// torch's checkFunctionInputsForLogging failed: no inputs, parent 0, not
// pushed; its end still pops the thread's stack (as torch's does).
TEST(EtJsonWriter, InputsNotLogged) {
  Thread t;
  start(t, {.seq = 1, .handle = 1, .name = "outer"});
  start(t, {.seq = 2, .handle = 2, .name = "odd", .inputs_logged = false});
  end(t, 3, 2);
  start(t, {.seq = 4, .handle = 3, .name = "after"});
  end(t, 5, 3);
  const json et = write({&t});
  EXPECT_EQ(et["nodes"][1]["name"], "odd");
  EXPECT_EQ(et["nodes"][1]["ctrl_deps"], 0);
  EXPECT_EQ(et["nodes"][2]["name"], "after");
  EXPECT_EQ(et["nodes"][2]["ctrl_deps"], 2);  // outer was popped by odd's end
}

TEST(EtJsonWriter, KernelInfoAndCommAttrs) {
  Thread t;
  {
    Encoder e(t.bytes);
    e.begin(RecordKind::start, 1);
    e.u64(1);
    e.u64(1);
    e.u64(0);
    e.i64(-1);
    e.u8(0);
    e.u32(t.s("triton_poi_fused_0"));
    e.u32(0);
    e.u8(kInputsLogged | kKernelInfo);
    e.u32(1);
    put_int(e, 7);
    e.u32(t.s("triton"));
    e.u32(t.s("cabc.py"));
    e.i64(3);
    e.close();
  }
  {
    Encoder e(t.bytes);
    e.begin(RecordKind::end, 2);
    e.u64(1);
    e.u64(1);
    e.u8(kOutputsLogged | kCommAttrs);
    e.u32(0);
    e.u32(2);
    e.u32(t.s("collective_name"));
    e.u32(t.s("string"));
    e.u32(t.s("\"allreduce\""));
    e.u32(t.s("pg_size"));
    e.u32(t.s("uint64"));
    e.u32(t.s("2"));
    e.close();
  }
  std::string text;
  const json n = write({&t}, nullptr, &text)["nodes"][1];
  EXPECT_EQ(attr(n, "kernel_backend"), "triton");
  EXPECT_EQ(attr(n, "kernel_file"), "cabc.py");
  EXPECT_EQ(n["inputs"]["values"], json::parse("[7,3]"));
  EXPECT_EQ(n["inputs"]["types"], json::parse(R"J(["Int","Int"])J"));
  EXPECT_EQ(n["inputs"]["strides"], json::parse("[[]]"));  // torch adds none for the stream
  EXPECT_EQ(attr(n, "collective_name"), "allreduce");
  EXPECT_EQ(attr(n, "pg_size"), 2);
  EXPECT_EQ(n["attrs"].size(), 12u);
  EXPECT_NE(text.find("\"value\": \"\"}, \n  {\"name\": \"collective_name\""), std::string::npos);
}

// A record cut short: that thread stops there, the others go on, and the
// document is still whole JSON.
TEST(EtJsonWriter, CorruptRecordsStopTheirThreadOnly) {
  Thread a, b;
  start(a, {.seq = 1, .handle = 1, .name = "good"});
  end(a, 3, 1);
  start(b, {.seq = 2, .handle = 2, .name = "bad"}, [&](Encoder& e) {
    e.value_kind(ValueKind::list);
    e.u32(1000000);  // more items than bytes
    return 1u;
  });
  end(b, 4, 2);
  EtWriteStats stats;
  const json et = write({&a, &b}, &stats);
  EXPECT_GE(stats.corrupt, 1u);
  bool good = false;
  for (const auto& n : et["nodes"]) {
    good |= n["name"] == "good";
    EXPECT_NE(n["name"], "bad");
  }
  EXPECT_TRUE(good);
}

TEST(EtJsonWriter, StringIndexOutOfRangeIsCorrupt) {
  Thread t;
  start(t, {.seq = 1, .handle = 1, .name = "x"});
  end(t, 2, 1);
  t.strings.clear();  // every index now out of range
  EtWriteStats stats;
  const json et = write({&t}, &stats);
  EXPECT_EQ(et["nodes"].size(), 1u);
  EXPECT_GE(stats.corrupt, 1u);
}

// The process-group node whose record missed a short window (issue #39):
// written from the known answer, once, under the stepping thread's node, as
// torch records it (a USER_SCOPE node whose one input is the JSON text).
TEST(EtJsonWriter, AMissingProcessGroupNodeIsWrittenFromTheAnswer) {
  Thread t;
  start(t, {.seq = 1, .handle = 11, .tid = 3, .name = "aten::add"});
  end(t, 2, 11, 3);
  const std::string pg = R"([{"pg_name": "0", "pg_desc": "default_pg", "ranks": [0, 1]}])";
  EtWriteStats stats;
  const json et = write({&t}, &stats, nullptr, pg, 3);
  EXPECT_TRUE(stats.process_groups_added);
  std::vector<json> found;
  for (const auto& n : et["nodes"])
    if (n["name"] == "## process_group:init ##") found.push_back(n);
  ASSERT_EQ(found.size(), 1u);
  const json& node = found[0];
  EXPECT_EQ(node["inputs"]["values"], json::array({pg}));
  EXPECT_EQ(node["inputs"]["types"], json::array({"String"}));
  EXPECT_EQ(node["inputs"]["shapes"], json::array({json::array()}));
  EXPECT_EQ(attr(node, "scope"), 7);
  EXPECT_EQ(attr(node, "tid"), 3);
  // Under the thread's node (the op's parent), with an id of its own.
  const json& op = et["nodes"][1];
  ASSERT_EQ(op["name"], "aten::add");
  EXPECT_EQ(node["ctrl_deps"], op["ctrl_deps"]);
  EXPECT_GT(node["id"], op["id"]);
  EXPECT_EQ(json::parse(node["inputs"]["values"][0].get<std::string>())[0]["pg_desc"], "default_pg");
}

TEST(EtJsonWriter, ARecordedProcessGroupNodeIsNotWrittenTwice) {
  Thread t;
  start(t, {.seq = 1, .handle = 11, .tid = 1, .scope = 7, .name = "## process_group:init ##"},
        [&](Encoder& e) {
          e.value_kind(ValueKind::string);
          const std::string text = "[]";
          e.u32(static_cast<std::uint32_t>(text.size()));
          e.raw(text.data(), text.size());
          return 1u;
        });
  end(t, 2, 11, 1);
  EtWriteStats stats;
  const json et = write({&t}, &stats, nullptr, "[{\"pg_name\": \"0\"}]", 1);
  EXPECT_FALSE(stats.process_groups_added);
  int count = 0;
  for (const auto& n : et["nodes"]) count += n["name"] == "## process_group:init ##";
  EXPECT_EQ(count, 1);
}

TEST(EtJsonWriter, WithoutAnAnswerNoProcessGroupNodeIsMade) {
  Thread t;
  start(t, {.seq = 1, .handle = 11, .name = "aten::add"});
  end(t, 2, 11);
  EtWriteStats stats;
  const json et = write({&t}, &stats);
  EXPECT_FALSE(stats.process_groups_added);
  for (const auto& n : et["nodes"]) EXPECT_NE(n["name"], "## process_group:init ##");
}

// A thread that recorded nothing in the window (the stepping thread ran no
// op): the node gets a thread node of its own.
TEST(EtJsonWriter, TheProcessGroupNodeMakesItsThreadNodeIfNeeded) {
  Thread t;
  start(t, {.seq = 1, .handle = 11, .tid = 2, .name = "aten::add"});
  end(t, 2, 11, 2);
  const json et = write({&t}, nullptr, nullptr, "[]", 5);
  const auto& nodes = et["nodes"];
  ASSERT_EQ(nodes.size(), 5u);  // thread 2, add, thread 5, the node, root
  EXPECT_EQ(nodes[2]["name"], "[pytorch|profiler|execution_trace|thread]");
  EXPECT_EQ(attr(nodes[2], "tid"), 5);
  EXPECT_EQ(nodes[3]["name"], "## process_group:init ##");
  EXPECT_EQ(nodes[3]["ctrl_deps"], nodes[2]["id"]);
}

}  // namespace
}  // namespace chakrashim::writers
