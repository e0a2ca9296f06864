// The engine's stop ladder, limits, retries and model turns, each through a whole run of the
// real engine in process: the model is mock-llm's script engine behind the real client, commands
// go to a fake executor, the repository and store live in memory (tests/support/fakes). The
// cases that need real processes are in stop_conditions_integration_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include <loopr/api/events.hpp>

#include "engine/code_loop_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;
using namespace std::chrono_literals;

TEST(StopConditionsTest, NoProgressEndsALoopThatChangesNothing) {
  EngineKit h(kIdleModel, kProject);
  h.config->limits.no_progress_iterations = 2;
  code_setup(h, "sh check.sh", 10);
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::failed);
  EXPECT_EQ(l.end_reason, EndReason::no_progress) << to_string(l.end_reason);
  EXPECT_NE(l.status_reason.find("no progress"), std::string::npos) << l.status_reason;
  EXPECT_EQ(l.iteration, 3);  // the first failure sets the baseline, two identical ones follow
}

TEST(StopConditionsTest, CompletionSignalEndsALoopWithoutValidationCommand) {
  const char* script = R"(
rules:
  - name: finish
    match: {loop_type: code, first_user: "ends only when you write"}
    reply: {text: "All done. <promise>COMPLETE</promise>"}
  - name: idle
    match: {loop_type: code}
    reply: {text: "working"}
)";
  EngineKit h(script, kProject);
  code_setup(h, "");
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::complete) << l.status_reason;
  EXPECT_EQ(l.end_reason, EndReason::completion_signal) << to_string(l.end_reason);
  EXPECT_EQ(l.iteration, 2);
  EXPECT_EQ(l.status_reason, "completion signal matched");
}

TEST(StopConditionsTest, CompletionSignalAloneDoesNotPassFailingValidation) {
  const char* script = R"(
rules:
  - name: claims
    match: {loop_type: code}
    reply: {text: "<promise>COMPLETE</promise>"}
)";
  EngineKit h(script, kProject);
  code_setup(h, "sh check.sh", 2);
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::failed);
  EXPECT_EQ(l.end_reason, EndReason::max_iterations) << to_string(l.end_reason);
  EXPECT_EQ(h.iterations(l.id).front().status, IterationOutcome::failed);
}

TEST(StopConditionsTest, LoopCostLimit) {
  EngineKit h(kIdleModel, kProject);
  h.config->limits.max_loop_cost_usd = 0.0001;  // one call of the default usage costs more
  code_setup(h, "sh check.sh");
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::failed);
  EXPECT_EQ(l.end_reason, EndReason::loop_cost_limit) << to_string(l.end_reason);
  EXPECT_EQ(l.iteration, 1);
  EXPECT_NE(l.status_reason.find("max_loop_cost_usd"), std::string::npos) << l.status_reason;
}

TEST(StopConditionsTest, PlanTreeCostLimit) {
  EngineKit h(kIdleModel, kProject);
  h.config->limits.max_cost_usd = 0.0001;
  h.config->limits.pause_at_limit = false;  // limits.at_cost_limit: fail
  code_setup(h, "sh check.sh");
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::failed);
  EXPECT_EQ(l.end_reason, EndReason::cost_limit) << to_string(l.end_reason);
  EXPECT_NE(l.status_reason.find("limits.max_cost_usd"), std::string::npos) << l.status_reason;
}

TEST(StopConditionsTest, PlanTreeCostLimitPausesByDefaultWithACostLimitEvent) {
  EngineKit h(kIdleModel, kProject);
  h.config->limits.max_cost_usd = 0.0001;
  code_setup(h, "sh check.sh");
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::paused) << l.status_reason;
  EXPECT_EQ(l.end_reason, EndReason::cost_limit) << to_string(l.end_reason);
  EXPECT_NE(l.status_reason.find("loopr resume"), std::string::npos) << l.status_reason;
  auto events = h.store->events_since(0).value();
  auto it = std::find_if(events.begin(), events.end(),
                         [](const Event& e) { return e.type == "cost_limit"; });
  ASSERT_NE(it, events.end());
  auto typed = api::decode(*it);
  auto* body = std::get_if<api::CostLimitEvent>(&typed.body);
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(body->limit, api::CapKind::cost);
  EXPECT_EQ(body->plan_id, l.plan_id);
  EXPECT_DOUBLE_EQ(body->max_cost_usd, 0.0001);
}

TEST(StopConditionsTest, MaxRuntime) {
  EngineKit h(kIdleModel, kProject);
  h.config->limits.max_runtime = 1ms;
  h.config->limits.pause_at_limit = false;
  code_setup(h, "sh check.sh");
  std::this_thread::sleep_for(5ms);  // let the plan's clock pass its 1 ms budget
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::failed);
  EXPECT_EQ(l.end_reason, EndReason::runtime_limit) << to_string(l.end_reason);
  EXPECT_EQ(l.iteration, 0);
  EXPECT_NE(l.status_reason.find("max_runtime"), std::string::npos) << l.status_reason;
}

TEST(StopConditionsTest, StopPatternInValidationOutput) {
  EngineKit h(kIdleModel, kProject);
  h.config->limits.stop_on_patterns = {"LICENSE\\s+VIOLATION"};
  code_setup(h, "sh check.sh");
  h.executor.answer("check.sh", 1, "LICENSE VIOLATION in x.c\n");
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::stopped);
  EXPECT_EQ(l.end_reason, EndReason::stop_pattern) << to_string(l.end_reason);
  EXPECT_EQ(l.iteration, 1);
  EXPECT_NE(l.status_reason.find("LICENSE"), std::string::npos);
}

TEST(StopConditionsTest, AttendedModePausesAfterEachIterationUntilResumed) {
  EngineKit h(kIdleModel, kProject);
  h.config->attended = true;
  code_setup(h, "sh check.sh", 3);
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::paused);
  EXPECT_EQ(l.end_reason, EndReason::attended) << to_string(l.end_reason);
  EXPECT_EQ(l.iteration, 1);
  l = h.run("code-001-001-001");  // resume
  EXPECT_EQ(l.status, LoopStatus::paused);
  EXPECT_EQ(l.iteration, 2);
}

TEST(StopConditionsTest, CooldownSeparatesIterations) {
  EngineKit h(kIdleModel, kProject);
  h.config->limits.cooldown = 300ms;
  code_setup(h, "sh check.sh", 2);
  Loop l = h.run("code-001-001-001");
  auto recs = h.iterations(l.id);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_GE(recs[1].started_at - recs[0].finished_at, 290);
}

TEST(StopConditionsTest, PauseTakesEffectAtTheNextBoundary) {
  const std::string script = code_turns(R"([{name: run_command, input: {command: "true"}}])");
  EngineKit h(script, kProject);
  code_setup(h, "sh check.sh");
  auto control = std::make_shared<engine::LoopControl>();
  h.bus.subscribe([control](const Event& e) {
    if (e.type == "tool_called") control->request_pause();
  });
  Loop l = h.run("code-001-001-001", control);
  EXPECT_EQ(l.status, LoopStatus::paused);
  EXPECT_EQ(l.end_reason, EndReason::paused_by_user) << to_string(l.end_reason);
  EXPECT_EQ(l.iteration, 1);  // the iteration in flight finished and was recorded
  EXPECT_EQ(h.iterations(l.id).size(), 1u);
  l = h.run("code-001-001-001");  // resume with a fresh control: it runs on to its limit
  EXPECT_EQ(l.status, LoopStatus::failed);
  EXPECT_EQ(l.iteration, 5);
}

TEST(RetryTest, CircuitBreakerAfterConsecutiveErrors) {
  const char* script = R"(
rules:
  - name: down
    match: {loop_type: code}
    reply: {fault: {status: 529}}
)";
  EngineKit h(script, kProject);
  h.config->llm.max_retries = 1;
  h.config->limits.circuit_breaker = 3;
  code_setup(h, "sh check.sh");
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::failed);
  EXPECT_EQ(l.end_reason, EndReason::circuit_breaker) << to_string(l.end_reason);
  EXPECT_NE(l.status_reason.find("circuit breaker: 3 consecutive errors"), std::string::npos) << l.status_reason;
  EXPECT_EQ(l.iteration, 0);  // errors are not iterations
  EXPECT_TRUE(h.iterations(l.id).empty());
  EXPECT_EQ(h.requests_of(l.id).size(), 6u);  // 3 attempts × (1 try + 1 retry)
}

TEST(RetryTest, FatalErrorFailsAtOnceWithTheProvidersMessage) {
  const char* script = R"(
rules:
  - name: refused
    match: {loop_type: code}
    reply: {fault: {status: 401}}
)";
  EngineKit h(script, kProject);
  code_setup(h, "sh check.sh");
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::failed);
  EXPECT_EQ(l.end_reason, EndReason::model_error) << to_string(l.end_reason);
  EXPECT_NE(l.status_reason.find("401"), std::string::npos) << l.status_reason;
  EXPECT_EQ(h.requests_of(l.id).size(), 1u);
}

TEST(ModelTurnsTest, RefusalFailsTheLoopWithTheCategory) {
  const char* script = R"(
rules:
  - name: no
    match: {loop_type: code}
    reply:
      text: ""
      stop_reason: refusal
      stop_details: {type: refusal, category: cyber, explanation: "not this"}
)";
  EngineKit h(script, kProject);
  code_setup(h, "sh check.sh");
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::failed);
  EXPECT_EQ(l.end_reason, EndReason::model_refused) << to_string(l.end_reason);
  EXPECT_NE(l.status_reason.find("refused (cyber)"), std::string::npos) << l.status_reason;
}

TEST(ModelTurnsTest, MaxTokensAsksToContinue) {
  const char* script = R"(
rules:
  - name: cut
    match: {loop_type: code, turn: 1}
    reply: {text: "I will now", stop_reason: max_tokens}
  - name: rest
    match: {loop_type: code, turn: 2}
    reply: {text: "continue and finish."}
)";
  EngineKit h(script, {{"ok.sh", "exit 0\n"}});
  code_setup(h, "sh ok.sh");
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::complete);
  auto reqs = h.requests_of(l.id);
  ASSERT_EQ(reqs.size(), 2u);
  auto last = reqs[1]["body"]["messages"].back();
  EXPECT_EQ(last["role"], "user");
  EXPECT_NE(last.dump().find("Continue from where you stopped"), std::string::npos);
}

TEST(ModelTurnsTest, MaxTurnsPerIterationEndsTheConversation) {
  const char* script = R"(
rules:
  - name: forever
    match: {loop_type: code}
    reply:
      tool_use: [{name: list_dir, input: {path: "."}}]
)";
  EngineKit h(script, kProject);
  h.config->loops[LoopType::code].max_turns_per_iteration = 3;
  code_setup(h, "sh check.sh", 1);
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(h.requests_of(l.id).size(), 3u);
  EXPECT_EQ(l.iteration, 1);
  EXPECT_NE(l.progress.find("max_turns_per_iteration"), std::string::npos) << l.progress;
}

TEST(ModelTurnsTest, ToolFailuresAreResultsTheModelReads) {
  const std::string script =
      code_turns(R"([{name: read_file, input: {path: "../../etc/passwd"}}])", "ok");
  EngineKit h(script, {{"ok.sh", "exit 0\n"}});
  code_setup(h, "sh ok.sh");
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::complete);
  auto reqs = h.requests_of(l.id);
  ASSERT_EQ(reqs.size(), 2u);
  auto result = reqs[1]["body"]["messages"][2]["content"][0];
  EXPECT_EQ(result["type"], "tool_result");
  EXPECT_EQ(result["is_error"], true);
  EXPECT_NE(result.dump().find("refused path"), std::string::npos);
}

