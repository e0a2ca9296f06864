#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

#include <loopr/core/embedded.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/markdown/prompt_library.hpp>

namespace loopr::markdown {

// Generated from prompts/*.md by loopr_embed (CMakeLists.txt).
const std::vector<EmbeddedFile>& embedded_prompts();

namespace {

constexpr std::array<std::string_view, 7> kTypes = {"plan", "spec",  "phase", "code",
                                                    "integration-fix", "judge", "review"};

}  // namespace

std::span<const std::string_view> prompt_types() { return kTypes; }

std::string_view shipped_prompt(std::string_view type) {
  std::string name = std::string(type) + ".md";
  for (const EmbeddedFile& f : embedded_prompts())
    if (f.name == name) return f.content;
  return {};
}

Result<LoadedPrompt> load_prompt(std::string_view type,
                                 const std::vector<std::filesystem::path>& override_dirs) {
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end())
    return make_error(ErrorCode::invalid_argument,
                      "unknown prompt type `" + std::string(type) +
                          "` (expected plan, spec, phase, code, integration-fix, judge or review)");
  const std::string file = std::string(type) + ".md";
  for (const auto& dir : override_dirs) {
    std::filesystem::path path = dir / file;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) return make_error(ErrorCode::io, "cannot read the prompt template " + path.string());
    LOOPR_ASSIGN(PromptTemplate prompt, PromptTemplate::parse(text.str(), path.string()));
    return LoadedPrompt{std::move(prompt), path.string(), true};
  }
  std::string_view shipped = shipped_prompt(type);
  if (shipped.empty())
    return make_error(ErrorCode::not_found, "loopr was built without the prompt " + file);
  LOOPR_ASSIGN(PromptTemplate prompt, PromptTemplate::parse(shipped, "shipped:" + file));
  return LoadedPrompt{std::move(prompt), "shipped:" + file, false};
}

Result<LoadedPrompt> load_prompt_for_repo(std::string_view type,
                                          const std::filesystem::path& repo_root) {
  // The repository's own prompts are read only through real folders: a symlink at `.loopr`,
  // `.loopr/prompts` or a template could point at what the model wrote (docs/security.md S3.6).
  const std::filesystem::path dir = RepoPaths(repo_root).prompts_dir();
  std::error_code ec;
  for (const std::filesystem::path& p :
       {dir.parent_path(), dir, dir / (std::string(type) + ".md")})
    if (std::filesystem::is_symlink(p, ec))
      return make_error(ErrorCode::invalid_argument,
                        p.string() + " is a symlink; loopr reads its prompts only from real "
                                     "files in real folders (replace the link, after reading "
                                     "what it points to)");
  return load_prompt(type, {dir});
}

}  // namespace loopr::markdown
