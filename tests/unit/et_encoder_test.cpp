// The native recorder's Encoder (writers/et_records.h): what it writes reads
// back through Cursor, in both of its modes. The scratch mode is the
// recorder's op path (issue #52): one record at a time written over the
// last one's bytes, the vector kept as room, the record its first size()
// bytes; a record larger than the room grows it, and the room stays.
#include "writers/et_records.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace chakrashim::writers::et {
namespace {

void write_record(Encoder& e, std::uint64_t seq, std::size_t payload) {
  e.begin(RecordKind::start, seq);
  e.u8(7);
  e.u32(0xA1B2C3D4u);
  e.i64(-5);
  e.f64(2.5);
  const std::size_t count = e.placeholder_u32();
  for (std::size_t i = 0; i < payload; ++i) e.u64(i);
  e.patch_u32(count, static_cast<std::uint32_t>(payload));
  const std::string text = "aten::op";
  e.raw(text.data(), text.size());
  e.close();
}

// The record's fields, read back; false where a field differs.
bool reads_back(const std::uint8_t* p, std::size_t n, std::uint64_t seq, std::size_t payload) {
  Cursor c(p, n);
  bool ok = c.u32() == n;
  ok = ok && c.u8() == static_cast<std::uint8_t>(RecordKind::start) && c.u64() == seq;
  ok = ok && c.u8() == 7 && c.u32() == 0xA1B2C3D4u && c.i64() == -5 && c.f64() == 2.5;
  ok = ok && c.u32() == payload;
  for (std::size_t i = 0; ok && i < payload; ++i) ok = c.u64() == i;
  std::string text(8, '\0');
  for (auto& ch : text) ch = static_cast<char>(c.u8());
  return ok && text == "aten::op" && c.at_end() && !c.failed();
}

constexpr std::size_t kFixed = 4 + 1 + 8 + 1 + 4 + 8 + 8 + 4 + 8;  // without the payload

TEST(EtEncoder, AppendsRecordsAndCutsTheVectorToThemWhenClosed) {
  std::vector<std::uint8_t> out;
  {
    Encoder e(out);
    write_record(e, 1, 3);
    EXPECT_EQ(out.size(), kFixed + 3 * 8);
  }
  const std::size_t first = out.size();
  {
    Encoder e(out);
    write_record(e, 2, 0);
  }
  ASSERT_EQ(out.size(), first + kFixed);
  EXPECT_TRUE(reads_back(out.data(), first, 1, 3));
  EXPECT_TRUE(reads_back(out.data() + first, kFixed, 2, 0));
}

TEST(EtEncoder, AScratchIsWrittenFromItsStartAndKeptAsRoom) {
  std::vector<std::uint8_t> scratch(64, 0xEE);
  {
    Encoder e(scratch, Encoder::Scratch{});
    write_record(e, 9, 2);
    ASSERT_EQ(e.size(), kFixed + 2 * 8);
    EXPECT_TRUE(reads_back(scratch.data(), e.size(), 9, 2));
  }
  EXPECT_GE(scratch.size(), 64u) << "the room was cut";
  // A record larger than the room grows it; the room then stays.
  std::size_t big = 0;
  {
    Encoder e(scratch, Encoder::Scratch{});
    write_record(e, 10, 100);
    big = e.size();
    ASSERT_EQ(big, kFixed + 100 * 8);
    EXPECT_TRUE(reads_back(scratch.data(), big, 10, 100));
  }
  EXPECT_GE(scratch.size(), big);
  const std::size_t room = scratch.size();
  {
    Encoder e(scratch, Encoder::Scratch{});
    write_record(e, 11, 1);
    EXPECT_TRUE(reads_back(scratch.data(), e.size(), 11, 1));
  }
  EXPECT_EQ(scratch.size(), room);
}

// Fields (reserve, then unchecked stores, then commit) write the same bytes
// as the checked fields, between them; commit takes what was written, not
// what was reserved; a reservation beyond the room grows it and keeps what
// the record already holds.
TEST(EtEncoder, ReservedFieldsWriteWhatCheckedFieldsWriteAndOnlyThat) {
  auto encode = [](Encoder& e, bool reserved, std::size_t payload) {
    e.begin(RecordKind::start, 42);
    // The same fields through either writer (Encoder or Encoder::Fields).
    auto fields = [&](auto& w) {
      w.u8(7);
      w.u32(0xA1B2C3D4u);
      w.i64(-5);
      w.u64(0x0102030405060708ull);
      w.u32(static_cast<std::uint32_t>(payload));
      for (std::size_t i = 0; i < payload; ++i) w.u64(i);
    };
    if (reserved) {
      auto f = e.reserve(1 + 4 + 8 + 8 + 4 + 8 * payload + 512);  // more than it writes
      fields(f);
      e.commit(f);
    } else {
      fields(e);
    }
    e.u8(9);  // a checked field after the reserved run
    e.close();
  };
  for (const std::size_t payload : {std::size_t{0}, std::size_t{3}, std::size_t{300}}) {
    std::vector<std::uint8_t> checked, reserved;
    {
      Encoder e(checked);
      encode(e, false, payload);
    }
    {
      Encoder e(reserved);
      encode(e, true, payload);
    }
    EXPECT_EQ(reserved, checked) << payload << " items";
    EXPECT_EQ(reserved.size(), 4 + 1 + 8 + 1 + 4 + 8 + 8 + 4 + 8 * payload + 1);
    // A scratch of 16 bytes: the reservation grows it past the header
    // already written, which stays.
    std::vector<std::uint8_t> scratch(16, 0xEE);
    Encoder e(scratch, Encoder::Scratch{});
    encode(e, true, payload);
    ASSERT_EQ(e.size(), checked.size());
    EXPECT_TRUE(std::equal(checked.begin(), checked.end(), scratch.begin())) << payload << " items";
  }
}

}  // namespace
}  // namespace chakrashim::writers::et
