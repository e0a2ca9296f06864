// Issue 47 item 5 against the real parts: the mock-llm server over HTTP, commands in the
// configured sandbox, RocksDB. An iteration's time limit (loops.<type>.iteration_max_runtime)
// cuts a long tool command and a slow model call and the loop goes on judged; a loop whose
// validation fails the same tests limits.max_same_failures times in a row fails, naming them.
// (The rules alone: iteration_limits_test.cpp.)
#include <gtest/gtest.h>

#include "support/fakes/engine_kit.hpp"
#include "support/fakes/model_scripts.hpp"
#include "support/loop_end.hpp"

using namespace loopr;
using namespace loopr::testing;
using namespace std::chrono_literals;

namespace {

const std::map<std::string, std::string> kProject = {
    {"check.sh", "echo 'FAILED tests/test_calc.py::test_add - assert 1 == 2'; exit 1\n"}};

const char* kLoopId = "code-001-001-001";

Loop setup(EngineKit& h, int max_iterations) {
  h.config->loops[LoopType::code].validation = "sh check.sh";
  h.config->limits.no_progress_iterations = 100;
  return h.add_loop(kLoopId, LoopType::code, "task", max_iterations);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

// The model runs `sleep 120` with a 2-second iteration limit: the command is killed at the
// limit, the validation judges what is there, and the next iteration runs.
TEST(IterationMaxRuntimeTest, CutsALongToolCommandAndTheLoopGoesOn) {
  const std::string script =
      code_turns(R"([{name: run_command, input: {command: "sleep 120", timeout_s: 600}}])");
  EngineKit h(kOverLoopback, script, kProject);
  setup(h, 2);
  h.config->loops[LoopType::code].iteration_max_runtime = 2s;
  const auto started = std::chrono::steady_clock::now();
  Loop l = h.run(kLoopId);
  const auto took = std::chrono::steady_clock::now() - started;
  // Two iterations, each cut at 2 s: far from one `sleep 120`.
  EXPECT_LT(took, 60s) << "the command was not cut at the iteration's limit";
  expect_ended(l, LoopStatus::failed, EndReason::max_iterations);
  auto recs = h.iterations(l.id);
  ASSERT_EQ(recs.size(), 2u);
  for (const auto& r : recs) {
    EXPECT_EQ(r.status, IterationOutcome::failed);
    EXPECT_TRUE(contains(r.summary, "loops.code.iteration_max_runtime")) << r.summary;
    EXPECT_TRUE(contains(r.output_excerpt, "test_calc.py::test_add")) << "the validation ran";
  }
  EXPECT_TRUE(contains(l.progress, "time limit of 2s (loops.code.iteration_max_runtime)"))
      << l.progress;
}

// A model call that takes 30 s under a 2-second limit: abandoned at the limit, not an error and
// not a stop; the iteration is judged.
TEST(IterationMaxRuntimeTest, CutsASlowModelCall) {
  EngineKit h(kOverLoopback, kSlowModel, kProject);
  setup(h, 1);
  h.config->loops[LoopType::code].iteration_max_runtime = 2s;
  const auto started = std::chrono::steady_clock::now();
  Loop l = h.run(kLoopId);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 25s);
  expect_ended(l, LoopStatus::failed, EndReason::max_iterations);
  auto recs = h.iterations(l.id);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].status, IterationOutcome::failed);
  EXPECT_TRUE(contains(recs[0].summary, "iteration_max_runtime")) << recs[0].summary;
  EXPECT_TRUE(contains(recs[0].summary, "after 0 model turns")) << recs[0].summary;
}

// Off (the default): the same slow turn runs to its end.
TEST(IterationMaxRuntimeTest, WithoutTheKeyTheIterationRunsItsCourse) {
  const char* script = R"(
rules:
  - name: slowish
    match: {loop_type: code}
    reply:
      text: "done"
      fault: {delay: 1500ms}
)";
  EngineKit h(kOverLoopback, script, kProject);
  setup(h, 1);
  Loop l = h.run(kLoopId);
  auto recs = h.iterations(l.id);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_FALSE(contains(recs[0].summary, "iteration_max_runtime")) << recs[0].summary;
}

// The model changes a file every iteration (so "no progress" never fires), the same test keeps
// failing: the third failure ends the loop with the key and the test's name.
TEST(MaxSameFailuresTest, TheSameFailingTestEndsTheLoop) {
  const std::string script = code_turns(
      R"([{name: write_file, input: {path: "attempt-{{n}}.txt", content: "attempt {{n}}"}}])");
  EngineKit h(kOverLoopback, script, kProject);
  setup(h, 10);
  h.config->limits.max_same_failures = 3;
  Loop l = h.run(kLoopId);
  expect_ended(l, LoopStatus::failed, EndReason::same_failures);
  EXPECT_EQ(l.iteration, 3);
  EXPECT_TRUE(contains(l.status_reason, "limits.max_same_failures: 3")) << l.status_reason;
  EXPECT_TRUE(contains(l.status_reason, "tests/test_calc.py::test_add")) << l.status_reason;
}

// The model makes the tests print a different failing name every run: no two failures are the
// same, so the rule never fires, and the loop still ends at its iteration limit (a model that
// varies its failures cannot keep a loop going past max_iterations).
TEST(MaxSameFailuresTest, ChangingFailuresDoNotTripIt) {
  const std::string script =
      code_turns(R"([{name: write_file, input: {path: "name.txt", content: "test_{{n}}"}}])");
  EngineKit h(kOverLoopback, script,
              {{"check.sh", "echo \"FAILED t.py::$(cat name.txt) - no\"; exit 1\n"}});
  setup(h, 4);
  h.config->limits.max_same_failures = 2;
  Loop l = h.run(kLoopId);
  expect_ended(l, LoopStatus::failed, EndReason::max_iterations);
  EXPECT_EQ(l.iteration, 4);
}
