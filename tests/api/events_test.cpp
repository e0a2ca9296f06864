// The typed events' codec: every type reads what the emitters write and writes it back byte for
// byte; unknown types and mistyped fields survive as they came.
#include <gtest/gtest.h>

#include <loopr/api/events.hpp>

using namespace loopr;
using namespace loopr::api;
using json = nlohmann::json;

namespace {

// One sample per type, in the emitters' exact shape (src/daemon/API.md "Events").
const std::pair<const char*, const char*> kSamples[] = {
    {"loop_created", R"({"type":"plan","task":"Add x","dry_run":false})"},
    {"loop_created", R"({"type":"spec","parent_id":"001","task":"flag"})"},
    {"loop_created", R"({"type":"code","parent_id":"001","fix":true,"task":"repair"})"},
    {"status_changed", R"({"from":"running","to":"failed","reason":"r","end_reason":"max_iterations"})"},
    {"status_changed", R"({"from":"pending","to":"running","reason":""})"},
    {"iteration_started", R"({"n":3})"},
    {"tool_called", R"({"tool":"write_file","input":{"path":"a","content":"b"},"turn":2})"},
    {"validation_finished", R"({"n":1,"passed":false,"summary":"exit 1","exit_code":1,"jobs":[]})"},
    {"validation_finished", R"({"n":1,"passed":true,"summary":"ok","exit_code":null,"jobs":["17"]})"},
    {"executor_retry", R"({"n":2,"reason":"node lost","jobs":["4","5"]})"},
    {"cost", R"({"n":1,"cost_usd":0.0125,"input_tokens":1000,"output_tokens":200,"loop_cost_usd":0.5})"},
    {"cost", R"({"n":2,"cost_usd":0.01,"input_tokens":100,"output_tokens":200,"loop_cost_usd":0.5,"cache_read_tokens":9000,"cache_write_tokens":400})"},
    {"cost_limit", R"({"plan_id":"001","limit":"cost","spent_usd":5.2,"max_cost_usd":5.0,"input_tokens":3000000,"max_input_tokens":0,"reason":"plan 001 has spent $5.20"})"},
    {"iteration_finished", R"({"n":1,"status":"failed","summary":"s","duration_ms":1234})"},
    {"llm_error", R"({"kind":"server","retryable":true,"status":529,"message":"m","consecutive":2})"},
    {"llm_retry", R"({"attempt":1,"wait_ms":2000,"kind":"rate_limited","status":429,"message":"m"})"},
    {"merged", R"({"into":"loopr/001","sha":"abc","kind":"fast_forward"})"},
    {"rebased", R"({"onto":"loopr/001","sha":"abc","kind":"rebased"})"},
    {"rebase_conflict", R"({"onto":"loopr/001","paths":["a.txt"]})"},
    {"merge_failed", R"({"into":"main","message":"conflicts"})"},
    {"retry", R"({"attempt":2,"archived_branch":"loopr/archive/code-001"})"},
    {"tree_complete", "null"},
    {"approval", R"({"decision":"iterate","text":"more tests"})"},
    {"daemon_started", R"({"pid":42})"},
    {"daemon_stopping", R"({"pid":42,"drain_ms":30000})"},
    {"integration_check_started", R"({"sha":"abc","command":"make test"})"},
    {"integration_check", R"({"sha":"abc","passed":false,"command":"make test","exit_code":2,"summary":"s","duration_ms":9,"log":".loopr/logs/x.log"})"},
    {"integration_fix", R"({"loop_id":"fix-001-001"})"},
    {"revalidated", R"({"passed":true,"summary":"ok"})"},
    {"setup_finished", R"({"duration_ms":1200,"log":"setup.log","passed":false,"summary":"the setup `make gen` failed with exit code 2"})"},
    {"baseline_check", R"({"duration_ms":900,"log":".loopr/logs/loops/001/baseline-abc.log","passed":false,"reused":false,"setup_ms":100,"sha":"abc","summary":"exit code 1"})"},
    {"note_shared", R"({"n":2,"text":"port 8080"})"},
    {"question_asked", R"({"n":1,"question":"which port?"})"},
    {"question_answered", R"({"question":"which port?","answer":"8080"})"},
    {"forecast", R"({"cost_usd":1.5,"low":1.0,"high":2.5,"loops":9,"basis":"b","specs":2,"phases":6,"model_calls":40,"duration_ms":60000,"plan_iteration":1,"made_at":"2026-11-26T10:00:00.000Z","max_cost_usd":25.0,"over_limit":false})"},
    {"gc", R"({"removed":["removed worktree .loopr/worktrees/x"],"bytes_freed":4096})"},
    {"review_finished", R"({"n":2,"verdict":"fail","summary":"review: t_greet.sh skipped","feedback":"t_greet.sh skipped\n- restore it","model":"m","attempts":1,"cost_usd":0.01,"input_tokens":900,"output_tokens":40})"},
    {"peer_refused", R"({"listener":"control socket","pid":4242,"why":"it runs in a loopr sandbox"})"},
};

}  // namespace

TEST(EventsTest, EveryTypeReadsAndWritesBackByteForByte) {
  for (const auto& [type, text] : kSamples) {
    json data = json::parse(text);
    EventBody body = decode_body(type, data);
    EXPECT_FALSE(std::holds_alternative<OtherEvent>(body)) << type << " is known";
    EXPECT_EQ(type_name(body), type);
    EXPECT_EQ(encode_body(body).dump(), data.dump()) << type;
  }
}

TEST(EventsTest, TypedFieldsReadAsTheirTypes) {
  auto changed = std::get<StatusChanged>(decode_body(
      "status_changed", json::parse(R"({"from":"running","to":"stopped","reason":"x","end_reason":"stop_pattern"})")));
  EXPECT_EQ(changed.from, LoopStatus::running);
  EXPECT_EQ(changed.to, LoopStatus::stopped);
  EXPECT_EQ(changed.end_reason, EndReason::stop_pattern);
  auto v = std::get<ValidationFinished>(decode_body("validation_finished", json::parse(R"({"n":2,"passed":false,"exit_code":null})")));
  EXPECT_FALSE(v.exit_code);
  EXPECT_EQ(v.n, 2);
  auto created = std::get<LoopCreated>(decode_body("loop_created", json::parse(R"({"type":"phase","parent_id":"001-001","task":"t"})")));
  EXPECT_EQ(created.type, LoopType::phase);
}

TEST(EventsTest, UnknownTypesAndBadFieldsStayAsTheyCame) {
  json data = json::parse(R"({"whatever":[1,2]})");
  EventBody body = decode_body("a_newer_event", data);
  ASSERT_TRUE(std::holds_alternative<OtherEvent>(body));
  EXPECT_EQ(type_name(body), "a_newer_event");
  EXPECT_EQ(encode_body(body), data);
  json bad = json::parse(R"({"n":"three"})");
  EventBody kept = decode_body("iteration_started", bad);
  ASSERT_TRUE(std::holds_alternative<OtherEvent>(kept));
  EXPECT_EQ(encode_body(kept), bad);
  // A status or end reason this loopr does not know reads, and the rest of the event with it.
  auto c = std::get<StatusChanged>(decode_body("status_changed", json::parse(R"({"from":"running","to":"failed","reason":"r","end_reason":"from_the_future"})")));
  EXPECT_EQ(c.end_reason, EndReason::unknown);
}

TEST(EventsTest, EncodeMakesTheStoresEvent) {
  Event e = encode("001", ApprovalEvent{"approve", ""});
  EXPECT_EQ(e.loop_id, "001");
  EXPECT_EQ(e.type, "approval");
  EXPECT_EQ(e.data, json::parse(R"({"decision":"approve","text":""})"));
  e.seq = 7;
  TypedEvent t = decode(e);
  EXPECT_EQ(t.seq, 7u);
  EXPECT_EQ(std::get<ApprovalEvent>(t.body).decision, "approve");
}
