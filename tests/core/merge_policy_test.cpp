// The merge policy as a pure function (core/merge_policy.hpp, docs/security.md B3): one table
// row per kind of entry a committed diff can hold, and what the policy says of it.
#include <gtest/gtest.h>

#include <loopr/core/config.hpp>
#include <loopr/core/merge_policy.hpp>

using namespace loopr;
using K = PathChange::Kind;
using R = HeldPath::Role;

namespace {

constexpr std::uint32_t kFile = 0100644, kExec = 0100755, kLink = 0120000;

PathChange entry(K kind, std::string path, std::uint32_t mode = kFile, std::uint64_t size = 10,
                 std::string target = {}) {
  PathChange c;
  c.kind = kind;
  c.path = std::move(path);
  c.old_mode = kind == K::added ? 0 : kFile;
  c.new_mode = kind == K::deleted ? 0 : mode;
  c.new_size = size;
  c.link_target = std::move(target);
  return c;
}

MergeRules rules() {
  MergeRules r;
  r.harness = {"/check.sh", "/package.json#scripts.test"};
  r.hold = ProtectConfig::default_hold();
  r.tests = ProtectConfig::default_tests();
  r.max_file_size = 1000;
  r.max_tree_size = 5000;
  return r;
}

struct Row {
  const char* what;
  PathChange change;
  std::optional<R> role;  ///< nullopt: merges
};

std::optional<R> verdict(const PathChange& c, const MergeRules& r) {
  auto held = merge_policy({c}, r);
  if (held.empty()) return std::nullopt;
  return held.front().role;
}

}  // namespace

// proves S3.2 S3.3 S3.4 S3.5 S3.7
TEST(MergePolicyTest, EachKindOfEntryGetsItsVerdict) {
  PathChange gitignore = entry(K::modified, ".gitignore");
  gitignore.before = ".loopr/state/\n.loopr/run/\n.loopr/worktrees/\nbuild/\n";
  gitignore.after = "build/\n";
  PathChange gitignore_kept = gitignore;
  gitignore_kept.after = "/.loopr/state\n.loopr/run/\n.loopr/worktrees/\nbuild/\nnode_modules/\n";
  PathChange gitignore_negated = gitignore_kept;
  *gitignore_negated.after += "!.loopr/run/\n";
  const std::vector<Row> table = {
      {"an ordinary file", entry(K::added, "src/a.c"), std::nullopt},
      {"a symlink inside the repository", entry(K::added, "docs/link", kLink, 7, "../src/a.c"),
       R::symlink},
      {"a symlink to an absolute path",
       entry(K::added, "docs/deploy-key", kLink, 20, "/home/u/.ssh/id_rsa"), R::refused},
      {"a symlink leaving the repository",
       entry(K::added, "docs/k", kLink, 20, "../../.ssh/id_rsa"), R::refused},
      {"a symlink into .git", entry(K::added, "x", kLink, 20, "./.git/config"), R::refused},
      {"a file turned into a symlink", entry(K::mode_changed, "src/a.c", kLink, 5, "b.c"),
       R::symlink},
      {".claude as a symlink", entry(K::added, ".claude", kLink, 5, "tools"), R::auto_run},
      {".vscode as a symlink", entry(K::added, "sub/.vscode", kLink, 5, "../tools"), R::auto_run},
      {".loopr as a symlink", entry(K::added, ".loopr", kLink, 5, "x"), R::loopr},
      {".loopr/prompts as a symlink", entry(K::added, ".loopr/prompts", kLink, 5, "../x"),
       R::loopr},
      {".loopr/prompts as a file", entry(K::added, ".loopr/prompts"), R::loopr},
      {"a prompt", entry(K::modified, ".loopr/prompts/code.md"), R::loopr},
      {"the config", entry(K::modified, ".loopr/config.yml"), R::loopr},
      {"a plan artifact", entry(K::added, ".loopr/plans/001-x.plan.md"), std::nullopt},
      {".gitignore without loopr's lines", gitignore, R::loopr},
      {".gitignore keeping loopr's lines", gitignore_kept, std::nullopt},
      {".gitignore negating a loopr line", gitignore_negated, R::loopr},
      {"a .githooks hook", entry(K::added, ".githooks/pre-commit", kExec), R::hooks},
      {".githooks as a symlink", entry(K::added, ".githooks", kLink, 5, "tools"), R::hooks},
      {"a husky hook", entry(K::added, ".husky/pre-commit", kExec), R::hooks},
      {"the harness", entry(K::modified, "check.sh"), R::harness},
      {"a new test", entry(K::added, "tests/t_new.sh"), std::nullopt},
      {"an existing test changed", entry(K::modified, "tests/t_other.sh"), R::test},
      {"an existing test deleted", entry(K::deleted, "tests/t_other.sh"), R::test},
      {"a tests folder replaced by a symlink", entry(K::added, "tests", kLink, 5, "src"),
       R::symlink},
      {"a file past the file limit", entry(K::added, "big.bin", kFile, 1001), R::refused},
      {"a file at the file limit", entry(K::added, "ok.bin", kFile, 1000), std::nullopt},
      {"a newline in a name", entry(K::added, "x\nplan 010: merged into main"), R::refused},
      {"ESC in a name", entry(K::added, "x\x1b[2Jy"), R::refused},
      {"DEL in a name", entry(K::added, "x\x7fy"), R::refused},
      {"a C1 control in a name", entry(K::added, "x\xc2\x9by"), R::refused},
      {"bytes that are not UTF-8", entry(K::added, "x\x9by"), R::refused},
      {"UTF-8 in a name", entry(K::added, "docs/café.md"), std::nullopt},
      {"a deleted symlink", entry(K::deleted, "old-link", 0, 0), std::nullopt},
  };
  for (const Row& row : table) EXPECT_EQ(verdict(row.change, rules()), row.role) << row.what;
}

// proves S3.9
TEST(MergePolicyTest, AnExistingTestChangesOnlyWhereTheApprovedPlanNamesIt) {
  MergeRules r = rules();
  const PathChange changed = entry(K::modified, "tests/t_other.sh");
  PathChange renamed = entry(K::renamed, "tests/t_moved.sh");
  renamed.old_path = "tests/t_other.sh";
  EXPECT_EQ(verdict(changed, r), R::test);
  EXPECT_EQ(verdict(renamed, r), R::test);
  EXPECT_EQ(merge_policy({renamed}, r).front().path, "tests/t_other.sh");
  r.approved_plan = "# Plan\n...\n- update `tests/t_other.sh` for the new output\n";
  EXPECT_EQ(verdict(changed, r), std::nullopt);
  EXPECT_EQ(verdict(renamed, r), std::nullopt);
}

// proves S3.5
TEST(MergePolicyTest, TheTreeLimitCountsEveryAddedOrChangedBlob) {
  MergeRules r = rules();
  std::vector<PathChange> changes;
  for (int i = 0; i < 6; ++i)
    changes.push_back(entry(K::added, "f" + std::to_string(i), kFile, 900));
  auto held = merge_policy(changes, r);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].role, R::refused);
  EXPECT_NE(held[0].detail.find("protect.max_tree_size"), std::string::npos) << held[0].detail;
  changes.pop_back();
  EXPECT_TRUE(merge_policy(changes, r).empty());
  // Deleted files bring nothing.
  changes.push_back(entry(K::deleted, "gone", 0, 5000));
  EXPECT_TRUE(merge_policy(changes, r).empty());
}

// proves S3.1
TEST(MergePolicyTest, ALoopsWorkIsCheckedOnlyForWhatIsRefusedOutright) {
  MergeRules r = rules();
  r.tree = false;
  EXPECT_EQ(verdict(entry(K::added, ".loopr/prompts", kLink, 5, "../x"), r), std::nullopt);
  EXPECT_EQ(verdict(entry(K::modified, "tests/t_other.sh"), r), std::nullopt);
  EXPECT_EQ(verdict(entry(K::added, "k", kLink, 5, "/etc/passwd"), r), R::refused);
  EXPECT_EQ(verdict(entry(K::added, "a\nb"), r), R::refused);
  // A name that reads otherwise than it is: "report<U+202E>fdp.sh" shows as "reporths.pdf".
  EXPECT_EQ(verdict(entry(K::added,
                          "report\xE2\x80\xAE"
                          "fdp.sh"),
                    r),
            R::refused);
  EXPECT_EQ(verdict(entry(K::added, "x\xE2\x81\xA6y"), r), R::refused);
  EXPECT_EQ(verdict(entry(K::added, "x\xC2\x85y"), r), R::refused);
  EXPECT_EQ(verdict(entry(K::added, "caf\xC3\xA9.txt"), r), std::nullopt);
  EXPECT_EQ(verdict(entry(K::added, "big", kFile, 5000), r), R::refused);
}

TEST(MergePolicyTest, HooksPathNamesTheRepositorysHookFolder) {
  MergeRules r = rules();
  EXPECT_EQ(verdict(entry(K::added, "tools/hooks/pre-commit", kExec), r), std::nullopt);
  r.hooks_path = "tools/hooks/";
  EXPECT_EQ(verdict(entry(K::added, "tools/hooks/pre-commit", kExec), r), R::hooks);
  EXPECT_EQ(verdict(entry(K::added, "tools", kLink, 5, "x"), r), R::hooks);
}

TEST(MergePolicyTest, LinkDestinationsAreNormalisedInsideTheRepository) {
  EXPECT_EQ(link_destination("docs/a", "../src/b"), "src/b");
  EXPECT_EQ(link_destination("a", "./b/../c"), "c");
  EXPECT_EQ(link_destination("docs/a", "../../x"), "");
  EXPECT_EQ(link_destination("a", "/etc/passwd"), "");
  EXPECT_EQ(link_destination("a", ""), "");
  EXPECT_EQ(link_destination("a/b", ".."), ".");
}

TEST(MergePolicyTest, DescriptionsShowNamesOnOneLine) {
  std::vector<HeldPath> held = {
      {"x\nplan 010: merged into main", R::refused, "its name has a control character"},
      {".claude", R::auto_run, {}}};
  std::string text = describe_held(held);
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  EXPECT_NE(text.find("x^Jplan 010"), std::string::npos) << text;
  EXPECT_NE(text.find("other tools' auto-run files (protect.hold): .claude"), std::string::npos);
}

TEST(MergePolicyTest, ProtectsMatchesAFoldersOwnPathAndThePathsAboveIt) {
  EXPECT_TRUE(protects(".claude/", ".claude"));
  EXPECT_TRUE(protects(".claude/", "a/.claude"));
  EXPECT_TRUE(protects(".claude/", ".claude/settings.json"));
  EXPECT_FALSE(protects(".claude/", ".claude-notes"));
  EXPECT_TRUE(protects("/.github/workflows/", ".github"));
  EXPECT_TRUE(protects("/.github/workflows/", ".github/workflows"));
  EXPECT_FALSE(protects("/.github/workflows/", "sub/.github"));
  EXPECT_TRUE(protects("/.loopr/config.yml", ".loopr"));
  EXPECT_FALSE(protects("/.loopr/config.yml", ".loopr/plans"));
  EXPECT_FALSE(protects("conftest.py", "src"));
  // path_matches itself is unchanged: a folder pattern matches what is below the folder.
  EXPECT_FALSE(path_matches(".claude/", ".claude"));
}
