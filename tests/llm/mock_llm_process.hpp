// Test helper: runs `loopr-mock-llm` with a script written by the test, on a free loopback port,
// and reads back its request log. Also: synchronous calls of an LlmClient on an io_context, and
// a config pointing at the mock. Header-only so that each integration test can include it.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/llm/client.hpp>
#include <loopr/llm/retry.hpp>

#include "support/temp_dir.hpp"

extern char** environ;

namespace loopr::llm::testing {

/// The mock server process; killed (SIGTERM, then waited for) on destruction.
class MockLlm {
 public:
  struct Options {
    std::string api_key;  ///< --api-key: only this key is accepted
    std::string tls_cert, tls_key;

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

  MockLlm(const std::string& script_yaml, Options options = {}) : dir_("loopr-llm-mock") {
#ifdef LOOPR_MOCK_LLM_BIN
    loopr::testing::write_file(dir_ / "script.yml", script_yaml);
    std::vector<std::string> args = {LOOPR_MOCK_LLM_BIN,
                                     "--script",
                                     (dir_ / "script.yml").string(),
                                     "--port",
                                     "0",
                                     "--port-file",
                                     (dir_ / "port").string(),
                                     "--log",
                                     log_path(),
                                     "--seed",
                                     "7"};
    if (!options.api_key.empty()) args.insert(args.end(), {"--api-key", options.api_key});
    if (!options.tls_cert.empty())
      args.insert(args.end(), {"--tls-cert", options.tls_cert, "--tls-key", options.tls_key});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    std::string out = (dir_ / "mock.out").string();
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      pid_ = -1;
      ADD_FAILURE() << "cannot start " << argv[0];
      return;
    }
    bool up = loopr::testing::wait_until([&] {
      std::ifstream in(dir_ / "port");
      return static_cast<bool>(in >> port_);
    });
    if (!up) ADD_FAILURE() << "mock-llm did not start: " << output();
#endif
  }

  ~MockLlm() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  MockLlm(const MockLlm&) = delete;
  MockLlm& operator=(const MockLlm&) = delete;

  static bool available() {
#ifdef LOOPR_MOCK_LLM_BIN
    return true;
#else
    return false;
#endif
  }

  int port() const { return port_; }
  std::string url(const char* scheme = "http", const char* host = "127.0.0.1") const {
    return std::string(scheme) + "://" + host + ":" + std::to_string(port_);
  }
  std::string log_path() const { return (dir_ / "requests.jsonl").string(); }
  std::string output() const { return loopr::testing::read_file(dir_ / "mock.out"); }

  /// Every request logged so far, oldest first.
  std::vector<nlohmann::json> requests() const {
    std::vector<nlohmann::json> out;
    std::ifstream in(log_path());
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    return out;
  }

 private:
  loopr::testing::TempDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

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

  ClientHarness(const Config& config, const EnvLookup& env, exec::Executor* commands = nullptr) {
    auto made = make_client(config, env, io, pool, commands);
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
