// The model, in process: mock-llm's script engine (the same YAML scripts as the real server)
// answers the real client's requests through llm::make_in_process_client — the wire code runs,
// no socket or process does. Delays in a script are not waited (a fast test does not sleep); a
// `hang` answers as a lost connection.
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/llm/client.hpp>
#include <loopr/llm/in_process.hpp>

namespace loopr::testing {

class ScriptedModel {
 public:
  /// Throws std::runtime_error when `script` does not parse. `log_path`: where requests go
  /// (one JSON line each, as mock-llm's --log).
  ScriptedModel(const std::string& script, const std::string& log_path);
  ~ScriptedModel();

  /// A client of `config.llm` answered by the script (a test key in its environment).
  std::unique_ptr<llm::LlmClient> client(const Config& config);
  /// The answerer itself (for a client built elsewhere).
  llm::InProcessServer server();

  /// Every request answered so far, oldest first (mock-llm's log lines).
  std::vector<nlohmann::json> requests() const;
  /// Those of one loop (the x-loopr-loop-id header).
  std::vector<nlohmann::json> requests_of(const std::string& loop_id) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace loopr::testing
