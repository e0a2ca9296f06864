// The one way tests start the real `loopr-mock-forge` (tools/mock-forge): the JSON script in a
// temp folder, the server on a free loopback port, its request log read back, its state asked
// over HTTP (`/_mock/state`, `/_mock/comments`). Stopped with SIGTERM/SIGKILL when this goes.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

namespace loopr::testing {

class MockForge {
 public:
  /// `token`: the only token accepted (empty: any); `git_dir`: the bare remote PR heads are
  /// read from. Throws std::runtime_error when it cannot start.
  MockForge(const nlohmann::json& script, const std::string& token = {},
            const std::string& git_dir = {});
  ~MockForge();
  MockForge(const MockForge&) = delete;
  MockForge& operator=(const MockForge&) = delete;

  static bool available();
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  /// Every request received so far (`--log`), oldest first.
  std::vector<nlohmann::json> requests() const;
  std::string log_path() const { return (dir_ / "requests.jsonl").string(); }
  /// `GET /_mock/state`: {pulls, ci_shas, requests, comments}.
  nlohmann::json state() const;
  /// Adds review comments ({path, line, body}) on PR `number`, made now.
  void add_comments(int number, const nlohmann::json& comments) const;
  /// The team acts on PR `number`: `merged`, `closed` or `open` again.
  void set_pull_state(int number, const std::string& state) const;
  /// Faults ({method?, path, status, times, rate_limit?, retry_after?}) answered before the
  /// script's: `{{"path", ".*"}, {"status", 401}, {"times", 2}}` fails the next two requests.
  void add_faults(const nlohmann::json& faults) const;
  std::string output() const;

 private:
  TempDir dir_{"loopr-mock-forge"};
  std::unique_ptr<ChildProcess> process_;
  int port_ = 0;
};

/// Path of the mock-forge binary (LOOPR_MOCK_FORGE_BIN), or empty.
std::string mock_forge_binary();

}  // namespace loopr::testing
