// Request checks: each thing the real service refuses is refused, with its status and a
// message saying what is wrong; and what it accepts (the claude CLI's requests) is accepted.
#include <gtest/gtest.h>

#include <mock_llm/validate.hpp>

namespace loopr::mock_llm {
namespace {

using Json = nlohmann::json;

Headers anthropic_headers() {
  Headers h;
  h.items = {{"anthropic-version", "2026-10-21"},
             {"authorization", "Bearer k"},
             {"content-type", "application/json"}};
  return h;
}

Headers without(Headers h, const std::string& name) {
  std::erase_if(h.items, [&](const auto& kv) { return kv.first == name; });
  return h;
}

Headers with(Headers h, const std::string& name, const std::string& value) {
  h = without(std::move(h), name);
  h.items.emplace_back(name, value);
  return h;
}

Json body(Json messages) {
  return {{"model", "claude-opus-5-5"}, {"max_tokens", 1000}, {"messages", std::move(messages)}};
}

Json user(const std::string& text) { return {{"role", "user"}, {"content", text}}; }

Json assistant_tool_use(const std::string& id) {
  return {{"role", "assistant"},
          {"content",
           {{{"type", "tool_use"}, {"id", id}, {"name", "run"}, {"input", Json::object()}}}}};
}

Json tool_result(const std::string& id) {
  return {{"role", "user"},
          {"content", {{{"type", "tool_result"}, {"tool_use_id", id}, {"content", "ok"}}}}};
}

/// The message of the refusal, or "" if the body is accepted.
std::string refusal(const Json& b, std::string_view version = "2026-10-21") {
  ConversationRegistry none;
  auto e = check_anthropic_body(b, version, none);
  if (e) {
    EXPECT_EQ(e->status, 400);
  }
  return e ? e->message : "";
}

TEST(ValidateAnthropicTest, HeadersAuthVersionAndContentType) {
  EXPECT_FALSE(check_anthropic_headers(anthropic_headers(), ""));
  EXPECT_FALSE(check_anthropic_headers(
      with(without(anthropic_headers(), "authorization"), "x-api-key", "k"), "k"));
  EXPECT_FALSE(
      check_anthropic_headers(with(anthropic_headers(), "anthropic-version", "2023-06-01"), ""));

  auto e = check_anthropic_headers(without(anthropic_headers(), "authorization"), "");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 401);
  EXPECT_EQ(e->message, "x-api-key header is required");

  e = check_anthropic_headers(anthropic_headers(), "other-key");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 401);
  EXPECT_EQ(e->message, "invalid x-api-key");

  e = check_anthropic_headers(with(anthropic_headers(), "authorization", "Basic abc"), "");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 401);

  e = check_anthropic_headers(without(anthropic_headers(), "anthropic-version"), "");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 400);
  EXPECT_EQ(e->message, "anthropic-version: header is required");

  e = check_anthropic_headers(with(anthropic_headers(), "anthropic-version", "2099-01-01"), "");
  ASSERT_TRUE(e);
  EXPECT_NE(e->message.find("2099-01-01"), std::string::npos);

  e = check_anthropic_headers(with(anthropic_headers(), "content-type", "text/plain"), "");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 400);
}

TEST(ValidateAnthropicTest, RequiredFields) {
  EXPECT_EQ(refusal(body({user("hi")})), "");
  Json b = body({user("hi")});
  b.erase("model");
  EXPECT_EQ(refusal(b), "model: Field required");
  b = body({user("hi")});
  b.erase("max_tokens");
  EXPECT_EQ(refusal(b), "max_tokens: Field required");
  b = body({user("hi")});
  b["max_tokens"] = "many";
  EXPECT_NE(refusal(b).find("max_tokens"), std::string::npos);
  EXPECT_EQ(refusal(body(Json::array())), "messages: at least one message is required");
  EXPECT_NE(refusal(Json::array()).find("JSON object"), std::string::npos);
}

TEST(ValidateAnthropicTest, SamplingParametersAreRefusedOnlyUnder2026Version) {
  for (const char* p : {"temperature", "top_p", "top_k"}) {
    Json b = body({user("hi")});
    b[p] = 1;
    EXPECT_NE(refusal(b).find(p), std::string::npos) << p;
    EXPECT_EQ(refusal(b, "2023-06-01"), "") << p;
  }
}

TEST(ValidateAnthropicTest, ForcedToolChoiceIsRefused) {
  for (Json choice : {Json{{"type", "any"}}, Json{{"type", "tool"}, {"name", "run"}}}) {
    Json b = body({user("hi")});
    b["tool_choice"] = choice;
    EXPECT_NE(refusal(b).find("forced tool use"), std::string::npos) << choice;
  }
  Json b = body({user("hi")});
  b["tool_choice"] = {{"type", "auto"}};
  EXPECT_EQ(refusal(b), "");
}

TEST(ValidateAnthropicTest, PrefillAndFirstRoleAreRefused) {
  EXPECT_NE(
      refusal(body({user("hi"), {{"role", "assistant"}, {"content", "Sure,"}}})).find("prefill"),
      std::string::npos);
  EXPECT_NE(
      refusal(body({{{"role", "assistant"}, {"content", "x"}}, user("hi")})).find("first message"),
      std::string::npos);
  EXPECT_NE(refusal(body({{{"role", "robot"}, {"content", "x"}}})).find("role"), std::string::npos);
  EXPECT_NE(refusal(body({user("")})).find("non-empty content"), std::string::npos);
}

TEST(ValidateAnthropicTest, AcceptsWhatTheClaudeCliSends) {
  // A user turn followed by a system-role message, top-level system, tools, metadata, thinking,
  // context_management and output_config (WIRE.md §4), under the 2023-06-01 version.
  Json b = body({user("do it"), {{"role", "system"}, {"content", "a reminder"}}});
  b["system"] = Json::array({{{"type", "text"}, {"text", "You are Claude Code"}}});
  b["tools"] = Json::array(
      {{{"name", "Bash"}, {"description", "run"}, {"input_schema", {{"type", "object"}}}}});
  b["metadata"] = {{"user_id", "u"}};
  b["thinking"] = {{"type", "adaptive"}};
  b["context_management"] = Json::object();
  b["output_config"] = {{"effort", "high"}};
  b["stream"] = true;
  b["some_future_field"] = 1;
  EXPECT_EQ(refusal(b, "2023-06-01"), "");
}

TEST(ValidateAnthropicTest, EveryToolUseNeedsItsToolResultNext) {
  EXPECT_EQ(refusal(body({user("hi"), assistant_tool_use("t1"), tool_result("t1")})), "");
  std::string e = refusal(body({user("hi"), assistant_tool_use("t1"), user("no result")}));
  EXPECT_NE(e.find("`tool_use` ids were found without `tool_result` blocks immediately after: t1"),
            std::string::npos)
      << e;
  e = refusal(body({user("hi"), assistant_tool_use("t1"), tool_result("t2")}));
  EXPECT_NE(e.find("t1"), std::string::npos) << e;
  e = refusal(body({user("hi"),
                    assistant_tool_use("t1"),
                    tool_result("t1"),
                    {{"role", "assistant"}, {"content", "done"}},
                    tool_result("t1")}));
  EXPECT_NE(e.find("unexpected `tool_use_id`"), std::string::npos) << e;

  // tool_result blocks come first in their message.
  Json late = tool_result("t1");
  late["content"].insert(late["content"].begin(), Json{{"type", "text"}, {"text", "first"}});
  e = refusal(body({user("hi"), assistant_tool_use("t1"), late}));
  EXPECT_NE(e.find("must come first"), std::string::npos) << e;
}

TEST(ValidateAnthropicTest, Version2026RulesOnCitationsAndDocuments) {
  Json cited = {
      {"role", "user"},
      {"content",
       {{{"type", "text"}, {"text", "x"}, {"citations", {{{"type", "char_location"}}}}}}}};
  EXPECT_NE(refusal(body({cited})).find("citations"), std::string::npos);
  EXPECT_EQ(refusal(body({cited}), "2023-06-01"), "");
}

TEST(ValidateAnthropicTest, ToolDefinitions) {
  Json b = body({user("hi")});
  b["tools"] = Json::array({{{"name", "run"}}});
  EXPECT_NE(refusal(b).find("input_schema"), std::string::npos);
  b["tools"] = Json::array({{{"name", "run"}, {"input_schema", Json::object()}},
                            {{"name", "run"}, {"input_schema", Json::object()}}});
  EXPECT_NE(refusal(b).find("unique"), std::string::npos);
}

Headers openai_headers() {
  Headers h;
  h.items = {{"authorization", "Bearer sk-local"}, {"content-type", "application/json"}};
  return h;
}

std::string openai_refusal(const Json& b) {
  auto e = check_openai_body(b);
  if (e) {
    EXPECT_EQ(e->status, 400);
  }
  return e ? e->message : "";
}

Json chat(Json messages) { return {{"model", "gpt-5"}, {"messages", std::move(messages)}}; }

Json call(const std::string& id) {
  return {
      {"role", "assistant"},
      {"content", nullptr},
      {"tool_calls",
       {{{"id", id}, {"type", "function"}, {"function", {{"name", "run"}, {"arguments", "{}"}}}}}}};
}

Json tool(const std::string& id) {
  return {{"role", "tool"}, {"tool_call_id", id}, {"content", "ok"}};
}

TEST(ValidateOpenAiTest, BearerAuth) {
  EXPECT_FALSE(check_openai_headers(openai_headers(), ""));
  auto e = check_openai_headers(without(openai_headers(), "authorization"), "");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 401);
  EXPECT_NE(e->message.find("didn't provide an API key"), std::string::npos);
  e = check_openai_headers(openai_headers(), "sk-other-key-123");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 401);
  EXPECT_EQ(e->code, "invalid_api_key");
}

TEST(ValidateOpenAiTest, ToolCallsAndToolMessagesPairUp) {
  Json u = {{"role", "user"}, {"content", "hi"}};
  EXPECT_EQ(openai_refusal(chat({u, call("c1"), tool("c1")})), "");
  EXPECT_NE(openai_refusal(chat({u, call("c1"), u})).find("did not have response messages: c1"),
            std::string::npos);
  EXPECT_NE(openai_refusal(chat({u, call("c1")})).find("c1"), std::string::npos);
  EXPECT_NE(
      openai_refusal(chat({u, tool("c1")})).find("must be a response to a preceeding message"),
      std::string::npos);
  EXPECT_NE(openai_refusal(chat({u, call("c1"), tool("c2")})).find("c2"), std::string::npos);
}

TEST(ValidateOpenAiTest, FieldsAndStreamOptions) {
  Json u = {{"role", "user"}, {"content", "hi"}};
  EXPECT_NE(openai_refusal(Json{{"messages", {u}}}).find("model"), std::string::npos);
  EXPECT_NE(openai_refusal(chat(Json::array())).find("empty array"), std::string::npos);
  Json b = chat({u});
  b["stream_options"] = {{"include_usage", true}};
  EXPECT_NE(openai_refusal(b).find("only allowed when 'stream' is enabled"), std::string::npos);
  b["stream"] = true;
  EXPECT_EQ(openai_refusal(b), "");
  b["tools"] = Json::array({{{"type", "function"}}});
  EXPECT_NE(openai_refusal(b).find("tools[0].function"), std::string::npos);
  b["tools"] = Json::array({{{"type", "function"}, {"function", {{"name", "run"}}}}});
  b["max_completion_tokens"] = 100;
  EXPECT_EQ(openai_refusal(b), "");
}

TEST(ErrorsTest, ShapesFollowTheServices) {
  Json a = anthropic_error_json({429, "", "", "enforced_spend_limit_reached", ""}, "req_1");
  EXPECT_EQ(a["type"], "error");
  EXPECT_EQ(a["error"]["type"], "rate_limit_error");
  EXPECT_EQ(a["error"]["details"]["error_code"], "enforced_spend_limit_reached");
  EXPECT_EQ(a["request_id"], "req_1");
  EXPECT_FALSE(a["error"]["message"].get<std::string>().empty());
  for (auto [status, type] : {std::pair{400, "invalid_request_error"},
                              {401, "authentication_error"},
                              {402, "billing_error"},
                              {403, "permission_error"},
                              {404, "not_found_error"},
                              {413, "request_too_large"},
                              {500, "api_error"},
                              {504, "timeout_error"},
                              {529, "overloaded_error"}})
    EXPECT_EQ(anthropic_error_type(status), type) << status;

  Json o = openai_error_json({429, "", "slow down", "", ""});
  EXPECT_EQ(o["error"]["message"], "slow down");
  EXPECT_EQ(o["error"]["code"], "rate_limit_exceeded");
  EXPECT_TRUE(o["error"]["param"].is_null());
  EXPECT_EQ(openai_error_json({500, "", "", "", ""})["error"]["type"], "server_error");
}

}  // namespace
}  // namespace loopr::mock_llm
