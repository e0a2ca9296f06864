// What users of other loop runners miss most: seeing what the model saw and did. Each
// iteration keeps `.loopr/logs/loops/<loop-id>/iterations/NNN/` with `prompt.md`,
// `conversation.jsonl` (every message, tool call and result) and `validation.log`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <loopr/core/repo_paths.hpp>
#include <loopr/llm/types.hpp>

namespace loopr::engine {

/// One message as a JSON line's object: role and content blocks (raw when received).
nlohmann::json message_json(const llm::Message& message);

/// Writes (or overwrites) one file of the iteration's folder. Failures are logged, not fatal:
/// a full disk must not fail a loop whose real work is in git and the store.
void write_iteration_file(const RepoPaths& paths, const std::string& loop_id, int n,
                          const std::string& name, const std::string& content);

/// `conversation.jsonl`: one line per message, then one line per model call's receipt.
std::string conversation_jsonl(const std::vector<llm::Message>& messages,
                               const std::vector<nlohmann::json>& calls);

}  // namespace loopr::engine
