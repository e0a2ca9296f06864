// A model client whose HTTP exchanges are answered by a function in the same process: the real
// wire code (request building, JSON and SSE decoding, error classification) with no socket. For
// fast tests (tests/support/fakes: mock-llm's script engine answers) and benchmarks.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/llm/client.hpp>

namespace loopr::llm {

/// One request as it would go on the wire.
struct InProcessRequest {
  std::string method;
  std::string target;  ///< `/v1/messages`
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

/// The answer: a status, headers (`content-type: text/event-stream` for a stream, whose `body`
/// is then the SSE frames), the body; `cut_after` body bytes ends it as a lost connection.
struct InProcessAnswer {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::optional<std::size_t> cut_after;
};

using InProcessServer = std::function<InProcessAnswer(const InProcessRequest&)>;

/// The client of `config.llm` (anthropic or openai; its key from `env`), answered by `server`.
Result<std::unique_ptr<LlmClient>> make_in_process_client(const Config& config,
                                                          const EnvLookup& env,
                                                          InProcessServer server);

}  // namespace loopr::llm
