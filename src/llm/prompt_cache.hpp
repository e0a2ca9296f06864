// Prompt caching on the wire (docs/guide.md "What a tree costs"): where an Anthropic request carries
// its `cache_control` breakpoints, and the OpenAI `prompt_cache_key` of a loop. Pure code over
// the request body, unit-tested (tests/llm/prompt_cache_test.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace loopr::llm {

/// The Anthropic API's limit of breakpoints per request (more is a 400).
inline constexpr int kMaxCacheBreakpoints = 4;

/// Marks the breakpoints of an Anthropic Messages body (`system` as text blocks, `messages` as
/// block arrays) so that each turn of an iteration reads what the turn before wrote: the end of
/// the system block (the tools come before it, so it covers them; the last tool when there is
/// no system), the iteration's opening message, the previous turn's newest message and this
/// turn's newest message. At most kMaxCacheBreakpoints; never on an empty block, a thinking
/// block or a message without a block that may carry one. `ttl_1h`: `"ttl":"1h"`.
void mark_cache_breakpoints(nlohmann::json& body, bool ttl_1h);

/// How many `cache_control` markers a body carries (tools, system, message blocks).
int count_cache_breakpoints(const nlohmann::json& body);

/// The OpenAI `prompt_cache_key` of a loop: a hash of its worktree and id, so a loop's turns
/// route to the same cache and no two repositories (or loops) share a key. Nothing in it comes
/// from the model.
std::string prompt_cache_key(const std::string& working_dir, const std::string& loop_id);

}  // namespace loopr::llm
