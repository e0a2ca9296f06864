// The script loader: the documented format parses into the right model, and every kind of
// mistake is refused at load with the file, line and key named.
#include <gtest/gtest.h>

#include <mock_llm/script.hpp>

namespace loopr::mock_llm {
namespace {

// The example from the brief / README, kept whole so the documented format stays loadable.
const char* kExample = R"Y(
defaults:
  model: claude-sonnet-5-5
  usage: {input_tokens: 100, output_tokens: 50, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
  thinking: true
faults:
  rate: 0.2
  seed: 42
  kinds: [429, 500, 529, cut_stream, malformed_json, error_event]
  retry_after: 1
rules:
  - name: plan-writes-artifact
    match:
      api: anthropic
      loop_type: plan
      loop_id: "^001$"
      user: "`(\\.loopr/plans/[^`]+)`"
      turn: 1
    times: 1
    per_loop: true
    replies:
      - text: "Writing the plan."
        thinking: "optional thinking text"
        tool_use:
          - name: write_file
            input: {path: "{{user.1}}", content: "# Plan\n...", count: 3, quoted: "3", ok: true, none: null}
        usage: {input_tokens: 1200, output_tokens: 300}
      - text: "again"
        fault: {status: 429, retry_after: 2, retry_after_ms: 1500, should_retry: true, delay: 300ms}
  - name: refuse
    reply: {text: "no", stop_reason: refusal, stop_details: {type: refusal, category: cyber}}
)Y";

Script must_parse(const std::string& text) {
  auto s = parse_script(text, "test.yml");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? std::move(s).value() : Script{};
}

std::string parse_error(const std::string& text) {
  auto s = parse_script(text, "test.yml");
  EXPECT_FALSE(s.ok()) << "expected a load error for:\n" << text;
  return s.ok() ? "" : s.error().message;
}

TEST(ScriptTest, ParsesTheDocumentedExample) {
  Script s = must_parse(kExample);
  EXPECT_EQ(s.defaults.model, "claude-sonnet-5-5");
  EXPECT_EQ(s.defaults.usage.input_tokens, 100);
  EXPECT_TRUE(s.defaults.thinking);
  EXPECT_DOUBLE_EQ(s.faults.rate, 0.2);
  EXPECT_EQ(s.faults.seed, 42u);
  EXPECT_EQ(s.faults.kinds, (std::vector<std::string>{"429", "500", "529", "cut_stream",
                                                      "malformed_json", "error_event"}));
  ASSERT_EQ(s.rules.size(), 2u);

  const Rule& r = s.rules[0];
  EXPECT_EQ(r.name, "plan-writes-artifact");
  EXPECT_EQ(r.match.api, Api::anthropic);
  EXPECT_EQ(r.match.turn, 1);
  EXPECT_EQ(r.match.patterns.size(), 3u);
  EXPECT_EQ(r.times, 1);
  EXPECT_TRUE(r.per_loop);
  ASSERT_EQ(r.replies.size(), 2u);

  // thinking (given text), text, tool_use — in that order.
  const ReplySpec& first = r.replies[0];
  ASSERT_EQ(first.blocks.size(), 3u);
  EXPECT_EQ(first.blocks[0].kind, BlockKind::thinking);
  EXPECT_EQ(first.blocks[0].text, "optional thinking text");
  EXPECT_EQ(first.blocks[1].kind, BlockKind::text);
  EXPECT_EQ(first.blocks[2].kind, BlockKind::tool_use);
  EXPECT_EQ(first.blocks[2].name, "write_file");
  const Json& input = first.blocks[2].input;
  EXPECT_EQ(input["path"], "{{user.1}}");
  EXPECT_EQ(input["content"], "# Plan\n...");
  EXPECT_EQ(input["count"], 3);     // plain scalar: a number
  EXPECT_EQ(input["quoted"], "3");  // quoted: stays a string
  EXPECT_EQ(input["ok"], true);
  EXPECT_TRUE(input["none"].is_null());
  EXPECT_EQ(first.usage.input_tokens, 1200);
  EXPECT_FALSE(first.usage.cache_read_input_tokens.has_value());

  // thinking: true in defaults gives the second reply an empty thinking block.
  const ReplySpec& second = r.replies[1];
  ASSERT_EQ(second.blocks.size(), 2u);
  EXPECT_EQ(second.blocks[0].kind, BlockKind::thinking);
  EXPECT_EQ(second.blocks[0].text, "");
  ASSERT_TRUE(second.fault.has_value());
  EXPECT_EQ(second.fault->status, 429);
  EXPECT_EQ(second.fault->retry_after, "2");
  EXPECT_EQ(second.fault->retry_after_ms, 1500);
  EXPECT_EQ(second.fault->should_retry, true);
  EXPECT_EQ(second.fault->delay, Millis(300));
  EXPECT_EQ(second.fault->kind(), "429");

  const Rule& refuse = s.rules[1];
  ASSERT_EQ(refuse.replies.size(), 1u);
  EXPECT_EQ(refuse.replies[0].stop_reason, "refusal");
  EXPECT_EQ(refuse.replies[0].stop_details["category"], "cyber");
}

TEST(ScriptTest, ExplicitBlocksKeepTheirOrderAndSkipDefaultThinking) {
  Script s = must_parse(R"Y(
defaults: {thinking: true}
rules:
  - reply:
      blocks:
        - text: "before"
        - thinking: "between tools"
        - redacted_thinking: "opaque"
        - tool_use: {name: run_command, input: {command: make}}
        - raw: {type: server_tool_use, id: srvtoolu_1, name: web_search, input: {}}
)Y");
  const auto& blocks = s.rules[0].replies[0].blocks;
  ASSERT_EQ(blocks.size(), 5u);
  EXPECT_EQ(blocks[0].kind, BlockKind::text);
  EXPECT_EQ(blocks[1].kind, BlockKind::thinking);
  EXPECT_EQ(blocks[2].kind, BlockKind::redacted_thinking);
  EXPECT_EQ(blocks[3].kind, BlockKind::tool_use);
  EXPECT_EQ(blocks[4].kind, BlockKind::raw);
  EXPECT_EQ(blocks[4].input["type"], "server_tool_use");
  EXPECT_EQ(s.rules[0].name, "rule-1");  // unnamed rules get a name for the log
}

TEST(ScriptTest, ThinkingFalseTurnsTheDefaultOff) {
  Script s =
      must_parse("defaults: {thinking: true}\nrules:\n  - reply: {text: hi, thinking: false}\n");
  ASSERT_EQ(s.rules[0].replies[0].blocks.size(), 1u);
  EXPECT_EQ(s.rules[0].replies[0].blocks[0].kind, BlockKind::text);
}

TEST(ScriptTest, DefaultFaultKindsAndDurations) {
  Script s = must_parse(R"Y(
defaults: {latency: 200ms, event_delay: 1s}
faults: {rate: 0.5}
rules: [{reply: {text: hi}}]
)Y");
  EXPECT_EQ(s.defaults.latency, Millis(200));
  EXPECT_EQ(s.defaults.event_delay, Millis(1000));
  EXPECT_EQ(s.faults.kinds.size(), 6u);
  EXPECT_EQ(s.faults.retry_after, "1");
}

TEST(ScriptTest, MistakesAreRefusedWithTheirPlace) {
  // An unknown key (a typo) names the key, the place and the known keys.
  std::string e = parse_error("rules:\n  - reply: {text: hi}\n    per_loops: true\n");
  EXPECT_NE(e.find("test.yml:3:5"), std::string::npos) << e;
  EXPECT_NE(e.find("per_loops"), std::string::npos) << e;
  EXPECT_NE(e.find("per_loop"), std::string::npos) << e;

  e = parse_error("rules:\n  - match: {user: \"(unclosed\"}\n    reply: {text: hi}\n");
  EXPECT_NE(e.find("not a valid RE2 pattern"), std::string::npos) << e;

  e = parse_error("rules:\n  - match: {user: \"(a)\"}\n    reply: {text: \"{{user.2}}\"}\n");
  EXPECT_NE(e.find("{{user.2}}"), std::string::npos) << e;

  e = parse_error("rules:\n  - reply: {text: \"{{system.1}}\"}\n");
  EXPECT_NE(e.find("cannot fill"), std::string::npos) << e;

  e = parse_error("rules:\n  - reply: {text: hi, stop_reason: finished}\n");
  EXPECT_NE(e.find("unknown stop_reason `finished`"), std::string::npos) << e;

  e = parse_error("rules:\n  - reply: {fault: {delay: 300}}\n");
  EXPECT_NE(e.find("with a unit"), std::string::npos) << e;

  e = parse_error("faults: {rate: 2}\nrules: [{reply: {text: hi}}]\n");
  EXPECT_NE(e.find("between 0 and 1"), std::string::npos) << e;

  e = parse_error("faults: {rate: 0.1, kinds: [teapot]}\nrules: [{reply: {text: hi}}]\n");
  EXPECT_NE(e.find("fault kind"), std::string::npos) << e;

  e = parse_error(
      "rules:\n  - name: a\n    reply: {text: hi}\n  - name: a\n    reply: {text: ho}\n");
  EXPECT_NE(e.find("two rules are named 'a'"), std::string::npos) << e;

  e = parse_error("rules:\n  - match: {user: x}\n");
  EXPECT_NE(e.find("needs `reply` or `replies`"), std::string::npos) << e;

  e = parse_error("rules:\n  - reply: {tool_use: {input: {a: 1}}}\n");
  EXPECT_NE(e.find("needs a `name`"), std::string::npos) << e;

  e = parse_error("rules: [\n");
  EXPECT_NE(e.find("test.yml:"), std::string::npos) << e;

  e = parse_error("");
  EXPECT_NE(e.find("empty"), std::string::npos) << e;
}

TEST(ScriptTest, NamedCapturesAreUsableInTemplates) {
  Script s = must_parse(
      "rules:\n  - match: {first_user: \"(?P<artifact>\\\\.loopr/[^`]+)\"}\n"
      "    reply: {text: \"{{first_user.artifact}} {{loop_id}} {{n}} {{turn}}\"}\n");
  EXPECT_EQ(s.rules[0].replies[0].blocks[0].text,
            "{{first_user.artifact}} {{loop_id}} {{n}} {{turn}}");
}

TEST(ScriptTest, LoadFileReportsAMissingFile) {
  auto s = load_script_file("/nonexistent/script.yml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("/nonexistent/script.yml"), std::string::npos);
}

}  // namespace
}  // namespace loopr::mock_llm
