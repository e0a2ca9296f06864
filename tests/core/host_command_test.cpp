// What the host runs (core/host_command.hpp, docs/security.md B4): a notify command never runs a
// file inside the repository, and host commands get a minimal environment.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <loopr/core/config.hpp>
#include <loopr/core/host_command.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
namespace fs = std::filesystem;

namespace {

void touch(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "echo\n";
}

}  // namespace

// proves S4.1
TEST(HostCommandTest, ACommandNamingAFileInsideTheRepositoryIsFound) {
  loopr::testing::TempDir dir{"loopr-host"};
  const fs::path root = fs::canonical(dir.path());
  const fs::path repo = root / "repo", home = root / "home";
  touch(repo / "tools/notify.sh");
  touch(repo / "notify.sh");
  touch(home / "bin/notify.sh");
  fs::create_directory_symlink(repo / "tools", home / "linked");
  EXPECT_EQ(repo_path_in_command("sh tools/notify.sh", repo, home), "tools/notify.sh");
  EXPECT_EQ(repo_path_in_command("./notify.sh", repo, home), "./notify.sh");
  EXPECT_EQ(repo_path_in_command("bash -c 'sh notify.sh'", repo, home), "notify.sh");
  EXPECT_EQ(repo_path_in_command("sh " + (repo / "tools/notify.sh").string(), repo, home),
            (repo / "tools/notify.sh").string());
  EXPECT_EQ(repo_path_in_command("sh ~/linked/notify.sh", repo, home), "~/linked/notify.sh");
  EXPECT_EQ(repo_path_in_command("sh " + (home / "linked/notify.sh").string(), repo, home),
            (home / "linked/notify.sh").string());
  EXPECT_EQ(repo_path_in_command("notify-send loopr \"$LOOPR_EVENT\"", repo, home), "");
  EXPECT_EQ(repo_path_in_command("sh ~/bin/notify.sh", repo, home), "");
  EXPECT_EQ(repo_path_in_command("curl -s https://example.com/hook -d @-", repo, home), "");
  Config c;
  c.notify.push_back({"notify-send done", {}, std::chrono::seconds(5)});
  c.notify.push_back({"sh tools/notify.sh", {}, std::chrono::seconds(5)});
  auto problems = host_command_problems(c, repo, home);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].rfind("notify[1].command runs tools/notify.sh", 0), 0u) << problems[0];
}

// proves S4.2
TEST(HostCommandTest, TheMinimalEnvironmentHasNoKeysOrTokens) {
  ::setenv("ANTHROPIC_API_KEY", "sk-secret", 1);
  ::setenv("GITHUB_TOKEN", "ghp_secret", 1);
  ::setenv("LANG", "C.UTF-8", 1);
  auto env = minimal_host_env();
  EXPECT_EQ(env.count("ANTHROPIC_API_KEY"), 0u);
  EXPECT_EQ(env.count("GITHUB_TOKEN"), 0u);
  EXPECT_EQ(env["LANG"], "C.UTF-8");
  EXPECT_FALSE(env["PATH"].empty());
  for (const auto& [k, v] : env) EXPECT_EQ(v.find("secret"), std::string::npos) << k;
  ::unsetenv("ANTHROPIC_API_KEY");
  ::unsetenv("GITHUB_TOKEN");
}
