// OWNER/NAME from every kind of URL git accepts (forge.repo's default).
#include <gtest/gtest.h>

#include <loopr/forge/forge.hpp>

namespace loopr::forge {
namespace {

std::string repo(const std::string& url, bool all = false) {
  auto r = repo_from_url(url, all);
  return r ? *r : "error: " + r.error().message;
}

TEST(RepoFromUrl, ReadsEveryFormGitAccepts) {
  for (const char* url :
       {"https://github.com/acme/widgets.git", "https://github.com/acme/widgets",
        "https://user:secret@github.com/acme/widgets.git/", "git@github.com:acme/widgets.git",
        "ssh://git@github.com:22/acme/widgets.git", "file:///srv/git/acme/widgets.git",
        "/srv/git/acme/widgets.git", "../remotes/acme/widgets"})
    EXPECT_EQ(repo(url), "acme/widgets") << url;
  // GitLab: every group of the path.
  EXPECT_EQ(repo("https://gitlab.com/group/sub/widgets.git", true), "group/sub/widgets");
}

TEST(RepoFromUrl, SaysWhatToSetWhenItCannotTell) {
  EXPECT_NE(repo("widgets").find("forge.repo"), std::string::npos);
  EXPECT_NE(repo("https://github.com/").find("forge.repo"), std::string::npos);
}

TEST(Redact, RemovesTheTokenAndItsBasicForm) {
  EXPECT_EQ(redact("a ghp_x b ghp_x", "ghp_x"), "a [token] b [token]");
  EXPECT_EQ(redact("nothing", ""), "nothing");
}

}  // namespace
}  // namespace loopr::forge

namespace loopr {
namespace {

TEST(ForgeConfig, ReadsEveryKeyOfMergePr) {
  auto c = parse_config(
      "merge: pr\nforge:\n  kind: github\n  api_url: https://ghe.example/api/v3\n  repo: acme/w\n"
      "  remote: upstream\n  token_env: GHE_TOKEN\n"
      "  ci: {wait: false, timeout: 30m, fix_iterations: 2, poll_max: 10s}\n",
      "config.yml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->merge, MergeMode::pr);
  EXPECT_STREQ(to_string(c->merge), "pr");
  EXPECT_EQ(c->forge.api_url, "https://ghe.example/api/v3");
  EXPECT_EQ(c->forge.repo, "acme/w");
  EXPECT_EQ(c->forge.remote, "upstream");
  EXPECT_EQ(c->forge.token_env, "GHE_TOKEN");
  EXPECT_FALSE(c->forge.ci.wait);
  EXPECT_EQ(c->forge.ci.timeout, std::chrono::minutes(30));
  EXPECT_EQ(c->forge.ci.fix_iterations, 2);
  EXPECT_EQ(c->forge.ci.poll_max, std::chrono::seconds(10));
}

TEST(ForgeConfig, DefaultsAndGitLabsOwn) {
  auto d = parse_config("", "config.yml");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->merge, MergeMode::automatic);
  EXPECT_EQ(d->forge.kind, ForgeKind::github);
  EXPECT_EQ(d->forge.api_url, "https://api.github.com");
  EXPECT_EQ(d->forge.remote, "origin");
  EXPECT_EQ(d->forge.token_env, "GITHUB_TOKEN");
  EXPECT_TRUE(d->forge.ci.wait);
  EXPECT_EQ(d->forge.ci.timeout, std::chrono::hours(2));
  EXPECT_EQ(d->forge.ci.fix_iterations, 5);
  EXPECT_EQ(d->forge.ci.poll_max, std::chrono::seconds(60));
  auto g = parse_config("forge: {kind: gitlab}\n", "config.yml");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->forge.api_url, "https://gitlab.com/api/v4");
  EXPECT_EQ(g->forge.token_env, "GITLAB_TOKEN");
  // The commented default file reads back as the defaults.
  auto file = parse_config(default_config_yaml(), "config.yml");
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->forge.api_url, "https://api.github.com");
  EXPECT_EQ(file->forge.token_env, "GITHUB_TOKEN");
}

TEST(ForgeConfig, RefusesWhatItWouldNotActOn) {
  auto kind = parse_config("forge: {kind: bitbucket}\n", "config.yml");
  ASSERT_FALSE(kind);
  EXPECT_NE(kind.error().message.find("forge.kind"), std::string::npos) << kind.error().message;
  auto key = parse_config("forge: {token: x}\n", "config.yml");
  ASSERT_FALSE(key);
  EXPECT_NE(key.error().message.find("forge.token"), std::string::npos) << key.error().message;
  auto merge = parse_config("merge: github\n", "config.yml");
  ASSERT_FALSE(merge);
}

}  // namespace
}  // namespace loopr
