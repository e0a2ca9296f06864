// The loop engine end to end: real git worktrees, real RocksDB, the real mock-llm over HTTP.
#include <gtest/gtest.h>

#include <loopr/engine/repo_prompts.hpp>
#include <loopr/store/store_writes.hpp>

#include "support/fakes/engine_kit.hpp"

using namespace loopr;
using namespace loopr::testing;

namespace {

const std::map<std::string, std::string> kAddProject = {
    {"add.sh", "echo not implemented; exit 1\n"},
    {"test.sh",
     "out=$(sh add.sh 2 3); [ \"$out\" = 5 ] || { echo \"expected 5, got $out\"; exit 1; }; echo "
     "ok\n"},
};

// Iteration 1 writes a wrong implementation; iteration 2, seeing the failure, fixes it.
const char* kFixOnSecondTry = R"(
defaults:
  usage: {input_tokens: 1000, output_tokens: 200}
rules:
  - name: fix
    match: {loop_type: code, first_user: "expected 5, got -1", turn: 1}
    reply:
      text: "The sign is wrong; fixing it."
      tool_use:
        - name: write_file
          input: {path: add.sh, content: "echo $(($1 + $2))\n"}
  - name: wrong
    match: {loop_type: code, turn: 1}
    reply:
      tool_use:
        - name: write_file
          input: {path: add.sh, content: "echo $(($1 - $2))\n"}
  - name: done
    match: {loop_type: code, turn: 2}
    reply: {text: "Done."}
)";

std::vector<std::string> git_log(const std::string& worktree) {
  auto r = run_command("git log --format=%s", worktree);
  std::vector<std::string> out;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// `done` ended `status` in its second iteration, the first having failed; `recs` gets the two
// iterations' records. Call it in ASSERT_NO_FATAL_FAILURE.
void expect_ended_on_the_second_try(EngineKit& h, const Loop& done, LoopStatus status,
                                    std::vector<IterationRecord>& recs) {
  EXPECT_EQ(done.status, status) << done.status_reason;
  EXPECT_EQ(done.iteration, 2);
  recs = h.iterations(done.id);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].status, IterationOutcome::failed);
}

}  // namespace

TEST(LoopRunnerTest, CodeLoopFailsThenFixesWithFeedbackInAFreshPrompt) {
  EngineKit h(kOverLoopback, kFixOnSecondTry, kAddProject);
  h.config->loops[LoopType::code].validation = "sh test.sh";
  Loop loop = h.add_loop("code-001-001-001", LoopType::code, "Make add.sh add its two arguments");

  Loop done = h.run(loop.id);
  std::vector<IterationRecord> recs;
  ASSERT_NO_FATAL_FAILURE(expect_ended_on_the_second_try(h, done, LoopStatus::complete, recs));
  EXPECT_EQ(recs[0].exit_code, 1);
  EXPECT_NE(recs[0].output_excerpt.find("expected 5, got -1"), std::string::npos);
  EXPECT_EQ(recs[1].status, IterationOutcome::passed);
  EXPECT_EQ(recs[1].exit_code, 0);
  EXPECT_GT(done.usage.cost_usd, 0);
  EXPECT_EQ(done.usage.input_tokens, 4 * 1000);

  // Two checkpoint commits on the loop's branch, named after the loop and iteration.
  auto log = git_log(done.worktree);
  ASSERT_GE(log.size(), 3u);
  EXPECT_EQ(log[0], "loopr(code-001-001-001): iteration 2: passed");
  EXPECT_EQ(
      log[1].rfind(
          "loopr(code-001-001-001): iteration 1: failed: `sh test.sh` failed with exit code 1", 0),
      0u)
      << log[1];
  EXPECT_EQ(log[2], "init");
  EXPECT_EQ(read_file(std::filesystem::path(done.worktree) / "add.sh"), "echo $(($1 + $2))\n");

  // What the model saw: every iteration starts with exactly ONE user message; the second one
  // carries the first one's failure under the feedback heading.
  auto reqs = h.requests_of(loop.id);
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(reqs[0]["body"]["messages"].size(), 1u);
  EXPECT_EQ(reqs[1]["body"]["messages"].size(), 3u);  // prompt, tool_use, tool_result
  EXPECT_EQ(reqs[2]["body"]["messages"].size(), 1u);
  EXPECT_EQ(reqs[2]["body"]["messages"][0]["role"], "user");
  std::string second = first_user_text(reqs[2]);
  auto heading = second.find("## Previous Iteration Feedback");
  ASSERT_NE(heading, std::string::npos);
  EXPECT_NE(second.find("expected 5, got -1", heading), std::string::npos);
  EXPECT_EQ(first_user_text(reqs[0]).find("expected 5"), std::string::npos);
  for (const auto& r : reqs) {
    EXPECT_EQ(r["headers"]["x-loopr-loop-type"], "code");
    EXPECT_EQ(r["status"], 200);
    EXPECT_FALSE(r["body"].contains("temperature"));
    EXPECT_TRUE(r["body"].contains("tools"));
  }

  // Events as it happened, and the transcript files.
  std::set<std::string> types;
  for (const auto& e : h.published) types.insert(e.type);
  for (const char* t : {"iteration_started", "tool_called", "validation_finished",
                        "iteration_finished", "status_changed", "cost"})
    EXPECT_TRUE(types.count(t)) << t;
  auto stored_events = h.store->events_since(0).value();
  EXPECT_GE(stored_events.size(), h.published.size());
  auto dir1 = h.dir / ".loopr/logs/loops/code-001-001-001/iterations/001";
  EXPECT_NE(read_file(dir1 / "prompt.md").find("Make add.sh add"), std::string::npos);
  EXPECT_NE(read_file(dir1 / "validation.log").find("expected 5, got -1"), std::string::npos);
  std::string conv = read_file(dir1 / "conversation.jsonl");
  EXPECT_NE(conv.find("\"write_file\""), std::string::npos);
  EXPECT_NE(conv.find("tool_result"), std::string::npos);
}

TEST(LoopRunnerTest, PlanLoopWritesItsArtifactAndFixesFormatProblems) {
  EngineKit h(kOverLoopback, kPlanScript, {{"README", "greet\n"}});
  Loop loop = h.add_loop("001", LoopType::plan, "Add a --shout flag to greet");
  ASSERT_EQ(loop.output_artifacts.front(), ".loopr/plans/001-add-a-shout-flag-to-greet.plan.md");

  Loop done = h.run(loop.id);
  std::vector<IterationRecord> recs;
  ASSERT_NO_FATAL_FAILURE(
      expect_ended_on_the_second_try(h, done, LoopStatus::awaiting_approval, recs));
  EXPECT_NE(recs[0].output_excerpt.find(".loopr/plans/001-add-a-shout-flag-to-greet.plan.md:"),
            std::string::npos)
      << recs[0].output_excerpt;

  // The validator's FILE:LINE messages reached the second prompt.
  auto reqs = h.requests_of("001");
  ASSERT_EQ(reqs.size(), 4u);
  std::string second = first_user_text(reqs[2]);
  EXPECT_NE(second.find("## Previous Iteration Feedback"), std::string::npos);
  EXPECT_NE(second.find("Specs to Create"), std::string::npos);
  EXPECT_NE(second.find(".loopr/plans/001-add-a-shout-flag-to-greet.plan.md:"), std::string::npos);
  // The artifact is committed on the loop's branch.
  auto show = run_command("git show HEAD:.loopr/plans/001-add-a-shout-flag-to-greet.plan.md",
                          done.worktree);
  EXPECT_EQ(show.exit_code, 0);
  EXPECT_NE(show.output.find("spec-cli-flag"), std::string::npos);
}

TEST(LoopRunnerTest, ShippedPromptsAndRepoOverridesAreWhatTheModelSees) {
  const char* script = R"(
rules:
  - name: write
    match: {loop_type: phase, first_user: "`(\\.loopr/phases/[^`]+)`", turn: 1}
    reply:
      tool_use:
        - name: write_file
          input:
            path: "{{first_user.1}}"
            content: "# Phase: parse\n\n## Parent Spec\n.loopr/specs/001-001-cli-flag.spec.md\n\n## Task\nParse --shout.\n\n## Specific Work\n- edit greet.sh\n\n## Success Criteria\n- greet --shout bob prints HELLO, BOB\n"
  - name: end
    match: {loop_type: phase}
    reply: {text: "done"}
)";
  EngineKit h(kOverLoopback, script,
              {{".loopr/specs/001-001-cli-flag.spec.md", "# Spec: cli flag\n\nParse it.\n"}});
  engine::RepoPrompts real(h.dir.path());
  h.engine();  // build the context, then point a copy of it at the real library
  engine::EngineContext ctx = *h.ctx;
  engine::EngineContext with_real{ctx.io,       ctx.pool, ctx.journal, ctx.config, ctx.paths,
                                  ctx.llm,      ctx.scheduler, ctx.runners, ctx.executor, real,
                                  ctx.costs,    ctx.retry, ctx.error_backoff};
  Loop loop = h.add_loop("001-001-001", LoopType::phase, "parse");
  loop.input_artifact = ".loopr/specs/001-001-cli-flag.spec.md";
  loop = update_loop(*h.store, loop).value();
  engine::LoopRunner runner(with_real);
  auto fut = net::co_spawn(h.io, runner.run(loop.id, std::make_shared<engine::LoopControl>()),
                           net::use_future);
  h.drive_until(fut);
  Loop done = fut.get().loop;
  EXPECT_EQ(done.status, LoopStatus::complete) << done.status_reason;
  auto reqs = h.requests_of(loop.id);
  ASSERT_FALSE(reqs.empty());
  std::string prompt = first_user_text(reqs[0]);
  EXPECT_NE(prompt.find("`" + done.output_artifacts.front() + "`"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("## Previous Iteration Feedback"), std::string::npos);
  EXPECT_NE(prompt.find("Parse it."), std::string::npos);  // the input artifact
  EXPECT_EQ(prompt.find("{{"), std::string::npos);

  // An override in the repository replaces the shipped template.
  write_file(h.dir / ".loopr/prompts/phase.md",
             "OVERRIDDEN for {{loop-id}}: write `{{artifact-path}}`.\n");
  auto over = real.render("phase", {{"loop-id", "001-001-001"}, {"artifact-path", "x.md"}});
  ASSERT_TRUE(over.ok()) << over.error().message;
  EXPECT_EQ(*over, "OVERRIDDEN for 001-001-001: write `x.md`.\n");
  write_file(h.dir / ".loopr/prompts/phase.md", "{{no-such-variable}}\n");
  auto bad = real.render("phase", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("no-such-variable"), std::string::npos);
}
