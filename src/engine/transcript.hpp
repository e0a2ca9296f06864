// What users of other loop runners miss most: seeing what the model saw and did. Each
// iteration keeps its files in `.loopr/logs/loops/<loop-id>/iterations/NNN/`
// (core/iteration_files.hpp names them and writes them); here, the conversation's lines.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <loopr/core/iteration_files.hpp>
#include <loopr/llm/types.hpp>

namespace loopr::engine {

/// One message as a JSON line's object: role and content blocks (raw when received).
nlohmann::json message_json(const llm::Message& message);

/// `conversation.jsonl`: one line per message, then one line per model call's receipt.
std::string conversation_jsonl(const std::vector<llm::Message>& messages,
                               const std::vector<nlohmann::json>& calls);

}  // namespace loopr::engine
