// Warm build caches per repository (issue 41 item 2), with the real bwrap: every command gets a
// fresh private home, yet Go's build cache is the repository's own (.loopr/cache/go-build), so a
// loop's second test run in its worktree is warm; `sandbox: none` leaves the tools' own caches.
#include <gtest/gtest.h>

#include <loopr/exec/build_caches.hpp>
#include <loopr/exec/executor.hpp>

#include "support/command_env.hpp"
#include "support/sandbox_fixture.hpp"
#include "support/subprocess.hpp"

using namespace loopr;
using namespace loopr::testing;
using namespace std::chrono_literals;

namespace {

// A Go module, committed, with the loop's worktree.
class BuildCachesTest : public RepoWithLoopWorktreeTest {
 protected:
  BuildCachesTest()
      : RepoWithLoopWorktreeTest(
            "loopr-build-caches",
            {{"go.mod", "module example.com/fx\n\ngo 1.19\n"},
             {"calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n"},
             {"calc_test.go",
              "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n"
              "\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n"}}) {}

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
  auto r = run_shell(
      *e, worktree,
      "for v in GOCACHE GOMODCACHE CARGO_HOME npm_config_cache PIP_CACHE_DIR UV_CACHE_DIR "
      "CCACHE_DIR GRADLE_USER_HOME; do eval d=\\$$v; test -d \"$d\" && test -w \"$d\" && "
      "echo \"$v=$d\"; done",
      30s);
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
  auto go_test = [&] { return run_shell(*e, worktree, "go test ./...", 300s); };
  auto first = go_test();
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(first.output.find("(cached)"), std::string::npos) << first.output;
  auto second = go_test();  // a new sandbox, a new empty home: warm only through the cache
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("(cached)"), std::string::npos) << second.output;
  EXPECT_FALSE(fs::is_empty(exec::caches_dir(RepoPaths(repo)) / "go-build"));
}

}  // namespace
