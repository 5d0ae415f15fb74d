// Unit tests for the torch-ET filter (writers/torch_et_steps.h): the job's
// own ProfilerStep#N node names get the device trace's job: prefix, wherever
// the file's reads cut the text, and nothing else changes.
#include "writers/torch_et_steps.h"

#include <gtest/gtest.h>

#include <string>

#include "files/byte_sink.h"

namespace chakrashim::writers {
namespace {

// As torch 2.13's observer writes nodes.
const std::string kEt =
    "{\n  \"schema\": \"1.1.1-chakra.0.0.4\", \"pid\": 7, \"nodes\": [\n"
    "    {\n        \"id\": 2, \"name\": \"[pytorch|profiler|execution_trace|thread]\", \"ctrl_deps\": 1,\n"
    "        \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": 0}]},\n"
    "    {\n        \"id\": 7, \"name\": \"ProfilerStep#0\", \"ctrl_deps\": 2,\n"
    "        \"inputs\": {\"values\": [\"ProfilerStep#0\", \"\\\"name\\\": \\\"ProfilerStep#9\"]},\n"
    "        \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": 3}]},\n"
    "    {\n        \"id\": 8, \"name\": \"profiler::_record_function_enter_new\", \"ctrl_deps\": 7},\n"
    "    {\n        \"id\": 9, \"name\": \"ProfilerStep#1\", \"ctrl_deps\": 2}\n  ]\n}\n";

std::string renamed_in_pieces(const std::string& text, std::size_t piece, std::uint64_t& count) {
  files::StringSink sink;
  TorchEtStepRenamer r(&sink);
  for (std::size_t i = 0; i < text.size(); i += piece) r.feed(std::string_view(text).substr(i, piece));
  r.finish();
  count = r.renamed();
  return sink.text();
}

TEST(TorchEtStepRenamer, RenamesTheJobsStepNodesWhereverTheReadsCut) {
  std::string want = kEt;
  for (const char* name : {"\"name\": \"ProfilerStep#0\", \"ctrl_deps\": 2", "\"name\": \"ProfilerStep#1\""}) {
    const auto at = want.find(name);
    ASSERT_NE(at, std::string::npos);
    want.insert(at + 9, "job:");
  }
  for (std::size_t piece = 1; piece <= kEt.size(); ++piece) {
    std::uint64_t count = 0;
    ASSERT_EQ(renamed_in_pieces(kEt, piece, count), want) << "pieces of " << piece;
    EXPECT_EQ(count, 2u);
  }
}

TEST(TorchEtStepRenamer, AScanOnlyCountsAndAFileWithoutThemIsUnchanged) {
  TorchEtStepRenamer scan(nullptr);
  scan.feed(kEt);
  scan.finish();
  EXPECT_EQ(scan.renamed(), 2u);
  const std::string plain = "{\"nodes\": [{\"id\": 2, \"name\": \"aten::mm\"}, {\"name\": \"ProfilerSte\"}]}";
  std::uint64_t count = 1;
  EXPECT_EQ(renamed_in_pieces(plain, 5, count), plain);
  EXPECT_EQ(count, 0u);
}

}  // namespace
}  // namespace chakrashim::writers
