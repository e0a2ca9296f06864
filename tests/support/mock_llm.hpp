// Runs the real `loopr-mock-llm` binary for a test: writes the script, starts the server on a
// free loopback port, and reads its request log. The server is killed when this goes away.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

namespace loopr::testing {

class MockLlm {
 public:
  /// `script` is the YAML script; `extra_args` are appended to the command line.
  explicit MockLlm(const std::string& script, std::vector<std::string> extra_args = {});
  ~MockLlm();
  MockLlm(const MockLlm&) = delete;
  MockLlm& operator=(const MockLlm&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  /// Every request received so far (one JSON object per line of `--log`).
  std::vector<nlohmann::json> requests() const;
  std::string log_path() const { return (dir_ / "requests.jsonl").string(); }

 private:
  TempDir dir_{"loopr-mock"};
  pid_t pid_ = -1;
  int port_ = 0;
};

/// Path of the mock-llm binary (compile definition LOOPR_MOCK_LLM_BIN), or empty.
std::string mock_llm_binary();

}  // namespace loopr::testing
