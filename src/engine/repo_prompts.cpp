#include <loopr/engine/repo_prompts.hpp>
#include <loopr/markdown/prompt_library.hpp>

namespace loopr::engine {

Result<std::string> RepoPrompts::render(const std::string& name, const std::map<std::string, std::string>& vars) const {
  LOOPR_ASSIGN(markdown::LoadedPrompt loaded, markdown::load_prompt_for_repo(name, root_));
  markdown::PromptValues values(vars.begin(), vars.end());
  for (const auto& v : loaded.prompt.variables()) values.try_emplace(v, "");
  return loaded.prompt.render(values);
}

}  // namespace loopr::engine
