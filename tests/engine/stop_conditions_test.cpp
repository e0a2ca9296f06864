// The engine's stop ladder, limits, retries and model turns, each through a whole run of the
// real engine in process: the model is mock-llm's script engine behind the real client, commands
// go to a fake executor, the repository and store live in memory (tests/support/fakes). The
// cases that need real processes are in stop_conditions_integration_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include <loopr/api/events.hpp>

#include "engine/code_loop_fixture.hpp"
#include "support/loop_end.hpp"

using namespace loopr;
using namespace loopr::testing;
using namespace std::chrono_literals;

namespace {

/// Runs loop code-001-001-001 with the model `script`, validated by a passing `sh ok.sh`: the
/// loop completes after two model calls, whose requests `reqs` gets.
void run_to_completion_in_two_calls(const std::string& script, std::vector<nlohmann::json>& reqs) {
  EngineKit h(script, {{"ok.sh", "exit 0\n"}});
  code_setup(h, "sh ok.sh");
  Loop l = h.run("code-001-001-001");
  EXPECT_EQ(l.status, LoopStatus::complete);
  reqs = h.requests_of(l.id);
  ASSERT_EQ(reqs.size(), 2u);
}

}  // namespace

TEST(StopConditionsTest, NoProgressEndsALoopThatChangesNothing) {
  EngineKit h(kIdleModel, kProject);
  h.config->limits.no_progress_iterations = 2;
  code_setup(h, "sh check.sh", 10);
  Loop l = h.run("code-001-001-001");
  expect_ended(l, LoopStatus::failed, EndReason::no_progress, "no progress");
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
  expect_ended(l, LoopStatus::complete, EndReason::completion_signal);
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
  expect_ended(l, LoopStatus::failed, EndReason::max_iterations);
  EXPECT_EQ(h.iterations(l.id).front().status, IterationOutcome::failed);
}

TEST(StopConditionsTest, LoopCostLimit) {
  EngineKit h(kIdleModel, kProject);
  h.config->limits.max_loop_cost_usd = 0.0001;  // one call of the default usage costs more
  code_setup(h, "sh check.sh");
  Loop l = h.run("code-001-001-001");
  expect_ended(l, LoopStatus::failed, EndReason::loop_cost_limit, "max_loop_cost_usd");
  EXPECT_EQ(l.iteration, 1);
}

TEST(StopConditionsTest, PlanTreeCostLimit) {
  EngineKit h(kIdleModel, kProject);
  h.config->limits.max_cost_usd = 0.0001;
  h.config->limits.pause_at_limit = false;  // limits.at_cost_limit: fail
  code_setup(h, "sh check.sh");
  Loop l = h.run("code-001-001-001");
  expect_ended(l, LoopStatus::failed, EndReason::cost_limit, "limits.max_cost_usd");
}

TEST(StopConditionsTest, PlanTreeCostLimitPausesByDefaultWithACostLimitEvent) {
  EngineKit h(kIdleModel, kProject);
  h.config->limits.max_cost_usd = 0.0001;
  code_setup(h, "sh check.sh");
  Loop l = h.run("code-001-001-001");
  expect_ended(l, LoopStatus::paused, EndReason::cost_limit, "loopr resume");
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
  expect_ended(l, LoopStatus::failed, EndReason::runtime_limit, "max_runtime");
  EXPECT_EQ(l.iteration, 0);
}

TEST(StopConditionsTest, StopPatternInValidationOutput) {
  EngineKit h(kIdleModel, kProject);
  h.config->limits.stop_on_patterns = {"LICENSE\\s+VIOLATION"};
  code_setup(h, "sh check.sh");
  h.executor.answer("check.sh", 1, "LICENSE VIOLATION in x.c\n");
  Loop l = h.run("code-001-001-001");
  expect_ended(l, LoopStatus::stopped, EndReason::stop_pattern, "LICENSE");
  EXPECT_EQ(l.iteration, 1);
}

TEST(StopConditionsTest, AttendedModePausesAfterEachIterationUntilResumed) {
  EngineKit h(kIdleModel, kProject);
  h.config->attended = true;
  code_setup(h, "sh check.sh", 3);
  Loop l = h.run("code-001-001-001");
  expect_ended(l, LoopStatus::paused, EndReason::attended);
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
  expect_ended(l, LoopStatus::paused, EndReason::paused_by_user);
  EXPECT_EQ(l.iteration, 1);  // the iteration in flight finished and was recorded
  EXPECT_EQ(h.iterations(l.id).size(), 1u);
  l = h.run("code-001-001-001");  // resume with a fresh control: it runs on to its limit
  EXPECT_EQ(l.status, LoopStatus::failed);
  EXPECT_EQ(l.iteration, 5);
}

TEST(RetryTest, CircuitBreakerAfterConsecutiveErrors) {
  EngineKit h(failing_model("{status: 529}"), kProject);
  h.config->llm.max_retries = 1;
  h.config->limits.circuit_breaker = 3;
  code_setup(h, "sh check.sh");
  Loop l = h.run("code-001-001-001");
  expect_ended(l, LoopStatus::failed, EndReason::circuit_breaker,
               "circuit breaker: 3 consecutive errors");
  EXPECT_EQ(l.iteration, 0);  // errors are not iterations
  EXPECT_TRUE(h.iterations(l.id).empty());
  EXPECT_EQ(h.requests_of(l.id).size(), 6u);  // 3 attempts × (1 try + 1 retry)
}

TEST(RetryTest, FatalErrorFailsAtOnceWithTheProvidersMessage) {
  EngineKit h(failing_model("{status: 401}"), kProject);
  code_setup(h, "sh check.sh");
  Loop l = h.run("code-001-001-001");
  expect_ended(l, LoopStatus::failed, EndReason::model_error, "401");
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
  expect_ended(l, LoopStatus::failed, EndReason::model_refused, "refused (cyber)");
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
  std::vector<nlohmann::json> reqs;
  ASSERT_NO_FATAL_FAILURE(run_to_completion_in_two_calls(script, reqs));
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
  std::vector<nlohmann::json> reqs;
  ASSERT_NO_FATAL_FAILURE(run_to_completion_in_two_calls(script, reqs));
  auto result = reqs[1]["body"]["messages"][2]["content"][0];
  EXPECT_EQ(result["type"], "tool_result");
  EXPECT_EQ(result["is_error"], true);
  EXPECT_NE(result.dump().find("refused path"), std::string::npos);
}

