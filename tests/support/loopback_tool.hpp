// What the test doubles of tools/ (loopr-mock-llm, loopr-mock-forge) share as running servers:
// each is started with `--port 0 --port-file F --log L`, writes its port to F once it listens,
// logs one JSON object a request to L, and stops on SIGTERM.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/subprocess.hpp"

namespace loopr::testing {

/// Waits (up to 20 s) for `process` to write its port to `port_file` and returns it. Throws
/// std::runtime_error with `output()` when it exits first (`exited`: what to say then) or does
/// not start in time (`name`).
int wait_for_port(ChildProcess& process, const std::filesystem::path& port_file,
                  const std::string& name, const std::string& exited,
                  const std::function<std::string()>& output);

/// SIGTERM, then SIGKILL when it has not ended within 5 s (nothing when it already ended).
void stop_tool(ChildProcess& process);

/// The JSON objects of a `--log` file, one a line, oldest first (lines that do not parse: skipped).
std::vector<nlohmann::json> read_json_lines(const std::string& path);

}  // namespace loopr::testing
