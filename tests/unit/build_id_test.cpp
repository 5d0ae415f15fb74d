// Unit tests for reading GNU build-ids from ELF notes (elf/build_id.h): note
// buffers built by hand in both alignments, truncated at every length, and the
// build-id of a library loaded in this very process compared with readelf's.
#include "elf/build_id.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace chakrashim::elf {
namespace {

using Bytes = std::vector<unsigned char>;

// Appends one note laid out as glibc, the kernel and binutils read it: a
// 12-byte header, the name, then the descriptor and the next note each at a
// multiple of `align` from the start of the buffer.
void add_note(Bytes& out, const std::string& name_with_nul, std::uint32_t type, const Bytes& desc,
              std::size_t align) {
  const auto put32 = [&out](std::uint32_t v) {
    unsigned char b[4];
    std::memcpy(b, &v, 4);
    out.insert(out.end(), b, b + 4);
  };
  const auto pad_to = [&out](std::size_t a) {
    while (out.size() % a != 0) out.push_back(0);
  };
  put32(static_cast<std::uint32_t>(name_with_nul.size()));
  put32(static_cast<std::uint32_t>(desc.size()));
  put32(type);
  out.insert(out.end(), name_with_nul.begin(), name_with_nul.end());
  pad_to(align);
  out.insert(out.end(), desc.begin(), desc.end());
  pad_to(align);
}

const std::string kGnu("GNU\0", 4);
const Bytes kId = {0xb7, 0x06, 0x6e, 0xd9, 0x4f, 0x42, 0x27, 0x86, 0xbd, 0x20,
                   0x5c, 0xd2, 0x74, 0x3c, 0x27, 0x22, 0xb5, 0xf3, 0x66, 0xfd};
const std::string kIdHex = "b7066ed94f422786bd205cd2743c2722b5f366fd";

// build_id_in_notes on an exact-size heap copy, so that a sanitizer build
// catches any read past the end.
std::optional<std::string> scan(const Bytes& bytes, std::size_t len, std::size_t align) {
  std::unique_ptr<unsigned char[]> copy(new unsigned char[len == 0 ? 1 : len]);
  if (len > 0) std::memcpy(copy.get(), bytes.data(), len);
  return build_id_in_notes(copy.get(), len, align);
}

TEST(BuildIdInNotes, ReadsTheHeaderExample) {
  Bytes notes;
  add_note(notes, kGnu, NT_GNU_BUILD_ID, {0xb7, 0x06}, 4);
  EXPECT_EQ(notes.size(), 12u + 4 + 4);
  EXPECT_EQ(scan(notes, notes.size(), 4), std::optional<std::string>("b706"));
}

TEST(BuildIdInNotes, ReadsASingleSha1NoteWithFourByteAlignment) {
  Bytes notes;
  add_note(notes, kGnu, NT_GNU_BUILD_ID, kId, 4);
  EXPECT_EQ(scan(notes, notes.size(), 4), kIdHex);
}

TEST(BuildIdInNotes, SkipsANonGnuNoteBeforeTheGnuOne) {
  Bytes notes;
  // Go's own build-id note: owner "Go", type 4; then an odd-length owner.
  add_note(notes, std::string("Go\0\0", 4), 4, {'a', 'b', 'c', 'd', 'e', 'f'}, 4);
  add_note(notes, std::string("stapsdt\0", 8), NT_GNU_BUILD_ID, {1, 2, 3}, 4);
  add_note(notes, std::string("CORE\0", 5), NT_GNU_BUILD_ID, {9, 9, 9, 9}, 4);
  add_note(notes, kGnu, NT_GNU_BUILD_ID, kId, 4);
  EXPECT_EQ(scan(notes, notes.size(), 4), kIdHex);
}

TEST(BuildIdInNotes, SkipsGnuNotesOfAnotherType) {
  Bytes notes;
  add_note(notes, kGnu, NT_GNU_ABI_TAG, {0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, 4);
  add_note(notes, kGnu, NT_GNU_BUILD_ID, kId, 4);
  EXPECT_EQ(scan(notes, notes.size(), 4), kIdHex);
}

TEST(BuildIdInNotes, ANoteWithoutABuildIdGivesNothing) {
  Bytes notes;
  add_note(notes, kGnu, NT_GNU_ABI_TAG, {0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, 4);
  add_note(notes, std::string("GNX\0", 4), NT_GNU_BUILD_ID, {1, 2}, 4);  // wrong owner
  add_note(notes, kGnu, NT_GNU_BUILD_ID, {}, 4);                           // empty id
  EXPECT_EQ(scan(notes, notes.size(), 4), std::nullopt);
  EXPECT_EQ(scan(notes, 0, 4), std::nullopt);
}

TEST(BuildIdInNotes, ReadsEightByteAlignedNotesAsTheLoaderDoes) {
  // What ld writes for .note.gnu.property: the descriptor follows "GNU\0"
  // at offset 16, with no padding after the name.
  Bytes notes;
  add_note(notes, kGnu, NT_GNU_PROPERTY_TYPE_0,
           {0x02, 0x80, 0x00, 0xc0, 0x04, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0, 0, 0, 0},
           8);
  ASSERT_EQ(notes.size(), 32u);
  // An owner whose name is not a multiple of 8 long: the descriptor is at 24
  // from the note's start, not at 12 + 8.
  add_note(notes, std::string("CORE\0", 5), 1, {1, 2, 3, 4, 5, 6, 7, 8}, 8);
  ASSERT_EQ(notes.size(), 32u + 24 + 8);
  add_note(notes, kGnu, NT_GNU_BUILD_ID, kId, 8);
  ASSERT_EQ(notes.size(), 64u + 16 + 24);
  EXPECT_EQ(scan(notes, notes.size(), 8), kIdHex);
}

TEST(BuildIdInNotes, ReadsAnEightByteAlignedBuildIdAlone) {
  Bytes notes;
  add_note(notes, kGnu, NT_GNU_BUILD_ID, {0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04}, 8);
  ASSERT_EQ(notes.size(), 24u);
  EXPECT_EQ(scan(notes, notes.size(), 8), std::optional<std::string>("deadbeef01020304"));
}

TEST(BuildIdInNotes, AnUnknownAlignmentIsReadAsFour) {
  Bytes notes;
  add_note(notes, std::string("CORE\0", 5), 1, {1, 2, 3}, 4);
  add_note(notes, kGnu, NT_GNU_BUILD_ID, kId, 4);
  EXPECT_EQ(scan(notes, notes.size(), 0), kIdHex);
  EXPECT_EQ(scan(notes, notes.size(), 1), kIdHex);
}

TEST(BuildIdInNotes, HugeSizesInAHeaderGiveNothingAndNoCrash) {
  for (const auto& [namesz, descsz] :
       std::vector<std::pair<std::uint32_t, std::uint32_t>>{{0xffffffffu, 20},
                                                            {4, 0xffffffffu},
                                                            {0xfffffffcu, 0xfffffffcu},
                                                            {64, 20},
                                                            {4, 64}}) {
    Bytes notes(12 + 4 + 20, 0);
    std::uint32_t header[3] = {namesz, descsz, NT_GNU_BUILD_ID};
    std::memcpy(notes.data(), header, sizeof header);
    std::memcpy(notes.data() + 12, "GNU", 4);
    for (std::size_t align : {4, 8}) {
      EXPECT_EQ(scan(notes, notes.size(), align), std::nullopt) << namesz << " " << descsz;
    }
  }
}

// Every prefix of a valid segment: no read past the end, and either nothing or
// the right id. The id needs the whole descriptor; the full buffer gives it.
void check_every_prefix(const Bytes& notes, std::size_t align, std::size_t desc_end) {
  for (std::size_t len = 0; len <= notes.size(); ++len) {
    const auto id = scan(notes, len, align);
    if (len < desc_end) {
      EXPECT_EQ(id, std::nullopt) << "prefix " << len;
    } else if (len == notes.size()) {
      EXPECT_EQ(id, kIdHex) << "prefix " << len;
    } else if (id) {
      EXPECT_EQ(*id, kIdHex) << "prefix " << len;
    }
  }
}

TEST(BuildIdInNotes, TruncatedFourByteAlignedBuffersAtEveryLengthAreSafe) {
  Bytes notes;
  add_note(notes, std::string("Go\0\0", 4), 4, {'x', 'y', 'z'}, 4);
  add_note(notes, kGnu, NT_GNU_ABI_TAG, {0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, 4);
  const std::size_t id_at = notes.size() + 16;
  add_note(notes, kGnu, NT_GNU_BUILD_ID, kId, 4);
  check_every_prefix(notes, 4, id_at + kId.size());
}

TEST(BuildIdInNotes, TruncatedEightByteAlignedBuffersAtEveryLengthAreSafe) {
  Bytes notes;
  add_note(notes, kGnu, NT_GNU_PROPERTY_TYPE_0, Bytes(16, 0x11), 8);
  add_note(notes, std::string("CORE\0", 5), 1, {1, 2, 3}, 8);
  const std::size_t id_at = notes.size() + 16;
  add_note(notes, kGnu, NT_GNU_BUILD_ID, kId, 8);
  check_every_prefix(notes, 8, id_at + kId.size());
}

TEST(BuildIdInNotes, AnIdWithAnUnpaddedLengthIsReadWhole) {
  Bytes notes;
  add_note(notes, kGnu, NT_GNU_BUILD_ID, {0x01, 0x23, 0x45, 0x67, 0x89}, 4);
  EXPECT_EQ(notes.size(), 12u + 4 + 8);
  EXPECT_EQ(scan(notes, notes.size(), 4), std::optional<std::string>("0123456789"));
}

// --- a library loaded in this process -------------------------------------

std::string loaded_path_ending_in(const std::string& suffix) {
  struct Search {
    std::string suffix;
    std::string path;
  } search{suffix, {}};
  ::dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        if (!info->dlpi_name) return 0;
        const std::string name = info->dlpi_name;
        if (name.size() >= s->suffix.size() &&
            name.compare(name.size() - s->suffix.size(), s->suffix.size(), s->suffix) == 0 &&
            (name.size() == s->suffix.size() ||
             name[name.size() - s->suffix.size() - 1] == '/')) {
          s->path = name;
          return 1;
        }
        return 0;
      },
      &search);
  return search.path;
}

// "Build ID: <hex>" from `readelf -n`, or "" if readelf is absent or prints
// none.
std::string readelf_build_id(const std::string& path) {
  const std::string command = "readelf -n '" + path + "' 2>/dev/null";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return {};
  std::string output;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  ::pclose(pipe);
  std::smatch m;
  if (!std::regex_search(output, m, std::regex(R"(Build ID:\s*([0-9a-fA-F]+))"))) return {};
  std::string hex = m[1];
  for (auto& c : hex) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return hex;
}

TEST(LoadedBuildId, MatchesReadelfForTheLoadedLibc) {
  const std::string libc = loaded_path_ending_in("libc.so.6");
  if (libc.empty()) GTEST_SKIP() << "no libc.so.6 in dl_iterate_phdr";
  const std::string expected = readelf_build_id(libc);
  if (expected.empty()) GTEST_SKIP() << "readelf is absent or shows no build id for " << libc;
  const auto id = loaded_build_id(libc);
  ASSERT_TRUE(id.has_value()) << libc;
  EXPECT_EQ(*id, expected) << libc;
}

TEST(LoadedBuildId, MatchesReadelfForTheLoadedCxxRuntime) {
  const std::string lib = loaded_path_ending_in("libstdc++.so.6");
  if (lib.empty()) GTEST_SKIP() << "no libstdc++.so.6 in dl_iterate_phdr";
  const std::string expected = readelf_build_id(lib);
  if (expected.empty()) GTEST_SKIP() << "readelf is absent or shows no build id for " << lib;
  EXPECT_EQ(loaded_build_id(lib), std::optional<std::string>(expected)) << lib;
}

TEST(LoadedBuildId, AnObjectThatIsNotLoadedHasNone) {
  EXPECT_EQ(loaded_build_id("/nonexistent/libnothing.so"), std::nullopt);
  // A path must match exactly, not by basename.
  EXPECT_EQ(loaded_build_id("libc.so.6"), std::nullopt);
}

}  // namespace
}  // namespace chakrashim::elf
