// Step 4 of an iteration: the agentic tool loop. ONE user message starts it; tool_use turns run
// tools in the worktree; the conversation exists only for this iteration.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <loopr/engine/engine.hpp>
#include <loopr/llm/types.hpp>
#include <loopr/tools/tool_router.hpp>

namespace loopr::engine {

struct Conversation {
  enum class End {
    done,              ///< the model ended its turn
    max_turns,         ///< `max_turns_per_iteration` model calls were made
    context_exceeded,  ///< the model's context window is full
    refused,           ///< the model refused; `refusal` has the details
    stopped,           ///< the user stopped the loop
    error,             ///< a model call failed for good (fatal, or retries used up)
    limit,             ///< a cost or runtime limit was reached after a turn; `limit` says which
    max_runtime,       ///< loops.<type>.iteration_max_runtime ran out (stored as a number: last)
  };
  End end = End::done;
  std::vector<llm::Message> messages;
  std::vector<nlohmann::json> calls;  ///< per model call: stop reason, usage, request id
  Usage usage;
  /// What the same calls would have cost without the prompt cache (its input at full price).
  double uncached_cost_usd = 0;
  /// An agent CLI on a subscription login: the cost it reported, not billed per token
  /// (llm::Response::notional_cost_usd); nullopt when no call ran on one.
  std::optional<double> notional_cost_usd;
  int turns = 0;
  int tool_calls = 0;
  std::int64_t model_ms = 0;   ///< time spent inside model calls (not waiting for a slot)
  std::string assistant_text;  ///< every text block the model wrote, joined
  std::optional<llm::LlmError> error;
  nlohmann::json refusal;
  std::string question;  ///< what the model asked the person (`ask_user`); it ends the talk
  int notes = 0;         ///< notes shared (`share_note`)
  /// Files a tool that writes anywhere (the claude CLI) changed outside the artifact of a loop
  /// that may write only its artifact: undone after the session.
  std::vector<std::string> reverted;
  EndReason limit_end = EndReason::none;  ///< end == limit: cost_limit, runtime_limit, …
  std::string limit_reason;               ///< end == limit: for the person
};

/// Asked after every model turn (and its tool calls) that the model wants to follow with another:
/// with the iteration's usage so far, whether a limit ends the conversation here (its end reason
/// and why); nullopt goes on. The runner's is iteration_rules' `check_turn_limits`.
struct TurnLimit {
  EndReason end = EndReason::none;
  std::string reason;
  /// `cost_limit` reached by limits.max_input_tokens (raised in the config, not by `resume`).
  bool input_tokens = false;
};
using TurnCheck = std::function<std::optional<TurnLimit>(const Usage& so_far)>;
using SteadyTime = std::chrono::steady_clock::time_point;

/// Who a model call is for: the loop's own turn, the judge of its validation, or the reviewer.
/// It names the role whose model and provider the call uses (call_role) and the
/// `x-loopr-loop-type` sent (the loop's type, `judge` or `review`).
enum class CallKind { loop, judge, review };

/// Talks with the model until it is done (or a limit, an error or a stop ends it).
/// Both shared pointers may outlive the call: a stopped tool call finishes in the background.
/// `router` is null for calls without tools (the judge and the reviewer). `between_turns` (may be
/// empty) is asked before every model call after the first: a limit ends the talk with
/// `End::limit`. `model`: empty for the role's (Config::model_for: loops.<type>.model, else
/// llm.model); the provider is always the role's (Request::provider). `system`: the system
/// block (the template's fixed sections, the same for every iteration: what prompt caching
/// reads first), empty for none. `deadline` (loops.<type>.iteration_max_runtime): no model call
/// starts after it and each is cut at it (the router cuts its commands there too, ToolLimits);
/// the talk then ends with `End::max_runtime` (the first call always runs).
awaitable<Conversation> converse(EngineContext& ctx, const Loop& loop,
                                 std::shared_ptr<LoopControl> control, const std::string& prompt,
                                 std::shared_ptr<tools::ToolRouter> router, CallKind kind,
                                 int max_turns, TurnCheck between_turns = {},
                                 const std::string& model = {}, const std::string& system = {},
                                 std::optional<SteadyTime> deadline = std::nullopt);

/// The role whose model and provider a call uses (Config::model_for): `review`,
/// `integration-fix` (a fix loop), else the loop's type (the judge uses its loop's).
std::string call_role(const Loop& loop, CallKind kind);

}  // namespace loopr::engine
