// What an iteration's prompt is made of, against a real git repository and a real store: every
// variable a shipped prompt uses is filled (the judge's `{{progress}}` included), the worktree
// state is the loop's whole work since it started (not "(clean)" after each checkpoint), and a
// code loop is told what its phase serves.
#include <gtest/gtest.h>

#include <loopr/engine/prompt_vars.hpp>
#include <loopr/markdown/prompt_library.hpp>
#include <loopr/store/store_writes.hpp>
#include <loopr/store/task_store.hpp>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using loopr::testing::read_file;
using loopr::testing::run_command;
using loopr::testing::TempDir;
using loopr::testing::write_file;

namespace {

const std::filesystem::path kExamples = std::filesystem::path(LOOPR_SOURCE_DIR) / ".loopr-example";
const std::string kPlanPath = ".loopr/plans/001-add-a-shout-flag-to-greet.plan.md";
const std::string kSpecPath = ".loopr/specs/001-001-shout-flag.spec.md";
const std::string kPhasePath = ".loopr/phases/001-001-001-parse-the-flag.phase.md";

std::string git(const std::filesystem::path& dir, const std::string& args) {
  auto out = run_command("git " + args, dir.string());
  EXPECT_EQ(out.exit_code, 0) << "git " << args << ": " << out.output;
  std::string text = out.output;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// A repository whose `main` holds the tree's artifacts (as an integration tip does) and a loop's
// branch made from it.
struct Repo {
  TempDir dir{"loopr-prompt-state"};
  std::string start;  // the commit the loop's branch starts from
  Repo() {
    git(dir.path(), "init -q -b main . && git config user.name t && git config user.email t@t");
    write_file(dir / "greet", "#!/bin/sh\necho \"Hello, $1\"\n");
    write_file(dir / "README", "greet\n");
    write_file(dir / kPlanPath,
               read_file(kExamples / "artifacts/plans/001-add-a-shout-flag-to-greet.plan.md"));
    write_file(dir / kSpecPath,
               read_file(kExamples / "artifacts/specs/001-001-shout-flag.spec.md"));
    write_file(dir / kPhasePath,
               read_file(kExamples / "artifacts/phases/001-001-001-parse-the-flag.phase.md"));
    git(dir.path(), "add -A && git commit -qm base");
    start = git(dir.path(), "rev-parse HEAD");
    git(dir.path(), "checkout -qb loopr/code");
  }
};

Loop code_loop(const std::filesystem::path& worktree, const std::string& based_on) {
  Loop l;
  l.id = "code-001-001-001-001";
  l.type = LoopType::code;
  l.parent_id = "001-001-001";
  l.plan_id = "001";
  l.task = "Parse the flag";
  l.input_artifact = kPhasePath;
  l.worktree = worktree.string();
  l.max_iterations = 5;
  l.tree.based_on = based_on;
  return l;
}

Loop ancestor(const std::string& id, LoopType type, const std::string& parent,
              const std::string& artifact) {
  Loop l;
  l.id = id;
  l.type = type;
  l.parent_id = parent;
  l.plan_id = "001";
  l.task = "Add a --shout flag to greet";
  l.output_artifacts = {artifact};
  l.max_iterations = 5;
  return l;
}

}  // namespace

TEST(PromptVariablesTest, EveryVariableAShippedPromptUsesIsWhatTheEngineFillsIn) {
  Repo repo;
  Config config;
  Loop loop = code_loop(repo.dir.path(), repo.start);
  engine::IterationState state = engine::read_state(loop, config, nullptr);
  auto given = engine::prompt_vars(loop, config, state, 1);
  auto judged = engine::judge_vars(loop, config, "the input", "the artifact", kSpecPath);
  auto reviewed = engine::review_vars(loop, config, "the phase", "the diff", "the output", 1);
  for (std::string_view type : markdown::prompt_types()) {
    SCOPED_TRACE(std::string(type));
    auto loaded = markdown::load_prompt(type, {});
    ASSERT_TRUE(loaded) << loaded.error().message;
    const auto& values = type == "judge" ? judged : type == "review" ? reviewed : given;
    for (const auto& name : loaded->prompt.variables())
      EXPECT_TRUE(values.count(name))
          << "shipped " << type << ".md uses {{" << name << "}}, which the engine does not fill";
    markdown::PromptValues pv(values.begin(), values.end());
    auto rendered = loaded->prompt.render(pv);
    EXPECT_TRUE(rendered) << (rendered ? "" : rendered.error().message);
  }
}

TEST(PromptVariablesTest, TheJudgeSeesWhatEarlierIterationsWereTold) {
  Config config;
  Loop spec = ancestor("001-001", LoopType::spec, "001", kSpecPath);
  spec.run.feedback.push_back(FeedbackEntry{1, FeedbackSource::format_check, "phase 2 is vague",
                                            "Phase 2 must name the file it changes."});
  auto loaded = markdown::load_prompt("judge", {});
  ASSERT_TRUE(loaded);
  auto vars = engine::judge_vars(spec, config, "the plan", "# Shout flag", kSpecPath);
  markdown::PromptValues pv(vars.begin(), vars.end());
  auto rendered = loaded->prompt.render(pv);
  ASSERT_TRUE(rendered) << rendered.error().message;
  EXPECT_NE(rendered->find("Phase 2 must name the file it changes."), std::string::npos);

  Loop first = ancestor("001-002", LoopType::spec, "001", kSpecPath);
  auto none = engine::judge_vars(first, config, "the plan", "# Shout flag", kSpecPath);
  EXPECT_EQ(none.at("progress"), "None yet: this is the first iteration.");
}

TEST(PromptStateTest, AfterACheckpointTheModelSeesTheLoopsWholeWorkNotClean) {
  Repo repo;
  Config config;
  // Iteration 1 changed greet and added a test; loopr's checkpoint committed both.
  write_file(repo.dir / "greet",
             "#!/bin/sh\n[ \"$1\" = --shout ] && shout=1\necho \"Hello, $1\"\n");
  write_file(repo.dir / "tests/shout.sh", "./greet --shout bob\n");
  git(repo.dir.path(), "add -A && git commit -qm 'loopr(code): iteration 1: failed'");
  // Iteration 2 changed the README, committed too.
  write_file(repo.dir / "README", "greet [--shout] NAME\n");
  git(repo.dir.path(), "add -A && git commit -qm 'loopr(code): iteration 2: failed'");

  Loop loop = code_loop(repo.dir.path(), repo.start);
  loop.iteration = 2;
  engine::IterationState state = engine::read_state(loop, config, nullptr);
  ASSERT_TRUE(state.error.empty()) << state.error;
  // The whole work since the branch started, then what the last iteration changed.
  EXPECT_NE(state.status.find("M greet"), std::string::npos) << state.status;
  EXPECT_NE(state.status.find("A tests/shout.sh"), std::string::npos) << state.status;
  EXPECT_NE(state.status.find("M README"), std::string::npos) << state.status;
  auto last = state.status.find("Changed by iteration 2:");
  ASSERT_NE(last, std::string::npos) << state.status;
  EXPECT_NE(state.status.find("M README", last), std::string::npos);
  EXPECT_EQ(state.status.find("greet", last), std::string::npos) << "only iteration 2's files";
  EXPECT_NE(state.diff.find("+[ \"$1\" = --shout ] && shout=1"), std::string::npos) << state.diff;
  EXPECT_NE(state.diff.find("+./greet --shout bob"), std::string::npos) << state.diff;
  EXPECT_EQ(state.diff.find("(no changes"), std::string::npos);

  // An uncommitted edit is part of the work too.
  write_file(repo.dir / "NEW", "x\n");
  state = engine::read_state(loop, config, nullptr);
  EXPECT_NE(state.status.find("A NEW"), std::string::npos) << state.status;

  // Within git.diff_max_bytes.
  config.git.diff_max_bytes = 200;
  state = engine::read_state(loop, config, nullptr);
  EXPECT_LE(state.diff.size(), 400u);
  EXPECT_NE(state.diff.find("more lines"), std::string::npos) << state.diff;
}

TEST(PromptStateTest, ALoopRebasedOntoAMovedTipSeesOnlyItsOwnWork) {
  Repo repo;
  Config config;
  write_file(repo.dir / "mine.txt", "mine\n");
  git(repo.dir.path(), "add -A && git commit -qm 'loopr(code): iteration 1'");
  // Another loop's work lands on main; this loop is rebased onto it (based_on moves there).
  git(repo.dir.path(), "checkout -q main");
  write_file(repo.dir / "theirs.txt", "theirs\n");
  git(repo.dir.path(), "add -A && git commit -qm 'other loop'");
  std::string tip = git(repo.dir.path(), "rev-parse HEAD");
  git(repo.dir.path(), "checkout -q loopr/code && git rebase -q main");

  Loop loop = code_loop(repo.dir.path(), tip);
  loop.iteration = 1;
  engine::IterationState state = engine::read_state(loop, config, nullptr);
  EXPECT_NE(state.status.find("A mine.txt"), std::string::npos) << state.status;
  EXPECT_EQ(state.status.find("theirs.txt"), std::string::npos) << state.status;
  EXPECT_EQ(state.diff.find("theirs"), std::string::npos) << state.diff;
}

TEST(PromptStateTest, ACodeLoopIsToldThePlansGoalAndItsSpecsOverview) {
  Repo repo;
  TempDir store_dir("loopr-prompt-store");
  auto opened = TaskStore::open((store_dir / "db").string(), {.sync = false});
  ASSERT_TRUE(opened) << opened.error().message;
  TaskStore& store = **opened;
  ASSERT_TRUE(create_loop(store, ancestor("001", LoopType::plan, "", kPlanPath)));
  ASSERT_TRUE(create_loop(store, ancestor("001-001", LoopType::spec, "001", kSpecPath)));
  ASSERT_TRUE(create_loop(store, ancestor("001-001-001", LoopType::phase, "001-001", kPhasePath)));

  Config config;
  Loop loop = code_loop(repo.dir.path(), repo.start);
  engine::IterationState state = engine::read_state(loop, config, &store);
  EXPECT_NE(state.purpose.find("Add a --shout flag to greet"), std::string::npos) << state.purpose;
  EXPECT_NE(state.purpose.find("`./greet --shout Ada` prints `HELLO, ADA!`"), std::string::npos)
      << state.purpose;
  EXPECT_NE(state.purpose.find("`greet` reads its arguments in one `for` loop"), std::string::npos)
      << state.purpose;

  auto vars = engine::prompt_vars(loop, config, state, 1);
  auto code = markdown::load_prompt("code", {});
  ASSERT_TRUE(code);
  markdown::PromptValues pv(vars.begin(), vars.end());
  auto prompt = code->prompt.render(pv);
  ASSERT_TRUE(prompt);
  EXPECT_NE(prompt->find("`greet` reads its arguments in one `for` loop"), std::string::npos);

  // A plan's own prompt has nothing above it to show.
  Loop plan = ancestor("001", LoopType::plan, "", kPlanPath);
  plan.worktree = repo.dir.str();
  EXPECT_TRUE(engine::read_state(plan, config, &store).purpose.empty());
}
