// The steps the artifact format tests (plan, spec, phase, the file checks and the traps) share:
// break one thing in a valid document, and find the problem it must cause, with the words of its
// message that tell the model what to write. `using namespace loopr::testing` brings them all,
// the problem matchers (markdown/problem_matchers.hpp) among them.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <loopr/markdown/artifacts.hpp>

#include "markdown/problem_matchers.hpp"

namespace loopr::testing {

using markdown::test::count_rule;
using markdown::test::dump;
using markdown::test::find_problem;

/// `text` with the first `from` replaced by `to`; a test that names a `from` the text does not
/// hold fails (its document would not be broken the way it says).
inline std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

/// Success when the section (or title) `s` holds `text` under its heading on `line`.
inline ::testing::AssertionResult section_is(const markdown::SectionText& s,
                                             const std::string& text, int line) {
  if (s.text == text && s.line == line) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "line " << s.line << ": \"" << s.text
                                       << "\"; expected line " << line << ": \"" << text << "\"";
}

/// `problems` hold one by `rule` at `line` (fatal when not: they are all printed), and its
/// message says `says`. Call it in ASSERT_NO_FATAL_FAILURE when the test goes on after it.
inline void expect_problem(const std::vector<markdown::Problem>& problems, markdown::Rule rule,
                           int line, const std::string& says) {
  const markdown::Problem* p = find_problem(problems, rule, line);
  ASSERT_NE(p, nullptr) << dump(problems);
  EXPECT_NE(p->message.find(says), std::string::npos) << p->message;
}

}  // namespace loopr::testing
