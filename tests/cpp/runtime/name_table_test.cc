// NameTable's bounds: a name over kMaxNameBytes is cut at a UTF-8 boundary
// with its marker, at the limit, one byte under and one over; each distinct
// cut name is counted once, and the cut name is what Lookup gives back.
#include "runtime/name_table.h"

#include <gtest/gtest.h>

#include <string>

namespace smprof::internal {
namespace {

constexpr std::size_t kLimit = NameTable::kMaxNameBytes;

TEST(NameTable, NamesUpToTheLimitAreKeptWhole) {
  for (const std::size_t size : {kLimit - 1, kLimit}) {
    const std::string name(size, 'k');
    EXPECT_EQ(CutName(name), name);
    NameTable::Get().TakeCut();
    EXPECT_EQ(NameTable::Get().Lookup(NameTable::Get().Intern(name)), name);
    EXPECT_EQ(NameTable::Get().TakeCut(), 0u);
  }
}

TEST(NameTable, ALongerNameIsCutWithItsMarkerAndCountedOnce) {
  for (const std::size_t size : {kLimit + 1, std::size_t{17000000}}) {
    const std::string name = std::string(size - 1, 'x') + "y";
    const std::string cut = CutName(name);
    EXPECT_LE(cut.size(), kLimit);
    EXPECT_GT(cut.size(), kLimit - 8) << "as long as the limit allows, but for the marker's digits";
    const std::size_t kept = cut.find(" [cut: ");
    EXPECT_EQ(cut.substr(kept), " [cut: " + std::to_string(size - kept) + " bytes]");
    EXPECT_EQ(cut.compare(0, kept, name, 0, kept), 0) << "a prefix of the name";
    NameTable::Get().TakeCut();
    const NameId id = NameTable::Get().Intern(name);
    EXPECT_EQ(NameTable::Get().Intern(name), id);
    EXPECT_EQ(NameTable::Get().Lookup(id), cut);
    EXPECT_EQ(NameTable::Get().TakeCut(), 1u) << "one distinct name, interned twice";
  }
}

TEST(NameTable, ACutNeverSplitsAUtf8Sequence) {
  // 4-byte characters from the start: the kept prefix ends on a character boundary.
  std::string name;
  while (name.size() <= kLimit + 8) name += "\xF0\x9F\x98\x80";  // U+1F600
  for (const std::size_t shift : {0, 1, 2, 3}) {
    const std::string text = std::string(shift, 'a') + name;
    const std::string cut = CutName(text);
    const std::size_t kept = cut.find(" [cut: ");
    EXPECT_EQ((kept - shift) % 4, 0u) << "shift " << shift;
    EXPECT_LE(cut.size(), kLimit);
    EXPECT_EQ(cut.substr(kept), " [cut: " + std::to_string(text.size() - kept) + " bytes]");
  }
}

}  // namespace
}  // namespace smprof::internal
