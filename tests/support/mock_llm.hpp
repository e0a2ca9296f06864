// The one way tests (and nothing else) start the real `loopr-mock-llm`: the script written to a
// temp folder, the server on a free loopback port, its request log read back, its output kept in
// `output()`. The server is stopped (SIGTERM, then SIGKILL) when this goes away.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

namespace loopr::testing {

class MockLlm {
 public:
  struct Options {
    std::vector<std::string> args;  ///< more command-line options, e.g. `--latency 200ms`
    std::string api_key;            ///< --api-key: only this key is accepted
    std::string tls_cert, tls_key;  ///< serve HTTPS with these

    static Options key(std::string k) {
      Options o;
      o.api_key = std::move(k);
      return o;
    }
    static Options tls(std::string cert, std::string key) {
      Options o;
      o.tls_cert = std::move(cert);
      o.tls_key = std::move(key);
      return o;
    }
  };

  /// Throws std::runtime_error (with the server's output) when it cannot start.
  MockLlm(const std::string& script, Options options);
  /// `extra_args` are appended to the command line.
  explicit MockLlm(const std::string& script, std::vector<std::string> extra_args = {})
      : MockLlm(script, Options{std::move(extra_args), {}, {}, {}}) {}
  ~MockLlm();
  MockLlm(const MockLlm&) = delete;
  MockLlm& operator=(const MockLlm&) = delete;

  /// Whether the binary is built (tests that need it skip otherwise).
  static bool available();

  int port() const { return port_; }
  std::string url(const char* scheme = "http", const char* host = "127.0.0.1") const {
    return std::string(scheme) + "://" + host + ":" + std::to_string(port_);
  }
  /// Every request received so far (one JSON object per line of `--log`), oldest first.
  std::vector<nlohmann::json> requests() const;
  std::string log_path() const { return (dir_ / "requests.jsonl").string(); }
  /// What the server printed (stdout and stderr).
  std::string output() const;

 private:
  TempDir dir_{"loopr-mock"};
  std::unique_ptr<ChildProcess> process_;
  int port_ = 0;
};

/// Path of the mock-llm binary (LOOPR_MOCK_LLM_BIN in the environment, else the build's), or
/// empty.
std::string mock_llm_binary();

}  // namespace loopr::testing
