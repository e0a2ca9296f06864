#include <mock_llm/errors.hpp>

namespace loopr::mock_llm {

std::string anthropic_error_type(int status) {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 402:
      return "billing_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 408:
      return "timeout_error";
    case 409:
      return "conflict_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 504:
      return "timeout_error";
    case 529:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

std::string openai_error_type(int status) {
  switch (status) {
    case 403:
      return "permission_error";
    case 429:
      return "requests";
    default:
      return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

std::string default_error_message(int status) {
  switch (status) {
    case 400:
      return "Invalid request.";
    case 401:
      return "invalid x-api-key";
    case 402:
      return "Your credit balance is too low to access the Anthropic API.";
    case 403:
      return "Your API key does not have permission to use the specified resource.";
    case 404:
      return "The requested resource could not be found.";
    case 408:
      return "Request timed out.";
    case 409:
      return "Conflict.";
    case 413:
      return "Request exceeds the maximum allowed number of bytes.";
    case 429:
      return "This request would exceed the rate limit for your organization. Please retry later.";
    case 500:
      return "Internal server error";
    case 502:
      return "Bad gateway";
    case 503:
      return "Service unavailable";
    case 504:
      return "Request timed out";
    case 529:
      return "Overloaded";
    default:
      return "Error " + std::to_string(status);
  }
}

nlohmann::json anthropic_error_json(const ApiError& error, const std::string& request_id) {
  nlohmann::json inner = {
      {"type", error.type.empty() ? anthropic_error_type(error.status) : error.type},
      {"message", error.message.empty() ? default_error_message(error.status) : error.message}};
  if (!error.code.empty()) inner["details"] = {{"error_code", error.code}};
  return {{"type", "error"}, {"error", inner}, {"request_id", request_id}};
}

nlohmann::json openai_error_json(const ApiError& error) {
  nlohmann::json code = nullptr;
  if (!error.code.empty())
    code = error.code;
  else if (error.status == 429)
    code = "rate_limit_exceeded";
  return {
      {"error",
       {{"message", error.message.empty() ? default_error_message(error.status) : error.message},
        {"type", error.type.empty() ? openai_error_type(error.status) : error.type},
        {"param", error.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(error.param)},
        {"code", code}}}};
}

}  // namespace loopr::mock_llm
