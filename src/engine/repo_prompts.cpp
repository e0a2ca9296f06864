#include <loopr/engine/repo_prompts.hpp>
#include <loopr/markdown/prompt_library.hpp>

namespace loopr::engine {

Result<std::string> RepoPrompts::render(const std::string& name, const std::map<std::string, std::string>& vars) const {
  LOOPR_ASSIGN(markdown::LoadedPrompt loaded, markdown::load_prompt_for_repo(name, root_));
  markdown::PromptValues values(vars.begin(), vars.end());
  for (const auto& v : loaded.prompt.variables()) values.try_emplace(v, "");
  return loaded.prompt.render(values);
}

Result<PromptSource::Parts> RepoPrompts::render_parts(
    const std::string& name, const std::map<std::string, std::string>& vars,
    const std::vector<std::string>& stable) const {
  LOOPR_ASSIGN(markdown::LoadedPrompt loaded, markdown::load_prompt_for_repo(name, root_));
  markdown::PromptValues values(vars.begin(), vars.end());
  for (const auto& v : loaded.prompt.variables()) values.try_emplace(v, "");
  LOOPR_ASSIGN(auto split, loaded.prompt.render_split(values, stable));
  return Parts{std::move(split.fixed), std::move(split.rest)};
}

}  // namespace loopr::engine
