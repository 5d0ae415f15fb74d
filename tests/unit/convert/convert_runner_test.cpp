// convert's totals line (tools/convert/convert_runner.h): what 512 ranks
// print instead of 512 lines.
#include "convert/convert_runner.h"

#include <gtest/gtest.h>

#include <new>

#include "convert/link_steps.h"
#include "files/byte_sink.h"

namespace chakrashim::tools::convert {
namespace {

ConvertResult converted(std::uint64_t rank, std::uint64_t nodes, bool linked, std::string output) {
  ConvertResult r;
  r.rank = rank;
  r.ok = true;
  r.linked = linked;
  r.stats.written = nodes;
  r.output = std::move(output);
  return r;
}

TEST(ConvertTotals, RanksNodesHowTheyWereLinkedAndTheFolder) {
  ConvertResult failed;
  failed.rank = 3;
  failed.linked = true;  // its link failed: not counted
  failed.error = "link: bad";
  ConvertResult in_memory = converted(0, 22, true, "/t/0_et/rank.0.et");
  in_memory.in_memory = true;
  const std::vector<ConvertResult> results = {in_memory, converted(1, 20, true, "/t/0_et/rank.1.et"),
                                              converted(2, 20, false, "/t/0_et/rank.2.et"), failed};
  EXPECT_EQ(totals_line(results, 1.5),
            "chakrashim convert: 3 ranks converted, 1 failed; 1 linked in memory; 1 linked through an ET+ file; "
            "62 nodes written; 1.50 s; .et in /t/0_et");
  // ET+ files given: nothing was linked, and the line says nothing of it.
  EXPECT_EQ(totals_line({converted(0, 22, false, "/sim/llm.0.et")}, 0.25),
            "chakrashim convert: 1 rank converted, 0 failed; 22 nodes written; 0.25 s; .et in /sim");
}

TEST(ConvertSummary, SaysHowTheRankWasLinked) {
  ConvertResult r = converted(4, 22, true, "/t/0_et/rank.4.et");
  r.in_memory = true;
  r.link_seconds = 0.25;
  r.seconds = 0.5;
  r.stats.collectives = 2;
  EXPECT_EQ(summary_line(r),
            "rank 4: linked in memory (0.25 s), 22 nodes (2 collectives, 0 sends, 0 receives) -> /t/0_et/rank.4.et "
            "(0.50 s)");
  r.in_memory = false;
  r.input = "/t/0_linked/rank-4.json";
  EXPECT_EQ(summary_line(r),
            "rank 4: linked -> /t/0_linked/rank-4.json (0.25 s), 22 nodes (2 collectives, 0 sends, 0 receives) -> "
            "/t/0_et/rank.4.et (0.50 s)");
}

// Issue #34: a link step that throws while the rank's reader runs beside it.
// The reader is joined (told first, on the text path, that no more ET+
// comes) and the exception reaches the caller; with a std::thread there,
// its destructor called std::terminate and ended the CLI.
TEST(ConvertLinkSteps, ALinkThatThrowsJoinsTheReaderOfItsPipe) {
  const ConvertJob job{0, "/nonexistent/0_linked/rank-0.json", "/nonexistent/0_et/rank.0.et", link::RankJob{}};
  EtPlusRead read;
  ConvertResult out;
  const auto throws = [](const link::RankJob& j) -> link::RankResult {
    j.tee->write(R"({"schema": "1.1.1-chakra.0.0.4", "pid": 7, "nodes": [)");  // the reader waits for more
    throw std::bad_alloc();
  };
  EXPECT_THROW(link_then_read(job, read, out, throws), std::bad_alloc);
  EXPECT_FALSE(read.ok);  // the reader came to its input's end: an ET+ cut short
  EXPECT_FALSE(out.linked);
}

TEST(ConvertLinkSteps, APlanThatThrowsJoinsTheReaderOfTheHostEt) {
  ConvertJob job{0, "", "/nonexistent/0_et/rank.0.et", link::RankJob{}};
  job.link_first->host_path = "/nonexistent/0_chakra/rank-0.json";
  NodeEncoder encoder;
  EtPlusRead read;
  ConvertResult out;
  const auto throws = [](const link::RankJob&) -> link::RankPlan { throw std::bad_alloc(); };
  EXPECT_THROW(join_in_memory(job, encoder, read, out, throws), std::bad_alloc);
  EXPECT_FALSE(out.linked);
}

}  // namespace
}  // namespace chakrashim::tools::convert
