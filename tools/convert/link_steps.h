// convert_one's two ways to link a rank (convert_runner.cpp), each with a
// reader thread beside the link. Apart, and with the link step as a
// parameter, so that a test can give one that throws: the reader must be
// joined on every way out, or the CLI ends in std::terminate (issue #34).
#pragma once

#include <functional>

#include "convert/convert_runner.h"
#include "convert/et_encoding.h"
#include "convert/et_plus_reader.h"

namespace chakrashim::tools::convert {

using LinkStep = std::function<link::RankResult(const link::RankJob&)>;
using PlanStep = std::function<link::RankPlan(const link::RankJob&)>;

// The text path: link writes the ET+ file and, through a pipe, this rank's
// reader on a second thread, so that the two steps overlap.
void link_then_read(const ConvertJob& job, EtPlusRead& read, ConvertResult& out,
                    const LinkStep& link_rank = link::link_rank);

// The in-memory path (linked_join.h): convert's reader reads the plain ET on
// a second thread while link reads both files and joins them; no ET+ is
// written or parsed. False, with out.error empty, where the join leaves the
// decision to the text path; false with out.error set when link failed.
bool join_in_memory(const ConvertJob& job, NodeEncoder& encoder, EtPlusRead& read, ConvertResult& out,
                    const PlanStep& plan_rank = link::plan_rank);

}  // namespace chakrashim::tools::convert
