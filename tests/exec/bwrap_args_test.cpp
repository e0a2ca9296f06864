// The sandbox's command line as data: what is hidden, what is visible again and in which order
// (bubblewrap applies mounts in order; a later one shadows an earlier one).
#include "exec/bwrap_args.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::exec;
using loopr::testing::TempDir;
using loopr::testing::write_file;

namespace {

SandboxLayout layout() {
  SandboxLayout l;
  l.system = {{"usr/bin", "/bin", ViewKind::symlink, "programs"},
              {"/usr", "/usr", ViewKind::read_only, "programs"},
              {"/etc", "/etc", ViewKind::read_only, "settings"}};
  l.repo_root = "/home/u/repo";
  l.worktrees_dir = "/home/u/repo/.loopr/worktrees";
  l.git_dirs = {"/home/u/repo/.git"};
  l.git_config = "/home/u/repo/.git/config";
  l.home = "/home/u";
  l.hide_files = {"/etc/shadow"};
  l.read_only = {"/home/u/.cargo"};
  l.tmp_size = 5 << 20;
  return l;
}

Command command(const std::string& workdir = "/home/u/repo/.loopr/worktrees/code-001-001-001") {
  Command c = Command::shell("make test", workdir);
  return c;
}

// Position of the first `opt value` pair (value may be a path), or npos.
std::size_t find_pair(const std::vector<std::string>& a, const std::string& opt,
                      const std::string& value) {
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == opt && a[i + 1] == value) return i;
  return std::string::npos;
}

std::size_t find_triple(const std::vector<std::string>& a, const std::string& opt,
                        const std::string& value) {
  for (std::size_t i = 0; i + 2 < a.size(); ++i)
    if (a[i] == opt && a[i + 1] == value && a[i + 2] == value) return i;
  return std::string::npos;
}

}  // namespace

TEST(BwrapArgumentsTest, EveryNamespaceIsNewAndNoCapabilityIsKept) {
  auto a = bwrap_arguments(layout(), command(), false, 3, 4);
  for (const char* opt : {"--unshare-all", "--unshare-user", "--disable-userns",
                          "--die-with-parent", "--new-session"})
    EXPECT_NE(std::find(a.begin(), a.end(), opt), a.end()) << opt;
  EXPECT_NE(find_pair(a, "--cap-drop", "ALL"), std::string::npos);
  EXPECT_EQ(std::find(a.begin(), a.end(), "--share-net"), a.end());
  EXPECT_NE(find_pair(a, "--json-status-fd", "4"), std::string::npos);
}

TEST(BwrapArgumentsTest, NetworkOnlyWhenAsked) {
  auto a = bwrap_arguments(layout(), command(), true, -1, 4);
  EXPECT_NE(std::find(a.begin(), a.end(), "--share-net"), a.end());
}

// The view is an allowlist: nothing of the host's root is bound as a whole.
// proves S1.1
TEST(BwrapArgumentsTest, TheViewIsAnAllowlistAndTheRootIsReadOnlyAtTheEnd) {
  auto a = bwrap_arguments(layout(), command(), false, 3, 4);
  EXPECT_EQ(find_triple(a, "--ro-bind", "/"), std::string::npos) << "the host's root is bound";
  EXPECT_NE(find_triple(a, "--ro-bind", "/usr"), std::string::npos);
  EXPECT_NE(find_triple(a, "--ro-bind", "/etc"), std::string::npos);
  for (const char* not_there : {"/var", "/srv", "/opt", "/home", "/root", "/run", "/mnt", "/media"})
    for (std::size_t i = 0; i < a.size(); ++i)
      EXPECT_FALSE(i > 0 && a[i] == not_there && a[i - 1] != "--tmpfs")
          << not_there << " is shown (" << a[i - 1] << ")";
  // The root is made read-only after the last mount: the marker stays, nothing grows beside.
  auto dashdash = std::find(a.begin(), a.end(), "--");
  std::size_t remount = find_pair(a, "--remount-ro", "/");
  std::size_t marker = find_pair(a, "--dir", kSandboxMarker);
  ASSERT_NE(remount, std::string::npos);
  ASSERT_NE(marker, std::string::npos);
  EXPECT_LT(marker, remount);
  EXPECT_EQ(static_cast<std::ptrdiff_t>(remount + 4), dashdash - a.begin());  // then --chdir WT
}

TEST(BwrapArgumentsTest, HiddenParentsComeBeforeTheirChildrenAndBeforeWhatIsShownAgain) {
  auto l = layout();
  l.read_only.push_back("/home");  // a person widened the view to /home
  auto a = bwrap_arguments(l, command(), false, 3, 4);
  std::size_t home_parent = find_triple(a, "--ro-bind-try", "/home");
  std::size_t home = find_pair(a, "--tmpfs", "/home/u");
  std::size_t repo = find_pair(a, "--tmpfs", "/home/u/repo");
  std::size_t git = find_triple(a, "--ro-bind", "/home/u/repo/.git");
  std::size_t config = find_pair(a, "--ro-bind-data", "3");
  std::size_t cargo = find_triple(a, "--ro-bind-try", "/home/u/.cargo");
  std::size_t wt = find_triple(a, "--bind", "/home/u/repo/.loopr/worktrees/code-001-001-001");
  for (auto p : {home_parent, home, repo, git, config, cargo, wt}) ASSERT_NE(p, std::string::npos);
  EXPECT_LT(home_parent, home);
  EXPECT_LT(home, repo);
  EXPECT_LT(repo, git);
  EXPECT_LT(git, config);
  EXPECT_EQ(a[config + 2], "/home/u/repo/.git/config");
  EXPECT_LT(home, cargo);
  EXPECT_LT(git, wt);
  EXPECT_NE(find_pair(a, "--ro-bind", "/dev/null"), std::string::npos) << "/etc/shadow";
  // Without the widening, the checkout is not hidden: it is not there at all.
  auto plain = bwrap_arguments(layout(), command(), false, 3, 4);
  EXPECT_EQ(find_pair(plain, "--tmpfs", "/home/u/repo"), std::string::npos);
  EXPECT_EQ(std::find(plain.begin(), plain.end(), "/home/u/repo"), plain.end());
}

TEST(BwrapArgumentsTest, EveryHiddenPlaceIsASmallTmpfsAndTheHomeGetsTheTmpSize) {
  auto l = layout();
  l.read_only.push_back("/home");
  l.hide_dirs.push_back("/etc/secrets");
  auto a = bwrap_arguments(l, command(), false, 3, 4);
  for (const char* d : {"/home/u/repo", "/etc/secrets"}) {
    std::size_t at = find_pair(a, "--tmpfs", d);
    ASSERT_NE(at, std::string::npos) << d;
    ASSERT_GE(at, 2u);
    EXPECT_EQ(a[at - 2], "--size") << d;
    EXPECT_EQ(a[at - 1], std::to_string(1 << 20)) << d;
  }
  std::size_t home = find_pair(a, "--tmpfs", "/home/u");
  ASSERT_GE(home, 2u);
  EXPECT_EQ(a[home - 2], "--size");
  EXPECT_EQ(a[home - 1], std::to_string(5 << 20));
  std::size_t tmp = find_pair(a, "--tmpfs", "/tmp");
  ASSERT_GE(tmp, 2u);
  EXPECT_EQ(a[tmp - 1], std::to_string(5 << 20));
}

TEST(BwrapArgumentsTest, TheWorktreesDotGitFileIsPinnedReadOnly) {
  TempDir dir{"loopr-bwrap-args"};
  write_file(dir / "wt/.git", "gitdir: /x/.git/worktrees/wt\n");
  auto l = layout();
  auto a = bwrap_arguments(l, command((dir / "wt").string()), false, 3, 4);
  std::size_t wt = find_triple(a, "--bind", (dir / "wt").string());
  std::size_t dotgit = find_triple(a, "--ro-bind", (dir / "wt/.git").string());
  ASSERT_NE(wt, std::string::npos);
  ASSERT_NE(dotgit, std::string::npos);
  EXPECT_LT(wt, dotgit);
  // The command comes last, after `--chdir WORKTREE --`.
  auto dashdash = std::find(a.begin(), a.end(), "--");
  ASSERT_NE(dashdash, a.end());
  EXPECT_EQ(*(dashdash - 1), (dir / "wt").string());
  EXPECT_EQ(std::vector<std::string>(dashdash + 1, a.end()),
            (std::vector<std::string>{"/bin/sh", "-c", "make test"}));
}

TEST(BwrapArgumentsTest, WorktreesOutsideTheRepositoryAreHiddenToo) {
  auto l = layout();
  l.worktrees_dir = "/shared/loopr-worktrees";
  auto a = bwrap_arguments(l, command("/shared/loopr-worktrees/code-001-001-001"), false, 3, 4);
  EXPECT_EQ(std::find(a.begin(), a.end(), "/shared/loopr-worktrees"), a.end());
  l.read_only.push_back("/shared");  // shown by the person: the other worktrees stay hidden
  a = bwrap_arguments(l, command("/shared/loopr-worktrees/code-001-001-001"), false, 3, 4);
  EXPECT_NE(find_pair(a, "--tmpfs", "/shared/loopr-worktrees"), std::string::npos);
}

TEST(SanitizeGitConfigTest, KeepsWhatGitNeedsToReadAndDropsCredentialsIncludesAndCommands) {
  std::string config = R"([core]
	repositoryformatversion = 1
	filemode = true
	bare = false
	fsmonitor = touch /tmp/pwned
	hooksPath = /tmp/hooks
	sshCommand = ssh -i ~/.ssh/id_rsa
[extensions]
	objectformat = sha256
[remote "origin"]
	url = https://user:ghp_SECRETTOKEN@github.com/x/y.git
	fetch = +refs/heads/*:refs/remotes/origin/*
[credential]
	helper = store
[http "https://example.com"]
	extraHeader = Authorization: Bearer SECRET2
[include]
	path = ~/.gitconfig-secrets
[user]
	name = Someone
)";
  std::string out = sanitize_git_config(config);
  EXPECT_NE(out.find("repositoryformatversion = 1"), std::string::npos) << out;
  EXPECT_NE(out.find("bare = false"), std::string::npos);
  EXPECT_NE(out.find("objectformat = sha256"), std::string::npos);
  for (const char* gone : {"SECRET", "fsmonitor", "hooksPath", "hookspath", "sshCommand",
                           "sshcommand", "origin", "helper", "include", "gitconfig", "Someone"})
    EXPECT_EQ(out.find(gone), std::string::npos) << gone << " in\n" << out;
}

TEST(SanitizeGitConfigTest, ContinuationLinesAndOneLineSectionsDoNotSmuggleKeys) {
  std::string config =
      "[remote \"x\"] url = https://t:SECRET@h/x\n[core] bare = false\n[core]\n\tfilemode = "
      "\\\n\tSECRET\n";
  std::string out = sanitize_git_config(config);
  EXPECT_NE(out.find("bare = false"), std::string::npos) << out;
  EXPECT_EQ(out.find("SECRET"), std::string::npos) << out;
}

TEST(FindGitDirsTest, ALinkedWorktreeNamesItsAdminFolderAndTheCommonDir) {
  TempDir dir{"loopr-gitdirs"};
  write_file(dir / "repo/.git/HEAD", "ref: refs/heads/main\n");
  write_file(dir / "repo/.git/worktrees/wt/commondir", "../..\n");
  write_file(dir / "wt/.git", "gitdir: " + (dir / "repo/.git/worktrees/wt").string() + "\n");
  auto main = find_git_dirs(dir / "repo");
  EXPECT_EQ(main.git_dir, std::filesystem::canonical(dir / "repo/.git"));
  EXPECT_EQ(main.common_dir, main.git_dir);
  auto linked = find_git_dirs(dir / "wt");
  EXPECT_EQ(linked.git_dir, std::filesystem::canonical(dir / "repo/.git/worktrees/wt"));
  EXPECT_EQ(linked.common_dir, std::filesystem::canonical(dir / "repo/.git"));
}

TEST(BwrapArgumentsTest, AWorktreeThatIsTheRepositoryRootStaysWritable) {
  auto l = layout();
  auto a = bwrap_arguments(l, command("/home/u/repo"), false, 3, 4);
  EXPECT_EQ(find_pair(a, "--tmpfs", "/home/u/repo"), std::string::npos);
  EXPECT_NE(find_triple(a, "--bind", "/home/u/repo"), std::string::npos);
}

TEST(BwrapArgumentsTest, DevIsReadOnlyAndDevShmABoundedTmpfs) {
  auto a = bwrap_arguments(layout(), command(), false, 3, 4);
  std::size_t dev = find_pair(a, "--dev", "/dev");
  std::size_t ro = find_pair(a, "--remount-ro", "/dev");
  std::size_t shm = find_pair(a, "--tmpfs", "/dev/shm");
  ASSERT_NE(dev, std::string::npos);
  ASSERT_NE(ro, std::string::npos);
  ASSERT_NE(shm, std::string::npos);
  EXPECT_LT(dev, ro);
  EXPECT_LT(ro, shm);
  EXPECT_EQ(a[shm - 2], "--size");
  EXPECT_EQ(a[shm - 1], std::to_string(5 << 20));
  EXPECT_EQ(find_pair(a, "--seccomp", "5"), std::string::npos);
  auto filtered = bwrap_arguments(layout(), command(), false, 3, 4, 5);
  std::size_t seccomp = find_pair(filtered, "--seccomp", "5");
  ASSERT_NE(seccomp, std::string::npos);
  EXPECT_LT(seccomp, find_pair(filtered, "--chdir", command().workdir.string()));
}

// `sandbox.read_only: [node_modules]`: the checkout's folder at its own place and, in a git
// worktree, at the same relative place there, after the worktree's own bind (so it shows over
// it), unless the worktree has its own (non-empty) copy.
TEST(BwrapArgumentsTest, CheckoutPathsShowInTheWorktreeUnlessItHasItsOwn) {
  TempDir dir{"loopr-bwrap-args"};
  std::string wt = (dir / "wt").string();
  write_file(dir / "wt/.git", "gitdir: /home/u/repo/.git/worktrees/wt\n");
  write_file(dir / "wt/vendor/kept.txt", "tracked here\n");
  std::filesystem::create_directories(dir / "wt/.venv");  // an empty mount point of a run before
  SandboxLayout l = layout();
  l.read_only.push_back("/home/u/repo/node_modules");
  l.checkout_paths = {{"/home/u/repo/node_modules", "node_modules"},
                      {"/home/u/repo/.venv", ".venv"},
                      {"/home/u/repo/vendor", "vendor"}};
  auto a = bwrap_arguments(l, command(wt), false, 3, 4);
  std::size_t bind = find_triple(a, "--bind", wt);
  std::size_t own = find_triple(a, "--ro-bind-try", "/home/u/repo/node_modules");
  std::size_t in_wt = find_pair(a, "--ro-bind-try", "/home/u/repo/node_modules");
  ASSERT_NE(bind, std::string::npos);
  ASSERT_NE(own, std::string::npos);
  EXPECT_LT(own, bind);
  // The first pair is the own-place mount; the worktree's follows the worktree's bind.
  std::size_t wt_mount = std::string::npos;
  for (std::size_t i = bind; i + 2 < a.size(); ++i)
    if (a[i] == "--ro-bind-try" && a[i + 1] == "/home/u/repo/node_modules") wt_mount = i;
  ASSERT_NE(wt_mount, std::string::npos);
  EXPECT_EQ(a[wt_mount + 2], wt + "/node_modules");
  EXPECT_LE(in_wt, own);
  EXPECT_NE(std::find(a.begin(), a.end(), wt + "/.venv"), a.end());
  EXPECT_EQ(std::find(a.begin(), a.end(), wt + "/vendor"), a.end()) << "its own copy is kept";
  // A scratch folder (no `.git`) gets none of them.
  std::filesystem::create_directories(dir / "scratch");
  auto s = bwrap_arguments(l, command((dir / "scratch").string()), false, 3, 4);
  EXPECT_EQ(std::find(s.begin(), s.end(), (dir / "scratch/node_modules").string()), s.end());
}

TEST(BwrapArgumentsTest, MountPointsAreFreeWhenMissingOrEmpty) {
  TempDir dir{"loopr-bwrap-mp"};
  write_file(dir / "full/a", "x");
  write_file(dir / "empty_file", "");
  write_file(dir / "file", "x");
  std::filesystem::create_directories(dir / "empty");
  EXPECT_TRUE(mount_point_free(dir / "missing"));
  EXPECT_TRUE(mount_point_free(dir / "empty"));
  EXPECT_TRUE(mount_point_free(dir / "empty_file"));
  EXPECT_FALSE(mount_point_free(dir / "full"));
  EXPECT_FALSE(mount_point_free(dir / "file"));
  std::filesystem::create_symlink(dir / "empty", dir / "link");
  EXPECT_FALSE(mount_point_free(dir / "link"));
}

TEST(BwrapArgumentsTest, EnvValuesExpandWorktreeAndVariables) {
  std::map<std::string, std::string> vars = {{"PATH", "/usr/bin:/bin"}, {"WORKTREE", "/w/t"}};
  EXPECT_EQ(expand_env_value("$WORKTREE/src", vars), "/w/t/src");
  EXPECT_EQ(expand_env_value("${WORKTREE}/.venv/bin:$PATH", vars), "/w/t/.venv/bin:/usr/bin:/bin");
  EXPECT_EQ(expand_env_value("src", vars), "src");
  EXPECT_EQ(expand_env_value("$NOPE|$$|$|${unclosed", vars), "|$|$|${unclosed");
  std::map<std::string, std::string> env = {{"PATH", "/usr/bin"}, {"HOME", "/h"}};
  apply_env_values(env, {{"PYTHONPATH", "$WORKTREE/src"}, {"PATH", "$WORKTREE/bin:$PATH"}}, "/w/t");
  EXPECT_EQ(env["PYTHONPATH"], "/w/t/src");
  EXPECT_EQ(env["PATH"], "/w/t/bin:/usr/bin");
  EXPECT_EQ(env["HOME"], "/h");
}
