// The config file's sections, each read by the file that names it: config_keys.cpp holds the
// top-level table (read_config) and the small sections, config_llm.cpp `llm:`, config_loops.cpp
// `loops:`, config_sandbox.cpp `sandbox:`, `setup:` and `protect:`, config_executor.cpp
// `executor:`. Private to src/core.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/config_walker.hpp"

namespace loopr::config_detail {

using H = Walker::Handler;

/// Handlers that check one key's value with the walker and store it in `field`.
struct Fields {
  const Walker& w;
  H int_field(int& field, long long min, long long max) const;
  H str_field(std::string& field) const;
  H dur_field(Duration& field) const;
  H bool_field(bool& field) const;
  H size_field(std::size_t& field, long long min, long long max) const;
  /// A size such as 64M or 1G, at least `min` bytes.
  H byte_size(std::uint64_t& field, std::uint64_t min) const;
  /// A mapping of the names `field` already holds to whole numbers from `min`.
  H named_ints(std::map<std::string, int>& field, long long min) const;
};

/// The providers `llm.provider`, `loops.<type>.provider`, `loops.review.provider` and
/// `integration.provider` may name.
extern const std::vector<std::string> kProviders;

/// The whole file (config_keys.cpp).
void read_config(const Walker& w, const YAML::Node& root, Config& c);

/// `llm:` (config_llm.cpp).
void read_llm(const Fields& f, const YAML::Node& v, const std::string& k, Config& c);
/// `loops:` (config_loops.cpp).
void read_loops(const Fields& f, const YAML::Node& v, const std::string& k, Config& c);
/// `protect:` (config_sandbox.cpp).
void read_protect(const Fields& f, const YAML::Node& v, const std::string& k, Config& c);
/// `sandbox:` (config_sandbox.cpp).
void read_sandbox(const Walker& w, const YAML::Node& v, const std::string& k, SandboxConfig& s);
/// `setup:` (config_sandbox.cpp).
void read_setup(const Walker& w, const YAML::Node& v, const std::string& k, SetupConfig& s);

}  // namespace loopr::config_detail
