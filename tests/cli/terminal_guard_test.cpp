#include "cli/terminal_guard.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include <loopr/core/text.hpp>

#include "cli/terminal.hpp"

using namespace loopr;
using namespace loopr::cli;

namespace {

// What reaches the terminal when `pieces` are written one after another through the filter.
std::string through_filter(const std::vector<std::string>& pieces, bool json = false) {
  std::ostringstream sink;
  {
    TerminalFilterBuf filter(sink.rdbuf(), json);
    std::ostream os(&filter);
    for (const auto& p : pieces) os << p << std::flush;
  }
  return sink.str();
}

}  // namespace

TEST(TerminalFilter, LetsLooprsOwnStylesThrough) {
  Style s{true};
  std::string styled = s.bold("a") + s.red("b") + s.status(loopr::LoopStatus::blocked) + s.dim("c") +
                       s.wrap("1;4", "h") + s.wrap("9", "x");
  EXPECT_EQ(through_filter({styled}), styled);
}

TEST(TerminalFilter, ShowsEveryOtherEscapeAndControlVisibly) {
  std::string out =
      through_filter({"plan \x1b]52;c;cGF5bG9hZA==\x07 \x1b[2J\x1b]0;pwned\x07"
                      "\x1b[8mhidden\x1b[0m \xc2\x9b"
                      "31m \x1b[5F\x1b[K x\r y"});
  EXPECT_EQ(out.find('\x1b' + std::string("]")), std::string::npos) << out;
  EXPECT_EQ(out.find("\x1b[2J"), std::string::npos);
  EXPECT_EQ(out.find("\x1b[8m"), std::string::npos);
  EXPECT_EQ(out.find("\x1b[5F"), std::string::npos);
  EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos);
  EXPECT_NE(out.find("^[]52;c;cGF5bG9hZA==^G"), std::string::npos) << out;
  EXPECT_NE(out.find("^[[8mhidden\x1b[0m"), std::string::npos) << out;  // the reset is loopr's
  EXPECT_NE(out.find("<U+009B>31m"), std::string::npos) << out;
  EXPECT_NE(out.find("x^M y"), std::string::npos) << out;
}

TEST(TerminalFilter, HoldsSequencesSplitAcrossWrites) {
  // A character and a style cut in two by separate writes come out whole.
  EXPECT_EQ(through_filter({"a\xe2\x9c",
                            "\x93"
                            "b",
                            "\x1b[", "1mc\x1b", "[0m"}),
            "a✓b\x1b[1mc\x1b[0m");
  EXPECT_EQ(through_filter({"crlf\r", "\nnext"}), "crlf\nnext");
  // What never completes is shown at the end.
  EXPECT_EQ(through_filter({"cut \xe2\x9c"}), "cut \uFFFD");
  EXPECT_EQ(through_filter({"esc \x1b"}), "esc ^[");
}

TEST(TerminalFilter, UnderJsonOnlyMakesTheTextValidUtf8) {
  std::string doc = "{\"a\":\"\x7f \xc2\x9b\"}\n";
  EXPECT_EQ(through_filter({doc}, true), doc);
  EXPECT_EQ(through_filter({"{\"a\":\"\xff\"}"}, true), "{\"a\":\"\uFFFD\"}");
}

TEST(TerminalFilter, TerminalControlGoesAroundTheFilter) {
  std::ostringstream sink;
  {
    TerminalFilterBuf filter(sink.rdbuf(), false);
    std::ostream os(&filter);
    os << "line";
    write_terminal_control(os, "\x1b[K\n\x1b[2F");
    os << "\x1b[2F";
  }
  EXPECT_EQ(sink.str(), "line\x1b[K\n\x1b[2F^[[2F");
}

TEST(TerminalFilter, OwnStylesAreExactlyStylesCodes) {
  EXPECT_TRUE(is_own_style("\x1b[0m"));
  EXPECT_TRUE(is_own_style("\x1b[1;31m"));
  EXPECT_FALSE(is_own_style("\x1b[8m"));   // conceal
  EXPECT_FALSE(is_own_style("\x1b[30m"));  // black: invisible on a black terminal
  EXPECT_FALSE(is_own_style("\x1b[41m"));  // a background
  EXPECT_FALSE(is_own_style("\x1b[m"));
  EXPECT_FALSE(is_own_style("\x1b[38;5;0m"));
}
