#include "cli/preflight.hpp"

#include <loopr/git/repository.hpp>
#include <loopr/git/work_tree_state.hpp>

namespace loopr::cli {
namespace {

// "what; what to do" (the git module's wording) as a problem.
PreflightProblem from_git_error(const std::string& message) {
  auto semi = message.find("; ");
  if (semi == std::string::npos) return {message, "see `git status`", false};
  return {message.substr(0, semi), message.substr(semi + 2), false};
}

void add_git_problems(const RepoPaths& paths, const Config& config,
                      std::vector<PreflightProblem>& out) {
  auto repo = git::Repository::open(paths.root);
  if (!repo) {
    out.push_back(from_git_error(repo.error().message));
    return;
  }
  auto has_base = repo->has_branch(config.base_branch);
  if (has_base && !*has_base) {
    auto current = repo->current_branch();
    out.push_back({"the base branch " + config.base_branch + " does not exist",
                   "set base_branch in .loopr/config.yml" +
                       (current ? "; this checkout is on " + *current : std::string()),
                   false});
  } else if (!has_base) {
    out.push_back(
        {"cannot read the base branch " + config.base_branch + ": " + has_base.error().message,
         "check the repository with `git status`", false});
  }
  auto operation = git::operation_in_progress(paths.root);
  if (operation && !operation->empty()) {
    std::string git_command = *operation == "apply-mailbox" ? "am" : *operation;
    std::string hint = *operation == "bisect"
                           ? "end it with `git bisect reset`"
                           : "finish it with `git " + git_command +
                                 " --continue` or undo it with `git " + git_command + " --abort`";
    out.push_back({"a " + *operation + " is in progress in " + paths.root.string() +
                       ": loopr could not merge finished work into " + config.base_branch,
                   hint, false});
  }
}

}  // namespace

std::vector<PreflightProblem> submit_problems(const RepoPaths& paths, const Config& config,
                                              bool provider_checked, bool force) {
  std::vector<PreflightProblem> out;
  EnvLookup env = process_env();
  if (provider_checked)
    if (auto p = check_provider(config, env)) out.push_back(*p);
  if (auto p = check_validation_command(config, paths.root, env)) out.push_back(*p);
  add_git_problems(paths, config, out);
  if (force) std::erase_if(out, [](const PreflightProblem& p) { return p.forceable; });
  return out;
}

std::vector<PreflightProblem> daemon_start_problems(const Config& config, bool force) {
  std::vector<PreflightProblem> out;
  if (auto p = check_provider(config, process_env()); p && !(force && p->forceable))
    out.push_back(*p);
  return out;
}

void refuse_if_any(const std::vector<PreflightProblem>& problems, const std::string& force_hint) {
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const auto& p = problems[i];
    CommandError e{kUsage, p.what, p.hint + (p.forceable ? force_hint : std::string())};
    if (i + 1 == problems.size()) throw e;
    report(e);
  }
}

}  // namespace loopr::cli
