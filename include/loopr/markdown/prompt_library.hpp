// Where prompt templates come from: a repository's `.loopr/prompts/<type>.md` overrides the
// template shipped with loopr, which is compiled into the binary (prompts/*.md, embedded at
// build time) so loopr works wherever it is installed.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/result.hpp>
#include <loopr/markdown/prompt_template.hpp>

namespace loopr::markdown {

/// The template types: `plan`, `spec`, `phase`, `code`, `integration-fix`, `judge`, `review`.
std::span<const std::string_view> prompt_types();

/// The template that `load_prompt` chose, and where it came from.
struct LoadedPrompt {
  PromptTemplate prompt;
  std::string origin;  ///< the override's path, or `shipped:<type>.md`
  bool overridden = false;
};

/// Loads the `type` template: the first `<dir>/<type>.md` among `override_dirs` that exists,
/// else the shipped one. Errors: an unknown type (invalid_argument), an unreadable override
/// (io), a template with bad variables (invalid_argument, naming the file and line).
Result<LoadedPrompt> load_prompt(std::string_view type,
                                 const std::vector<std::filesystem::path>& override_dirs);

/// `load_prompt` for a repository: its `.loopr/prompts/` overrides the shipped templates.
Result<LoadedPrompt> load_prompt_for_repo(std::string_view type,
                                          const std::filesystem::path& repo_root);

/// The shipped template text of `type` (empty if there is none).
std::string_view shipped_prompt(std::string_view type);

}  // namespace loopr::markdown
