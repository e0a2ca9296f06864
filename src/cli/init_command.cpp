// `loopr init [--base BRANCH]`: writes `.loopr/config.yml` with commented defaults and keeps
// loopr's runtime folders out of git. Idempotent: an existing config is checked, not replaced.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"

namespace loopr::cli {
namespace {

// The branch HEAD points at (`ref: refs/heads/NAME`), or empty when detached or unreadable.
std::string current_branch(const std::filesystem::path& root) {
  std::filesystem::path git = root / ".git";
  std::error_code ec;
  if (std::filesystem::is_regular_file(git, ec)) {  // a worktree: `gitdir: PATH`
    std::ifstream f(git);
    std::string line;
    std::getline(f, line);
    if (line.rfind("gitdir: ", 0) == 0) git = std::filesystem::path(line.substr(8));
  }
  std::ifstream head(git / "HEAD");
  std::string line;
  std::getline(head, line);
  const std::string prefix = "ref: refs/heads/";
  return line.rfind(prefix, 0) == 0 ? line.substr(prefix.size()) : std::string();
}

}  // namespace

int run_init(const GlobalOptions& opts, const std::string& base) {
  RepoPaths paths(require_repo(opts));
  std::vector<std::string> done;
  std::error_code ec;
  std::filesystem::create_directories(paths.dot_loopr(), ec);
  if (ec)
    throw CommandError{kFailed, "cannot create " + paths.dot_loopr().string() + ": " + ec.message(),
                       "check the folder's permissions"};

  if (std::filesystem::exists(paths.config_file())) {
    Config config = require_config(paths);  // a bad existing file is reported, never overwritten
    if (!base.empty() && base != config.base_branch)
      throw CommandError{kUsage,
                         ".loopr/config.yml already sets base_branch: " + config.base_branch,
                         "edit base_branch in the file to change it"};
  } else {
    std::string branch = base.empty() ? current_branch(paths.root) : base;
    if (branch.empty()) branch = "main";
    std::ofstream out(paths.config_file());
    out << default_config_yaml(branch);
    if (!out)
      throw CommandError{kFailed, "cannot write " + paths.config_file().string(),
                         "check the folder's permissions"};
    done.push_back("wrote .loopr/config.yml (base branch " + branch + ")");
  }

  std::filesystem::path gitignore = paths.root / ".gitignore";
  std::string existing;
  {
    std::ifstream in(gitignore);
    std::ostringstream s;
    s << in.rdbuf();
    existing = s.str();
  }
  std::istringstream lines(existing);
  std::set<std::string> present;
  for (std::string line; std::getline(lines, line);) present.insert(line);
  std::string add;
  for (const char* dir : kIgnoredDirs)
    if (!present.count(dir)) add += std::string(dir) + "\n";
  if (!add.empty()) {
    std::ofstream out(gitignore, std::ios::app);
    if (!existing.empty() && existing.back() != '\n') out << "\n";
    if (!present.count("# loopr")) out << "# loopr\n";
    out << add;
    done.push_back("added loopr's runtime folders to .gitignore");
  }

  if (opts.json) {
    std::cout << nlohmann::json{{"config", paths.config_file().string()}, {"changed", done}}.dump()
              << "\n";
  } else if (!opts.quiet) {
    if (done.empty()) std::cout << "loopr is already set up in " << paths.root.string() << "\n";
    for (const auto& line : done) std::cout << line << "\n";
  }
  return kOk;
}

int run_config(const GlobalOptions& opts) {
  RepoPaths paths(require_repo(opts));
  Config config = require_config(paths);
  bool exists = std::filesystem::exists(paths.config_file());
  if (opts.json) {
    std::cout << nlohmann::json{{"file", paths.config_file().string()},
                                {"exists", exists},
                                {"base_branch", config.base_branch},
                                {"merge", to_string(config.merge)},
                                {"provider", config.llm.provider},
                                {"model", config.llm.model}}
                     .dump()
              << "\n";
  } else if (!opts.quiet) {
    std::cout << (exists ? paths.config_file().string() + " is valid"
                         : std::string("no .loopr/config.yml: using the defaults"))
              << "\nprovider " << config.llm.provider << ", model " << config.llm.model
              << ", base branch " << config.base_branch << ", merge " << to_string(config.merge)
              << "\n";
  }
  return kOk;
}

}  // namespace loopr::cli
