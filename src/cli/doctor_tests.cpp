#include "cli/doctor_tests.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include <loopr/exec/executor.hpp>
#include <loopr/git/loop_worktrees.hpp>
#include <loopr/git/test_outputs.hpp>
#include <loopr/project/toolchains.hpp>
#include <loopr/tools/runner_slots.hpp>

namespace loopr::cli {
namespace {

namespace fs = std::filesystem;

std::string seconds(std::int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000);
  return buf;
}

// The last `n` lines of `text`, each indented.
std::string tail_lines(const std::string& text, std::size_t n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
    out += "    " + lines[i] + "\n";
  return out;
}

std::string why_failed(const ProcessResult& r, Duration timeout, const char* timeout_key) {
  if (r.spawn_failed) return "could not start";
  if (r.timed_out)
    return std::string("timed out after ") + format_duration(timeout) + " (" + timeout_key + ")";
  if (r.term_signal) return "was killed by signal " + std::to_string(r.term_signal);
  return "failed with exit code " + std::to_string(r.exit_code);
}

// The untracked paths the tests left in the fresh worktree, and the .gitignore lines for them
// (loops never commit them either way: the baseline check records them).
std::string outputs_note(const std::vector<std::string>& outputs) {
  if (outputs.empty()) return {};
  std::string list, lines;
  for (const auto& o : outputs) {
    list += (list.empty() ? "" : ", ") + o;
    lines += (lines.empty() ? "`/" : ", `/") + o + "`";
  }
  return "; the tests leave " + list + " behind: add " + lines +
         " to .gitignore (loops never commit them)";
}

using Env = std::map<std::string, std::string>;

// Runs `setup:` in the fresh worktree; the first command that fails is the check's failure.
std::optional<TestsCheck> run_setup(exec::Executor& executor, const Config& config,
                                    const fs::path& workdir, const Env& env,
                                    tools::RunnerSlots& slots) {
  for (const auto& text : config.setup.commands) {
    exec::Command cmd = exec::Command::shell(text, workdir);
    cmd.timeout = config.setup.timeout;
    cmd.env = env;
    cmd.env["LOOPR_SETUP"] = "1";
    cmd.network = config.setup.network;
    cmd.runner_class = slots.classify(text);
    ProcessResult r = executor.run(cmd);
    if (r.succeeded()) continue;
    return TestsCheck{CheckStatus::fail,
                      "the setup `" + text + "` " +
                          why_failed(r, config.setup.timeout, "setup.timeout") +
                          " in a fresh worktree of " + config.base_branch,
                      "fix `setup:` in .loopr/config.yml (or what it needs); `--skip-tests` skips "
                      "this check",
                      tail_lines(r.output, 15)};
  }
  return std::nullopt;
}

// What a failed validation says: a hidden toolchain folder when that explains it.
TestsCheck validation_failed(const ProcessResult& r, const fs::path& root, const Config& config) {
  const std::string& validation = config.loop(LoopType::code).validation;
  const std::string what =
      "loops.code.validation `" + validation + "` " +
      why_failed(r, config.loop(LoopType::code).iteration_timeout, "loops.code.iteration_timeout") +
      " on " + config.base_branch + " in a fresh worktree";
  if (auto hidden = project::explain_hidden_path(r.output, root, config, process_env()))
    return {CheckStatus::fail, what + ": " + *hidden,
            "a fresh `loopr init` (move .loopr/config.yml away) finds the toolchain folders "
            "the tests need; `--skip-tests` skips this check",
            tail_lines(r.output, 15)};
  return {CheckStatus::fail, what,
          "make the tests pass on " + config.base_branch +
              ", or give the worktree what they need: sandbox.read_only (e.g. "
              "[node_modules, .venv]), sandbox.env (e.g. [PYTHONPATH=src]), setup: or "
              "loops.code.validation in .loopr/config.yml; `--skip-tests` skips this check",
          tail_lines(r.output, 15)};
}

// Why the tests are not run here at all, or nullopt.
std::optional<TestsCheck> not_run_here(const Config& config) {
  if (config.loop(LoopType::code).validation.empty())
    return TestsCheck{CheckStatus::skip, "no loops.code.validation, so no tests to run", {}, {}};
  if (config.executor.kind == ExecutorKind::slurm)
    return TestsCheck{
        CheckStatus::skip,
        "executor: slurm: the baseline check at `loopr submit` runs them on the cluster",
        {},
        {}};
  return std::nullopt;
}

// Runs `setup:` and then the validation in the fresh worktree `workdir`: the check's result.
TestsCheck setup_and_validate(exec::Executor& executor, const fs::path& root,
                              const fs::path& workdir, const Config& config) {
  const std::string& validation = config.loop(LoopType::code).validation;
  tools::RunnerSlots slots(config.concurrency);
  auto started = std::chrono::steady_clock::now();
  auto since = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 started)
        .count();
  };
  const Env env = {
      {"LOOPR_PLAN_ID", "doctor"}, {"LOOPR_LOOP_ID", "doctor"}, {"LOOPR_LOOP_TYPE", "baseline"}};
  if (auto setup_failed = run_setup(executor, config, workdir, env, slots)) return *setup_failed;
  const std::int64_t setup_ms = since();
  exec::Command cmd = exec::Command::shell(validation, workdir);
  cmd.timeout = config.loop(LoopType::code).iteration_timeout;
  cmd.env = env;
  cmd.runner_class = slots.classify(validation);
  ProcessResult r = executor.run(cmd);
  if (!r.succeeded()) return validation_failed(r, root, config);
  std::string took = seconds(since());
  if (!config.setup.commands.empty()) took += ", setup " + seconds(setup_ms);
  return {CheckStatus::ok,
          "loops.code.validation `" + validation + "` passes on " + config.base_branch +
              " in a fresh worktree (" + took + ")" +
              outputs_note(git::untracked_paths(workdir, config.sandbox.checkout_paths())),
          {},
          {}};
}

}  // namespace

TestsCheck check_tests_in_worktree(const fs::path& root, const Config& config) {
  if (auto why = not_run_here(config)) return *why;
  exec::ExecutorOptions options{RepoPaths(root), process_env()};
  options.executor = config.executor;
  auto executor = exec::make_executor(config.sandbox, options);
  if (auto why = executor->unavailable())
    return {CheckStatus::skip,
            "the sandbox does not work (see the sandbox check), so the tests cannot run",
            {},
            {}};
  git::LoopWorktrees worktrees(root);
  const std::string name = "doctor-" + std::to_string(::getpid());
  auto checkout = worktrees.prepare_scratch(name, config.base_branch);
  if (!checkout)
    return {CheckStatus::fail,
            "cannot make a worktree of " + config.base_branch + ": " + checkout.error().message,
            "see `git worktree list`; `loopr doctor --skip-tests` skips this check",
            {}};
  TestsCheck result = setup_and_validate(*executor, root, checkout->worktree, config);
  if (auto removed = worktrees.remove_scratch(name); !removed && result.status == CheckStatus::ok)
    result.message += "; its worktree stays: " + removed.error().message;
  return result;
}

}  // namespace loopr::cli
