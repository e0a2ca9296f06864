// The engine's prompts from the markdown module's template library: a repository's
// `.loopr/prompts/<type>.md` overrides the template shipped in the binary. Templates are
// loaded at each render, so an edited override takes effect at the next iteration.
#pragma once

#include <filesystem>

#include <loopr/engine/prompt_source.hpp>

namespace loopr::engine {

class RepoPrompts : public PromptSource {
 public:
  explicit RepoPrompts(std::filesystem::path repo_root) : root_(std::move(repo_root)) {}

  /// Variables the template uses but `vars` lacks are rendered empty.
  Result<std::string> render(const std::string& name,
                             const std::map<std::string, std::string>& vars) const override;
  Result<Parts> render_parts(const std::string& name,
                             const std::map<std::string, std::string>& vars,
                             const std::vector<std::string>& stable) const override;

 private:
  std::filesystem::path root_;
};

}  // namespace loopr::engine
