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
  EXPECT_EQ(repo("https://github.com/acme/widgets.git"), "acme/widgets");
  EXPECT_EQ(repo("https://github.com/acme/widgets"), "acme/widgets");
  EXPECT_EQ(repo("https://user:secret@github.com/acme/widgets.git/"), "acme/widgets");
  EXPECT_EQ(repo("git@github.com:acme/widgets.git"), "acme/widgets");
  EXPECT_EQ(repo("ssh://git@github.com:22/acme/widgets.git"), "acme/widgets");
  EXPECT_EQ(repo("file:///srv/git/acme/widgets.git"), "acme/widgets");
  EXPECT_EQ(repo("/srv/git/acme/widgets.git"), "acme/widgets");
  EXPECT_EQ(repo("../remotes/acme/widgets"), "acme/widgets");
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
