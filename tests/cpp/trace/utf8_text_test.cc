// Readers show trace names (bytes) as valid UTF-8: valid text is unchanged,
// each maximal invalid subsequence becomes one U+FFFD, as Python's
// bytes.decode("utf-8", errors="replace") does.
#include "trace/utf8_text.h"

#include <gtest/gtest.h>

#include <string>

namespace smprof::internal {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8Text, ValidTextIsUnchanged) {
  for (const std::string text : {"", "step", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "a\x7f"}) {
    EXPECT_EQ(ValidUtf8(text), text);
  }
}

TEST(Utf8Text, InvalidSequencesBecomeOneReplacementEach) {
  EXPECT_EQ(ValidUtf8("caf\xe9"), "caf" + kFffd);
  EXPECT_EQ(ValidUtf8("\xff\xfe"), kFffd + kFffd);
  EXPECT_EQ(ValidUtf8("a\xe2\x82z"), "a" + kFffd + "z") << "a truncated sequence is one replacement";
  EXPECT_EQ(ValidUtf8("\xc0\xaf"), kFffd + kFffd) << "overlong";
  EXPECT_EQ(ValidUtf8("\xed\xa0\x80"), kFffd + kFffd + kFffd) << "a surrogate";
  EXPECT_EQ(ValidUtf8("\xf4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd) << "above U+10FFFF";
  EXPECT_EQ(ValidUtf8("\xf0\x9f\x98"), kFffd) << "truncated at the end";
  EXPECT_EQ(ValidUtf8(std::string("a\0b", 3)), std::string("a\0b", 3)) << "NUL is valid UTF-8";
}

}  // namespace
}  // namespace smprof::internal
