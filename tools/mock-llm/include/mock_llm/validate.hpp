// Checks a request the way the real service does (WIRE.md), so loopr's mistakes show up in
// tests as the 400/401 the service would send: headers, required fields, refused parameters,
// role order, tool_use/tool_result pairing, thinking blocks echoed unchanged.
#pragma once

#include <mock_llm/conversation_registry.hpp>
#include <mock_llm/errors.hpp>
#include <mock_llm/text_util.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace loopr::mock_llm {

/// anthropic-version values the service accepts.
bool is_known_anthropic_version(std::string_view version);

/// Auth (`x-api-key` or `Authorization: Bearer`; must equal `api_key` when that is not empty),
/// `anthropic-version`, `content-type`.
std::optional<ApiError> check_anthropic_headers(const Headers& headers, const std::string& api_key);

/// Only the key (`x-api-key` or `Authorization: Bearer`; must equal `api_key` when that is not
/// empty), for requests without a body (GET /v1/models).
std::optional<ApiError> check_api_key(const Headers& headers, const std::string& api_key);

/// The body of POST /v1/messages; `version` is the request's anthropic-version.
std::optional<ApiError> check_anthropic_body(const nlohmann::json& body, std::string_view version,
                                             const ConversationRegistry& conversations);

/// `Authorization: Bearer` (must equal `api_key` when that is not empty), `content-type`.
std::optional<ApiError> check_openai_headers(const Headers& headers, const std::string& api_key);

/// The body of POST /v1/chat/completions.
std::optional<ApiError> check_openai_body(const nlohmann::json& body);

/// The Gemini API's key (`x-goog-api-key` or `?key=`; must equal `api_key` when set).
std::optional<ApiError> check_gemini_key(const Headers& headers, const std::string& target,
                                         const std::string& api_key);
/// The body of generateContent / streamGenerateContent.
std::optional<ApiError> check_gemini_body(const nlohmann::json& body);

/// The body of POST /v1/responses (headers: check_openai_headers).
std::optional<ApiError> check_responses_body(const nlohmann::json& body);

}  // namespace loopr::mock_llm
