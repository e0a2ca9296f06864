// Coordination between loops and with the person (DESIGN.md "Coordination"): the two tools the
// engine answers itself because they write the store (`share_note`, `ask_user`), and the prompt
// sections they feed (`## Notes from other loops`, `## Answer from the user`). Loops never read
// each other's conversations; notes are the channel.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <loopr/core/config.hpp>
#include <loopr/core/loop.hpp>
#include <loopr/store/task_store.hpp>
#include <loopr/tools/tool_router.hpp>

#include "engine/conversation.hpp"

namespace loopr::engine {

/// The most a note or a question may hold (bytes).
inline constexpr std::size_t kCoordinationTextMax = 2000;

/// share_note or ask_user.
bool is_coordination_tool(std::string_view name);

/// Runs a coordination call of `loop`: a note is stored (meta `note/<plan>/…` and a
/// `note_shared` event, one write); a question is kept in `conv.question` (the conversation
/// ends after this turn and the loop waits in `awaiting_answer`). Bad input is an is_error
/// result the model can read.
awaitable<tools::ToolResult> coordination_call(EngineContext& ctx, const Loop& loop,
                                               const tools::ToolCall& call, Conversation& conv);

/// For an agent CLI, whose tool loop runs inside the CLI: the llm::Request::own_tool handler that
/// applies a share_note / ask_user call the CLI made through `loopr mcp-serve` to `loop`, through
/// coordination_call on the engine's io (the same effects as an in-process call: the
/// `tool_called` event, the note, the question in `conv`). Bound to `loop` here, never to a loop
/// the call names; a tool `allowed` does not hold is refused. Blocking; `loop` and `conv` must
/// outlive the CLI's run (they do: converse awaits it).
std::function<std::pair<std::string, bool>(const std::string&, const nlohmann::json&)>
cli_coordination(EngineContext& ctx, const Loop& loop, std::set<std::string> allowed,
                 Conversation& conv);

/// The store key prefix of a plan's notes.
std::string notes_prefix(const std::string& plan_id);

/// What the engine appends to a rendered prompt: the notes other loops of the plan shared
/// (newest first, within `limits.notes_bytes`; notes of invalidated loops left out) and the
/// person's answer to this loop's question. Blocking (reads the store); empty when neither.
std::string coordination_sections(const TaskStore& store, const Loop& loop, const Config& config);

}  // namespace loopr::engine
