// Unit tests for atomic publishing (files/publish.h, docs/design.md section 4.6):
// a file is complete and valid under its final name, or it is not there, and
// no .partial is left behind. Every test works on real files in its own
// temporary folder.
#include "files/publish.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "files/output_dirs.h"
#include "files/output_paths.h"
#include "files/unique_fd.h"
#include "support/temp_dir.h"
#include "writers/json_validate.h"

namespace chakrashim::files {
namespace {

bool exists(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

std::string read_all(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_raw(const std::string& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// claim_partial_at and finalize_partial_at on a file named by its path,
// through its folder opened as the shim opens its output folders.
struct OpenParent {
  UniqueFd fd;
  Folder folder;
  std::string name;
};
OpenParent open_parent(const std::string& p) {
  const auto slash = p.rfind('/');
  OpenParent o;
  o.folder.path = p.substr(0, slash);
  o.fd = UniqueFd(::open(o.folder.path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  o.folder.fd = o.fd.get();
  o.name = p.substr(slash + 1);
  return o;
}
PublishResult claim_partial(const std::string& partial) {
  const OpenParent o = open_parent(partial);
  return claim_partial_at(o.folder, o.name);
}
PublishResult finalize_partial(const std::string& partial, const std::string& final_path,
                               const Validator& validate, bool overwrite) {
  const OpenParent o = open_parent(final_path);
  return finalize_partial_at(o.folder, partial.substr(partial.rfind('/') + 1), o.name, validate, overwrite);
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(path.c_str())) {
    while (dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
  }
  return names;
}

std::function<bool(ByteSink&)> produce_text(std::string text) {
  return [text = std::move(text)](ByteSink& sink) { return sink.write(text); };
}

const Validator kJson = [](const std::string& p) { return writers::validate_json_file(p); };

using Publish = testing_support::TempDirTest;

// --- publish_file ---------------------------------------------------------

TEST_F(Publish, PublishFileWritesTheContentAndLeavesNoPartial) {
  const std::string final_path = path("rank-0.json");
  const auto r = publish_file(final_path, produce_text(R"({"a": [1, 2, 3]})"), kJson, false);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.error.empty());
  EXPECT_EQ(read_all(final_path), R"({"a": [1, 2, 3]})");
  EXPECT_FALSE(exists(partial_path(final_path)));
  EXPECT_EQ(list_dir(dir_), std::vector<std::string>{"rank-0.json"});
}

TEST_F(Publish, PublishFileWithoutAValidatorPublishesWhatWasWritten) {
  const std::string final_path = path("blob.bin");
  std::string content("not json \0 at all", 17);
  const auto r = publish_file(final_path, produce_text(content), nullptr, false);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(read_all(final_path), content);
  EXPECT_FALSE(exists(partial_path(final_path)));
}

TEST_F(Publish, ManySmallWritesAndOneHugeWriteArriveInOrder) {
  const std::string final_path = path("rank-1.json");
  std::string expected;
  const auto produce = [&expected](ByteSink& sink) {
    bool ok = sink.write("[");
    expected += "[";
    for (int i = 0; i < 20000; ++i) {
      const std::string item = (i ? ", " : "") + std::to_string(i);
      ok = ok && sink.write(item);
      expected += item;
    }
    // One write larger than any internal buffer.
    std::string big = ", \"" + std::string(300000, 'x') + "\"";
    ok = ok && sink.write(big);
    expected += big;
    ok = ok && sink.write("]");
    expected += "]";
    return ok && sink.ok();
  };
  const auto r = publish_file(final_path, produce, kJson, false);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(read_all(final_path), expected);
}

TEST_F(Publish, AValidatorFailureLeavesNoFinalFileAndNoPartial) {
  const std::string final_path = path("rank-0.json");
  const auto r = publish_file(final_path, produce_text(R"({"a": [1, 2)"), kJson, false);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(exists(final_path));
  EXPECT_FALSE(exists(partial_path(final_path)));
  EXPECT_NE(r.error.find(final_path), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("validate"), std::string::npos) << r.error;
  EXPECT_TRUE(list_dir(dir_).empty());
}

TEST_F(Publish, TheValidatorSeesTheCompleteFlushedPartial) {
  const std::string final_path = path("rank-0.json");
  const std::string content = "[" + std::string(200000, ' ') + "1]";
  std::string seen_path, seen_content;
  const Validator spy = [&](const std::string& p) {
    seen_path = p;
    seen_content = read_all(p);
    return std::string();
  };
  const auto r = publish_file(final_path, produce_text(content), spy, false);
  ASSERT_TRUE(r.ok) << r.error;
  // The partial, named through the open folder (publish.h).
  EXPECT_EQ(seen_path.rfind("/proc/self/fd/", 0), 0u) << seen_path;
  EXPECT_EQ(seen_path.substr(seen_path.rfind('/')), "/rank-0.json.partial");
  EXPECT_EQ(seen_content, content);
}

TEST_F(Publish, AValidatorReasonIsPassedOnInTheError) {
  const std::string final_path = path("rank-0.json");
  const Validator refuse = [](const std::string&) { return std::string("no ProfilerStep"); };
  const auto r = publish_file(final_path, produce_text("{}"), refuse, false);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("no ProfilerStep"), std::string::npos) << r.error;
  EXPECT_FALSE(exists(final_path));
  EXPECT_FALSE(exists(partial_path(final_path)));
}

TEST_F(Publish, AProducerThatGivesUpLeavesNothing) {
  const std::string final_path = path("rank-0.json");
  bool validated = false;
  const Validator spy = [&](const std::string&) {
    validated = true;
    return std::string();
  };
  const auto r = publish_file(
      final_path,
      [](ByteSink& sink) {
        sink.write("{\"half\": ");
        return false;
      },
      spy, false);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.error.empty());
  EXPECT_FALSE(validated);
  EXPECT_FALSE(exists(final_path));
  EXPECT_FALSE(exists(partial_path(final_path)));
  EXPECT_TRUE(list_dir(dir_).empty());
}

TEST_F(Publish, AnExistingFinalFileIsNotReplacedWithoutOverwrite) {
  const std::string final_path = path("rank-0.json");
  write_raw(final_path, R"({"old": true})");
  const auto r = publish_file(final_path, produce_text(R"({"new": true})"), kJson, false);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("rename"), std::string::npos) << r.error;
  EXPECT_EQ(read_all(final_path), R"({"old": true})");
  EXPECT_FALSE(exists(partial_path(final_path)));
}

TEST_F(Publish, AnExistingFinalFileIsReplacedWithOverwrite) {
  const std::string final_path = path("rank-0.json");
  write_raw(final_path, R"({"old": true})");
  const auto r = publish_file(final_path, produce_text(R"({"new": true})"), kJson, true);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(read_all(final_path), R"({"new": true})");
  EXPECT_FALSE(exists(partial_path(final_path)));
}

TEST_F(Publish, AnExistingPartialMakesPublishFailWithoutTouchingAnything) {
  const std::string final_path = path("rank-0.json");
  write_raw(final_path, R"({"old": true})");
  write_raw(partial_path(final_path), "someone else's bytes");
  bool produced = false;
  const auto r = publish_file(
      final_path,
      [&](ByteSink& sink) {
        produced = true;
        return sink.write("{}");
      },
      kJson, true);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(produced);
  EXPECT_NE(r.error.find(partial_path(final_path)), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("create"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(strerror(EEXIST)), std::string::npos) << r.error;
  // Neither the final file nor the other writer's .partial was touched.
  EXPECT_EQ(read_all(final_path), R"({"old": true})");
  EXPECT_EQ(read_all(partial_path(final_path)), "someone else's bytes");
}

TEST_F(Publish, AnExistingPartialBlocksEvenAFirstPublish) {
  const std::string final_path = path("rank-0.json");
  write_raw(partial_path(final_path), "x");
  const auto r = publish_file(final_path, produce_text("{}"), kJson, false);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(exists(final_path));
  EXPECT_EQ(read_all(partial_path(final_path)), "x");
}

TEST_F(Publish, AWriteFailureLeavesNoFinalFile) {
  // A real write fault: a child process limits its file size and ignores
  // SIGXFSZ, so write() fails with EFBIG part-way through a large file.
  const std::string final_path = path("big.json");
  const std::string partial = partial_path(final_path);
  ::fflush(nullptr);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0) << strerror(errno);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit {};
    limit.rlim_cur = limit.rlim_max = 256 * 1024;
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
    const auto produce = [](ByteSink& sink) {
      sink.write("[");
      const std::string chunk = "\"" + std::string(1000, 'y') + "\", ";
      for (int i = 0; i < 8000; ++i) sink.write(chunk);  // about 8 MB
      sink.write("0]");
      return true;
    };
    const auto r = publish_file(final_path, produce, kJson, false);
    if (r.ok) ::_exit(1);
    if (r.error.find("write") == std::string::npos) ::_exit(2);
    if (r.error.find(partial) == std::string::npos) ::_exit(3);
    if (r.error.find(strerror(EFBIG)) == std::string::npos) ::_exit(4);
    if (exists(final_path)) ::_exit(5);
    if (exists(partial)) ::_exit(6);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1: publish succeeded, 2: error does not say write, 3: error does not name the "
         ".partial, 4: error does not say EFBIG, 5: final file exists, 6: .partial left, "
         "10: setrlimit failed";
  EXPECT_FALSE(exists(final_path));
  EXPECT_FALSE(exists(partial));
}

TEST_F(Publish, WritingIntoAFolderPathThatIsAFileFailsCleanly) {
  const std::string not_a_dir = path("plain");
  write_raw(not_a_dir, "x");
  const std::string final_path = not_a_dir + "/rank-0.json";
  const auto r = publish_file(final_path, produce_text("{}"), kJson, false);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find(strerror(ENOTDIR)), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(final_path), std::string::npos) << r.error;
  EXPECT_EQ(read_all(not_a_dir), "x");
  EXPECT_EQ(list_dir(dir_), std::vector<std::string>{"plain"});
}

TEST_F(Publish, WritingIntoAMissingFolderFailsCleanly) {
  const std::string final_path = path("missing/rank-0.json");
  const auto r = publish_file(final_path, produce_text("{}"), kJson, false);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find(strerror(ENOENT)), std::string::npos) << r.error;
  EXPECT_TRUE(list_dir(dir_).empty());
}

// --- make_dirs ------------------------------------------------------------

TEST_F(Publish, MakeDirsCreatesNestedFoldersAndIsIdempotent) {
  const std::string nested = path("a/b/c/0_kineto.1");
  ASSERT_TRUE(make_dirs(nested).ok);
  struct stat st;
  ASSERT_EQ(::stat(nested.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  const auto again = make_dirs(nested);
  EXPECT_TRUE(again.ok) << again.error;
  const auto slash = make_dirs(nested + "/");
  EXPECT_TRUE(slash.ok) << slash.error;
  // A file can be published into it.
  EXPECT_TRUE(publish_file(nested + "/rank-0.json", produce_text("{}"), kJson, false).ok);
}

TEST_F(Publish, MakeDirsFailsWhenAComponentIsAFile) {
  write_raw(path("file"), "x");
  const auto r = make_dirs(path("file/sub/deeper"));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find(path("file")), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("mkdir"), std::string::npos) << r.error;
  EXPECT_FALSE(exists(path("file/sub")));
  EXPECT_EQ(read_all(path("file")), "x");

  // The last component being a file fails too.
  const auto last = make_dirs(path("file"));
  EXPECT_FALSE(last.ok);
  EXPECT_NE(last.error.find(strerror(ENOTDIR)), std::string::npos) << last.error;
}

TEST_F(Publish, MakeDirsRefusesAnEmptyPath) { EXPECT_FALSE(make_dirs("").ok); }

// --- claim_partial --------------------------------------------------------

TEST_F(Publish, ClaimPartialCreatesAnEmptyFileExclusively) {
  const std::string partial = path("rank-0.json.partial");
  const auto first = claim_partial(partial);
  ASSERT_TRUE(first.ok) << first.error;
  struct stat st;
  ASSERT_EQ(::stat(partial.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_size, 0);

  write_raw(partial, "being written");
  const auto second = claim_partial(partial);
  EXPECT_FALSE(second.ok);
  EXPECT_NE(second.error.find(partial), std::string::npos) << second.error;
  EXPECT_NE(second.error.find(strerror(EEXIST)), std::string::npos) << second.error;
  EXPECT_EQ(read_all(partial), "being written");
}

TEST_F(Publish, ClaimPartialFailsInAMissingFolder) {
  const auto r = claim_partial(path("nope/rank-0.json.partial"));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("create"), std::string::npos) << r.error;
}

// --- finalize_partial -----------------------------------------------------

TEST_F(Publish, FinalizePartialRenamesAValidPartialSomeoneElseWrote) {
  const std::string final_path = path("rank-0.json");
  const std::string partial = partial_path(final_path);
  ASSERT_TRUE(claim_partial(partial).ok);
  write_raw(partial, R"({"schema": "1.1.1-chakra.0.0.4", "nodes": []})");
  const auto r = finalize_partial(partial, final_path, kJson, false);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(read_all(final_path), R"({"schema": "1.1.1-chakra.0.0.4", "nodes": []})");
  EXPECT_FALSE(exists(partial));
}

TEST_F(Publish, FinalizePartialRemovesAnInvalidPartial) {
  const std::string final_path = path("rank-0.json");
  const std::string partial = partial_path(final_path);
  // An unfinalized ET: the observer never wrote its closing part.
  write_raw(partial, R"({"schema": "1.1.1-chakra.0.0.4", "nodes": [{"id": 2},)");
  const auto r = finalize_partial(partial, final_path, kJson, false);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find(partial), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("validate"), std::string::npos) << r.error;
  EXPECT_FALSE(exists(partial));
  EXPECT_FALSE(exists(final_path));
}

TEST_F(Publish, FinalizePartialRemovesAnEmptyPartial) {
  const std::string final_path = path("rank-0.json");
  const std::string partial = partial_path(final_path);
  ASSERT_TRUE(claim_partial(partial).ok);
  EXPECT_FALSE(finalize_partial(partial, final_path, kJson, false).ok);
  EXPECT_FALSE(exists(partial));
  EXPECT_FALSE(exists(final_path));
}

TEST_F(Publish, FinalizePartialNeverReplacesWithoutOverwrite) {
  const std::string final_path = path("rank-0.json");
  const std::string partial = partial_path(final_path);
  write_raw(final_path, "[1]");
  write_raw(partial, "[2]");
  const auto r = finalize_partial(partial, final_path, kJson, false);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("rename"), std::string::npos) << r.error;
  EXPECT_EQ(read_all(final_path), "[1]");
  EXPECT_FALSE(exists(partial));

  write_raw(partial, "[3]");
  const auto o = finalize_partial(partial, final_path, kJson, true);
  ASSERT_TRUE(o.ok) << o.error;
  EXPECT_EQ(read_all(final_path), "[3]");
  EXPECT_FALSE(exists(partial));
}

TEST_F(Publish, FinalizeOfAMissingPartialFails) {
  const std::string final_path = path("rank-0.json");
  const auto r = finalize_partial(partial_path(final_path), final_path, nullptr, false);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(exists(final_path));
}

// --- never through a link (issue #48, item 5) ------------------------------

TEST_F(Publish, PublishNeverWritesThroughALinkAtThePartialName) {
  // Someone who can write the folder puts a link where our .partial goes.
  write_raw(path("victim"), "theirs");
  ASSERT_EQ(::symlink(path("victim").c_str(), path("rank-0.json.partial").c_str()), 0);
  const auto r = publish_file(path("rank-0.json"), produce_text("{}"), kJson, false);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find(strerror(EEXIST)), std::string::npos) << r.error;
  EXPECT_EQ(read_all(path("victim")), "theirs");
  EXPECT_FALSE(exists(path("rank-0.json")));
}

TEST_F(Publish, FinalizeRefusesALinkAtThePartialNameAndLeavesItsTarget) {
  // A claimed .partial replaced by a link before torch's file is finalized.
  write_raw(path("victim"), R"({"theirs": 1})");
  ASSERT_EQ(::symlink(path("victim").c_str(), path("rank-0.json.partial").c_str()), 0);
  const auto r = finalize_partial(path("rank-0.json.partial"), path("rank-0.json"), kJson, false);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("not a regular file"), std::string::npos) << r.error;
  EXPECT_EQ(read_all(path("victim")), R"({"theirs": 1})");
  EXPECT_FALSE(exists(path("rank-0.json")));
}

TEST_F(Publish, OverwriteReplacesALinkAtTheFinalNameNotItsTarget) {
  write_raw(path("victim"), "theirs");
  ASSERT_EQ(::symlink(path("victim").c_str(), path("rank-0.json").c_str()), 0);
  const auto r = publish_file(path("rank-0.json"), produce_text("{}"), kJson, true);
  ASSERT_TRUE(r.ok) << r.error;
  struct stat st;
  ASSERT_EQ(::lstat(path("rank-0.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(read_all(path("victim")), "theirs");
}

TEST_F(Publish, ValidatorsReadThroughTheOpenFolder) {
  std::string seen;
  const auto spy = [&](const std::string& p) {
    seen = p;
    return std::string();
  };
  ASSERT_TRUE(publish_file(path("rank-0.json"), produce_text("{}"), spy, false).ok);
  EXPECT_EQ(seen.rfind("/proc/self/fd/", 0), 0u) << seen;
  EXPECT_NE(seen.find("/rank-0.json.partial"), std::string::npos) << seen;
}

// --- a .partial being written is locked (issue #49 case 10) -----------------

TEST_F(Publish, AClaimHeldOpenIsBeingWrittenAndLeftOverOnceClosed) {
  const OpenParent o = open_parent(path("rank-0.json.partial"));
  UniqueFd held;
  ASSERT_TRUE(claim_partial_at(o.folder, o.name, &held).ok);
  EXPECT_EQ(partial_state(path("rank-0.json.partial")), PartialState::being_written);
  held.close();
  EXPECT_EQ(partial_state(path("rank-0.json.partial")), PartialState::left_over);
  // Claimed without holding it: left over at once.
  ASSERT_TRUE(claim_partial(path("rank-1.json.partial")).ok);
  EXPECT_EQ(partial_state(path("rank-1.json.partial")), PartialState::left_over);
  EXPECT_EQ(partial_state(path("absent.partial")), PartialState::unknown);
}

TEST_F(Publish, APartialIsLockedWhileItIsWrittenAndValidated) {
  PartialState during_produce = PartialState::unknown, during_validate = PartialState::unknown;
  const auto produce = [&](ByteSink& sink) {
    during_produce = partial_state(path("rank-0.json.partial"));
    return sink.write("{}");
  };
  const Validator spy = [&](const std::string& p) {
    during_validate = partial_state(p);
    return std::string();
  };
  ASSERT_TRUE(publish_file(path("rank-0.json"), produce, spy, false).ok);
  EXPECT_EQ(during_produce, PartialState::being_written);
  EXPECT_EQ(during_validate, PartialState::being_written);
}

// --- output folders (output_dirs.h) ------------------------------------------

TEST_F(Publish, AnOutputFolderThatIsALinkIsRefusedAndNeverOpened) {
  ::mkdir(path("elsewhere").c_str(), 0755);
  ASSERT_EQ(::symlink(path("elsewhere").c_str(), path("0_chakra").c_str()), 0);
  EXPECT_EQ(output_dir_refusal(path("0_chakra")), "is a symbolic link (not followed)");
  std::string error;
  EXPECT_EQ(open_output_dir(path("0_chakra"), error), nullptr);
  EXPECT_NE(error.find("symbolic link"), std::string::npos) << error;
  EXPECT_TRUE(list_dir(path("elsewhere")).empty());
}

TEST_F(Publish, AnOutputFolderOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder away";
  ASSERT_EQ(::mkdir(path("0_kineto").c_str(), 0777), 0);
  ASSERT_EQ(::chown(path("0_kineto").c_str(), 4242, 4242), 0);
  EXPECT_EQ(output_dir_refusal(path("0_kineto")), "belongs to uid 4242, not to this job's uid 0");
  std::string error;
  EXPECT_EQ(open_output_dir(path("0_kineto"), error), nullptr);
  EXPECT_NE(error.find("uid 4242"), std::string::npos) << error;
}

TEST_F(Publish, AnOutputFolderWeMakeWritableByOthersIsSticky) {
  const mode_t old = ::umask(002);
  std::string error;
  const auto fd = open_output_dir(path("0_chakra"), error);
  ::umask(old);
  ASSERT_NE(fd, nullptr) << error;
  struct stat st;
  ASSERT_EQ(::fstat(fd->get(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 01775);
  // One of ours from an earlier run is used as it is.
  EXPECT_EQ(output_dir_refusal(path("0_chakra")), "");
  EXPECT_NE(open_output_dir(path("0_chakra"), error), nullptr) << error;
  EXPECT_EQ(output_dir_refusal(path("absent")), "");
}

// --- validate_json_file, as publishing uses it ----------------------------

TEST_F(Publish, ValidateJsonFileAcceptsOneDocumentOnly) {
  const std::string p = path("doc.json");
  write_raw(p, R"({"a": {"b": [true, null, 1.5e3, "x"]}})");
  EXPECT_EQ(writers::validate_json_file(p), "");
  write_raw(p, "{} {}");
  EXPECT_NE(writers::validate_json_file(p), "");
  write_raw(p, "");
  EXPECT_NE(writers::validate_json_file(p), "");
  write_raw(p, "[1, 2,]");
  EXPECT_NE(writers::validate_json_file(p), "");
  EXPECT_NE(writers::validate_json_file(path("absent.json")), "");
}

// The check reads through files::ByteStream, the tools' reader: a gzip
// member cut short is refused even where the JSON inside happens to end
// whole (zlib reads it as a clean end; only gzerror tells).
TEST_F(Publish, ValidateJsonFileRefusesAGzipFileCutShort) {
  const std::string p = path("doc.json.gz");
  std::string doc = "[";
  for (int i = 0; i < 2000; ++i) doc += std::to_string(i) + ",";
  doc += "0]";
  {
    gzFile gz = gzopen(p.c_str(), "wb");
    ASSERT_NE(gz, nullptr);
    ASSERT_EQ(gzwrite(gz, doc.data(), static_cast<unsigned>(doc.size())), static_cast<int>(doc.size()));
    ASSERT_EQ(gzclose(gz), Z_OK);
  }
  EXPECT_EQ(writers::validate_json_file(p), "");
  // Drop the trailer (CRC and length, 8 bytes): the deflate data is whole.
  std::ifstream in(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_raw(p, bytes.substr(0, bytes.size() - 8));
  EXPECT_NE(writers::validate_json_file(p), "");
  write_raw(p, bytes.substr(0, bytes.size() / 2));
  EXPECT_NE(writers::validate_json_file(p), "");
}

TEST_F(Publish, ValidateEtFileRefusesARepeatedNodeIdInValidJson) {
  const std::string p = path("et.json");
  write_raw(p, R"({"schema": "1.1.1-chakra.0.0.4", "nodes": [
      {"id": 2, "name": "a", "inputs": {"values": [[7, 8]]}, "attrs": [{"name": "id", "value": 2}]},
      {"id": 3, "name": "b"}, {"id": 1, "name": "root"}], "finish_ts": 5})");
  EXPECT_EQ(writers::validate_et_file(p), "");
  // What a forked child flushing its copy of the stream leaves: valid JSON,
  // one node twice. Ids nested deeper (attrs, inputs) do not count.
  write_raw(p, R"({"nodes": [{"id": 2, "name": "a"}, {"id": 3, "name": "b"}, {"id": 2, "name": "a"}]})");
  EXPECT_NE(writers::validate_et_file(p).find("node id 2 appears more than once"), std::string::npos);
  write_raw(p, R"({"nodes": [{"id": 2}, )");
  EXPECT_NE(writers::validate_et_file(p), "");
}

}  // namespace
}  // namespace chakrashim::files
