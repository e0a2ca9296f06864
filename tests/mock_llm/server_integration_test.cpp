// mock-llm over real loopback HTTP, served in-process: both APIs plain and streaming, a
// tool_use round trip, every fault kind as a client sees it on the wire, every refusal,
// unmatched requests, keep-alive, the log, and many slow requests at once.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <mock_llm/server.hpp>
#include <set>
#include <support/temp_dir.hpp>
#include <thread>

#include "mock_llm/test_http.hpp"

namespace loopr::mock_llm {
namespace {

using namespace loopr::mock_llm::testing;
using loopr::testing::TempDir;
using loopr::testing::wait_until;

const char* kScript = R"Y(
defaults:
  thinking: true
  usage: {input_tokens: 100, output_tokens: 50, cache_read_input_tokens: 10}
rules:
  - name: plan-writes
    match: {api: anthropic, loop_type: plan, user: "`(\\.loopr/plans/[^`]+)`"}
    per_loop: true
    times: 1
    reply:
      thinking: "I should write the plan file."
      text: "Writing the plan to {{user.1}}."
      tool_use: {name: write_file, input: {path: "{{user.1}}", content: "# Plan\n\n## Specs to Create\n- spec-a: first\n"}}
  - name: plan-done
    match: {api: anthropic, loop_type: plan, tool_result: "wrote"}
    reply: {text: "The plan is written. <promise>COMPLETE</promise>", usage: {output_tokens: 9}}
  - name: fault-429
    match: {loop_type: fault, user: "^429$"}
    reply: {text: x, fault: {status: 429, retry_after: 3}}
  - name: fault-500-then-ok
    match: {loop_type: fault, user: "^500$"}
    per_loop: true
    replies: [{text: x, fault: {status: 500}}, {text: "recovered"}]
  - name: fault-529
    match: {loop_type: fault, user: "^529$"}
    reply: {text: x, fault: {status: 529}}
  - name: fault-cut
    match: {loop_type: fault, user: "^cut$"}
    reply: {text: "a long enough answer to be cut somewhere in the middle of it", fault: {cut_after_events: 3}}
  - name: fault-malformed
    match: {loop_type: fault, user: "^malformed$"}
    reply: {text: x, fault: {malformed_json: true}}
  - name: fault-error-event
    match: {loop_type: fault, user: "^error_event$"}
    reply: {text: x, fault: {error_event: overloaded_error}}
  - name: fault-hang
    match: {loop_type: fault, user: "^hang$"}
    reply: {text: x, fault: {hang: true}}
  - name: fault-stall
    match: {loop_type: fault, user: "^stall$"}
    reply: {text: "some text that will not all arrive", fault: {stall_after_events: 2}}
  - name: fault-delay
    match: {loop_type: fault, user: "^delay$"}
    reply: {text: "late", fault: {delay: 300ms}}
  - name: slow-events
    match: {loop_type: slow}
    reply: {text: "tick tock tick tock tick tock tick tock", event_delay: 40ms}
  - name: openai-call
    match: {api: openai, turn: 1}
    reply: {text: "Running the tests.", tool_use: {name: run_command, input: {command: "ctest --output-on-failure"}}}
  - name: openai-after
    match: {api: openai, tool_result: "passed"}
    reply: {text: "All tests pass."}
  - name: refusal
    match: {loop_type: refuse}
    reply: {text: "I can't help with that.", stop_reason: refusal, stop_details: {type: refusal, category: cyber, explanation: "scripted"}}
  - name: load
    match: {loop_type: load}
    reply: {text: "ok"}
)Y";

/// An in-process mock-llm on a free port, served by its own thread.
class ServerFixture : public ::testing::Test {
 protected:
  void SetUp() override { start(kScript); }

  void start(const std::string& script_text, EngineOptions options = {}) {
    auto script = parse_script(script_text, "test.yml");
    ASSERT_TRUE(script.ok()) << script.error().message;
    log_.emplace(log_path());
    engine_.emplace(std::move(script).value(), options, &*log_);
    server_.emplace(*engine_, ServerOptions{});
    port_ = server_->port();
    thread_ = std::thread([this] { server_->run(); });
  }

  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string log_path() const { return (dir_ / "requests.jsonl").string(); }

  std::vector<Json> log_lines() const {
    std::ifstream in(log_path());
    std::vector<Json> out;
    for (std::string line; std::getline(in, line);) out.push_back(Json::parse(line));
    return out;
  }

  static Json messages(Json msgs, bool stream = false) {
    return {{"model", "claude-opus-5-5"},
            {"max_tokens", 2048},
            {"stream", stream},
            {"messages", std::move(msgs)}};
  }
  static Json user(const std::string& text) { return {{"role", "user"}, {"content", text}}; }

  HttpResponse ask(const std::string& loop_type, const std::string& text, bool stream = false,
                   std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    return post(port_, "/v1/messages", anthropic_headers(loop_type, "001"),
                messages({user(text)}, stream), timeout);
  }

  TempDir dir_;
  std::optional<RequestLog> log_;
  std::optional<Engine> engine_;
  std::optional<Server> server_;
  std::thread thread_;
  std::uint16_t port_ = 0;
};

/// Rebuilds an Anthropic message from its SSE events, as a client does.
Json assemble_anthropic_stream(const std::string& body) {
  Json message;
  std::map<std::size_t, std::string> partial;
  for (const auto& e : parse_sse(body)) {
    Json d = Json::parse(e.data);
    if (e.event == "message_start")
      message = d["message"];
    else if (e.event == "content_block_start")
      message["content"].push_back(d["content_block"]);
    else if (e.event == "content_block_delta") {
      Json& b = message["content"][d["index"].get<std::size_t>()];
      const Json& delta = d["delta"];
      if (delta["type"] == "text_delta")
        b["text"] = b["text"].get<std::string>() + delta["text"].get<std::string>();
      if (delta["type"] == "thinking_delta")
        b["thinking"] = b["thinking"].get<std::string>() + delta["thinking"].get<std::string>();
      if (delta["type"] == "signature_delta") b["signature"] = delta["signature"];
      if (delta["type"] == "input_json_delta")
        partial[d["index"]] += delta["partial_json"].get<std::string>();
    } else if (e.event == "content_block_stop") {
      std::size_t i = d["index"];
      if (partial.count(i)) message["content"][i]["input"] = Json::parse(partial[i]);
    } else if (e.event == "message_delta") {
      for (const auto& [k, v] : d["delta"].items()) message[k] = v;
      for (const auto& [k, v] : d["usage"].items()) message["usage"][k] = v;
    } else if (e.event == "message_stop") {
      message["_stopped"] = true;
    }
  }
  return message;
}

TEST_F(ServerFixture, AnthropicPlainReply) {
  HttpResponse r = ask("plan", "Write the plan to `.loopr/plans/001-x.plan.md`.");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(r.header("request-id").rfind("req_", 0), 0u);
  Json m = r.json();
  EXPECT_EQ(m["type"], "message");
  EXPECT_EQ(m["stop_reason"], "tool_use");
  ASSERT_EQ(m["content"].size(), 3u);
  EXPECT_EQ(m["content"][0]["type"], "thinking");
  EXPECT_FALSE(m["content"][0]["signature"].get<std::string>().empty());
  EXPECT_EQ(m["content"][1]["text"], "Writing the plan to .loopr/plans/001-x.plan.md.");
  EXPECT_EQ(m["content"][2]["input"]["path"], ".loopr/plans/001-x.plan.md");
  EXPECT_EQ(m["usage"]["cache_read_input_tokens"], 10);
}

TEST_F(ServerFixture, AnthropicStreamingToolUseRoundTrip) {
  const Json first = user("Write the plan to `.loopr/plans/001-x.plan.md`.");
  HttpResponse r1 =
      post(port_, "/v1/messages", anthropic_headers("plan", "001"), messages({first}, true));
  ASSERT_EQ(r1.status, 200) << r1.body;
  EXPECT_TRUE(r1.complete);
  EXPECT_EQ(r1.header("content-type"), "text/event-stream; charset=utf-8");
  EXPECT_EQ(r1.header("transfer-encoding"), "chunked");
  Json m1 = assemble_anthropic_stream(r1.body);
  EXPECT_EQ(m1["_stopped"], true);
  EXPECT_EQ(m1["stop_reason"], "tool_use");
  ASSERT_EQ(m1["content"].size(), 3u);
  EXPECT_EQ(m1["content"][0]["thinking"], "I should write the plan file.");
  const Json tool = m1["content"][2];
  EXPECT_EQ(tool["name"], "write_file");
  EXPECT_EQ(tool["input"]["path"], ".loopr/plans/001-x.plan.md");

  // Send the whole assistant turn back (the streamed text block has no citations field: the
  // client keeps what it received) with the tool result: the next rule answers.
  Json answer = {
      {"role", "user"},
      {"content",
       {{{"type", "tool_result"}, {"tool_use_id", tool["id"]}, {"content", "wrote 60 bytes"}}}}};
  Json turn2 = messages({first, {{"role", "assistant"}, {"content", m1["content"]}}, answer}, true);
  HttpResponse r2 = post(port_, "/v1/messages", anthropic_headers("plan", "001"), turn2);
  ASSERT_EQ(r2.status, 200) << r2.body;
  Json m2 = assemble_anthropic_stream(r2.body);
  EXPECT_EQ(m2["stop_reason"], "end_turn");
  EXPECT_EQ(m2["content"][1]["text"], "The plan is written. <promise>COMPLETE</promise>");
  EXPECT_EQ(m2["usage"]["output_tokens"], 9);

  // The log names the rules in order.
  auto lines = log_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["rule"], "plan-writes");
  EXPECT_EQ(lines[1]["rule"], "plan-done");
  EXPECT_EQ(lines[1]["body"]["messages"][1]["content"][2]["id"], tool["id"]);
}

TEST_F(ServerFixture, OpenAiPlainAndStreamingToolCalls) {
  Json body = {
      {"model", "qwen3-coder"},
      {"max_completion_tokens", 512},
      {"messages",
       {{{"role", "system"}, {"content", "You are a coder."}}, user("Make the tests pass.")}},
      {"tools",
       {{{"type", "function"},
         {"function", {{"name", "run_command"}, {"parameters", {{"type", "object"}}}}}}}}};
  HttpResponse plain = post(port_, "/v1/chat/completions", openai_headers(), body);
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_FALSE(plain.header("x-request-id").empty());
  Json c = plain.json();
  EXPECT_EQ(c["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(c["model"], "qwen3-coder");
  const Json call = c["choices"][0]["message"]["tool_calls"][0];

  Json streamed = body;
  streamed["stream"] = true;
  streamed["stream_options"] = {{"include_usage", true}};
  HttpResponse s = post(port_, "/v1/chat/completions", openai_headers(), streamed);
  ASSERT_EQ(s.status, 200) << s.body;
  EXPECT_TRUE(s.complete);
  auto events = parse_sse(s.body);
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events.back().data, "[DONE]");
  std::string args, finish, content;
  Json usage;
  for (std::size_t i = 0; i + 1 < events.size(); ++i) {
    Json chunk = Json::parse(events[i].data);
    if (chunk["choices"].empty()) {
      usage = chunk["usage"];
      continue;
    }
    const Json& choice = chunk["choices"][0];
    if (choice["delta"].contains("content"))
      content += choice["delta"]["content"].get<std::string>();
    if (choice["delta"].contains("tool_calls"))
      args += choice["delta"]["tool_calls"][0]["function"]["arguments"].get<std::string>();
    if (!choice["finish_reason"].is_null()) finish = choice["finish_reason"];
  }
  EXPECT_EQ(content, "Running the tests.");
  EXPECT_EQ(Json::parse(args)["command"], "ctest --output-on-failure");
  EXPECT_EQ(finish, "tool_calls");
  EXPECT_EQ(usage["prompt_tokens"], 110);

  // Round trip: the tool message answers the call.
  body["messages"].push_back(c["choices"][0]["message"]);
  body["messages"].push_back(
      {{"role", "tool"}, {"tool_call_id", call["id"]}, {"content", "100% tests passed"}});
  HttpResponse done = post(port_, "/v1/chat/completions", openai_headers(), body);
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(done.json()["choices"][0]["message"]["content"], "All tests pass.");
  EXPECT_EQ(done.json()["choices"][0]["finish_reason"], "stop");
}

TEST_F(ServerFixture, StatusFaultsCarryTheRealErrorShapeAndHeaders) {
  HttpResponse r = ask("fault", "429");
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.header("retry-after"), "3");
  EXPECT_EQ(r.json()["error"]["type"], "rate_limit_error");
  EXPECT_EQ(r.json()["request_id"], r.header("request-id"));

  r = ask("fault", "529");
  EXPECT_EQ(r.status, 529);
  EXPECT_EQ(r.json()["error"]["type"], "overloaded_error");

  // 500, then the same loop's retry succeeds.
  r = ask("fault", "500");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.json()["error"]["type"], "api_error");
  r = ask("fault", "500");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["content"][1]["text"], "recovered");
}

TEST_F(ServerFixture, CutStreamEndsWithoutMessageStop) {
  HttpResponse r = ask("fault", "cut", true);
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);  // the connection closed before the last chunk
  auto events = parse_sse(r.body);
  EXPECT_EQ(events.size(), 3u);
  for (const auto& e : events) EXPECT_NE(e.event, "message_stop");

  // A plain request is cut inside its body: fewer bytes than Content-Length.
  r = ask("fault", "cut", false);
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);
  EXPECT_LT(r.body.size(), std::stoul(r.header("content-length")));
}

TEST_F(ServerFixture, MalformedJsonAndErrorEvent) {
  HttpResponse r = ask("fault", "malformed");
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.complete);
  EXPECT_TRUE(Json::parse(r.body, nullptr, false).is_discarded());

  r = ask("fault", "malformed", true);
  EXPECT_EQ(r.status, 200);
  auto events = parse_sse(r.body);
  ASSERT_GE(events.size(), 2u);
  EXPECT_TRUE(Json::parse(events.back().data, nullptr, false).is_discarded());

  r = ask("fault", "error_event", true);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.complete);
  events = parse_sse(r.body);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.front().event, "message_start");
  EXPECT_EQ(events.back().event, "error");
  EXPECT_EQ(Json::parse(events.back().data)["error"]["type"], "overloaded_error");
}

TEST_F(ServerFixture, HangStallAndDelay) {
  // A hang answers nothing: the client's own timeout fires. Meanwhile others are served.
  auto start = Clock::now();
  std::thread hung([&] {
    HttpResponse h = ask("fault", "hang", false, std::chrono::milliseconds(400));
    EXPECT_TRUE(h.timed_out);
    EXPECT_EQ(h.status, 0);
  });
  HttpResponse other = ask("load", "hi");
  EXPECT_EQ(other.status, 200);
  hung.join();
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(400));

  HttpResponse s = ask("fault", "stall", true, std::chrono::milliseconds(400));
  EXPECT_EQ(s.status, 200);
  EXPECT_TRUE(s.timed_out);
  EXPECT_EQ(parse_sse(s.body).size(), 2u);

  start = Clock::now();
  HttpResponse d = ask("fault", "delay");
  EXPECT_EQ(d.status, 200);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(300));
}

TEST_F(ServerFixture, EventsAreSpreadOverTimeWithEventDelay) {
  HttpResponse r = ask("slow", "tick", true);
  ASSERT_EQ(r.status, 200);
  ASSERT_GE(r.piece_times.size(), 5u);
  // Each event is its own chunk, sent as it is due (TCP_NODELAY; no batching into one write).
  EXPECT_GE(r.piece_times.back() - r.piece_times.front(),
            std::chrono::milliseconds(40 * static_cast<int>(r.piece_times.size() - 2)));
}

TEST_F(ServerFixture, RefusalStopReason) {
  HttpResponse r = ask("refuse", "something");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["stop_reason"], "refusal");
  EXPECT_EQ(r.json()["stop_details"]["category"], "cyber");
}

TEST_F(ServerFixture, RefusedRequestsGetTheServiceErrors) {
  auto h = anthropic_headers("load", "001");
  Json ok = messages({user("hi")});
  // A request the service refuses: a 400 whose body names `what`.
  auto expect_400_naming = [&](const Json& body, const std::string& what) {
    HttpResponse refused = post(port_, "/v1/messages", h, body);
    EXPECT_EQ(refused.status, 400) << what;
    EXPECT_NE(refused.body.find(what), std::string::npos) << refused.body;
  };

  Json temperature = ok;
  temperature["temperature"] = 0.2;
  HttpResponse r = post(port_, "/v1/messages", h, temperature);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["error"]["type"], "invalid_request_error");
  EXPECT_NE(r.json()["error"]["message"].get<std::string>().find("temperature"), std::string::npos);

  Json forced = ok;
  forced["tool_choice"] = {{"type", "any"}};
  EXPECT_EQ(post(port_, "/v1/messages", h, forced).status, 400);

  Json prefill = messages({user("hi"), {{"role", "assistant"}, {"content", "Sure"}}});
  expect_400_naming(prefill, "prefill");

  Json unanswered = messages(
      {user("hi"),
       {{"role", "assistant"},
        {"content",
         {{{"type", "tool_use"}, {"id", "toolu_x"}, {"name", "run"}, {"input", Json::object()}}}}},
       user("go on")});
  expect_400_naming(unanswered, "toolu_x");

  Json altered = messages(
      {user("hi"),
       {{"role", "assistant"},
        {"content", {{{"type", "thinking"}, {"thinking", ""}, {"signature", "bm90IG91cnM="}}}}},
       user("more")});
  expect_400_naming(altered, "signature");

  auto no_version = h;
  no_version.erase("anthropic-version");
  r = post(port_, "/v1/messages", no_version, ok);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["error"]["message"], "anthropic-version: header is required");

  auto no_auth = h;
  no_auth.erase("authorization");
  r = post(port_, "/v1/messages", no_auth, ok);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.json()["error"]["type"], "authentication_error");

  auto x_api_key = no_auth;
  x_api_key["x-api-key"] = "k";
  EXPECT_EQ(post(port_, "/v1/messages", x_api_key, ok).status, 200);

  TestConnection c(port_);
  r = c.request("POST", "/v1/messages", h, "{\"model\": ");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("not valid JSON"), std::string::npos);

  // Every refusal is in the log with its status and no rule.
  auto lines = log_lines();
  ASSERT_GE(lines.size(), 8u);
  for (std::size_t i = 0; i < 7; ++i) {
    EXPECT_TRUE(lines[i]["rule"].is_null()) << lines[i];
    EXPECT_GE(lines[i]["status"].get<int>(), 400);
  }
}

TEST_F(ServerFixture, UnmatchedRequestIsA400NamingIt) {
  HttpResponse r = post(port_, "/v1/messages", anthropic_headers("spec", "001-002"),
                        messages({user("Write the spec for the OAuth callback handler")}));
  EXPECT_EQ(r.status, 400);
  const std::string msg = r.json()["error"]["message"];
  EXPECT_NE(msg.find("loop_type \"spec\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("loop_id \"001-002\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("Write the spec for the OAuth callback handler"), std::string::npos) << msg;
}

TEST_F(ServerFixture, KeepAliveServesSeveralRequestsOnOneConnection) {
  TestConnection c(port_);
  for (int i = 0; i < 3; ++i) {
    HttpResponse r = c.request("POST", "/v1/messages", anthropic_headers("load", "k"),
                               messages({user("hi")}, i == 1).dump());
    ASSERT_EQ(r.status, 200) << i;
    EXPECT_TRUE(r.complete);
  }
  // Expect: 100-continue (curl's habit for big bodies) gets its interim answer.
  auto h = anthropic_headers("load", "k");
  h["expect"] = "100-continue";
  HttpResponse r = c.request("POST", "/v1/messages", h, messages({user("hi")}).dump());
  EXPECT_EQ(r.status, 200);
}

TEST_F(ServerFixture, LogLinesAreWrittenWhileServing) {
  (void)ask("load", "first");
  // The line is there before the server stops (flushed per line).
  ASSERT_TRUE(wait_until([&] { return log_lines().size() == 1; }));
  Json line = log_lines()[0];
  EXPECT_EQ(line["api"], "anthropic");
  EXPECT_EQ(line["path"], "/v1/messages");
  EXPECT_EQ(line["headers"]["authorization"], "Bearer [redacted]");
  EXPECT_EQ(line["headers"]["x-loopr-loop-type"], "load");
  EXPECT_EQ(line["body"]["messages"][0]["content"], "first");
  EXPECT_EQ(line["rule"], "load");
  EXPECT_EQ(line["status"], 200);
  EXPECT_TRUE(line["fault"].is_null());
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  EXPECT_LE(line["t_ms"].get<std::int64_t>(), now);
  EXPECT_GT(line["t_ms"].get<std::int64_t>(), now - 60'000);
}

class RandomFaultFixture : public ServerFixture {
 protected:
  void SetUp() override {
    start(R"Y(
faults: {rate: 0.3, seed: 11}
rules:
  - name: steps
    per_loop: true
    replies: [{text: "step one"}, {text: "step two"}, {text: "step three"}, {text: "step four"}]
)Y");
  }
};

TEST_F(RandomFaultFixture, AClientThatRetriesGetsTheFaultFreeAnswers) {
  // The fault suite's situation: 30 % of answers are 429/500/529, cut streams, malformed JSON or
  // error events. A client that retries every failure still gets every step, in order, once.
  for (bool stream : {false, true}) {
    const std::string loop = stream ? "streaming" : "plain";
    std::vector<std::string> got;
    std::set<int> statuses;
    int attempts = 0;
    while (got.size() < 4 && attempts < 100) {
      ++attempts;
      HttpResponse r = post(port_, "/v1/messages", anthropic_headers("code", loop),
                            messages({user("go")}, stream));
      statuses.insert(r.status);
      if (r.status != 200 || !r.complete) continue;
      Json m;
      if (stream) {
        auto events = parse_sse(r.body);
        bool broken = events.empty() || events.back().event != "message_stop";
        for (const auto& e : events) broken |= Json::parse(e.data, nullptr, false).is_discarded();
        if (broken) continue;
        m = assemble_anthropic_stream(r.body);
      } else {
        m = Json::parse(r.body, nullptr, false);
        if (m.is_discarded()) continue;
      }
      got.push_back(m["content"][0]["text"]);
    }
    EXPECT_EQ(got, (std::vector<std::string>{"step one", "step two", "step three", "step four"}))
        << loop;
    EXPECT_GT(attempts, 4) << "no fault was injected for " << loop;
  }
  // Every injected fault is in the log by kind, and never consumed a reply.
  std::map<std::string, int> faults;
  for (const Json& line : log_lines())
    if (!line["fault"].is_null()) ++faults[line["fault"].get<std::string>()];
  EXPECT_GE(faults.size(), 3u);
}

class LatencyFixture : public ServerFixture {
 protected:
  void SetUp() override { start(kScript, EngineOptions{"", std::nullopt, Millis(200)}); }
};

TEST_F(LatencyFixture, ManySlowRequestsAreServedConcurrently) {
  // 200 clients at once, each answer delayed 200 ms: with async timers they all finish in
  // about one latency, not 200 × 200 ms.
  constexpr int kClients = 200;
  std::atomic<int> ok{0};
  auto start = Clock::now();
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i)
    clients.emplace_back([&, i] {
      HttpResponse r = post(port_, "/v1/messages", anthropic_headers("load", std::to_string(i)),
                            messages({user("hi")}, i % 2 == 0));
      if (r.status == 200 && r.complete) ++ok;
    });
  for (auto& t : clients) t.join();
  auto elapsed = Clock::now() - start;
  EXPECT_EQ(ok.load(), kClients);
  EXPECT_GE(elapsed, std::chrono::milliseconds(200));
  EXPECT_LT(elapsed, std::chrono::seconds(5)) << "delays must not serialise requests";
}

}  // namespace
}  // namespace loopr::mock_llm
