// The engine without sockets: request in, plan out. Covers the conversation rules (thinking
// echoed unchanged, tool_use answered), unmatched requests, every fault kind, random faults
// that leave rules unconsumed, and the request log.
#include <gtest/gtest.h>

#include <fstream>
#include <mock_llm/engine.hpp>
#include <support/temp_dir.hpp>

#include "mock_llm/load_script.hpp"

namespace loopr::mock_llm {
namespace {

using loopr::testing::TempDir;

HttpRequest anthropic_request(const Json& body, const std::string& loop_id = "001",
                              const std::string& loop_type = "plan") {
  HttpRequest r;
  r.method = "POST";
  r.target = "/v1/messages";
  r.headers.items = {{"anthropic-version", "2026-10-21"},
                     {"x-api-key", "secret"},
                     {"content-type", "application/json"},
                     {"x-loopr-loop-id", loop_id},
                     {"x-loopr-loop-type", loop_type}};
  r.body = body.dump();
  r.arrival_ms = 1234;
  return r;
}

HttpRequest openai_request(const Json& body) {
  HttpRequest r;
  r.method = "POST";
  r.target = "/v1/chat/completions";
  r.headers.items = {{"authorization", "Bearer sk-x"}, {"content-type", "application/json"}};
  r.body = body.dump();
  return r;
}

Json messages_body(Json messages, bool stream = false) {
  return {{"model", "claude-opus-5-5"},
          {"max_tokens", 4096},
          {"stream", stream},
          {"messages", std::move(messages)}};
}

Json user(const std::string& text) { return {{"role", "user"}, {"content", text}}; }

// `engine` refuses `body` as the service would: a 400 whose body says `why`.
void expect_refused(Engine& engine, const Json& body, const std::string& why) {
  ResponsePlan p = engine.handle(anthropic_request(body));
  EXPECT_EQ(p.status, 400) << why;
  EXPECT_NE(p.body.find(why), std::string::npos) << p.body;
}

const char* kToolScript = R"Y(
defaults:
  thinking: true
  usage: {input_tokens: 100, output_tokens: 50}
rules:
  - name: write
    match: {user: "`(\\.loopr/plans/[^`]+)`"}
    per_loop: true
    times: 1
    reply:
      thinking: "planning"
      text: "Writing {{user.1}}"
      tool_use: {name: write_file, input: {path: "{{user.1}}", content: "# Plan"}}
  - name: done
    match: {tool_result: "written"}
    reply: {text: "Done.", usage: {output_tokens: 7}}
)Y";

TEST(EngineTest, ToolUseRoundTripWithThinkingEchoed) {
  Engine engine(load(kToolScript), {});
  Json first_user = user("Write `.loopr/plans/001-x.plan.md` please");
  ResponsePlan p1 = engine.handle(anthropic_request(messages_body({first_user})));
  ASSERT_EQ(p1.status, 200) << p1.body;
  Json m1 = Json::parse(p1.body);
  ASSERT_EQ(m1["content"].size(), 3u);
  EXPECT_EQ(m1["content"][0]["type"], "thinking");
  EXPECT_EQ(m1["content"][0]["thinking"], "planning");
  EXPECT_EQ(m1["content"][1]["text"], "Writing .loopr/plans/001-x.plan.md");
  const Json& tool = m1["content"][2];
  EXPECT_EQ(tool["input"]["path"], ".loopr/plans/001-x.plan.md");
  EXPECT_EQ(tool["id"].get<std::string>().rfind("toolu_01", 0), 0u);
  EXPECT_EQ(m1["stop_reason"], "tool_use");
  EXPECT_EQ(m1["id"].get<std::string>().rfind("msg_01", 0), 0u);

  Json answer = {
      {"role", "user"},
      {"content",
       {{{"type", "tool_result"}, {"tool_use_id", tool["id"]}, {"content", "written"}}}}};
  Json turn2 =
      messages_body({first_user, {{"role", "assistant"}, {"content", m1["content"]}}, answer});
  ResponsePlan p2 = engine.handle(anthropic_request(turn2));
  ASSERT_EQ(p2.status, 200) << p2.body;
  Json m2 = Json::parse(p2.body);
  EXPECT_EQ(m2["stop_reason"], "end_turn");
  EXPECT_EQ(m2["usage"]["output_tokens"], 7);
  EXPECT_EQ(m2["usage"]["input_tokens"], 100);  // from the defaults

  // The same turn with the thinking text altered, dropped, or its signature made up: 400.
  Json altered = turn2;
  altered["messages"][1]["content"][0]["thinking"] = "something else";
  expect_refused(engine, altered, "cannot be modified");

  Json dropped = turn2;
  dropped["messages"][1]["content"].erase(0);
  expect_refused(engine, dropped, "must remain as they were");

  Json forged = turn2;
  forged["messages"][1]["content"][0]["signature"] = "Zm9yZ2Vk";
  expect_refused(engine, forged, "Invalid `signature`");

  // Echoed under a changed first message (not append-only): bound to a different conversation.
  Json moved = turn2;
  moved["messages"][0]["content"] = "Write `.loopr/plans/001-x.plan.md` now";
  expect_refused(engine, moved, "bound to a different conversation");

  // A tool_use left unanswered.
  Json unanswered = messages_body(
      {first_user, {{"role", "assistant"}, {"content", m1["content"]}}, user("and?")});
  expect_refused(engine, unanswered, "without `tool_result`");
}

TEST(EngineTest, MovedCacheBreakpointsAndStringContentAreTheSameConversation) {
  // What the claude CLI does between turns: the cache breakpoint moves to the newest message,
  // and a message sent as blocks comes back as a plain string. Still the same conversation.
  Engine engine(load(kToolScript), {});
  const Json cached = {{"type", "ephemeral"}};
  Json first = {{"role", "user"},
                {"content",
                 {{{"type", "text"},
                   {"text", "Write `.loopr/plans/001-x.plan.md`"},
                   {"cache_control", cached}}}}};
  Json body1 = messages_body({first});
  body1["system"] =
      Json::array({{{"type", "text"}, {"text", "You are loopr."}, {"cache_control", cached}}});
  Json m1 = Json::parse(engine.handle(anthropic_request(body1)).body);
  ASSERT_EQ(m1["stop_reason"], "tool_use");

  Json echoed = m1["content"];
  echoed[1].erase("citations");         // a client that drops null fields
  echoed[2]["cache_control"] = cached;  // and marks its newest block
  Json answer = {{"role", "user"},
                 {"content",
                  {{{"type", "tool_result"},
                    {"tool_use_id", echoed[2]["id"]},
                    {"content", "written"},
                    {"cache_control", cached}}}}};
  Json body2 = messages_body({{{"role", "user"}, {"content", "Write `.loopr/plans/001-x.plan.md`"}},
                              {{"role", "assistant"}, {"content", echoed}},
                              answer});
  body2["system"] = "You are loopr.";
  ResponsePlan p2 = engine.handle(anthropic_request(body2));
  EXPECT_EQ(p2.status, 200) << p2.body;

  // A changed word in the first message is a different conversation, though.
  body2["messages"][0]["content"] = "Write `.loopr/plans/001-y.plan.md`";
  EXPECT_EQ(engine.handle(anthropic_request(body2)).status, 400);
}

TEST(EngineTest, PauseTurnMayBeResentAsTheLastMessage) {
  Engine engine(load("rules:\n  - name: p\n    times: 1\n    reply: {text: searching, stop_reason: "
                     "pause_turn}\n"
                     "  - name: q\n    reply: {text: done}\n"),
                {});
  Json first = messages_body({user("go")});
  Json m1 = Json::parse(engine.handle(anthropic_request(first)).body);
  EXPECT_EQ(m1["stop_reason"], "pause_turn");
  ResponsePlan again = engine.handle(anthropic_request(
      messages_body({user("go"), {{"role", "assistant"}, {"content", m1["content"]}}})));
  EXPECT_EQ(again.status, 200) << again.body;
  // Any other trailing assistant message is a prefill.
  expect_refused(engine, messages_body({user("go"), {{"role", "assistant"}, {"content", "Sure"}}}),
                 "prefill");
}

TEST(EngineTest, UnmatchedRequestIsA400NamingIt) {
  Engine engine(load("rules:\n  - match: {loop_type: code}\n    reply: {text: hi}\n"), {});
  const std::string long_text = "Write the plan for " + std::string(300, 'x');
  ResponsePlan p =
      engine.handle(anthropic_request(messages_body({user(long_text)}), "042", "plan"));
  EXPECT_EQ(p.status, 400);
  Json e = Json::parse(p.body);
  EXPECT_EQ(e["type"], "error");
  EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  const std::string msg = e["error"]["message"];
  EXPECT_NE(msg.find("no rule matches"), std::string::npos) << msg;
  EXPECT_NE(msg.find("loop_type \"plan\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("loop_id \"042\""), std::string::npos) << msg;
  EXPECT_NE(msg.find(long_text.substr(0, 200)), std::string::npos) << msg;
  EXPECT_EQ(msg.find(long_text.substr(0, 201)), std::string::npos) << "only 200 chars are quoted";
}

TEST(EngineTest, ScriptedFaultsBecomePlans) {
  Engine engine(load(R"Y(
rules:
  - name: faults
    replies:
      - {text: a, fault: {status: 429, retry_after: 2, retry_after_ms: 1500, should_retry: true, error_code: enforced_spend_limit_reached}}
      - {text: b, fault: {status: 500, message: "boom"}}
      - {text: c, fault: {cut_after_events: 3}}
      - {text: d, fault: {error_event: overloaded_error}}
      - {text: e, fault: {malformed_json: true}}
      - {text: f, fault: {hang: true}}
      - {text: g, fault: {delay: 300ms}}
      - {text: h, fault: {stall_after_events: 2}}
      - {text: i, fault: {error_event: api_error}}
      - {text: j, fault: {cut_after_events: 3}}
)Y"),
                {});
  auto stream = [&](bool s) { return anthropic_request(messages_body({user("x")}, s)); };

  ResponsePlan p = engine.handle(stream(false));
  EXPECT_EQ(p.status, 429);
  Json e = Json::parse(p.body);
  EXPECT_EQ(e["error"]["type"], "rate_limit_error");
  EXPECT_EQ(e["error"]["details"]["error_code"], "enforced_spend_limit_reached");
  auto header = [](const ResponsePlan& plan, const std::string& name) {
    for (const auto& [k, v] : plan.headers)
      if (k == name) return v;
    return std::string("<none>");
  };
  EXPECT_EQ(header(p, "retry-after"), "2");
  EXPECT_EQ(header(p, "retry-after-ms"), "1500");
  EXPECT_EQ(header(p, "x-should-retry"), "true");
  EXPECT_EQ(header(p, "request-id"), e["request_id"]);

  p = engine.handle(stream(true));  // an error status even when streaming was asked for
  EXPECT_EQ(p.status, 500);
  EXPECT_FALSE(p.streaming);
  EXPECT_EQ(Json::parse(p.body)["error"]["message"], "boom");

  p = engine.handle(stream(true));
  EXPECT_EQ(p.status, 200);
  EXPECT_TRUE(p.streaming);
  EXPECT_EQ(p.cut_after, 3u);

  p = engine.handle(stream(true));
  EXPECT_EQ(p.status, 200);
  ASSERT_GE(p.events.size(), 2u);
  EXPECT_NE(p.events.back().find("event: error"), std::string::npos);
  EXPECT_NE(p.events.back().find("overloaded_error"), std::string::npos);
  EXPECT_EQ(p.events.front().rfind("event: message_start", 0), 0u);

  p = engine.handle(stream(false));
  EXPECT_EQ(p.status, 200);
  EXPECT_TRUE(Json::parse(p.body, nullptr, false).is_discarded());

  p = engine.handle(stream(false));
  EXPECT_TRUE(p.hang);

  p = engine.handle(stream(false));
  EXPECT_EQ(p.status, 200);
  EXPECT_EQ(p.delay, Millis(300));
  EXPECT_EQ(Json::parse(p.body)["content"][0]["text"], "g");

  p = engine.handle(stream(true));
  EXPECT_EQ(p.stall_after, 2u);

  p = engine.handle(stream(false));  // an error event asked of a plain request: its status
  EXPECT_EQ(p.status, 500);
  EXPECT_EQ(Json::parse(p.body)["error"]["type"], "api_error");

  p = engine.handle(stream(false));  // a plain body is cut half way, never complete
  ASSERT_TRUE(p.cut_after.has_value());
  EXPECT_LT(*p.cut_after, p.body.size());
  EXPECT_GT(*p.cut_after, 0u);
}

TEST(EngineTest, OpenAiStreamFaults) {
  Engine engine(load(R"Y(
rules:
  - name: f
    replies:
      - {text: "some words to stream", fault: {error_event: overloaded_error}}
      - {text: "some words to stream", fault: {malformed_json: true}}
      - {text: "some words to stream", fault: {cut_after_events: 2}}
      - {text: x, fault: {status: 429, retry_after: 5}}
)Y"),
                {});
  Json body = {{"model", "m"}, {"stream", true}, {"messages", {user("x")}}};
  ResponsePlan p = engine.handle(openai_request(body));
  EXPECT_EQ(p.status, 200);
  ASSERT_GE(p.events.size(), 2u);
  Json error = Json::parse(p.events.back().substr(6));
  EXPECT_EQ(error["error"]["type"], "overloaded_error");
  EXPECT_EQ(p.events.back().find("[DONE]"), std::string::npos);

  p = engine.handle(openai_request(body));
  EXPECT_TRUE(Json::parse(p.events.back().substr(6), nullptr, false).is_discarded());

  p = engine.handle(openai_request(body));
  EXPECT_EQ(p.cut_after, 2u);

  p = engine.handle(openai_request(body));
  EXPECT_EQ(p.status, 429);
  EXPECT_EQ(Json::parse(p.body)["error"]["code"], "rate_limit_exceeded");
}

TEST(EngineTest, RandomFaultsLeaveTheRuleUnconsumed) {
  Engine engine(load(R"Y(
faults: {rate: 0.5, seed: 7, kinds: [429, cut_stream, malformed_json, error_event, 529, 500]}
rules:
  - name: steps
    per_loop: true
    replies: [{text: one}, {text: two}, {text: three}]
)Y"),
                {});
  std::vector<std::string> delivered;
  int faults = 0;
  for (int i = 0; i < 60 && delivered.size() < 3; ++i) {
    ResponsePlan p = engine.handle(anthropic_request(messages_body({user("x")}, false)));
    if (p.status == 200 && !p.cut_after) {
      auto parsed = Json::parse(p.body, nullptr, false);
      if (!parsed.is_discarded()) {
        delivered.push_back(parsed["content"][0]["text"]);
        continue;
      }
    }
    ++faults;
    if (p.status == 429) {
      bool has_retry_after = false;
      for (const auto& [k, v] : p.headers) has_retry_after |= k == "retry-after" && v == "1";
      EXPECT_TRUE(has_retry_after);
    }
  }
  // Faults happened, yet the replies came in order with none skipped.
  EXPECT_GT(faults, 0);
  EXPECT_EQ(delivered, (std::vector<std::string>{"one", "two", "three"}));
}

TEST(EngineTest, SameSeedSameFaultSequence) {
  const char* script = "faults: {rate: 0.3, seed: 1}\nrules: [{reply: {text: x}}]\n";
  auto sequence = [&](std::optional<std::uint64_t> seed) {
    Engine engine(load(script), {"", seed, std::nullopt});
    std::string s;
    for (int i = 0; i < 40; ++i)
      s += std::to_string(
               engine.handle(anthropic_request(messages_body({user("x")}, true))).status) +
           ",";
    return s;
  };
  EXPECT_EQ(sequence(std::nullopt), sequence(std::nullopt));
  EXPECT_NE(sequence(std::nullopt), sequence(99));  // --seed overrides faults.seed
}

TEST(EngineTest, LatencyDelaysEveryAnswer) {
  Engine engine(load("defaults: {latency: 50ms}\nrules: [{reply: {text: x}}]\n"), {});
  EXPECT_EQ(engine.handle(anthropic_request(messages_body({user("x")}))).delay, Millis(50));
  Engine overridden(load("defaults: {latency: 50ms}\nrules: [{reply: {text: x}}]\n"),
                    {"", std::nullopt, Millis(200)});
  EXPECT_EQ(overridden.handle(anthropic_request(messages_body({user("x")}))).delay, Millis(200));

  Engine paced(
      load("defaults: {event_delay: 20ms}\nrules:\n  - match: {user: slow}\n    reply: {text: x, "
           "event_delay: 70ms}\n  - reply: {text: y}\n"),
      {});
  EXPECT_EQ(paced.handle(anthropic_request(messages_body({user("slow")}, true))).event_delay,
            Millis(70));
  EXPECT_EQ(paced.handle(anthropic_request(messages_body({user("fast")}, true))).event_delay,
            Millis(20));
}

TEST(EngineTest, OpenAiToolCallRoundTrip) {
  Engine engine(load(R"Y(
rules:
  - name: call
    match: {api: openai, turn: 1}
    reply: {text: "Running.", tool_use: {name: run_command, input: {command: "make test"}}}
  - name: after
    match: {api: openai, tool_result: "^ok$"}
    reply: {text: "All green.", stop_reason: max_tokens}
)Y"),
                {});
  Json body = {{"model", "local-model"}, {"max_tokens", 100}, {"messages", {user("build it")}}};
  ResponsePlan p1 = engine.handle(openai_request(body));
  ASSERT_EQ(p1.status, 200) << p1.body;
  Json c1 = Json::parse(p1.body);
  EXPECT_EQ(c1["model"], "local-model");  // echoed when the script names no model
  const Json& msg = c1["choices"][0]["message"];
  EXPECT_EQ(c1["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(msg["content"], "Running.");
  const Json& call = msg["tool_calls"][0];
  EXPECT_EQ(call["id"].get<std::string>().rfind("call_", 0), 0u);
  EXPECT_EQ(Json::parse(call["function"]["arguments"].get<std::string>())["command"], "make test");

  body["messages"].push_back(msg);
  body["messages"].push_back({{"role", "tool"}, {"tool_call_id", call["id"]}, {"content", "ok"}});
  ResponsePlan p2 = engine.handle(openai_request(body));
  ASSERT_EQ(p2.status, 200) << p2.body;
  EXPECT_EQ(Json::parse(p2.body)["choices"][0]["finish_reason"], "length");
  bool has_request_id = false;
  for (const auto& [k, v] : p2.headers) has_request_id |= k == "x-request-id" && !v.empty();
  EXPECT_TRUE(has_request_id);

  // Errors come in the OpenAI shape.
  HttpRequest no_auth = openai_request(body);
  no_auth.headers.items.erase(no_auth.headers.items.begin());
  ResponsePlan p3 = engine.handle(no_auth);
  EXPECT_EQ(p3.status, 401);
  Json e = Json::parse(p3.body);
  EXPECT_TRUE(e["error"].contains("param"));
  EXPECT_TRUE(e["error"].contains("code"));
  EXPECT_FALSE(e.contains("type"));
}

TEST(EngineTest, RequestLogHasOneLinePerRequest) {
  TempDir dir;
  const auto path = (dir / "requests.jsonl").string();
  {
    RequestLog log(path);
    Engine engine(load("rules:\n  - name: only\n    match: {user: hello}\n    reply: {text: x, "
                       "fault: {status: 503}}\n"),
                  {}, &log);
    (void)engine.handle(anthropic_request(messages_body({user("hello")}), "007", "code"));
    HttpRequest bad = anthropic_request(messages_body({user("hello")}));
    bad.body = "{not json";
    (void)engine.handle(bad);
    (void)engine.handle(anthropic_request(messages_body({user("nobody")})));
  }
  std::ifstream in(path);
  std::vector<Json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(Json::parse(line));
  ASSERT_EQ(lines.size(), 3u);
  const Json& a = lines[0];
  EXPECT_EQ(a["t_ms"], 1234);
  EXPECT_EQ(a["api"], "anthropic");
  EXPECT_EQ(a["path"], "/v1/messages");
  EXPECT_EQ(a["headers"]["x-api-key"], "[redacted]");
  EXPECT_EQ(a["headers"]["x-loopr-loop-id"], "007");
  EXPECT_EQ(a["body"]["messages"][0]["content"], "hello");
  EXPECT_EQ(a["rule"], "only");
  EXPECT_EQ(a["status"], 503);
  EXPECT_EQ(a["fault"], "503");
  EXPECT_EQ(lines[1]["body"], "{not json");  // kept raw when it is not JSON
  EXPECT_EQ(lines[1]["status"], 400);
  EXPECT_NE(lines[1]["error"].get<std::string>().find("not valid JSON"), std::string::npos);
  EXPECT_TRUE(lines[2]["rule"].is_null());
  EXPECT_NE(lines[2]["error"].get<std::string>().find("no rule matches"), std::string::npos);
  EXPECT_TRUE(lines[2]["fault"].is_null());
  EXPECT_EQ(lines[2]["status"], 400);
}

TEST(EngineTest, UnknownPathsAndHealth) {
  Engine engine(load("rules: [{reply: {text: x}}]\n"), {});
  HttpRequest r;
  r.method = "GET";
  r.target = "/health";
  EXPECT_EQ(engine.handle(r).status, 200);
  r.target = "/v1/nothing";
  ResponsePlan p = engine.handle(r);
  EXPECT_EQ(p.status, 404);
  EXPECT_EQ(Json::parse(p.body)["error"]["type"], "not_found_error");
  HttpRequest beta = anthropic_request(messages_body({user("x")}));
  beta.target = "/v1/messages?beta=true";  // as the claude CLI calls it
  EXPECT_EQ(engine.handle(beta).status, 200);
}

}  // namespace
}  // namespace loopr::mock_llm

namespace loopr::mock_llm {
namespace {

HttpRequest models_request(std::vector<std::pair<std::string, std::string>> headers) {
  HttpRequest r;
  r.method = "GET";
  r.target = "/v1/models";
  r.headers.items = std::move(headers);
  return r;
}

}  // namespace

TEST(EngineTest, ModelsListInEitherShapeAndTheKeyIsChecked) {
  EngineOptions options;
  options.api_key = "right";
  Engine engine(load(kToolScript), options);
  ResponsePlan a =
      engine.handle(models_request({{"anthropic-version", "2026-10-21"}, {"x-api-key", "right"}}));
  ASSERT_EQ(a.status, 200) << a.body;
  Json am = Json::parse(a.body);
  EXPECT_EQ(am["data"][0]["type"], "model");
  EXPECT_EQ(am["has_more"], false);
  ResponsePlan o = engine.handle(models_request({{"authorization", "Bearer right"}}));
  ASSERT_EQ(o.status, 200) << o.body;
  EXPECT_EQ(Json::parse(o.body)["object"], "list");
  EXPECT_EQ(engine.handle(models_request({{"x-api-key", "wrong"}})).status, 401);
  EXPECT_EQ(engine.handle(models_request({})).status, 401);
}

}  // namespace loopr::mock_llm
