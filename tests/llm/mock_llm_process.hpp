// Test helpers for the llm module: the mock server (tests/support/mock_llm.hpp), synchronous
// calls of an LlmClient on an io_context, and a config pointing at the mock. Header-only so that
// each integration test can include it.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/llm/client.hpp>
#include <loopr/llm/retry.hpp>

#include "support/mock_llm.hpp"
#include "support/temp_dir.hpp"

namespace loopr::llm::testing {

/// The one mock-llm launcher (tests/support/mock_llm.hpp).
using MockLlm = loopr::testing::MockLlm;

#define LOOPR_REQUIRE_MOCK()                        \
  if (!::loopr::llm::testing::MockLlm::available()) \
  GTEST_SKIP() << "loopr-mock-llm is not built (tools/mock-llm missing): skipped"

/// A config for `provider` at `base_url` with short timeouts, so failing tests fail fast.
inline Config mock_config(const std::string& provider, const std::string& base_url,
                          bool stream = true) {
  Config c;
  c.llm.provider = provider;
  c.llm.model = provider == "openai" ? "gpt-9" : "claude-opus-5-5";
  c.llm.base_url = base_url;
  c.llm.stream = stream;
  c.llm.connect_timeout = std::chrono::seconds(5);
  c.llm.first_byte_timeout = std::chrono::seconds(10);
  c.llm.idle_timeout = std::chrono::seconds(10);
  return c;
}

inline EnvLookup env_with(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

/// An io_context, a blocking pool and a client made by the factory, callable synchronously.
struct ClientHarness {
  net::io_context io;
  net::thread_pool pool{2};
  std::unique_ptr<LlmClient> client;

  /// The harness's own run folder: the CLIs' private folders are `<run>/claude`, and codex's
  /// and gemini's are its siblings `<run>/codex`, `<run>/gemini` (as under the daemon's
  /// `.loopr/run/`), never shared with another test running at the same time.
  loopr::testing::TempDir run_dir{"loopr-harness-run"};

  ClientHarness(const Config& config, const EnvLookup& env, exec::Executor* commands = nullptr) {
    auto made = make_client(config, env, io, pool, commands, run_dir.path() / "claude");
    if (!made.ok())
      ADD_FAILURE() << made.error().message;
    else
      client = std::move(made.value());
  }
  ~ClientHarness() { pool.join(); }

  Outcome call(const Request& request) {
    std::optional<Outcome> out;
    net::co_spawn(
        io, [&]() -> awaitable<void> { out = co_await client->complete(request); }, net::detached);
    io.restart();
    io.run();
    return std::move(*out);
  }

  Outcome call_with_retries(const Request& request, const RetryPolicy& policy, BeforeRetry hook) {
    std::optional<Outcome> out;
    net::co_spawn(
        io,
        [&]() -> awaitable<void> {
          out = co_await complete_with_retries(*client, request, policy, hook);
        },
        net::detached);
    io.restart();
    io.run();
    return std::move(*out);
  }
};

inline Request user_request(const std::string& text, const std::string& loop_id = "001",
                            const std::string& loop_type = "plan") {
  Request r;
  r.system = "You are a test.";
  r.messages = {Message::user_text(text)};
  r.loop_id = loop_id;
  r.loop_type = loop_type;
  return r;
}

}  // namespace loopr::llm::testing
