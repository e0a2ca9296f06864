// mock-llm's unit tests read their scripts from text; a script that does not parse fails the test
// with the parser's message.
#pragma once

#include <gtest/gtest.h>

#include <mock_llm/script.hpp>
#include <string>

namespace loopr::mock_llm {

inline Script load(const std::string& text) {
  auto s = parse_script(text, "test.yml");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return std::move(s).value();
}

}  // namespace loopr::mock_llm
