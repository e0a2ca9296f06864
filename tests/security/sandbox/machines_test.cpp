// Real machines' toolchains and caches (issue 41) against the real bubblewrap (label
// `security`): a repository's build caches are a channel to nobody else, binding them shows
// nothing else of the home, and a secret location is never shown however it is listed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include <loopr/core/secret_paths.hpp>
#include <loopr/exec/build_caches.hpp>
#include <loopr/exec/executor.hpp>
#include <loopr/project/toolchains.hpp>

#include "security/sandbox/worktree_fixture.hpp"
#include "support/command_env.hpp"

using namespace loopr;
using namespace loopr::testing;

namespace {

class MachinesSandboxTest : public LoopWorktreeTest {
 protected:
  MachinesSandboxTest() : LoopWorktreeTest("loopr-machines-sec") {}

  fs::path home() const { return fs::canonical(dir.path()) / "home"; }

  void SetUp() override {
    LoopWorktreeTest::SetUp();
    fs::create_directories(home());
    write_file(home() / ".ssh/id_ed25519", "SECRET-SSH-KEY-41\n");
    write_file(home() / ".cache/go-build/users-own", "the person's own cache\n");
  }

  std::unique_ptr<exec::Executor> executor_for(const fs::path& repo_root) {
    exec::ExecutorOptions o{RepoPaths(repo_root)};
    o.env = path_and_home_env(home().string());
    return exec::make_executor(config, o);
  }

  // A second repository of the same person, with its own loop worktree.
  fs::path other_repo() {
    fs::path other = fs::canonical(dir.path()) / "other";
    write_file(other / "README", "other\n");
    auto init = git_init_with_loop_worktree(other);
    EXPECT_EQ(init.exit_code, 0) << init.output;
    return other;
  }
};

// proves S1.40
TEST_F(MachinesSandboxTest, ABuildCacheIsNeverSharedBetweenRepositoriesNorWithThePersonsOwn) {
  auto a = executor_for(repo);
  if (auto why = a->unavailable()) GTEST_SKIP() << *why;
  auto planted = run_shell(*a, worktree,
                           "printf '#!/bin/sh\\necho planted\\n' > \"$GOCACHE/planted\" && "
                           "chmod +x \"$GOCACHE/planted\" && echo \"$GOCACHE\"");
  ASSERT_EQ(planted.exit_code, 0) << planted.output;
  // Kept in this repository's cache, for its later commands.
  EXPECT_TRUE(fs::exists(exec::caches_dir(RepoPaths(repo)) / "go-build/planted"));
  auto again = run_shell(*a, worktree, "\"$GOCACHE/planted\"");
  EXPECT_EQ(again.output, "planted\n") << "the repository's next command sees its cache";
  // Another repository's sandbox does not see it, and has its own cache.
  fs::path other = other_repo();
  auto b = executor_for(other);
  auto seen = run_shell(*b, other / ".loopr/worktrees/code-001",
                        "ls \"$GOCACHE\"; test -e \"$GOCACHE/planted\" && echo SHARED; "
                        "ls " +
                            (repo / ".loopr/cache/go-build").string() + " 2>&1 | head -1");
  EXPECT_EQ(seen.output.find("SHARED"), std::string::npos) << seen.output;
  EXPECT_EQ(seen.output.find("planted"), std::string::npos) << seen.output;
  EXPECT_FALSE(fs::exists(exec::caches_dir(RepoPaths(other)) / "go-build/planted"));
  // Never the person's own caches: nothing written there, and theirs is not what commands use.
  EXPECT_FALSE(fs::exists(home() / ".cache/go-build/planted"));
  auto own = run_shell(
      *a, worktree,
      "cat " + (home() / ".cache/go-build/users-own").string() + " 2>&1; ls \"$GOCACHE\"");
  EXPECT_EQ(own.output.find("the person's own cache"), std::string::npos) << own.output;
  // Out of git: the cache folder ignores itself, so nothing in it is committed or merged.
  auto status = run_command("git status --porcelain --ignored=no", repo.string());
  EXPECT_EQ(status.output.find(".loopr/cache"), std::string::npos) << status.output;
}

// proves S1.41
TEST_F(MachinesSandboxTest, TheCachesShowNothingElseOfTheHome) {
  auto e = executor_for(repo);
  if (auto why = e->unavailable()) GTEST_SKIP() << *why;
  auto r =
      run_shell(*e, worktree,
                "cd \"$HOME\" && find . -mindepth 1 | sort; cat .ssh/id_ed25519 2>&1 | head -1");
  EXPECT_EQ(r.output.find("SECRET-SSH-KEY-41"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("users-own"), std::string::npos) << r.output;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("cat:", 0) == 0) continue;
    EXPECT_TRUE(line == "./.cache" || line.rfind("./.cache/loopr", 0) == 0)
        << "only the cache folders in the private home: " << r.output;
  }
}

// proves S1.42
TEST_F(MachinesSandboxTest, ASecretLocationIsRefusedByNameAndNeverShownThroughALink) {
  for (const char* entry : {"~/.ssh", "~/.aws", "~/.config/gh", "~/.netrc", "~/.npmrc", "~/.docker",
                            "~/.git-credentials", "~/.gnupg", "~/Library/Keychains",
                            "~/.local/share/keyrings", "~", "/home"}) {
    auto c = parse_config(std::string("sandbox:\n  read_only: [\"") + entry + "\"]\n", "c.yml");
    ASSERT_FALSE(c) << entry << " was accepted";
    EXPECT_NE(c.error().message.find("sandbox.read_only"), std::string::npos) << c.error().message;
  }
  // A link that resolves into one, and a toolchain folder holding a credentials file.
  fs::create_directory_symlink(home() / ".ssh", fs::canonical(dir.path()) / "innocent");
  write_file(home() / ".cargo/bin/cargo", "#!/bin/sh\n");
  write_file(home() / ".cargo/credentials.toml", "token = \"SECRET-CARGO-TOKEN-41\"\n");
  config.read_only = {(fs::canonical(dir.path()) / "innocent").string(),
                      (home() / ".cargo").string()};
  auto e = executor_for(repo);
  if (auto why = e->unavailable()) GTEST_SKIP() << *why;
  auto r = run_shell(*e, worktree,
                     "cat " + (fs::canonical(dir.path()) / "innocent/id_ed25519").string() + " " +
                         (home() / ".ssh/id_ed25519").string() + " " +
                         (home() / ".cargo/credentials.toml").string() + " 2>&1; ls " +
                         (home() / ".cargo/bin").string());
  EXPECT_EQ(r.output.find("SECRET-SSH-KEY-41"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("SECRET-CARGO-TOKEN-41"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cargo"), std::string::npos)
      << "the toolchain folder is shown: " << r.output;
}

// proves S1.43
TEST_F(MachinesSandboxTest, InitsToolchainDetectionNeverNamesAHomeOrASecretLocation) {
  write_file(home() / ".ssh/pytest", "#!/bin/sh\n");
  write_file(home() / "bin/tox", "#!/bin/sh\n");
  for (auto p : {home() / ".ssh/pytest", home() / "bin/tox"})
    fs::permissions(p, fs::perms::owner_all);
  auto env = [h = home()](const char* name) -> std::optional<std::string> {
    if (std::string(name) == "PATH")
      return (h / ".ssh").string() + ":" + (h / "bin").string() + ":/usr/bin:/bin";
    if (std::string(name) == "HOME") return h.string();
    return std::nullopt;
  };
  auto found = project::resolve_toolchains(repo, "pytest && tox", env);
  for (const auto& t : found) {
    EXPECT_TRUE(secret_path_problem(t.path, home()).empty()) << t.path;
    EXPECT_NE(fs::path(t.path), home());
  }
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, (home() / "bin").string());
}

}  // namespace
