// Pure text helpers of the git module: git's path quoting and the diff line cap.
#include "git/text.hpp"

#include <gtest/gtest.h>

using loopr::git::detail::LineCapper;
using loopr::git::detail::quote_path;

TEST(QuotePathTest, PlainPathsStayUnquoted) {
  EXPECT_EQ(quote_path("src/main.cpp"), "src/main.cpp");
  EXPECT_EQ(quote_path("dir/"), "dir/");
}

// Expected strings are what `git status --porcelain` printed for these names (git 2.39).
TEST(QuotePathTest, QuotesLikeGitPorcelain) {
  EXPECT_EQ(quote_path("a b.txt"), "\"a b.txt\"");
  EXPECT_EQ(quote_path("q\"x"), "\"q\\\"x\"");
  EXPECT_EQ(quote_path("tab\tx"), "\"tab\\tx\"");
  EXPECT_EQ(quote_path("back\\slash"), "\"back\\\\slash\"");
  EXPECT_EQ(quote_path("\xc3\xbc.txt"), "\"\\303\\274.txt\"");
  EXPECT_EQ(quote_path("bell\x01"), "\"bell\\001\"");
}

TEST(QuotePathTest, NonAsciiKeptWhenQuotePathIsOff) {
  EXPECT_EQ(quote_path("\xc3\xbc.txt", false), "\xc3\xbc.txt");
  EXPECT_EQ(quote_path("\xc3\xbc x", false), "\"\xc3\xbc x\"");
}

TEST(LineCapperTest, ShortTextPassesThroughUnchanged) {
  LineCapper c(10, 1000);
  c.add("one\ntw");
  c.add("o\nthree\n");
  EXPECT_EQ(c.finish(), "one\ntwo\nthree\n");
}

TEST(LineCapperTest, CutsAtLineLimitAndCountsTheRest) {
  LineCapper c(2, 1000);
  for (int i = 0; i < 7; ++i) c.add("line " + std::to_string(i) + "\n");
  EXPECT_EQ(c.finish(), "line 0\nline 1\n… 5 more lines\n");
}

TEST(LineCapperTest, CutsAtByteLimitOnALineBoundary) {
  LineCapper c(100, 12);
  c.add("12345\n12345\n12345\nx\n");  // the third line would pass 12 bytes
  EXPECT_EQ(c.finish(), "12345\n12345\n… 2 more lines\n");
}

TEST(LineCapperTest, TrailingLineWithoutNewlineCountsAsALine) {
  LineCapper kept(5, 100);
  kept.add("a\nb");
  EXPECT_EQ(kept.finish(), "a\nb\n");
  LineCapper cut(1, 100);
  cut.add("a\nb");
  EXPECT_EQ(cut.finish(), "a\n… 1 more lines\n");
}

TEST(LineCapperTest, NothingKeptWhenLimitIsZero) {
  LineCapper c(0, 100);
  c.add("a\nb\n");
  EXPECT_EQ(c.finish(), "… 2 more lines\n");
}
