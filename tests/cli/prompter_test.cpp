// The review prompt without a terminal: answers line by line from a pipe, as scripts send them.
#include "cli/prompter.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

using namespace loopr::cli;

namespace {

// A pipe whose read end holds `input` (then end of input).
struct Input {
  int fd = -1;
  explicit Input(const std::string& input) {
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    EXPECT_EQ(write(p[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
    close(p[1]);
    fd = p[0];
  }
  ~Input() { close(fd); }
};

}  // namespace

TEST(PrompterTest, ReadsChoicesFeedbackAndReasonsLineByLine) {
  Input in("\nx\niterate\nmore tests\nand docs\n\nA\n");
  std::ostringstream out;
  Prompter p(in.fd, out);
  EXPECT_FALSE(p.interactive());
  EXPECT_EQ(p.choose("[a]pprove [r]eject [i]terate [s]kip ", "aris"),
            'i');  // blank and `x` asked again
  EXPECT_NE(out.str().find("please answer with one of: a, r, i, s"), std::string::npos);
  EXPECT_EQ(p.read_text("feedback:\n"), "more tests\nand docs");
  EXPECT_EQ(p.choose("? ", "aris"), 'a');
  EXPECT_EQ(p.choose("? ", "aris"), std::nullopt);  // end of input
}

TEST(PrompterTest, FeedbackEndsAtEndOfInputAndLinesMayLackANewline) {
  Input in("r\nnot needed");
  std::ostringstream out;
  Prompter p(in.fd, out);
  EXPECT_EQ(p.choose("? ", "aris"), 'r');
  EXPECT_EQ(p.read_line("reason: "), "not needed");
  EXPECT_EQ(p.read_line("reason: "), std::nullopt);
  EXPECT_EQ(p.read_text("feedback: "), "");
}
