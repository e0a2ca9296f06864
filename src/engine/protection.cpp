#include "engine/protection.hpp"

#include <algorithm>

#include <loopr/engine/prompt_vars.hpp>
#include <loopr/git/worktree.hpp>
#include <loopr/markdown/artifacts.hpp>

namespace loopr::engine {

bool checks_protection(const Loop& loop) { return loop.type == LoopType::code; }

std::vector<std::string> phase_files(const Loop& loop, const std::string& input) {
  if (loop.prompt_template == "integration-fix" || input.empty()) return {};
  return markdown::check_phase(input).doc.files;
}

Result<std::vector<Breach>> protection_breaches(const Loop& loop, const Config& config,
                                                const std::string& input) {
  const std::vector<std::string> harness = harness_patterns(config);
  LOOPR_ASSIGN(git::Worktree wt, git::Worktree::open(loop.worktree));
  LOOPR_ASSIGN(std::vector<PathChange> changes,
               wt.path_changes_since(work_start(loop), keyed_files(harness)));
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
