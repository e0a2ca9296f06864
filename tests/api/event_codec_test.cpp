// One test per event type: the struct an emitter builds (src/engine, src/manager, src/daemon call
// `api::encode(id, api::X{…})`) encodes to exactly the wire JSON those emitters wrote by hand
// before (src/daemon/API.md "Events"), and that JSON decodes back to the same struct.
#include <gtest/gtest.h>

#include <loopr/api/events.hpp>

using namespace loopr;
using namespace loopr::api;
using json = nlohmann::json;

namespace {

// `body` is a `type` whose data is `wire` (the store keeps `data.dump()`), and reads back as it.
void expect_wire(const EventBody& body, const char* type, const char* wire) {
  const json expected = json::parse(wire);
  Event e = encode("001", body);
  EXPECT_EQ(e.type, type);
  EXPECT_EQ(e.loop_id, "001");
  EXPECT_EQ(e.data.dump(), expected.dump()) << type;
  EventBody back = decode_body(type, expected);
  ASSERT_EQ(back.index(), body.index()) << type << " decodes to its own struct";
  EXPECT_EQ(encode_body(back).dump(), expected.dump()) << type;
}

}  // namespace

TEST(EventCodecTest, LoopCreated) {
  expect_wire(LoopCreated{LoopType::plan, "", "Add x", false, false}, "loop_created",
              R"({"type":"plan","task":"Add x","dry_run":false})");
  expect_wire(LoopCreated{LoopType::spec, "001", "flag", false, false}, "loop_created",
              R"({"type":"spec","parent_id":"001","task":"flag"})");
  expect_wire(LoopCreated{LoopType::code, "001", "repair", true, false}, "loop_created",
              R"({"type":"code","parent_id":"001","fix":true,"task":"repair"})");
  auto plan = std::get<LoopCreated>(decode_body("loop_created", json::parse(R"({"type":"plan","task":"t","dry_run":true})")));
  EXPECT_TRUE(plan.dry_run);
}

TEST(EventCodecTest, StatusChanged) {
  expect_wire(StatusChanged{LoopStatus::running, LoopStatus::failed, "r", EndReason::max_iterations},
              "status_changed",
              R"({"from":"running","to":"failed","reason":"r","end_reason":"max_iterations"})");
  expect_wire(StatusChanged{LoopStatus::pending, LoopStatus::running, "", EndReason::none},
              "status_changed", R"({"from":"pending","to":"running","reason":""})");
}

TEST(EventCodecTest, IterationStarted) {
  expect_wire(IterationStarted{3}, "iteration_started", R"({"n":3})");
}

TEST(EventCodecTest, ToolCalled) {
  expect_wire(ToolCalled{"write_file", json{{"path", "a"}, {"content", "b"}}, 2}, "tool_called",
              R"({"tool":"write_file","input":{"path":"a","content":"b"},"turn":2})");
}

TEST(EventCodecTest, ValidationFinished) {
  expect_wire(ValidationFinished{1, false, "exit 1", 1, {}}, "validation_finished",
              R"({"n":1,"passed":false,"summary":"exit 1","exit_code":1,"jobs":[]})");
  expect_wire(ValidationFinished{1, true, "ok", std::nullopt, {"17"}}, "validation_finished",
              R"({"n":1,"passed":true,"summary":"ok","exit_code":null,"jobs":["17"]})");
}

TEST(EventCodecTest, ExecutorRetry) {
  expect_wire(ExecutorRetry{2, "node lost", {"4", "5"}}, "executor_retry",
              R"({"n":2,"reason":"node lost","jobs":["4","5"]})");
}

TEST(EventCodecTest, Cost) {
  expect_wire(CostEvent{1, 0.0125, 1000, 200, 0.5}, "cost",
              R"({"n":1,"cost_usd":0.0125,"input_tokens":1000,"output_tokens":200,"loop_cost_usd":0.5})");
  // A zero cost stays a floating-point number on the wire (`0.0`), as it always was.
  expect_wire(CostEvent{1, 0, 0, 0, 0}, "cost",
              R"({"n":1,"cost_usd":0.0,"input_tokens":0,"output_tokens":0,"loop_cost_usd":0.0})");
}

TEST(EventCodecTest, IterationFinished) {
  expect_wire(IterationFinished{1, IterationOutcome::failed, "s", 1234}, "iteration_finished",
              R"({"n":1,"status":"failed","summary":"s","duration_ms":1234})");
}

TEST(EventCodecTest, LlmError) {
  expect_wire(LlmErrorEvent{"server", true, 529, "m", 2}, "llm_error",
              R"({"kind":"server","retryable":true,"status":529,"message":"m","consecutive":2})");
}

TEST(EventCodecTest, LlmRetry) {
  expect_wire(LlmRetry{1, 2000, "rate_limited", 429, "m"}, "llm_retry",
              R"({"attempt":1,"wait_ms":2000,"kind":"rate_limited","status":429,"message":"m"})");
}

TEST(EventCodecTest, Merged) {
  expect_wire(Merged{"loopr/001", "abc", "fast_forward"}, "merged",
              R"({"into":"loopr/001","sha":"abc","kind":"fast_forward"})");
}

TEST(EventCodecTest, Rebased) {
  expect_wire(Rebased{"loopr/001", "abc", "rebased"}, "rebased",
              R"({"onto":"loopr/001","sha":"abc","kind":"rebased"})");
}

TEST(EventCodecTest, RebaseConflict) {
  expect_wire(RebaseConflict{"loopr/001", {"a.txt"}}, "rebase_conflict",
              R"({"onto":"loopr/001","paths":["a.txt"]})");
}

TEST(EventCodecTest, MergeFailed) {
  expect_wire(MergeFailed{"main", "conflicts"}, "merge_failed",
              R"({"into":"main","message":"conflicts"})");
}

TEST(EventCodecTest, Retry) {
  expect_wire(RetryEvent{2, "loopr/archive/code-001"}, "retry",
              R"({"attempt":2,"archived_branch":"loopr/archive/code-001"})");
}

TEST(EventCodecTest, TreeComplete) {
  // The emitters have always stored no data here: JSON null.
  expect_wire(TreeComplete{}, "tree_complete", "null");
}

TEST(EventCodecTest, Approval) {
  expect_wire(ApprovalEvent{"iterate", "more tests"}, "approval",
              R"({"decision":"iterate","text":"more tests"})");
}

TEST(EventCodecTest, DaemonStarted) {
  expect_wire(DaemonStarted{42}, "daemon_started", R"({"pid":42})");
}

TEST(EventCodecTest, DaemonStopping) {
  expect_wire(DaemonStopping{42, 30000}, "daemon_stopping", R"({"pid":42,"drain_ms":30000})");
  // An older daemon's event without drain_ms still reads.
  EXPECT_EQ(std::get<DaemonStopping>(decode_body("daemon_stopping", json::parse(R"({"pid":7})"))).pid, 7);
}

TEST(EventCodecTest, IntegrationCheckStarted) {
  expect_wire(IntegrationCheckStarted{"abc", "make test"}, "integration_check_started",
              R"({"sha":"abc","command":"make test"})");
}

TEST(EventCodecTest, IntegrationCheck) {
  expect_wire(IntegrationCheck{"abc", false, "make test", 2, "s", 9, ".loopr/logs/x.log"},
              "integration_check",
              R"({"sha":"abc","passed":false,"command":"make test","exit_code":2,"summary":"s","duration_ms":9,"log":".loopr/logs/x.log"})");
  expect_wire(IntegrationCheck{"abc", true, "make test", std::nullopt, "ok", 9, ""},
              "integration_check",
              R"({"sha":"abc","passed":true,"command":"make test","exit_code":null,"summary":"ok","duration_ms":9,"log":""})");
}

TEST(EventCodecTest, IntegrationFix) {
  expect_wire(IntegrationFix{"fix-001-001"}, "integration_fix", R"({"loop_id":"fix-001-001"})");
}

TEST(EventCodecTest, Revalidated) {
  expect_wire(Revalidated{true, "ok"}, "revalidated", R"({"passed":true,"summary":"ok"})");
}

TEST(EventCodecTest, SetupFinished) {
  expect_wire(SetupFinished{false, "the setup `make gen` failed with exit code 2", 1200, "setup.log"},
              "setup_finished",
              R"({"duration_ms":1200,"log":"setup.log","passed":false,"summary":"the setup `make gen` failed with exit code 2"})");
}

TEST(EventCodecTest, BaselineCheck) {
  expect_wire(BaselineCheck{"abc", false, "exit code 1", 900, 100,
                            ".loopr/logs/loops/001/baseline-abc.log", false},
              "baseline_check",
              R"({"duration_ms":900,"log":".loopr/logs/loops/001/baseline-abc.log","passed":false,"reused":false,"setup_ms":100,"sha":"abc","summary":"exit code 1"})");
}

TEST(EventCodecTest, NoteShared) {
  expect_wire(NoteShared{2, "port 8080"}, "note_shared", R"({"n":2,"text":"port 8080"})");
}

TEST(EventCodecTest, QuestionAsked) {
  expect_wire(QuestionAsked{1, "which port?"}, "question_asked",
              R"({"n":1,"question":"which port?"})");
}

TEST(EventCodecTest, QuestionAnswered) {
  expect_wire(QuestionAnswered{"which port?", "8080"}, "question_answered",
              R"({"question":"which port?","answer":"8080"})");
}

TEST(EventCodecTest, Forecast) {
  ForecastMade f{1.5, 1.0, 2.5, 9, "b", 25.0, false};
  f.rest = {{"specs", 2},           {"phases", 6},
            {"model_calls", 40},    {"duration_ms", 60000},
            {"plan_iteration", 1},  {"made_at", "2026-11-26T10:00:00.000Z"}};
  expect_wire(f, "forecast",
              R"({"cost_usd":1.5,"low":1.0,"high":2.5,"loops":9,"basis":"b","specs":2,"phases":6,"model_calls":40,"duration_ms":60000,"plan_iteration":1,"made_at":"2026-11-26T10:00:00.000Z","max_cost_usd":25.0,"over_limit":false})");
  // The named fields are not repeated in `rest` when read.
  auto back = std::get<ForecastMade>(decode_body("forecast", encode_body(f)));
  EXPECT_FALSE(back.rest.contains("cost_usd"));
  EXPECT_EQ(back.rest, f.rest);
}

TEST(EventCodecTest, Gc) {
  expect_wire(GcDone{{"removed worktree .loopr/worktrees/x"}, 4096}, "gc",
              R"({"removed":["removed worktree .loopr/worktrees/x"],"bytes_freed":4096})");
}

TEST(EventCodecTest, ReviewFinished) {
  expect_wire(ReviewFinished{2, "fail", "review: t_greet.sh skipped", "t_greet.sh skipped\n- restore it",
                             "m", 1, 0.01, 900, 40},
              "review_finished",
              R"({"n":2,"verdict":"fail","summary":"review: t_greet.sh skipped","feedback":"t_greet.sh skipped\n- restore it","model":"m","attempts":1,"cost_usd":0.01,"input_tokens":900,"output_tokens":40})");
}

TEST(EventCodecTest, PeerRefused) {
  expect_wire(PeerRefused{"control socket", 4242, "it runs in a loopr sandbox"}, "peer_refused",
              R"({"listener":"control socket","pid":4242,"why":"it runs in a loopr sandbox"})");
}

TEST(EventCodecTest, CostWithTheCache) {
  expect_wire(CostEvent{2, 0.5, 100, 20, 1.5, 9000, 300}, "cost",
              R"({"n":2,"cost_usd":0.5,"input_tokens":100,"output_tokens":20,"loop_cost_usd":1.5,"cache_read_tokens":9000,"cache_write_tokens":300})");
}

TEST(EventCodecTest, CostLimit) {
  expect_wire(CostLimitEvent{"001", CapKind::cost, 2.5, 2.0, 120000, 0, "the tree spent $2.50"},
              "cost_limit",
              R"({"plan_id":"001","limit":"cost","spent_usd":2.5,"max_cost_usd":2.0,"input_tokens":120000,"max_input_tokens":0,"reason":"the tree spent $2.50"})");
  // Each cap is its word on the wire; a cap this loopr does not know (a newer daemon's) reads as
  // the cost, its reason still naming it.
  for (const auto& [kind, word] : {std::pair{CapKind::runtime, "runtime"},
                                   std::pair{CapKind::input_tokens, "input_tokens"}}) {
    const Event e = encode("001", CostLimitEvent{"001", kind, 0, 0, 0, 0, "r"});
    EXPECT_EQ(e.data.at("limit"), word);
    const TypedEvent typed = decode(e);
    auto* back = std::get_if<CostLimitEvent>(&typed.body);
    ASSERT_NE(back, nullptr);
    EXPECT_EQ(back->limit, kind) << word;
  }
  const EventBody later = decode_body("cost_limit", json{{"limit", "gpu_hours"}, {"reason", "r"}});
  ASSERT_NE(std::get_if<CostLimitEvent>(&later), nullptr);
  EXPECT_EQ(std::get<CostLimitEvent>(later).limit, CapKind::cost);
}

TEST(EventCodecTest, PrPublished) {
  expect_wire(PrPublished{7, "https://github.com/o/r/pull/7", "abc123", "origin", true},
              "pr_published",
              R"({"number":7,"url":"https://github.com/o/r/pull/7","sha":"abc123","remote":"origin","created":true})");
}

TEST(EventCodecTest, CiChecked) {
  expect_wire(CiChecked{"abc123", "failed", {"build", "lint"}, "2 of 3 checks failed"},
              "ci_checked",
              R"({"sha":"abc123","state":"failed","failing":["build","lint"],"summary":"2 of 3 checks failed"})");
}

TEST(EventCodecTest, CiFix) {
  expect_wire(CiFix{"fix-001-ci-1", "ci", 1}, "ci_fix",
              R"({"loop_id":"fix-001-ci-1","source":"ci","count":1})");
}

TEST(EventCodecTest, ForgeFailed) {
  expect_wire(ForgeFailed{"push", 0, "remote rejected", "loopr merge 001"}, "forge_failed",
              R"({"step":"push","status":0,"message":"remote rejected","retry":"loopr merge 001"})");
}

TEST(EventCodecTest, PrState) {
  expect_wire(PrState{7, "merged"}, "pr_state", R"({"number":7,"state":"merged"})");
}

// Every alternative of EventBody but OtherEvent has its test above: a new event type fails
// here until it gets one.
TEST(EventCodecTest, EveryTypeHasATestHere) {
  EXPECT_EQ(std::variant_size_v<EventBody>, 39u)
      << "a new event type: add its EventCodecTest (its struct, its exact wire JSON)";
}
