#include <gtest/gtest.h>

#include "llm/wire.hpp"

using namespace loopr::llm;
using namespace std::chrono_literals;

namespace {

WireSettings anthropic() {
  WireSettings s;
  s.model = "claude-opus-5-5";
  s.key_env = "ANTHROPIC_API_KEY";
  return s;
}

HttpHead head(int status, std::vector<std::pair<std::string, std::string>> headers = {}) {
  HttpHead h;
  h.status = status;
  h.headers = std::move(headers);
  return h;
}

std::string anthropic_body(const std::string& type, const std::string& message,
                           const std::string& code = "") {
  nlohmann::json j = {{"type", "error"},
                      {"error", {{"type", type}, {"message", message}}},
                      {"request_id", "req_body"}};
  if (!code.empty()) j["error"]["details"] = {{"error_code", code}};
  return j.dump();
}

LlmError classify(const HttpHead& h, const std::string& body) {
  return classify_http_error(h, body, "anthropic", anthropic(), "request-id");
}

}  // namespace

TEST(HttpErrorTest, Unauthorized401TellsWhichKeyAndTheRequestId) {
  auto e = classify(head(401, {{"request-id", "req_011CS"}}),
                    anthropic_body("authentication_error", "invalid x-api-key"));
  EXPECT_FALSE(e.retryable);
  EXPECT_EQ(e.kind, ErrorKind::auth);
  EXPECT_EQ(e.http_status, 401);
  EXPECT_EQ(e.message, "ANTHROPIC_API_KEY is missing or was refused (401): invalid x-api-key");
  EXPECT_EQ(e.request_id, "req_011CS");
  EXPECT_EQ(e.describe(),
            "ANTHROPIC_API_KEY is missing or was refused (401): invalid x-api-key [request-id "
            "req_011CS]");
}

TEST(HttpErrorTest, RequestIdFromTheBodyWhenNoHeader) {
  auto e = classify(head(400), anthropic_body("invalid_request_error", "temperature: not allowed"));
  EXPECT_EQ(e.request_id, "req_body");
  EXPECT_EQ(e.kind, ErrorKind::invalid_request);
  EXPECT_FALSE(e.retryable);
  EXPECT_NE(e.message.find("temperature: not allowed"), std::string::npos);
}

TEST(HttpErrorTest, StatusTable) {
  struct Case {
    int status;
    const char* type;
    ErrorKind kind;
    bool retryable;
  };
  for (const Case& c : {Case{400, "invalid_request_error", ErrorKind::invalid_request, false},
                        Case{402, "billing_error", ErrorKind::billing, false},
                        Case{403, "permission_error", ErrorKind::permission, false},
                        Case{404, "not_found_error", ErrorKind::not_found, false},
                        Case{408, "timeout_error", ErrorKind::server, true},
                        Case{409, "conflict_error", ErrorKind::server, true},
                        Case{413, "request_too_large", ErrorKind::invalid_request, false},
                        Case{422, "", ErrorKind::invalid_request, false},
                        Case{429, "rate_limit_error", ErrorKind::rate_limited, true},
                        Case{500, "api_error", ErrorKind::server, true},
                        Case{504, "timeout_error", ErrorKind::server, true},
                        Case{529, "overloaded_error", ErrorKind::overloaded, true}}) {
    auto e = classify(head(c.status), anthropic_body(c.type, "m"));
    EXPECT_EQ(e.kind, c.kind) << c.status;
    EXPECT_EQ(e.retryable, c.retryable) << c.status;
    EXPECT_EQ(e.type, c.type) << c.status;
  }
}

TEST(HttpErrorTest, RetryAfterHeaders) {
  auto e = classify(head(429, {{"retry-after", "7"}}), anthropic_body("rate_limit_error", "slow"));
  ASSERT_TRUE(e.retry_after);
  EXPECT_EQ(*e.retry_after, 7000ms);

  e = classify(head(429, {{"retry-after", "7"}, {"retry-after-ms", "1500"}}), "{}");
  EXPECT_EQ(*e.retry_after, 1500ms);  // the precise header wins

  e = classify(head(503), "");
  EXPECT_TRUE(e.retryable);
  EXPECT_FALSE(e.retry_after);
}

TEST(HttpErrorTest, SpendLimitIsFatalWhateverTheHeadersSay) {
  auto e =
      classify(head(429, {{"x-should-retry", "true"}, {"retry-after", "1"}}),
               anthropic_body("rate_limit_error", "spend limit", "enforced_spend_limit_reached"));
  EXPECT_EQ(e.kind, ErrorKind::spend_limit);
  EXPECT_FALSE(e.retryable);
  EXPECT_EQ(e.error_code, "enforced_spend_limit_reached");
  EXPECT_NE(e.message.find("spend limit is reached"), std::string::npos);
}

TEST(HttpErrorTest, XShouldRetryWins) {
  auto e = classify(head(500, {{"x-should-retry", "false"}}), anthropic_body("api_error", "x"));
  EXPECT_FALSE(e.retryable);
  e = classify(head(400, {{"x-should-retry", "true"}, {"retry-after-ms", "20"}}),
               anthropic_body("invalid_request_error", "x"));
  EXPECT_TRUE(e.retryable);
  EXPECT_EQ(*e.retry_after, 20ms);
  e = classify(head(500, {{"x-should-retry", "maybe"}}), "");
  EXPECT_TRUE(e.retryable);
}

TEST(HttpErrorTest, OpenAiBodyAndNonJsonBodies) {
  WireSettings s;
  s.key_env = "OPENAI_API_KEY";
  auto e = classify_http_error(
      head(401, {{"x-request-id", "req_oa"}}),
      R"({"error":{"message":"Incorrect API key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}})",
      "openai", s, "x-request-id");
  EXPECT_EQ(e.message, "OPENAI_API_KEY is missing or was refused (401): Incorrect API key");
  EXPECT_EQ(e.error_code, "invalid_api_key");
  EXPECT_EQ(e.request_id, "req_oa");

  e = classify(head(502), "<html>Bad Gateway</html>");
  EXPECT_TRUE(e.retryable);
  EXPECT_NE(e.message.find("<html>Bad Gateway</html>"), std::string::npos);
}

TEST(HttpErrorTest, TransportFailures) {
  using K = HttpFailure::Kind;
  for (K k : {K::connect_timeout, K::first_byte_timeout, K::idle_timeout}) {
    auto e = classify_transport_failure({k, "slow", false}, "anthropic");
    EXPECT_EQ(e.kind, ErrorKind::timeout);
    EXPECT_TRUE(e.retryable);
  }
  auto tls = classify_transport_failure({K::tls_refused, "not trusted", false}, "anthropic");
  EXPECT_EQ(tls.kind, ErrorKind::tls);
  EXPECT_FALSE(tls.retryable);
  auto lost = classify_transport_failure({K::connection_lost, "reset", true}, "openai");
  EXPECT_EQ(lost.kind, ErrorKind::network);
  EXPECT_TRUE(lost.retryable);
  EXPECT_EQ(lost.message, "openai: reset");
}
