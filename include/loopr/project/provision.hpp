// `loopr init` makes the project's tests work in a loop's worktree as they do in the checkout
// (issue 27): what is installed but not in git (node_modules, a virtualenv) is made visible
// read-only in every worktree, a `src/` layout's code is imported from the worktree (never from
// the checkout an editable install points at), and what it cannot know becomes a hint.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>

namespace loopr::project {

struct Provisioning {
  std::vector<std::string> read_only;     ///< sandbox.read_only entries
  std::vector<std::string> env;           ///< sandbox.env entries (`NAME=value`)
  std::optional<std::string> validation;  ///< replaces the detected test command
  std::vector<std::string> ignores;       ///< .gitignore patterns the tests' own files need
  std::vector<std::string> notes;         ///< what was set and why, one line each
  std::vector<std::string> hints;         ///< what init could not know: the key to set
};

/// For the repository at `root` whose test command is `validation` (as detected): Node
/// (`package.json` with an untracked `node_modules/`), Python (a virtualenv in the checkout:
/// `.venv`, `venv`, or `$VIRTUAL_ENV`; outside it: `$VIRTUAL_ENV` read-only at its place; a
/// `src/` layout; uv/poetry/pdm lock files).
Provisioning detect_provisioning(const std::filesystem::path& root, const std::string& validation,
                                 const EnvLookup& env);

}  // namespace loopr::project
