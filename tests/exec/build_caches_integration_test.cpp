// Warm build caches per repository (issue 41 item 2), with the real bwrap: every command gets a
// fresh private home, yet Go's build cache is the repository's own (.loopr/cache/go-build), so a
// loop's second test run in its worktree is warm; `sandbox: none` leaves the tools' own caches.
#include <gtest/gtest.h>

#include <loopr/exec/build_caches.hpp>
#include <loopr/exec/executor.hpp>

#include "support/command_env.hpp"
#include "support/git_repo.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using namespace std::chrono_literals;
using loopr::testing::git_init_with_loop_worktree;
using loopr::testing::run_command;
using loopr::testing::TempDir;
using loopr::testing::write_file;
namespace fs = std::filesystem;

namespace {

class BuildCachesTest : public ::testing::Test {
 protected:
  TempDir dir{"loopr-build-caches"};
  fs::path repo, worktree;

  void SetUp() override {
    repo = fs::canonical(dir.path()) / "repo";
    write_file(repo / "go.mod", "module example.com/fx\n\ngo 1.19\n");
    write_file(repo / "calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n");
    write_file(repo / "calc_test.go",
               "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n"
               "\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n");
    auto init = git_init_with_loop_worktree(repo);
    ASSERT_EQ(init.exit_code, 0) << init.output;
    worktree = repo / ".loopr/worktrees/code-001";
  }

  std::unique_ptr<exec::Executor> executor() {
    exec::ExecutorOptions o{RepoPaths(repo)};
    o.env = loopr::testing::path_and_home_env((fs::canonical(dir.path()) / "home").string());
    fs::create_directories(fs::canonical(dir.path()) / "home");
    return exec::make_executor(SandboxConfig{}, o);
  }
};

TEST_F(BuildCachesTest, EachCommandSeesTheRepositorysCachesAtTheirVariables) {
  auto e = executor();
  if (auto why = e->unavailable()) GTEST_SKIP() << *why;
  exec::Command c = exec::Command::shell(
      "for v in GOCACHE GOMODCACHE CARGO_HOME npm_config_cache PIP_CACHE_DIR UV_CACHE_DIR "
      "CCACHE_DIR GRADLE_USER_HOME; do eval d=\\$$v; test -d \"$d\" && test -w \"$d\" && "
      "echo \"$v=$d\"; done",
      worktree);
  c.timeout = 30s;
  auto r = e->run(c);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const auto& m : exec::cache_mounts(RepoPaths(repo), fs::canonical(dir.path()) / "home"))
    EXPECT_NE(r.output.find(m.env + "=" + m.inside.string()), std::string::npos)
        << m.env << " writable at " << m.inside << ": " << r.output;
  EXPECT_EQ(run_command("cat .loopr/cache/.gitignore", repo.string()).output.find('*') !=
                std::string::npos,
            true);
}

TEST_F(BuildCachesTest, AGoModulesSecondTestRunInTheWorktreeIsWarm) {
  if (run_command("command -v go").exit_code != 0) GTEST_SKIP() << "go is not installed";
  auto e = executor();
  if (auto why = e->unavailable()) GTEST_SKIP() << *why;
  auto go_test = [&] {
    exec::Command c = exec::Command::shell("go test ./...", worktree);
    c.timeout = 300s;
    return e->run(c);
  };
  auto first = go_test();
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(first.output.find("(cached)"), std::string::npos) << first.output;
  auto second = go_test();  // a new sandbox, a new empty home: warm only through the cache
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("(cached)"), std::string::npos) << second.output;
  EXPECT_FALSE(fs::is_empty(exec::caches_dir(RepoPaths(repo)) / "go-build"));
}

}  // namespace
