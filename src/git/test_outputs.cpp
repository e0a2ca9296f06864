#include <loopr/git/test_outputs.hpp>

#include <fstream>
#include <set>

#include <loopr/core/process.hpp>

namespace loopr::git {
namespace fs = std::filesystem;

namespace {

// The repository's common git folder (`.git`, also for a linked worktree of it).
fs::path common_dir(const fs::path& repo_root) {
  ProcessSpec spec;
  spec.argv = {"git", "-C", repo_root.string(), "rev-parse", "--path-format=absolute",
               "--git-common-dir"};
  spec.timeout = std::chrono::seconds(30);
  spec.merge_stderr = false;
  ProcessResult r = run_process(spec);
  if (!r.succeeded()) return {};
  return r.output.substr(0, r.output.find('\n'));
}

}  // namespace

std::vector<std::string> untracked_paths(const fs::path& work_tree,
                                         const std::vector<std::string>& except) {
  ProcessSpec spec;
  spec.argv = {"git", "-C", work_tree.string(), "ls-files", "-z", "--others",
               "--exclude-standard", "--directory", "--no-empty-directory"};
  spec.timeout = std::chrono::seconds(60);
  spec.merge_stderr = false;
  ProcessResult r = run_process(spec);
  std::vector<std::string> out;
  if (!r.succeeded()) return out;
  std::set<std::string> skip;
  for (const auto& e : except) skip.insert(e), skip.insert(e + "/");
  std::size_t at = 0;
  while (at < r.output.size()) {
    std::size_t end = r.output.find('\0', at);
    if (end == std::string::npos) end = r.output.size();
    std::string path = r.output.substr(at, end - at);
    if (!path.empty() && !skip.count(path) && path.find('\n') == std::string::npos)
      out.push_back(path);
    at = end + 1;
  }
  return out;
}

std::vector<std::string> recorded_test_outputs(const fs::path& repo_root) {
  std::vector<std::string> out;
  fs::path dir = common_dir(repo_root);
  if (dir.empty()) return out;
  std::ifstream in(dir / kTestOutputsFile);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

void record_test_outputs(const fs::path& repo_root, const std::vector<std::string>& paths) {
  if (paths.empty()) return;
  fs::path dir = common_dir(repo_root);
  if (dir.empty()) return;
  auto have = recorded_test_outputs(repo_root);
  std::set<std::string> all(have.begin(), have.end());
  std::size_t before = all.size();
  all.insert(paths.begin(), paths.end());
  if (all.size() == before) return;
  fs::path file = dir / kTestOutputsFile, tmp = dir / (std::string(kTestOutputsFile) + ".new");
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& p : all) out << p << "\n";
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
}

}  // namespace loopr::git
