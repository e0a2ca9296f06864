#include "llm/stream_json.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::llm;

namespace {

const Pricing& pricing() {
  static const Pricing p(Config::default_pricing());
  return p;
}

ProcessResult exited(int code) {
  ProcessResult r;
  r.exit_code = code;
  return r;
}

StreamJsonReader read_lines(const std::string& text) {
  StreamJsonReader reader;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) reader.on_line(line);
  return reader;
}

std::string fixture() {
  return loopr::testing::read_file(std::string(LOOPR_SOURCE_DIR) +
                                   "/tests/llm/fixtures/claude-code-2.1.329-stream.jsonl");
}

const char* kInit =
    R"({"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-5-5","tools":["Bash"]})";

}  // namespace

TEST(StreamJsonTest, RecordedFixtureGivesTheResult) {
  auto reader = read_lines(fixture());
  Outcome o = reader.finish(exited(0), pricing());
  ASSERT_TRUE(o.ok()) << o.error().message;
  const Response& r = o.response();
  EXPECT_EQ(r.text(), "Hello from the fake.");
  EXPECT_EQ(r.model, "claude-opus-5-5");
  EXPECT_EQ(r.id, "88dde19f-68a0-4123-bae6-d8f778c8987c");
  EXPECT_EQ(r.stop_reason, StopReason::end_turn);
  EXPECT_EQ(r.num_turns, 1);
  EXPECT_EQ(r.usage.input_tokens, 12449);
  EXPECT_EQ(r.usage.output_tokens, 52);
  EXPECT_DOUBLE_EQ(r.usage.cost_usd, 0.050836);  // the CLI's total_cost_usd
  ASSERT_EQ(r.transcript.size(), 1u);
  EXPECT_EQ(r.transcript[0].role, Role::assistant);
  EXPECT_EQ(r.transcript[0].content[0].text, "Hello from the fake.");
}

TEST(StreamJsonTest, TranscriptMergesBlocksOfOneMessageAndKeepsToolResults) {
  std::string lines =
      std::string(kInit) + "\n" +
      R"({"type":"assistant","message":{"id":"msg_a","content":[{"type":"thinking","thinking":"","signature":"x"}]},"session_id":"s-1"})"
      "\n"
      R"({"type":"assistant","message":{"id":"msg_a","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]},"session_id":"s-1"})"
      "\n"
      R"({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a.txt"}],"is_error":false}]}})"
      "\n"
      R"({"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":2000,"error_status":529,"error":"overloaded"})"
      "\n"
      "not json at all\n\n"
      R"({"type":"rate_limit_event","whatever":1})"
      "\n"
      R"({"type":"assistant","message":{"id":"msg_b","content":[{"type":"text","text":"Done."}]}})"
      "\n"
      R"({"type":"result","subtype":"success","is_error":false,"result":"Done.","num_turns":2,"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":7,"cache_creation_input_tokens":3},"session_id":"s-1"})"
      "\n";
  auto reader = read_lines(lines);
  EXPECT_EQ(reader.api_retries(), 1);
  Outcome o = reader.finish(exited(0), pricing());
  ASSERT_TRUE(o.ok()) << o.error().message;
  const Response& r = o.response();
  ASSERT_EQ(r.transcript.size(), 3u);
  EXPECT_EQ(r.transcript[0].content.size(), 2u);
  EXPECT_EQ(r.transcript[0].content[1].type, ContentBlock::Type::tool_use);
  EXPECT_EQ(r.transcript[0].content[1].input["command"], "ls");
  EXPECT_EQ(r.transcript[1].role, Role::user);
  EXPECT_EQ(r.transcript[1].content[0].type, ContentBlock::Type::tool_result);
  EXPECT_EQ(r.transcript[1].content[0].text, "a.txt");
  EXPECT_EQ(r.transcript[2].content[0].text, "Done.");
  EXPECT_EQ(r.num_turns, 2);
  EXPECT_EQ(r.usage.cache_read_tokens, 7);
  EXPECT_EQ(r.usage.cache_write_tokens, 3);
  // No total_cost_usd: priced from the table (claude-sonnet-5-5: 2/10/2.5/0.2 per MTok).
  EXPECT_NEAR(r.usage.cost_usd, (10 * 2.0 + 5 * 10.0 + 3 * 2.5 + 7 * 0.2) / 1e6, 1e-12);
}

TEST(StreamJsonTest, IsErrorIsCheckedEvenOnSuccess) {
  auto reader = read_lines(
      std::string(kInit) + "\n" +
      R"({"type":"result","subtype":"success","is_error":true,"api_error_status":401,"result":"Invalid API key · Please run /login"})");
  Outcome o = reader.finish(exited(1), pricing());
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::auth);
  EXPECT_FALSE(o.error().retryable);
  EXPECT_EQ(
      o.error().message,
      "ANTHROPIC_API_KEY is missing or was refused (401): Invalid API key · Please run /login");

  auto limited = read_lines(
      R"({"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"rate limited"})");
  Outcome l = limited.finish(exited(1), pricing());
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().kind, ErrorKind::rate_limited);
  EXPECT_TRUE(l.error().retryable);
}

TEST(StreamJsonTest, ErrorSubtypesAreFailures) {
  auto reader = read_lines(
      R"J({"type":"result","subtype":"error_max_turns","is_error":true,"errors":["Reached maximum number of turns (3)"]})J");
  Outcome o = reader.finish(exited(0), pricing());
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::process);
  EXPECT_NE(o.error().message.find("turn limit"), std::string::npos);
  EXPECT_NE(o.error().message.find("Reached maximum number of turns (3)"), std::string::npos);

  auto during = read_lines(
      R"({"type":"result","subtype":"error_during_execution","is_error":true,"errors":["boom"]})");
  Outcome d = during.finish(exited(1), pricing());
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("error_during_execution"), std::string::npos);
  EXPECT_NE(d.error().message.find("boom"), std::string::npos);
}

TEST(StreamJsonTest, EofWithoutResultIsAFailureEvenWithExitZero) {
  std::string f = fixture();
  f = f.substr(0, f.rfind("{\"duration_api_ms\""));  // drop the result line
  auto reader = read_lines(f);
  ProcessResult p = exited(0);
  p.error_output = "something went wrong\n";
  Outcome o = reader.finish(p, pricing());
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::process);
  EXPECT_EQ(o.error().message,
            "claude exited with status 0 without a result line: something went wrong");

  auto rate = read_lines(
      R"({"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"API Error"}]},"error":"rate_limit"})");
  Outcome r = rate.finish(exited(1), pricing());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::rate_limited);
  EXPECT_TRUE(r.error().retryable);
}

TEST(StreamJsonTest, ProcessFailures) {
  StreamJsonReader reader;
  ProcessResult timed_out;
  timed_out.timed_out = true;
  timed_out.duration = std::chrono::milliseconds(500);
  Outcome t = reader.finish(timed_out, pricing());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().kind, ErrorKind::timeout);
  EXPECT_NE(t.error().message.find("process group"), std::string::npos);

  ProcessResult spawn;
  spawn.spawn_failed = true;
  spawn.output = "execvp: No such file or directory";
  Outcome s = reader.finish(spawn, pricing());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("llm.claude_code.command"), std::string::npos);

  ProcessResult cancelled;
  cancelled.cancelled = true;
  EXPECT_EQ(reader.finish(cancelled, pricing()).error().kind, ErrorKind::cancelled);
}
