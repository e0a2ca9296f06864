// Rule selection: first match wins, used-up rules fall through, replies advance per rule or
// per loop, captures fill templates; and the request fields are read the same from both APIs.
#include <gtest/gtest.h>

#include <mock_llm/matcher.hpp>
#include <mock_llm/request_view.hpp>
#include <mock_llm/template.hpp>

#include "mock_llm/load_script.hpp"

namespace loopr::mock_llm {
namespace {

RequestView view(std::string loop_id, std::string user, int turn = 1,
                 std::string loop_type = "plan") {
  RequestView v;
  v.loop_id = std::move(loop_id);
  v.loop_type = std::move(loop_type);
  v.user = std::move(user);
  v.first_user = v.user;
  v.turn = turn;
  return v;
}

/// The name of the rule that answers, consuming it; "" if none.
std::string fire(Matcher& m, const Script& s, const RequestView& v, std::size_t* reply = nullptr) {
  auto o = m.find(v);
  if (!o) return "";
  m.consume(*o, v);
  if (reply) *reply = o->reply_index;
  return s.rules[o->rule_index].name;
}

TEST(MatcherTest, FirstMatchingRuleWinsAndUsedUpRulesFallThrough) {
  Script s = load(R"Y(
rules:
  - name: once
    match: {user: "hello"}
    times: 1
    reply: {text: a}
  - name: twice-per-loop
    match: {user: "hello"}
    times: 2
    per_loop: true
    reply: {text: b}
  - name: fallback
    reply: {text: c}
)Y");
  Matcher m(s);
  EXPECT_EQ(fire(m, s, view("1", "say hello")), "once");
  EXPECT_EQ(fire(m, s, view("1", "say hello")), "twice-per-loop");
  EXPECT_EQ(fire(m, s, view("1", "say hello")), "twice-per-loop");
  EXPECT_EQ(fire(m, s, view("1", "say hello")), "fallback");
  // Another loop has its own per-loop budget, but `once` stays used up for everyone.
  EXPECT_EQ(fire(m, s, view("2", "say hello")), "twice-per-loop");
  EXPECT_EQ(fire(m, s, view("1", "bye")), "fallback");
}

TEST(MatcherTest, RepliesAdvancePerRuleOrPerLoopAndTheLastRepeats) {
  Script s = load(R"Y(
rules:
  - name: per-loop
    match: {loop_type: code}
    per_loop: true
    replies: [{text: first}, {text: second}]
  - name: shared
    replies: [{text: one}, {text: two}, {text: three}]
)Y");
  Matcher m(s);
  std::size_t reply = 99;
  EXPECT_EQ(fire(m, s, view("a", "", 1, "code"), &reply), "per-loop");
  EXPECT_EQ(reply, 0u);
  EXPECT_EQ(fire(m, s, view("b", "", 1, "code"), &reply), "per-loop");
  EXPECT_EQ(reply, 0u);  // loop b starts at its own first reply
  EXPECT_EQ(fire(m, s, view("a", "", 1, "code"), &reply), "per-loop");
  EXPECT_EQ(reply, 1u);
  EXPECT_EQ(fire(m, s, view("a", "", 1, "code"), &reply), "per-loop");
  EXPECT_EQ(reply, 1u);  // the last reply repeats

  for (std::size_t want : {0u, 1u, 2u, 2u}) {
    EXPECT_EQ(fire(m, s, view(want % 2 ? "x" : "y", "", 1, "plan"), &reply), "shared");
    EXPECT_EQ(reply, want);  // counted per rule across loops
  }
}

TEST(MatcherTest, FindDoesNotConsume) {
  Script s = load("rules:\n  - name: once\n    times: 1\n    reply: {text: a}\n");
  Matcher m(s);
  ASSERT_TRUE(m.find(view("1", "")));
  ASSERT_TRUE(m.find(view("1", "")));  // a random fault found it without using it
  EXPECT_EQ(fire(m, s, view("1", "")), "once");
  EXPECT_FALSE(m.find(view("1", "")));
}

TEST(MatcherTest, EveryGivenFieldMustMatch) {
  Script s = load(R"Y(
rules:
  - name: strict
    match: {api: openai, loop_type: "^code$", loop_id: "^7$", turn: 2, tool_result: "PASS"}
    reply: {text: a}
)Y");
  Matcher m(s);
  RequestView v = view("7", "", 2, "code");
  v.api = Api::openai;
  v.tool_result = "tests PASS";
  EXPECT_TRUE(m.find(v));
  RequestView wrong_api = v;
  wrong_api.api = Api::anthropic;
  EXPECT_FALSE(m.find(wrong_api));
  RequestView wrong_turn = v;
  wrong_turn.turn = 1;
  EXPECT_FALSE(m.find(wrong_turn));
  RequestView wrong_id = v;
  wrong_id.loop_id = "77";
  EXPECT_FALSE(m.find(wrong_id));
  RequestView wrong_result = v;
  wrong_result.tool_result = "FAIL";
  EXPECT_FALSE(m.find(wrong_result));
}

TEST(MatcherTest, CapturesAndRequestFactsFillTemplates) {
  Script s = load(R"Y(
rules:
  - name: plan
    match: {user: "`(\\.loopr/plans/(?P<slug>[^`]+))`", first_user: "(Add .*)"}
    per_loop: true
    reply: {text: "x"}
)Y");
  Matcher m(s);
  RequestView v = view("001", "Write `.loopr/plans/001-add-oauth.plan.md` now");
  v.first_user = "Add OAuth";
  v.model = "claude-opus-5-5";
  auto o = m.find(v);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->vars.at("user.1"), ".loopr/plans/001-add-oauth.plan.md");
  EXPECT_EQ(o->vars.at("user.slug"), "001-add-oauth.plan.md");
  EXPECT_EQ(o->vars.at("first_user.1"), "Add OAuth");
  EXPECT_EQ(
      render_template(
          "{{ user.1 }} by {{loop_type}} {{loop_id}} #{{n}} t{{turn}} {{model}} {{api}}", o->vars),
      ".loopr/plans/001-add-oauth.plan.md by plan 001 #1 t1 claude-opus-5-5 anthropic");
  m.consume(*o, v);
  EXPECT_EQ(m.find(v)->vars.at("n"), "2");
}

TEST(TemplateTest, RendersStringsInsideJsonAndLeavesUnknownNames) {
  TemplateVars vars{{"a", "1"}, {"b", "two"}};
  EXPECT_EQ(render_template("{{a}}-{{b}}-{{c}}-{{", vars), "1-two-{{c}}-{{");
  Json in = {{"path", "{{b}}.md"}, {"list", {"{{a}}", 3}}, {"{{a}}", true}};
  Json out = render_json_templates(in, vars);
  EXPECT_EQ(out["path"], "two.md");
  EXPECT_EQ(out["list"][0], "1");
  EXPECT_EQ(out["list"][1], 3);
  EXPECT_EQ(out["{{a}}"], true);  // keys are not templates
  EXPECT_EQ(template_variables("x {{ a }} {{b.1}}"), (std::vector<std::string>{"a", "b.1"}));
}

TEST(RequestViewTest, ReadsAnAnthropicConversation) {
  Json body = Json::parse(R"({
    "model": "claude-opus-5-5", "max_tokens": 10, "stream": true,
    "system": [{"type": "text", "text": "You are loopr."}],
    "messages": [
      {"role": "user", "content": [{"type": "text", "text": "Write `.loopr/plans/001.plan.md`"}]},
      {"role": "system", "content": "reminder"},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "w", "input": {}}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                    "content": [{"type": "text", "text": "written"}]},
                                   {"type": "text", "text": "go on"}]}
    ]})");
  Headers h;
  h.items = {{"x-loopr-loop-id", "001"}, {"x-loopr-loop-type", "plan"}};
  RequestView v = view_anthropic(body, h);
  EXPECT_EQ(v.loop_id, "001");
  EXPECT_EQ(v.loop_type, "plan");
  EXPECT_EQ(v.model, "claude-opus-5-5");
  EXPECT_TRUE(v.stream);
  EXPECT_EQ(v.system, "You are loopr.\nreminder");
  EXPECT_EQ(v.first_user, "Write `.loopr/plans/001.plan.md`");
  EXPECT_EQ(v.user, "go on");
  EXPECT_EQ(v.tool_result, "written");
  EXPECT_EQ(v.turn, 2);
}

TEST(RequestViewTest, ReadsAnOpenAiConversation) {
  Json body = Json::parse(R"({
    "model": "local", "stream": true, "stream_options": {"include_usage": true},
    "messages": [
      {"role": "system", "content": "sys"},
      {"role": "user", "content": [{"type": "text", "text": "task"}]},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "run", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "exit 0"}
    ]})");
  RequestView v = view_openai(body, Headers{});
  EXPECT_EQ(v.api, Api::openai);
  EXPECT_EQ(v.system, "sys");
  EXPECT_EQ(v.first_user, "task");
  EXPECT_EQ(v.user, "task");
  EXPECT_EQ(v.tool_result, "exit 0");
  EXPECT_EQ(v.turn, 2);
  EXPECT_TRUE(v.include_usage);
}

}  // namespace
}  // namespace loopr::mock_llm
