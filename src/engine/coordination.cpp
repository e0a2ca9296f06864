#include "engine/coordination.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <cstdio>
#include <future>
#include <set>

#include <loopr/api/events.hpp>
#include <loopr/core/text.hpp>
#include <loopr/engine/event_bus.hpp>
#include <loopr/engine/feedback.hpp>

namespace loopr::engine {
namespace {

std::string trimmed(std::string text) {
  auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// The `field` of a coordination call, or the error result that says what is wrong with it.
std::optional<std::string> text_field(const tools::ToolCall& call, const char* field,
                                      tools::ToolResult& error) {
  const auto& in = call.input;
  if (!in.is_object() || !in.contains(field) || !in[field].is_string()) {
    error = {call.name + " needs `" + field + "` (a string)", true};
    return std::nullopt;
  }
  std::string text = trimmed(in[field].get<std::string>());
  if (text.empty()) {
    error = {call.name + ": `" + field + "` is empty", true};
    return std::nullopt;
  }
  if (text.size() > kCoordinationTextMax) {
    error = {call.name + ": `" + field + "` has " + std::to_string(text.size()) +
                 " bytes; at most " + std::to_string(kCoordinationTextMax) + " (say it shorter)",
             true};
    return std::nullopt;
  }
  return text;
}

// One call from the CLI's channel, on the engine's io: announced like an in-process call, then
// the same coordination_call. A function, not a coroutine lambda (g++ 12, see net/asio.hpp).
awaitable<tools::ToolResult> cli_call(EngineContext& ctx, const Loop& loop, tools::ToolCall call,
                                      Conversation& conv) {
  std::vector<Event> called;
  called.push_back(api::encode(loop.id, api::ToolCalled{call.name, call.input, conv.turns + 1}));
  co_await ctx.journal.note(std::move(called));
  ++conv.tool_calls;
  co_return co_await coordination_call(ctx, loop, call, conv);
}

}  // namespace

std::function<std::pair<std::string, bool>(const std::string&, const nlohmann::json&)>
cli_coordination(EngineContext& ctx, const Loop& loop, std::set<std::string> allowed,
                 Conversation& conv) {
  return [&ctx, &loop, &conv, allowed = std::move(allowed)](
             const std::string& name, const nlohmann::json& input) -> std::pair<std::string, bool> {
    if (!is_coordination_tool(name) || !allowed.count(name))
      return {"no tool " + nlohmann::json(name).dump() + " for this loop", true};
    std::future<tools::ToolResult> done =
        net::co_spawn(ctx.io, cli_call(ctx, loop, tools::ToolCall{"mcp", name, input}, conv),
                      net::use_future);
    // Generous: a store write under load; the CLI's own tool timeout is longer.
    if (done.wait_for(std::chrono::seconds(90)) != std::future_status::ready)
      return {"loopr did not answer in time; try again later", true};
    try {
      tools::ToolResult r = done.get();
      return {r.content, r.is_error};
    } catch (const std::exception& e) {
      return {std::string("the call failed: ") + e.what(), true};
    }
  };
}

bool is_coordination_tool(std::string_view name) {
  return name == "share_note" || name == "ask_user";
}

std::string notes_prefix(const std::string& plan_id) { return "note/" + plan_id + "/"; }

awaitable<tools::ToolResult> coordination_call(EngineContext& ctx, const Loop& loop,
                                               const tools::ToolCall& call, Conversation& conv) {
  tools::ToolResult error;
  if (call.name == "ask_user") {
    auto question = text_field(call, "question", error);
    if (!question) co_return error;
    if (!conv.question.empty())
      co_return tools::ToolResult{
          "you asked a question already in this iteration; wait for its answer", true};
    conv.question = *question;
    co_return tools::ToolResult{
        "Your question is recorded. This iteration ends after this turn and the loop waits for "
        "the person's answer, which will be in your next prompt under `## Answer from the user`.",
        false};
  }
  auto text = text_field(call, "text", error);
  if (!text) co_return error;
  // Keys sort by time, then by loop and a per-conversation count (two notes in one millisecond).
  TimestampMs at = now_ms();
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "%015lld", static_cast<long long>(at));
  ++conv.notes;
  std::string key =
      notes_prefix(loop.plan_id) + stamp + "/" + loop.id + "/" + std::to_string(conv.notes);
  nlohmann::json note{{"loop_id", loop.id},
                      {"time", format_timestamp(at)},
                      {"iteration", loop.iteration + 1},
                      {"text", *text}};
  WriteSet set;
  set.meta.emplace_back(key, json_text(note));
  set.events.push_back(api::encode(loop.id, api::NoteShared{loop.iteration + 1, *text}));
  auto stored = co_await ctx.journal.commit(std::move(set));
  if (!stored)
    co_return tools::ToolResult{"the note could not be stored: " + stored.error().message, true};
  co_return tools::ToolResult{"shared with the other loops of plan " + loop.plan_id +
                                  " (they see it in their next prompts)",
                              false};
}

std::string coordination_sections(const TaskStore& store, const Loop& loop, const Config& config) {
  std::string out;
  auto notes = store.meta_with_prefix(notes_prefix(loop.plan_id));
  if (notes && !notes->empty() && config.limits.notes_bytes > 0) {
    std::set<std::string> invalidated;
    if (auto tree = store.loops_of_plan(loop.plan_id))
      for (const auto& l : *tree)
        if (l.status == LoopStatus::invalidated) invalidated.insert(l.id);
    std::string body;
    std::size_t left_out = 0;
    for (auto it = notes->rbegin(); it != notes->rend(); ++it) {  // newest first
      auto j = nlohmann::json::parse(it->second, nullptr, false);
      if (!j.is_object()) continue;
      std::string from = j.value("loop_id", "");
      if (from == loop.id || invalidated.count(from)) continue;
      std::string entry =
          "- from " + from + " (" + j.value("time", "") + "): " + j.value("text", "") + "\n";
      if (left_out > 0 || body.size() + entry.size() > config.limits.notes_bytes) {
        ++left_out;
        continue;
      }
      body += entry;
    }
    if (!body.empty() || left_out > 0) {
      out += "\n\n## Notes from other loops\n\nOther loops of plan " + loop.plan_id +
             " shared these (newest first). Follow them where they concern your work.\n\n" + body;
      if (left_out > 0)
        out += "- (" + std::to_string(left_out) + " older notes left out: limits.notes_bytes)\n";
    }
  }
  if (!loop.run.question.empty() && !loop.run.answer.empty()) {
    std::string quoted;
    for (char ch : loop.run.question)
      quoted += ch == '\n' ? std::string("\n> ") : std::string(1, ch);
    out += "\n\n## Answer from the user\n\nIn your last iteration you asked:\n\n> " + quoted +
           "\n\nThe user answered:\n\n" + loop.run.answer + "\n";
  }
  return out;
}

}  // namespace loopr::engine
