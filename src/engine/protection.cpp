#include "engine/protection.hpp"

#include <algorithm>

#include <loopr/core/merge_policy.hpp>
#include <loopr/engine/prompt_vars.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/clean_changes.hpp>
#include <loopr/git/repository.hpp>
#include <loopr/git/worktree.hpp>
#include <loopr/markdown/artifacts.hpp>

namespace loopr::engine {

bool checks_protection(const Loop& loop) { return loop.type == LoopType::code; }

std::vector<std::string> phase_files(const Loop& loop, const std::string& input) {
  if (loop.prompt_template == "integration-fix" || input.empty()) return {};
  return markdown::check_phase(input).doc.files;
}

Result<std::vector<Breach>> protection_breaches(const Loop& loop, const Config& config,
                                                const std::string& input,
                                                const git::WrittenSince* written) {
  const std::vector<std::string> harness = harness_patterns(config);
  LOOPR_ASSIGN(git::Worktree wt, git::Worktree::open(loop.worktree));
  LOOPR_ASSIGN(std::vector<PathChange> changes,
               written
                   ? git::path_changes_after(wt, work_start(loop), keyed_files(harness), *written)
                   : wt.path_changes_since(work_start(loop), keyed_files(harness)));
  add_keyed_changes(changes, harness);
  // A loop that edits its own phase document (run_command can write there) owns nothing: the
  // phase as the loop found it decides, and that one is not in the worktree any more.
  bool own_phase_changed = std::any_of(changes.begin(), changes.end(), [&](const PathChange& c) {
    return !loop.input_artifact.empty() &&
           (c.path == loop.input_artifact || c.old_path == loop.input_artifact);
  });
  return unowned_changes(changes, harness, config.protect.tests,
                         own_phase_changed ? std::vector<std::string>{} : phase_files(loop, input));
}

Result<std::optional<Validation>> committed_check(const Loop& loop, const Config& config,
                                                  const std::string& input,
                                                  const std::filesystem::path& root,
                                                  const std::string& sha,
                                                  std::vector<Breach>& breaches) {
  const std::vector<std::string> harness = harness_patterns(config);
  LOOPR_ASSIGN(git::Repository repo, git::Repository::open(root));
  std::string start = work_start(loop);
  if (start.empty()) start = git::integration_branch(loop.plan_id);
  LOOPR_ASSIGN(std::vector<PathChange> changes,
               repo.path_changes_since_fork(start, sha, keyed_files(harness)));
  add_keyed_changes(changes, harness);
  bool own_phase_changed = std::any_of(changes.begin(), changes.end(), [&](const PathChange& c) {
    return !loop.input_artifact.empty() &&
           (c.path == loop.input_artifact || c.old_path == loop.input_artifact);
  });
  breaches =
      unowned_changes(changes, harness, config.protect.tests,
                      own_phase_changed ? std::vector<std::string>{} : phase_files(loop, input));
  MergeRules rules = merge_rules(config);
  rules.tree = false;
  std::vector<HeldPath> refused = merge_policy(changes, rules);
  if (breaches.empty() && refused.empty()) return std::optional<Validation>();
  Validation v;
  if (!breaches.empty()) {
    v = breach_validation(loop, config, breaches);
    v.summary = "protected files changed while the tests ran: " + breach_summary(breaches);
    v.feedback =
        "The tests passed, but what was committed after they ran changes protected "
        "files: something your work runs (a test, a script) changed them while the "
        "tests ran.\n\n" +
        v.feedback;
  } else {
    v.passed = false;
    v.command = loop.validation_command.empty() ? config.loop(LoopType::code).validation
                                                : loop.validation_command;
  }
  if (!refused.empty()) {
    const std::string what = "its work has what is never merged: " + describe_held(refused);
    v.summary = v.summary.empty() ? what : v.summary + "; " + what;
    v.feedback +=
        "\nRemove these from your work (they are never merged): " + describe_held(refused) + ".\n";
  }
  v.output = "[loopr: " + v.summary + "]\n\n" + v.feedback;
  return std::optional<Validation>(std::move(v));
}

Validation breach_validation(const Loop& loop, const Config& config,
                             const std::vector<Breach>& breaches) {
  Validation v;
  v.passed = false;
  v.command = loop.validation_command.empty() ? config.loop(LoopType::code).validation
                                              : loop.validation_command;
  v.summary = breach_summary(breaches);
  v.feedback = breach_feedback(breaches);
  v.output = "[loopr: the tests did not run: " + v.summary + "]\n\n" + v.feedback;
  return v;
}

}  // namespace loopr::engine
