#include "engine/conversation.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <set>

#include <loopr/api/events.hpp>
#include <loopr/engine/event_bus.hpp>
#include <loopr/git/worktree.hpp>
#include <loopr/llm/pricing.hpp>
#include <loopr/llm/retry.hpp>

#include "engine/coordination.hpp"
#include "engine/until_stopped.hpp"

namespace loopr::engine {
namespace {

constexpr const char* kContinue =
    "Your reply was cut off because it reached the output token limit. Continue from where you "
    "stopped; if you were in the middle of a tool call, make it again.";

// What the model is shown: only the tools the loop's policy allows, sorted by name so that the
// prefix a cache reads is byte-identical for every loop of a type.
std::vector<llm::ToolDefinition> llm_tools(const tools::ToolRouter& router) {
  std::vector<llm::ToolDefinition> out;
  for (const auto& d : router.definitions()) out.push_back({d.name, d.description, d.input_schema});
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

// The call and the slot it holds, owned by this coroutine's frame (by-value parameters), so an
// abandoned call keeps both alive until it really ends.
awaitable<llm::Outcome> complete_holding(llm::LlmClient& client, llm::Request request,
                                         std::shared_ptr<Scheduler::Slot> slot,
                                         std::shared_ptr<LoopControl> control) {
  // claude-code kills its CLI when the flag is set; the HTTP clients end on their timeouts.
  request.cancel = control->cancel_flag();
  llm::Outcome out = co_await client.complete(request);
  slot->reset();
  co_return out;
}

awaitable<tools::ToolResult> run_tool(net::thread_pool& pool, std::shared_ptr<tools::ToolRouter> router,
                                      tools::ToolCall call, std::shared_ptr<LoopControl> control) {
  auto work = [&router, &call, &control] { return router->call(call, control->cancel_flag()); };
  tools::ToolResult result = co_await run_blocking(pool, work);
  co_return result;
}

// One attempt of a model call: a scheduler slot, then the call (which a stop abandons). nullopt
// when the loop was stopped (while waiting for the slot or during the call).
awaitable<std::optional<llm::Outcome>> call_once(EngineContext& ctx, const Loop& loop,
                                                 std::shared_ptr<LoopControl> control_ptr,
                                                 const llm::Request& request, bool continuation,
                                                 std::int64_t& model_ms,
                                                 std::optional<SteadyTime> deadline) {
  LoopControl& control = *control_ptr;
  auto slot = co_await ctx.scheduler.acquire(loop.type, continuation, loop.id);
  if (!slot || control.stop_requested()) co_return std::nullopt;
  // The wait for the slot used up the iteration's time: no call that would be cut at once.
  if (deadline && std::chrono::steady_clock::now() >= *deadline) co_return std::nullopt;
  // The slot travels with the call: an abandoned call keeps it until it really ends.
  auto shared_slot = std::make_shared<Scheduler::Slot>(std::move(slot));
  awaitable<llm::Outcome> call = complete_holding(ctx.llm, request, shared_slot, control_ptr);
  auto call_started = std::chrono::steady_clock::now();
  auto outcome = co_await until_stopped<llm::Outcome>(control, std::move(call), deadline);
  model_ms += std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - call_started)
                  .count();
  co_return outcome;
}

// Between two attempts: the slot is released already; a 429 pauses every loop of the provider;
// the wait is an `llm_retry` event and ends early (false) when the loop is stopped.
awaitable<bool> pause_before_retry(EngineContext& ctx, const Loop& loop,
                                   std::shared_ptr<LoopControl> control, llm::LlmError err,
                                   int attempt, std::chrono::milliseconds wait,
                                   std::optional<SteadyTime> deadline) {
  // No retry that would start after the iteration's time limit (iteration_max_runtime).
  if (deadline && std::chrono::steady_clock::now() + wait >= *deadline) co_return false;
  if (err.kind == llm::ErrorKind::rate_limited)
    ctx.scheduler.pause_until(std::chrono::system_clock::now() + wait);
  std::vector<Event> retry_events;
  retry_events.push_back(api::encode(
      loop.id, api::LlmRetry{attempt, wait.count(), std::string(llm::to_string(err.kind)),
                             err.http_status, err.describe()}));
  co_await ctx.journal.note(std::move(retry_events));
  bool slept = co_await sleep_unless_stopped(*control, wait);
  co_return slept;
}

// One model call with the one retry loop (llm/retry.hpp): each attempt takes its own scheduler
// slot, so a loop waiting to retry holds none.
awaitable<std::optional<llm::Outcome>> call_model(EngineContext& ctx, const Loop& loop,
                                                  std::shared_ptr<LoopControl> control_ptr,
                                                  llm::Request& request, bool continuation,
                                                  std::int64_t& model_ms,
                                                  std::optional<SteadyTime> deadline) {
  const std::chrono::milliseconds own_timeout = request.timeout;
  auto attempt = [&](int) {
    // An agent CLI's session is killed at the iteration's deadline too (HTTP calls are cut by
    // until_stopped's deadline).
    if (deadline) {
      using std::chrono::milliseconds;
      const milliseconds left = std::max(
          milliseconds(1),
          std::chrono::duration_cast<milliseconds>(*deadline - std::chrono::steady_clock::now()));
      request.timeout = own_timeout.count() > 0 ? std::min(own_timeout, left) : left;
    }
    return call_once(ctx, loop, control_ptr, request, continuation, model_ms, deadline);
  };
  auto pause = [&](const llm::LlmError& err, int n, std::chrono::milliseconds wait) {
    return pause_before_retry(ctx, loop, control_ptr, err, n, wait, deadline);
  };
  std::optional<llm::Outcome> outcome = co_await llm::retry_model_call(ctx.retry, attempt, pause);
  co_return outcome;
}

// A call's cost had nothing been cached: cache reads and writes at the input price. A model
// without a price (claude-code's own estimate) counts what it reported.
double uncached_cost(const llm::Pricing& pricing, const llm::Response& resp,
                     const std::string& asked) {
  const Price* price = pricing.find(resp.model.empty() ? asked : resp.model);
  if (!price) return resp.usage.cost_usd;
  Usage u = resp.usage;
  u.input_tokens += u.cache_read_tokens + u.cache_write_tokens;
  u.cache_read_tokens = u.cache_write_tokens = 0;
  return llm::cost_usd(*price, u);
}

}  // namespace

std::string call_role(const Loop& loop, CallKind kind) {
  if (kind == CallKind::review) return "review";
  if (loop.prompt_template == "integration-fix") return "integration-fix";
  return to_string(loop.type);
}

namespace {

// The first request of a conversation: the role's model and provider (loops.<type>.model /
// .provider) unless the caller chose, the tools, the prompt.
llm::Request first_request(EngineContext& ctx, const Loop& loop, const std::string& prompt,
                           const tools::ToolRouter* router, CallKind kind, const std::string& model,
                           const std::string& system) {
  llm::Request request;
  const std::string role = call_role(loop, kind);
  request.model = model.empty() ? ctx.config->model_for(role) : model;
  request.provider = ctx.config->provider_for(role);
  request.system = system;
  request.max_tokens = ctx.config->llm.max_tokens;
  request.loop_id = loop.id;
  request.loop_type = kind == CallKind::judge    ? std::string("judge")
                      : kind == CallKind::review ? std::string("review")
                                                 : std::string(to_string(loop.type));
  request.working_dir = loop.worktree;
  request.timeout = ctx.config->loop(loop.type).iteration_timeout;
  if (router) request.tools = llm_tools(*router);
  request.messages.push_back(llm::Message::user_text(prompt));
  return request;
}

// Whether the conversation ends before its next turn (and how): the deadline, the turn limit,
// or the tree's cost and runtime limits, checked between turns, not only between iterations, so
// one iteration of many turns cannot overshoot them by its whole cost.
bool ends_before_turn(Conversation& conv, int max_turns, const TurnCheck& between_turns,
                      const std::function<bool()>& out_of_time) {
  if (out_of_time()) {
    conv.end = Conversation::End::max_runtime;
    return true;
  }
  if (conv.turns >= max_turns) {
    conv.end = Conversation::End::max_turns;
    return true;
  }
  if (conv.turns == 0 || !between_turns) return false;
  std::optional<TurnLimit> hit = between_turns(conv.usage);
  if (!hit) return false;
  conv.end = Conversation::End::limit;
  conv.limit_end = hit->end;
  conv.limit_reason = std::move(hit->reason);
  return true;
}

// One reply counted: its usage, what it would have cost without the cache, its receipt, its
// text; the reply joins the request's messages.
void count_reply(Conversation& conv, llm::Request& request, const llm::Response& resp,
                 const llm::Pricing& pricing) {
  conv.usage += resp.usage;
  // A subscription's run has no cache receipt: what it counts is all there is.
  conv.uncached_cost_usd +=
      resp.notional_cost_usd ? resp.usage.cost_usd : uncached_cost(pricing, resp, request.model);
  if (resp.notional_cost_usd)
    conv.notional_cost_usd = conv.notional_cost_usd.value_or(0) + *resp.notional_cost_usd;
  conv.calls.push_back(
      {{"turn", conv.turns},
       {"stop_reason",
        resp.stop_reason_text.empty() ? llm::to_string(resp.stop_reason) : resp.stop_reason_text},
       {"model", resp.model},
       {"request_id", resp.request_id},
       {"input_tokens", resp.usage.input_tokens},
       {"output_tokens", resp.usage.output_tokens},
       {"cache_read_tokens", resp.usage.cache_read_tokens},
       {"cache_write_tokens", resp.usage.cache_write_tokens},
       {"cost_usd", resp.usage.cost_usd}});
  if (resp.notional_cost_usd) conv.calls.back()["notional_cost_usd"] = *resp.notional_cost_usd;
  std::string text = resp.text();
  if (!text.empty()) conv.assistant_text += (conv.assistant_text.empty() ? "" : "\n") + text;
  for (const auto& m : resp.transcript) conv.messages.push_back(m);  // claude-code's own session
  request.messages.push_back(resp.to_message());
}

// The reply's tool calls run, one result each (a stop or the deadline ends the list early).
// `cut`: the reply ran out of output tokens, so its last call may be incomplete.
awaitable<llm::Message> run_tool_uses(EngineContext& ctx, const Loop& loop,
                                      std::shared_ptr<LoopControl> control_ptr,
                                      std::shared_ptr<tools::ToolRouter> router,
                                      std::vector<const llm::ContentBlock*> uses, bool cut,
                                      std::function<bool()> out_of_time, Conversation& conv) {
  LoopControl& control = *control_ptr;
  llm::Message results;
  results.role = llm::Role::user;
  for (const llm::ContentBlock* use : uses) {
    if (control.stop_requested() || out_of_time()) break;
    tools::ToolResult result;
    if (!router) {
      result = {"no tools are available in this conversation", true};
    } else if (cut && use == uses.back() && !use->input.is_object()) {
      result = {
          "this call was cut off by the output token limit before it was complete; make it "
          "again",
          true};
    } else {
      std::vector<Event> called;
      called.push_back(api::encode(loop.id, api::ToolCalled{use->name, use->input, conv.turns}));
      co_await ctx.journal.note(std::move(called));
      if (is_coordination_tool(use->name) && router->policy().allowed.count(use->name)) {
        tools::ToolCall call{use->id, use->name, use->input};  // named: see g++ 12 and temporaries
        result = co_await coordination_call(ctx, loop, call, conv);
      } else {
        awaitable<tools::ToolResult> tool = run_tool(
            ctx.pool, router, tools::ToolCall{use->id, use->name, use->input}, control_ptr);
        auto ran = co_await until_stopped<tools::ToolResult>(control, std::move(tool));
        result = ran ? *ran : tools::ToolResult{"killed: the loop was stopped", true};
      }
    }
    ++conv.tool_calls;
    results.content.push_back(
        llm::ContentBlock::make_tool_result(use->id, result.content, result.is_error));
  }
  co_return results;
}

// An agent CLI's own tools write anywhere in the worktree; a plan, spec or phase loop may change
// only its artifact (as the tool router makes sure for the other providers): the rest is undone
// and the transcript says what.
awaitable<void> undo_outside_artifacts(EngineContext& ctx, const Loop& loop, Conversation& conv) {
  std::set<std::string> keep(loop.output_artifacts.begin(), loop.output_artifacts.end());
  auto undo = [wt = loop.worktree, keep]() -> Result<std::vector<std::string>> {
    LOOPR_ASSIGN(git::Worktree tree, git::Worktree::open(wt));
    return tree.undo_changes_except(keep);
  };
  auto undone = co_await run_blocking(ctx.pool, undo);
  if (!undone) {
    spdlog::warn("loop {}: undoing changes outside its artifact: {}", loop.id,
                 undone.error().message);
  } else if (!undone->empty()) {
    conv.reverted = std::move(*undone);
    std::string list;
    for (const auto& p : conv.reverted) list += (list.empty() ? "" : ", ") + p;
    conv.messages.push_back(
        llm::Message::user_text("[loopr: a " + std::string(to_string(loop.type)) +
                                " loop writes only its artifact; undone: " + list + "]"));
  }
}

}  // namespace

awaitable<Conversation> converse(EngineContext& ctx, const Loop& loop,
                                 std::shared_ptr<LoopControl> control_ptr,
                                 const std::string& prompt,
                                 std::shared_ptr<tools::ToolRouter> router, CallKind kind,
                                 int max_turns, TurnCheck between_turns, const std::string& model,
                                 const std::string& system, std::optional<SteadyTime> deadline) {
  LoopControl& control = *control_ptr;
  Conversation conv;
  llm::Request request = first_request(ctx, loop, prompt, router.get(), kind, model, system);
  const llm::LlmClient& client = ctx.llm.for_provider(request.provider);
  const llm::Pricing pricing(ctx.config->pricing);
  // An agent CLI runs its tools itself: loopr's own (share_note, ask_user) reach it as an MCP
  // server whose calls come back here, for this loop only (llm/mcp.hpp).
  if (client.runs_own_tools() && router)
    request.own_tool = cli_coordination(ctx, loop, router->policy().allowed, conv);
  std::function<bool()> out_of_time = [&] {
    return deadline && std::chrono::steady_clock::now() >= *deadline;
  };
  while (true) {
    if (ends_before_turn(conv, max_turns, between_turns, out_of_time)) break;
    auto outcome = co_await call_model(ctx, loop, control_ptr, request, conv.turns > 0,
                                       conv.model_ms, deadline);
    if (!outcome) {
      // Abandoned: by a stop, else by the deadline (a call, or a retry, cut at it).
      conv.end = control.stop_requested() || !deadline ? Conversation::End::stopped
                                                       : Conversation::End::max_runtime;
      break;
    }
    ++conv.turns;
    if (!outcome->ok()) {
      conv.end = Conversation::End::error;
      conv.error = outcome->error();
      break;
    }
    llm::Response& resp = outcome->response();
    count_reply(conv, request, resp, pricing);
    if (resp.stop_reason == llm::StopReason::refusal) {
      conv.end = Conversation::End::refused;
      conv.refusal = resp.stop_details.is_null() ? nlohmann::json::object() : resp.stop_details;
      break;
    }
    if (resp.stop_reason == llm::StopReason::model_context_window_exceeded) {
      conv.end = Conversation::End::context_exceeded;
      break;
    }
    auto uses = resp.tool_uses();
    bool cut = resp.stop_reason == llm::StopReason::max_tokens;
    bool paused = resp.stop_reason == llm::StopReason::pause_turn;
    if (uses.empty() && !cut && !paused) break;  // end_turn / stop_sequence: the model is done
    if (client.runs_own_tools()) break;          // the CLI already ran its tools
    llm::Message results =
        co_await run_tool_uses(ctx, loop, control_ptr, router, uses, cut, out_of_time, conv);
    if (control.stop_requested()) {
      conv.end = Conversation::End::stopped;
      break;
    }
    if (!conv.question.empty()) {
      // The model asked the person: the iteration ends here and the loop waits for the answer.
      request.messages.push_back(std::move(results));
      break;
    }
    if (cut || paused)
      results.content.push_back(llm::ContentBlock::make_text(cut ? kContinue : "Continue."));
    request.messages.push_back(std::move(results));
  }
  if (client.runs_own_tools() && loop.type != LoopType::code && !loop.output_artifacts.empty())
    co_await undo_outside_artifacts(ctx, loop, conv);
  // The conversation for the transcript: everything sent plus the last reply.
  std::vector<llm::Message> all = std::move(request.messages);
  for (auto& m : conv.messages) all.push_back(std::move(m));
  conv.messages = std::move(all);
  co_return conv;
}

}  // namespace loopr::engine
