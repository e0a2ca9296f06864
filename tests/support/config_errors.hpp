// The error a config text gets from parse_config (and a test failure when it parses).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include <loopr/core/config.hpp>

namespace loopr::testing {

inline std::string config_error_of(const std::string& yaml) {
  auto r = parse_config(yaml, ".loopr/config.yml");
  EXPECT_FALSE(r.ok()) << "expected an error for:\n" << yaml;
  return r.ok() ? std::string() : r.error().message;
}

}  // namespace loopr::testing
