// loopr's one interface to a model: `complete(request)` over the Anthropic Messages API, an
// OpenAI-compatible chat completions server or the Claude Code CLI, built from the Config.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/core/result.hpp>
#include <loopr/exec/executor.hpp>
#include <loopr/llm/types.hpp>
#include <loopr/net/asio.hpp>

namespace loopr::llm {

/// Calls may overlap (many loops' coroutines on the one io thread share a client and its
/// keep-alive connections); a client is not meant to be used from several threads at once.
class LlmClient {
 public:
  virtual ~LlmClient() = default;

  /// One model call (one HTTP request, or one whole CLI session for claude-code). Run it on
  /// the io_context the client was made with; `request` must live until the co_await returns.
  /// Never throws for what the provider, network or CLI does: that comes back as an LlmError.
  virtual awaitable<Outcome> complete(const Request& request) = 0;

  /// True when the provider runs its tools itself (claude-code): the response is the end of a
  /// whole agentic session and the engine skips its own tool loop.
  virtual bool runs_own_tools() const = 0;

  /// `anthropic`, `openai` or `claude-code`.
  virtual const std::string& provider() const = 0;
  /// The configured model (a Request may name another).
  virtual const std::string& model() const = 0;

  /// The client that answers requests for `provider` (Request::provider; empty: this one's).
  /// Only a client made for several providers (loops.<type>.provider) has others.
  virtual const LlmClient& for_provider(std::string_view provider) const {
    (void)provider;
    return *this;
  }
};

/// The providers a config's loops use: llm.provider first, then each other one that a loop
/// role (loops.<type>.provider, integration.provider, loops.review.provider) names.
std::vector<std::string> providers_in_use(const Config& config);

/// Builds the client `config.llm.provider` names. Keys come from `env` (ANTHROPIC_API_KEY,
/// OPENAI_API_KEY); `config.llm.base_url` is already resolved by apply_env, empty meaning
/// https://api.anthropic.com / https://api.openai.com. HTTP clients run on `io`; the
/// claude-code client waits for its child process on `blocking`. Errors: an unknown provider,
/// a malformed or non-loopback plain-http base URL, an unreadable ca_file. The claude-code
/// client runs the `claude` CLI through `commands` (the sandbox, whose only way out is an
/// allowlisting proxy) when given, with a private configuration folder per loop under
/// `private_dir` (the daemon's `.loopr/run/claude`; each removed when its command ends; empty:
/// the CLI cannot run sandboxed).
Result<std::unique_ptr<LlmClient>> make_client(const Config& config, const EnvLookup& env,
                                               net::io_context& io, net::thread_pool& blocking,
                                               exec::Executor* commands = nullptr,
                                               const std::filesystem::path& private_dir = {});

/// A client whose settings can be replaced while calls run (the daemon's SIGHUP): each call
/// uses the client that was current when it started, and finishes on it.
class ReloadableClient final : public LlmClient {
 public:
  explicit ReloadableClient(std::unique_ptr<LlmClient> first);

  /// From the next call on, `next` answers. The one replaced stays alive (calls in flight).
  void replace(std::unique_ptr<LlmClient> next);

  awaitable<Outcome> complete(const Request& request) override;
  bool runs_own_tools() const override;
  const std::string& provider() const override;
  const std::string& model() const override;
  const LlmClient& for_provider(std::string_view provider) const override;

 private:
  std::shared_ptr<LlmClient> current() const;

  mutable std::mutex mutex_;
  std::shared_ptr<LlmClient> current_;
  std::vector<std::shared_ptr<LlmClient>> retired_;  ///< what provider()/model() may still refer to
};

}  // namespace loopr::llm
