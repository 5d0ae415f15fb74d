// Unit tests for the run marker (common/files/run_marker.h, issue #49): a
// folder holding another run's files is passed over by every rank of this
// run; overwrite replaces that run's files, all ranks of them; nothing in
// the folder is followed or blocked on.
#include "files/run_marker.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "files/output_paths.h"
#include "files/publish.h"
#include "files/unique_fd.h"
#include "support/temp_dir.h"

namespace chakrashim::files {
namespace {

namespace fs = std::filesystem;

class RunMarker : public testing_support::TempDirTest {
 protected:
  void touch(const std::string& name, const std::string& text = "{}") { std::ofstream(path(name)) << text; }
  UniqueFd open_dir() const { return UniqueFd(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY)); }
  std::string marker() const {
    std::ifstream in(path(kRunMarkerName));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

TEST(OtherRunsFolder, ATaggedFolderIsItsRunsAnUntaggedOneWithRankFilesAnothers) {
  EXPECT_FALSE(other_runs_folder({}, "a"));
  EXPECT_FALSE(other_runs_folder({true, "a", true}, "a"));
  EXPECT_TRUE(other_runs_folder({true, "a", false}, "b"));
  EXPECT_TRUE(other_runs_folder({false, "", true}, "b"));
  // A run without an id: only a marked folder is another's, so that its own
  // ranks still meet in one folder.
  EXPECT_FALSE(other_runs_folder({false, "", true}, ""));
  EXPECT_TRUE(other_runs_folder({true, "a", false}, ""));
}

TEST_F(RunMarker, TheFirstRankLeavesTheIdTheOthersFindIt) {
  const auto fd = open_dir();
  EXPECT_TRUE(mark_folder_run(fd.get(), dir_.string(), "slurm:9", false).ok);
  EXPECT_EQ(marker(), "slurm:9");
  EXPECT_TRUE(mark_folder_run(fd.get(), dir_.string(), "slurm:9", false).ok);
  const auto other = mark_folder_run(fd.get(), dir_.string(), "slurm:10", false);
  EXPECT_FALSE(other.ok);
  EXPECT_NE(other.error.find("taken by another run since"), std::string::npos) << other.error;
  const auto read = read_folder_run(dir_.string());
  EXPECT_TRUE(read.marked);
  EXPECT_EQ(read.run, "slurm:9");
}

// Ranks of one run mark the same new folder at the same moment: every one
// finds its run's id, never an empty marker another rank has made and not
// yet written (e2e.launchers under mpirun: rank 1 read "" and gave up its
// capture, "taken by another run since").
TEST_F(RunMarker, RanksMarkingAtOnceAllFindTheirRun) {
  for (int round = 0; round < 200; ++round) {
    const fs::path folder = dir_ / ("f" + std::to_string(round));
    fs::create_directory(folder);
    const UniqueFd fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY));
    std::atomic<int> go{0}, ok{0};
    std::vector<std::thread> ranks;
    for (int r = 0; r < 4; ++r) {
      ranks.emplace_back([&] {
        go.fetch_add(1);
        while (go.load() < 4) {
        }
        if (mark_folder_run(fd.get(), folder.string(), "ompi:1234", false).ok) ok.fetch_add(1);
      });
    }
    for (auto& t : ranks) t.join();
    ASSERT_EQ(ok.load(), 4) << "round " << round;
    const auto names = fs::directory_iterator(folder);
    EXPECT_EQ(std::distance(fs::begin(names), fs::end(names)), 1) << "the marker alone: no temporary left";
  }
}

TEST_F(RunMarker, OverwriteRemovesEveryRankOfTheRunItReplacesButNotALiveWriters) {
  touch(kRunMarkerName, "old");
  touch("rank-0.json");
  touch("rank-1.json");
  touch("rank-2.json.gz.partial");
  // A .partial whose writer is alive: a rank of the new run claimed it.
  UniqueFd live(::open(path("rank-3.json.partial").c_str(), O_WRONLY | O_CREAT, 0644));
  lock_for_writing(live.get());
  touch("notes.txt");
  const auto fd = open_dir();
  const auto r = mark_folder_run(fd.get(), dir_.string(), "new", true);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.removed, 3u);
  EXPECT_EQ(marker(), "new");
  EXPECT_TRUE(fs::exists(path("rank-3.json.partial")));
  EXPECT_TRUE(fs::exists(path("notes.txt")));  // not ours to judge
  EXPECT_FALSE(fs::exists(path("rank-1.json")));
}

TEST_F(RunMarker, OverwriteOfAnUnmarkedCaptureRemovesItsRankFilesToo) {
  touch("rank-0.json");
  touch("rank-1.json");
  const auto fd = open_dir();
  const auto r = mark_folder_run(fd.get(), dir_.string(), "pid:5@h", true);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.removed, 2u);
  // Without overwrite an unmarked folder is marked and nothing goes (the
  // choice passed over one with another run's files before).
  touch("rank-1.json");
  ::unlink(path(kRunMarkerName).c_str());
  EXPECT_EQ(mark_folder_run(fd.get(), dir_.string(), "pid:5@h", false).removed, 0u);
  EXPECT_TRUE(fs::exists(path("rank-1.json")));
}

TEST_F(RunMarker, ALinkOrAFifoAtTheMarkersNameIsAnotherRunsNeverFollowedOrWaitedOn) {
  touch("elsewhere", "mine");
  fs::create_symlink(path("elsewhere"), path(kRunMarkerName));
  auto read = read_folder_run(dir_.string());
  EXPECT_TRUE(read.marked);
  EXPECT_EQ(read.run, "");
  EXPECT_TRUE(other_runs_folder(read, "mine"));
  fs::remove(path(kRunMarkerName));
  ASSERT_EQ(::mkfifo(path(kRunMarkerName).c_str(), 0644), 0);
  read = read_folder_run(dir_.string());  // returns: O_NONBLOCK
  EXPECT_TRUE(read.marked);
  EXPECT_EQ(read.run, "");
  const auto fd = open_dir();
  EXPECT_FALSE(mark_folder_run(fd.get(), dir_.string(), "mine", false).ok);
}

TEST_F(RunMarker, TheMarkerGoesWithAnEmptyWindowButStaysBesideFiles) {
  const auto fd = open_dir();
  ASSERT_TRUE(mark_folder_run(fd.get(), dir_.string(), "r", false).ok);
  touch("rank-0.json");
  unmark_if_alone(fd.get());
  EXPECT_TRUE(fs::exists(path(kRunMarkerName)));
  fs::remove(path("rank-0.json"));
  unmark_if_alone(fd.get());
  EXPECT_FALSE(fs::exists(path(kRunMarkerName)));
}

// The choice as the shim makes it: a 1-rank run wrote 0_chakra/rank-0; the
// next, 2-rank run must send both ranks to .1, not rank 1 to 0_chakra.
TEST_F(RunMarker, EveryRankOfTheNextRunPassesAnotherRunsFolderBy) {
  for (const char* sub : {"0_chakra", "0_kineto"}) fs::create_directory(path(sub));
  touch("0_chakra/rank-0.json");
  touch("0_kineto/rank-0.json");
  for (const char* sub : {"0_chakra", "0_kineto"}) {
    UniqueFd fd(::open(path(sub).c_str(), O_RDONLY | O_DIRECTORY));
    ASSERT_TRUE(mark_folder_run(fd.get(), path(sub), "first", false).ok);
  }
  for (std::uint64_t rank : {0u, 1u}) {
    LayoutRequest r;
    r.root = dir_.string();
    r.job_id = "0";
    r.rank = rank;
    r.run_id = "second";
    const auto exists = [](const std::string& p) { return fs::exists(fs::symlink_status(p)); };
    const auto other = [&](const std::string& d) { return other_runs_folder(read_folder_run(d), r.run_id); };
    EXPECT_EQ(choose_layout(r, exists, {}, other)->index, 1u) << rank;
    // Without the run's view rank 1 would take index 0 (the old rule).
    EXPECT_EQ(choose_layout(r, exists)->index, rank == 0 ? 1u : 0u) << rank;
    r.run_id = "first";  // the first run's own ranks still meet there
    EXPECT_EQ(choose_layout(r, exists, {}, other)->index, rank == 0 ? 1u : 0u) << rank;
  }
}

}  // namespace
}  // namespace chakrashim::files
