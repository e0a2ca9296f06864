#include <gtest/gtest.h>

#include <string>

#include "llm/wire.hpp"
#include "support/temp_dir.hpp"

using namespace loopr::llm;
using nlohmann::json;

namespace {

WireSettings settings() {
  WireSettings s;
  s.model = "claude-sonnet-5-5";
  s.max_tokens = 16000;
  s.api_key = "sk-ant-test";
  s.key_env = "ANTHROPIC_API_KEY";
  return s;
}

std::string header(const HttpRequest& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return "<absent>";
}

Request tool_request() {
  Request r;
  r.system = "You are loopr's plan loop.";
  r.messages = {Message::user_text("Write the plan.")};
  r.tools = {
      {"read_file", "Reads a file", json{{"type", "object"}, {"properties", json::object()}}}};
  r.loop_id = "001";
  r.loop_type = "plan";
  return r;
}

HttpRequest built(const Wire& wire, const Request& r, bool stream = false) {
  auto b = wire.build(r, stream);
  if (auto* e = std::get_if<LlmError>(&b)) ADD_FAILURE() << e->message;
  return std::get<HttpRequest>(b);
}

std::string fixture(const std::string& name) {
  return loopr::testing::read_file(std::string(LOOPR_SOURCE_DIR) + "/tests/llm/fixtures/" + name);
}

Response assemble(const std::string& sse, std::size_t chunk,
                  std::optional<LlmError>* error = nullptr, bool* complete = nullptr) {
  auto wire = make_anthropic_wire(settings());
  auto stream = wire->start_stream();
  std::optional<LlmError> err;
  SseParser parser([&](const SseEvent& e) {
    if (!err && !stream->complete()) err = stream->on_event(e);
  });
  for (std::size_t i = 0; i < sse.size(); i += chunk)
    parser.feed(std::string_view(sse).substr(i, chunk));
  if (error) *error = err;
  if (complete) *complete = stream->complete();
  if (err || !stream->complete()) return Response{};
  return stream->take_response();
}

}  // namespace

TEST(AnthropicWireTest, HeadersNameVersionAuthAndLoop) {
  auto wire = make_anthropic_wire(settings());
  HttpRequest http = built(*wire, tool_request());
  EXPECT_EQ(http.target, "/v1/messages");
  EXPECT_EQ(header(http, "anthropic-version"), "2026-10-21");
  EXPECT_EQ(header(http, "authorization"), "Bearer sk-ant-test");
  EXPECT_EQ(header(http, "x-api-key"), "<absent>");
  EXPECT_EQ(header(http, "content-type"), "application/json");
  EXPECT_EQ(header(http, "x-loopr-loop-id"), "001");
  EXPECT_EQ(header(http, "x-loopr-loop-type"), "plan");

  auto s = settings();
  s.bearer = false;
  s.api_version = "2023-06-01";
  HttpRequest h2 = built(*make_anthropic_wire(s), tool_request());
  EXPECT_EQ(header(h2, "x-api-key"), "sk-ant-test");
  EXPECT_EQ(header(h2, "authorization"), "<absent>");
  EXPECT_EQ(header(h2, "anthropic-version"), "2023-06-01");
}

TEST(AnthropicWireTest, BodyHasToolsAutoAndNoSamplingParameters) {
  WireSettings uncached = settings();
  uncached.cache = false;  // the breakpoints: prompt_cache_test.cpp
  auto wire = make_anthropic_wire(uncached);
  json body = json::parse(built(*wire, tool_request(), true).body);
  EXPECT_EQ(body["model"], "claude-sonnet-5-5");
  EXPECT_EQ(body["max_tokens"], 16000);
  // A system block (text blocks: the form a cache breakpoint can mark).
  EXPECT_EQ(body["system"], json::parse(R"([{"type":"text","text":"You are loopr's plan loop."}])"));
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["tool_choice"], json({{"type", "auto"}}));
  EXPECT_EQ(body["tools"][0]["name"], "read_file");
  EXPECT_EQ(body["tools"][0]["description"], "Reads a file");
  EXPECT_EQ(body["tools"][0]["input_schema"]["type"], "object");
  for (const char* refused : {"temperature", "top_p", "top_k"})
    EXPECT_FALSE(body.contains(refused));
  EXPECT_EQ(
      body["messages"],
      json::parse(R"([{"role":"user","content":[{"type":"text","text":"Write the plan."}]}])"));

  Request plain;
  plain.messages = {Message::user_text("hi")};
  plain.model = "claude-opus-5-5";
  plain.max_tokens = 5;
  json b2 = json::parse(built(*wire, plain).body);
  EXPECT_FALSE(b2.contains("tools"));
  EXPECT_FALSE(b2.contains("tool_choice"));
  EXPECT_FALSE(b2.contains("system"));
  EXPECT_FALSE(b2.contains("stream"));
  EXPECT_EQ(b2["model"], "claude-opus-5-5");
  EXPECT_EQ(b2["max_tokens"], 5);
}

TEST(AnthropicWireTest, EchoesReceivedBlocksVerbatimAndSendsToolResults) {
  auto wire = make_anthropic_wire(settings());
  const std::string body =
      R"({"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-5-5",
    "content":[{"type":"thinking","thinking":"","signature":"sig=="},
               {"type":"server_tool_use","id":"srv_1","name":"web_search","input":{"q":"x"}},
               {"type":"text","text":"Reading.","citations":null},
               {"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a"},"caller":{"type":"direct"}},
               {"type":"redacted_thinking","data":"opaque"}],
    "stop_reason":"tool_use","stop_sequence":null,"stop_details":null,
    "usage":{"input_tokens":12,"output_tokens":80,"cache_creation_input_tokens":3,"cache_read_input_tokens":4000}})";
  auto parsed = wire->parse_response(body);
  ASSERT_TRUE(std::holds_alternative<Response>(parsed));
  Response resp = std::get<Response>(parsed);

  Request r = tool_request();
  r.messages.push_back(resp.to_message());
  r.messages.push_back(
      Message{Role::user, {ContentBlock::make_tool_result("toolu_1", "no such file", true)}});
  json sent = json::parse(built(*wire, r).body)["messages"];
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[1]["role"], "assistant");
  EXPECT_EQ(sent[1]["content"], json::parse(body)["content"]);  // unchanged, same order
  // The newest turn carries the rolling cache breakpoint (llm.cache: auto).
  EXPECT_EQ(sent[2], json::parse(R"({"role":"user","content":[{"type":"tool_result",
      "tool_use_id":"toolu_1","content":"no such file","is_error":true,
      "cache_control":{"type":"ephemeral"}}]})"));
}

TEST(AnthropicWireTest, RefusesPrefillAndRebuiltThinkingButResendsPausedTurns) {
  auto wire = make_anthropic_wire(settings());
  Request r = tool_request();
  r.messages.push_back(Message{Role::assistant, {ContentBlock::make_text("Sure, here")}});
  auto b = wire->build(r, false);
  ASSERT_TRUE(std::holds_alternative<LlmError>(b));
  EXPECT_FALSE(std::get<LlmError>(b).retryable);
  EXPECT_NE(std::get<LlmError>(b).message.find("prefill"), std::string::npos);

  // A pause_turn answer resent as received is how a paused turn continues: not a prefill.
  auto paused = wire->parse_response(
      R"({"content":[{"type":"server_tool_use","id":"srv_1","name":"web_search","input":{}}],
          "stop_reason":"pause_turn"})");
  Request resend = tool_request();
  resend.messages.push_back(std::get<Response>(paused).to_message());
  auto ok = wire->build(resend, false);
  ASSERT_TRUE(std::holds_alternative<HttpRequest>(ok)) << std::get<LlmError>(ok).message;
  EXPECT_EQ(json::parse(std::get<HttpRequest>(ok).body)["messages"].back()["role"], "assistant");

  Request t = tool_request();
  ContentBlock thinking;
  thinking.type = ContentBlock::Type::thinking;  // made up by loopr: no signature to send
  t.messages.push_back(Message{Role::assistant, {thinking}});
  t.messages.push_back(Message::user_text("go on"));
  EXPECT_TRUE(std::holds_alternative<LlmError>(wire->build(t, false)));
}

TEST(AnthropicWireTest, ReadsBlocksByTypeUsageAndStopReasons) {
  auto wire = make_anthropic_wire(settings());
  auto parsed = wire->parse_response(R"({"id":"msg_2","model":"claude-opus-5-5","content":[
      {"type":"thinking","thinking":"hmm","signature":"s"},
      {"type":"tool_use","id":"toolu_9","name":"write_file","input":{"path":"p","content":"c"}},
      {"type":"text","text":"A"},{"type":"text","text":"B"}],
      "stop_reason":"refusal","stop_sequence":null,
      "stop_details":{"type":"refusal","category":"cyber","explanation":"no"},
      "usage":{"input_tokens":1,"output_tokens":2,"cache_creation_input_tokens":3,"cache_read_input_tokens":4}})");
  ASSERT_TRUE(std::holds_alternative<Response>(parsed));
  const Response& r = std::get<Response>(parsed);
  EXPECT_EQ(r.text(), "AB");
  ASSERT_EQ(r.tool_uses().size(), 1u);
  EXPECT_EQ(r.tool_uses()[0]->id, "toolu_9");
  EXPECT_EQ(r.tool_uses()[0]->input["content"], "c");
  EXPECT_EQ(r.content[0].type, ContentBlock::Type::thinking);
  EXPECT_EQ(r.stop_reason, StopReason::refusal);
  EXPECT_EQ(r.stop_details["category"], "cyber");
  EXPECT_EQ(r.usage.input_tokens, 1);
  EXPECT_EQ(r.usage.output_tokens, 2);
  EXPECT_EQ(r.usage.cache_write_tokens, 3);
  EXPECT_EQ(r.usage.cache_read_tokens, 4);
  EXPECT_EQ(r.id, "msg_2");

  for (const char* reason : {"end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn",
                             "refusal", "model_context_window_exceeded"}) {
    auto p = wire->parse_response(std::string(R"({"content":[],"stop_reason":")") + reason + "\"}");
    ASSERT_TRUE(std::holds_alternative<Response>(p));
    EXPECT_EQ(to_string(std::get<Response>(p).stop_reason), std::string(reason));
  }
  auto future = wire->parse_response(R"({"content":[],"stop_reason":"new_reason_2027"})");
  EXPECT_EQ(std::get<Response>(future).stop_reason, StopReason::unknown);
  EXPECT_EQ(std::get<Response>(future).stop_reason_text, "new_reason_2027");
}

TEST(AnthropicWireTest, MalformedBodyIsARetryableProtocolError) {
  auto wire = make_anthropic_wire(settings());
  for (const char* body : {"{\"content\": [", "<html>502</html>", "{\"id\":\"x\"}"}) {
    auto p = wire->parse_response(body);
    ASSERT_TRUE(std::holds_alternative<LlmError>(p)) << body;
    EXPECT_TRUE(std::get<LlmError>(p).retryable);
    EXPECT_EQ(std::get<LlmError>(p).kind, ErrorKind::protocol);
  }
}

TEST(AnthropicWireTest, StreamAssemblesLikeTheNonStreamedMessage) {
  const std::string sse = fixture("anthropic-tool-use.sse");
  const json expected = json::parse(R"([
    {"type":"thinking","thinking":"I should list the files first.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
    {"type":"text","text":"Let me look at the tree."},
    {"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"list_dir","input":{"path":"src/é"},"caller":{"type":"direct"}},
    {"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"}])");
  std::string crlf;
  for (char c : sse) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  for (const std::string* text : std::vector<const std::string*>{&sse, &crlf}) {
    for (std::size_t chunk : {1u, 7u, 64u, 100000u}) {
      Response r = assemble(*text, chunk);
      json blocks = json::array();
      for (const auto& b : r.content) blocks.push_back(b.raw);
      EXPECT_EQ(blocks, expected) << "chunk " << chunk;
      EXPECT_EQ(r.stop_reason, StopReason::tool_use);
      EXPECT_EQ(r.id, "msg_01XFDUDYJgAACzvnptvVoYEL");
      EXPECT_EQ(r.model, "claude-opus-5-5");
      EXPECT_EQ(r.usage.input_tokens, 472);
      EXPECT_EQ(r.usage.output_tokens, 89);  // message_delta usage is cumulative
      EXPECT_EQ(r.usage.cache_write_tokens, 100);
      EXPECT_EQ(r.usage.cache_read_tokens, 4000);
      ASSERT_EQ(r.tool_uses().size(), 1u);
      EXPECT_EQ(r.tool_uses()[0]->input, json({{"path", "src/é"}}));
      EXPECT_EQ(r.text(), "Let me look at the tree.");
    }
  }
}

TEST(AnthropicWireTest, StreamCutBeforeMessageStopIsNotComplete) {
  std::string sse = fixture("anthropic-tool-use.sse");
  // Cut at every event boundary before message_stop: never a (half) answer.
  std::size_t stop = sse.find("event: message_stop");
  for (std::size_t cut = sse.find("\n\n"); cut < stop; cut = sse.find("\n\n", cut + 2)) {
    std::optional<LlmError> err;
    bool complete = true;
    assemble(sse.substr(0, cut + 2), 13, &err, &complete);
    EXPECT_FALSE(err.has_value()) << "cut at " << cut;
    EXPECT_FALSE(complete) << "cut at " << cut;
  }
}

TEST(AnthropicWireTest, ErrorEventAfter200IsRetryable) {
  std::string sse = fixture("anthropic-tool-use.sse");
  sse = sse.substr(0, sse.find("event: content_block_start")) +
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
        "\"message\":\"Overloaded\"}}\n\n";
  std::optional<LlmError> err;
  assemble(sse, 50, &err);
  ASSERT_TRUE(err.has_value());
  EXPECT_TRUE(err->retryable);
  EXPECT_EQ(err->kind, ErrorKind::overloaded);
  EXPECT_NE(err->message.find("Overloaded"), std::string::npos);
}

TEST(AnthropicWireTest, MalformedEventOrToolInputIsAProtocolError) {
  std::optional<LlmError> err;
  assemble("event: message_start\ndata: {\"type\":\"message_start\",\"mess\n\n", 8, &err);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->kind, ErrorKind::protocol);
  EXPECT_TRUE(err->retryable);

  std::string bad_input =
      "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
      "\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
      "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n"
      "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n";
  assemble(bad_input, 5, &err);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->kind, ErrorKind::protocol);
}

TEST(AnthropicWireTest, UnknownEventsAndDeltasAreIgnored) {
  std::string sse = fixture("anthropic-tool-use.sse");
  std::string extra =
      "event: future_event\ndata: {\"type\":\"future_event\"}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,"
      "\"delta\":{\"type\":\"future_delta\",\"x\":1}}\n\n";
  sse.insert(
      sse.find("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}"),
      extra);
  Response r = assemble(sse, 31);
  EXPECT_EQ(r.text(), "Let me look at the tree.");
  EXPECT_EQ(r.content.size(), 4u);
}
