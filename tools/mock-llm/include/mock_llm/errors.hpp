// API errors in the shapes the real services send (WIRE.md): Anthropic
// `{"type":"error","error":{type,message,details},"request_id"}` and OpenAI
// `{"error":{message,type,param,code}}`, with the error type derived from the HTTP status.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace loopr::mock_llm {

struct ApiError {
  int status = 400;
  std::string type;     ///< empty: the type the service uses for `status`
  std::string message;  ///< empty: the service's usual message for `status`
  std::string code;     ///< Anthropic error.details.error_code / OpenAI error.code
  std::string param;    ///< OpenAI error.param
};

std::string anthropic_error_type(int status);
std::string openai_error_type(int status);
std::string default_error_message(int status);

nlohmann::json anthropic_error_json(const ApiError& error, const std::string& request_id);
nlohmann::json openai_error_json(const ApiError& error);
/// `{"error":{code,message,status}}`, with a RetryInfo detail when `retry_after` (seconds).
nlohmann::json gemini_error_json(const ApiError& error, const std::string& retry_after = "");

}  // namespace loopr::mock_llm
