// What a rule can match in a request, read the same way from both APIs: the loop headers,
// the system text, the first and the last user text, the last tool result, the turn number.
#pragma once

#include <mock_llm/script.hpp>
#include <mock_llm/text_util.hpp>
#include <string>

namespace loopr::mock_llm {

struct RequestView {
  Api api = Api::anthropic;
  std::string loop_id;    ///< x-loopr-loop-id
  std::string loop_type;  ///< x-loopr-loop-type
  std::string model;
  std::string system;       ///< top-level system text, then system-role messages, joined by \n
  std::string user;         ///< text blocks of the last user message
  std::string first_user;   ///< text blocks of the first user message
  std::string tool_result;  ///< content of the last tool result in the conversation
  int turn = 1;             ///< assistant turns already in the conversation + 1
  bool stream = false;
  bool include_usage = false;  ///< OpenAI stream_options.include_usage

  const std::string& field(Field f) const;
};

/// Reads a request body that passed validation (so the shapes are known to be right).
RequestView view_anthropic(const Json& body, const Headers& headers);
RequestView view_openai(const Json& body, const Headers& headers);
RequestView view_responses(const Json& body, const Headers& headers);
/// A Gemini request: `model` and `stream` come from its path.
RequestView view_gemini(const Json& body, const Headers& headers, const std::string& model,
                        bool stream);

/// The text of Anthropic/OpenAI message content: a string, or the `text` of its text blocks
/// (and of nested tool_result content) joined by newlines.
std::string content_text(const Json& content);

}  // namespace loopr::mock_llm
