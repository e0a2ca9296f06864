#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <loopr/core/text.hpp>

using namespace loopr;

TEST(ValidUtf8, KeepsValidTextAsItIs) {
  for (std::string s : {std::string(), std::string("plain"), std::string("grüße ✓ 😀"),
                        std::string("tab\tnew\nline"), std::string("nul\0x", 5)}) {
    EXPECT_TRUE(is_valid_utf8(s)) << s;
    EXPECT_EQ(valid_utf8(s), s);
  }
}

TEST(ValidUtf8, ReplacesIllFormedBytesLikeLossyDecoding) {
  EXPECT_EQ(valid_utf8("\xff\xfe"), "\uFFFD\uFFFD");
  EXPECT_EQ(valid_utf8("a\xc3"), "a\uFFFD");    // cut off at the end
  EXPECT_EQ(valid_utf8("\xe2\x9c"), "\uFFFD");  // a maximal subpart: one replacement
  EXPECT_EQ(valid_utf8("\xe2\x9cx"), "\uFFFDx");
  EXPECT_EQ(valid_utf8("\xc0\xaf"), "\uFFFD\uFFFD");                      // overlong
  EXPECT_EQ(valid_utf8("\xed\xa0\x80"), "\uFFFD\uFFFD\uFFFD");            // a surrogate
  EXPECT_EQ(valid_utf8("\xf4\x90\x80\x80"), "\uFFFD\uFFFD\uFFFD\uFFFD");  // above U+10FFFF
  EXPECT_EQ(valid_utf8("\x80ok"), "\uFFFDok");
  EXPECT_FALSE(is_valid_utf8("\xff"));
  EXPECT_TRUE(is_valid_utf8(valid_utf8("\xf0\x9f\x98")));
}

TEST(Utf8Prefix, NeverEndsInsideACharacter) {
  std::string s = "ab✓";  // ✓ is 3 bytes
  EXPECT_EQ(utf8_prefix(s, 10), s);
  EXPECT_EQ(utf8_prefix(s, 5), s);
  EXPECT_EQ(utf8_prefix(s, 4), "ab");
  EXPECT_EQ(utf8_prefix(s, 3), "ab");
  EXPECT_EQ(utf8_prefix(s, 2), "ab");
  EXPECT_EQ(utf8_prefix(s, 0), "");
}

TEST(Utf8UnfinishedTail, CountsOnlyWhatMayStillComplete) {
  EXPECT_EQ(utf8_unfinished_tail("abc"), 0u);
  EXPECT_EQ(utf8_unfinished_tail("ab\xe2"), 1u);
  EXPECT_EQ(utf8_unfinished_tail("ab\xe2\x9c"), 2u);
  EXPECT_EQ(utf8_unfinished_tail("ab\xe2\x9c\x93"), 0u);
  EXPECT_EQ(utf8_unfinished_tail("ab\xff"), 0u);  // can never become valid
  EXPECT_EQ(utf8_unfinished_tail("ab\xe2x"), 0u);
}

TEST(TerminalText, ShowsEveryControlVisibly) {
  EXPECT_EQ(terminal_text("\x1b]52;c;SGVsbG8=\x07"), "^[]52;c;SGVsbG8=^G");
  EXPECT_EQ(terminal_text("\x1b[2J\x1b[8mhidden"), "^[[2J^[[8mhidden");
  EXPECT_EQ(terminal_text("\x1b]0;title\x07"), "^[]0;title^G");
  EXPECT_EQ(terminal_text("a\xc2\x9b"
                          "31mb"),
            "a<U+009B>31mb");  // C1 CSI
  EXPECT_EQ(terminal_text(std::string("x\x7fy\0z", 5), 5), "x^?y…");
  EXPECT_EQ(terminal_text(std::string("n\0l", 3)), "n^@l");
  EXPECT_EQ(terminal_text("over\rwrite"), "over^Mwrite");
  EXPECT_EQ(terminal_text("rtl \u202Eevil"), "rtl <U+202E>evil");
  EXPECT_EQ(terminal_text("bad \xff\xfe"), "bad \uFFFD\uFFFD");
}

TEST(TerminalText, KeepsLinesTabsAndPrintableText) {
  EXPECT_EQ(terminal_text("a\tb\nc ✓ grüße"), "a\tb\nc ✓ grüße");
  EXPECT_EQ(terminal_text("dos\r\nline"), "dos\nline");
}

TEST(TerminalText, CutsOnCharacterBoundaries) {
  EXPECT_EQ(terminal_text("ab✓cd", 4), "ab…");
  EXPECT_EQ(terminal_text("ab✓cd", 5), "ab✓…");
  EXPECT_EQ(terminal_text("abc", 3), "abc");
  EXPECT_EQ(terminal_text("a\x1b", 2), "a…");  // `^[` does not fit whole
  EXPECT_TRUE(is_valid_utf8(terminal_text("\xe2\x9c\x93\xe2\x9c\x93", 4)));
}

TEST(TerminalJson, SanitisesEveryStringKeysToo) {
  nlohmann::json j = {{"a\x1b", {"x\x1b[2J", 3, nullptr, {{"k", "\xc2\x9b"}}}}};
  nlohmann::json out = terminal_json(j);
  EXPECT_EQ(out.dump(), R"({"a^[":["x^[[2J",3,null,{"k":"<U+009B>"}]})");
}

TEST(JsonText, NeverThrowsOnInvalidUtf8) {
  nlohmann::json j = {{"output", std::string("\xff\xfe ok")}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);
  std::string text = json_text(j);
  EXPECT_EQ(text, "{\"output\":\"\uFFFD\uFFFD ok\"}");
  EXPECT_EQ(valid_utf8_json(j).dump(), text);
}
