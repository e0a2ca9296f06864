// The forge client against the real loopr-mock-forge (GitHub's documented REST shapes, errors
// and rate-limit headers) and `git push` to a real bare repository over a local transport.
#include <gtest/gtest.h>

#include <loopr/forge/forge.hpp>

#include "support/mock_forge.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

namespace loopr::forge {
namespace {

using loopr::testing::MockForge;
using loopr::testing::run_command;
using loopr::testing::shell_quote;
using nlohmann::json;

constexpr const char* kToken = "ghp_TESTTOKEN_c0ffee";

template <typename T>
T run(net::io_context& io, awaitable<T> a) {
  std::optional<T> out;
  net::co_spawn(io, [&]() -> awaitable<void> { out.emplace(co_await std::move(a)); },
                net::detached);
  io.restart();
  io.run();
  return std::move(*out);
}

class ForgeTest : public ::testing::Test {
 protected:
  loopr::testing::TempDir dir{"loopr-forge"};
  std::filesystem::path root, bare;

  void SetUp() override {
    if (!MockForge::available()) GTEST_SKIP() << "loopr-mock-forge is not built";
    root = std::filesystem::canonical(dir.path()) / "repo";
    bare = std::filesystem::canonical(dir.path()) / "acme" / "widgets.git";
    auto made = run_command("mkdir -p " + shell_quote(root.string()) + " && cd " +
                            shell_quote(root.string()) +
                            " && git init -q -b main . && git -c user.name=t -c user.email=t@t "
                            "commit -q --allow-empty -m init && git branch loopr/001 && "
                            "git init -q --bare " + shell_quote(bare.string()) +
                            " && git remote add origin " + shell_quote(bare.string()));
    ASSERT_EQ(made.exit_code, 0) << made.output;
  }

  std::string rev(const std::string& gitdir_or_repo, const std::string& ref) {
    return run_command("git --git-dir " + shell_quote(gitdir_or_repo) + " rev-parse " + ref).output;
  }

  std::unique_ptr<ForgeClient> client(net::io_context& io, const MockForge& mock,
                                      const std::string& token = kToken) {
    ForgeConfig f;
    f.api_url = mock.url();
    auto c = make_client(io, f, "acme/widgets", token);
    EXPECT_TRUE(c) << (c ? "" : c.error().message);
    return std::move(*c);
  }
};

TEST_F(ForgeTest, PushesTheBranchToAPlainPathAndAFileUrlWithoutRunningHooks) {
  // A pre-push hook that would leave a mark (loopr's push runs no hook of the repository).
  loopr::testing::write_file(root / ".git/hooks/pre-push", "#!/bin/sh\ntouch " +
                                                               (root / "hook-ran").string() + "\n");
  run_command("chmod +x " + shell_quote((root / ".git/hooks/pre-push").string()));
  auto pushed = push_branch(root, "origin", "loopr/001", "");
  ASSERT_TRUE(pushed) << pushed.error().message;
  EXPECT_EQ(pushed->sha + "\n", rev(bare.string(), "refs/heads/loopr/001"));
  EXPECT_FALSE(std::filesystem::exists(root / "hook-ran"));
  // The same over file:// after the branch moved (and was rewritten: a forced push).
  run_command("git remote set-url origin file://" + bare.string() +
                  " && git checkout -q loopr/001 && git -c user.name=t -c user.email=t@t commit "
                  "-q --allow-empty --amend -m rewritten",
              root.string());
  auto again = push_branch(root, "origin", "loopr/001", "");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_NE(again->sha, pushed->sha);
  EXPECT_EQ(again->sha + "\n", rev(bare.string(), "refs/heads/loopr/001"));
  // Only the branch went: the base branch is not pushed.
  EXPECT_EQ(run_command("git --git-dir " + shell_quote(bare.string()) +
                        " for-each-ref --format='%(refname)'")
                .output,
            "refs/heads/loopr/001\n");
}

TEST_F(ForgeTest, AFailedPushSaysWhyWithoutTheToken) {
  run_command("git remote set-url origin http://127.0.0.1:9/acme/widgets.git", root.string());
  auto pushed = push_branch(root, "origin", "loopr/001", kToken);
  ASSERT_FALSE(pushed);
  EXPECT_NE(pushed.error().message.find("git push to origin"), std::string::npos)
      << pushed.error().message;
  EXPECT_EQ(pushed.error().message.find(kToken), std::string::npos);
  auto missing = push_branch(root, "nowhere", "loopr/001", "");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("forge.remote"), std::string::npos);
}

// proves S6.40
TEST_F(ForgeTest, TheTokenNeverTravelsInClearTextToAnotherMachine) {
  // A plain http remote on another machine: refused before git runs, with what to do.
  run_command("git remote set-url origin http://forge.invalid/acme/widgets.git", root.string());
  auto pushed = push_branch(root, "origin", "loopr/001", kToken);
  ASSERT_FALSE(pushed);
  EXPECT_NE(pushed.error().message.find("clear text"), std::string::npos) << pushed.error().message;
  EXPECT_NE(pushed.error().message.find("https://"), std::string::npos) << pushed.error().message;
  EXPECT_EQ(pushed.error().message.find(kToken), std::string::npos);
  // Credentials or a port in the URL change nothing.
  run_command("git remote set-url origin http://user@forge.invalid:8080/acme/widgets.git",
              root.string());
  auto again = push_branch(root, "origin", "loopr/001", kToken);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("clear text"), std::string::npos) << again.error().message;
  // Plain http to this machine (a local forge, a test's server) is not refused for that reason.
  run_command("git remote set-url origin http://127.0.0.1:9/acme/widgets.git", root.string());
  auto local = push_branch(root, "origin", "loopr/001", kToken);
  ASSERT_FALSE(local);
  EXPECT_EQ(local.error().message.find("clear text"), std::string::npos) << local.error().message;
}

TEST_F(ForgeTest, OpensThePullRequestOnceWithGitHubsHeaders) {
  ASSERT_TRUE(push_branch(root, "origin", "loopr/001", ""));
  MockForge mock(json{{"repo", "acme/widgets"}}, kToken, bare.string());
  net::io_context io;
  auto c = client(io, mock);
  bool created = false;
  auto pr = run(io, c->open_pr({"loopr/001", "main", "loopr: a title", "the body"}, created));
  ASSERT_TRUE(pr) << pr.error().message;
  EXPECT_TRUE(created);
  EXPECT_EQ(pr->number, 1);
  EXPECT_EQ(pr->url, "https://github.com/acme/widgets/pull/1");
  EXPECT_EQ(pr->state, PullRequestState::open);
  EXPECT_EQ(pr->head_sha + "\n", rev(bare.string(), "refs/heads/loopr/001"));
  auto second = run(io, c->open_pr({"loopr/001", "main", "loopr: a title", "the body"}, created));
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_FALSE(created);
  EXPECT_EQ(second->number, 1);
  EXPECT_EQ(mock.state()["pulls"].size(), 1u);
  for (const json& r : mock.requests()) {
    if (r["path"].get<std::string>().rfind("/_mock/", 0) == 0) continue;  // the test's own
    EXPECT_EQ(r["headers"]["accept"], "application/vnd.github+json") << r.dump();
    EXPECT_EQ(r["headers"]["x-github-api-version"], "2022-11-28") << r.dump();
    EXPECT_FALSE(r["headers"].value("user-agent", std::string()).empty()) << r.dump();
    EXPECT_EQ(r["headers"]["authorization"], "[token]") << r.dump();
  }
  EXPECT_EQ(mock.requests().front()["method"], "GET");  // the open PRs were asked first
  EXPECT_EQ(mock.requests().at(1)["body"]["head"], "loopr/001");
  EXPECT_EQ(mock.requests().at(1)["body"]["body"], "the body");
}

TEST_F(ForgeTest, ChecksReadCheckRunsAndTheCombinedStatus) {
  json script = {{"ci",
                  {{{"pending_polls", 1}, {"check_runs", {{{"name", "build"}, {"conclusion", "success"}}}}},
                   {{"check_runs",
                     {{{"name", "build"}, {"conclusion", "success"}},
                      {{"name", "test"},
                       {"conclusion", "failure"},
                       {"output", {{"title", "2 tests failed"}, {"summary", "see below"}, {"text", "FAIL test_add"}}}}}}},
                   {{"check_runs", json::array()},
                    {"statuses", {{{"context", "ci/jenkins"}, {"state", "failure"}, {"description", "broken"}}}}}}}};
  MockForge mock(script, kToken);
  net::io_context io;
  auto c = client(io, mock);
  const std::string a(40, 'a'), b(40, 'b'), d(40, 'd');
  // Only check runs (as with GitHub Actions): the combined state says pending forever, the runs
  // decide: in progress first, then passed.
  auto first = run(io, c->checks(a, 1));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->state, CheckState::pending);
  auto then = run(io, c->checks(a, 1));
  ASSERT_TRUE(then) << then.error().message;
  EXPECT_EQ(then->state, CheckState::passed);
  // A failing run: its title, summary and text are the output.
  auto failed = run(io, c->checks(b, 1));
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->state, CheckState::failed);
  ASSERT_EQ(failed->failing(), std::vector<std::string>{"test"});
  for (const char* part : {"2 tests failed", "see below", "FAIL test_add"})
    EXPECT_NE(failed->checks[1].details.find(part), std::string::npos) << failed->checks[1].details;
  // A commit status alone decides too.
  auto status = run(io, c->checks(d, 1));
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, CheckState::failed);
  EXPECT_EQ(status->failing(), std::vector<std::string>{"ci/jenkins"});
}

TEST_F(ForgeTest, ErrorsAndRateLimitsAreTyped) {
  json script = {{"faults",
                  {{{"method", "GET"}, {"path", "/check-runs$"}, {"status", 403}, {"rate_limit", true}, {"reset_in", 3}},
                   {{"method", "GET"}, {"path", "/check-runs$"}, {"status", 429}, {"retry_after", 7}},
                   {{"method", "POST"}, {"path", "/pulls$"}, {"status", 422}, {"message", "Validation Failed"}}}}};
  MockForge mock(script, kToken, bare.string());
  net::io_context io;
  auto c = client(io, mock);
  const std::string sha(40, 'c');
  auto limited = run(io, c->checks(sha, 1));
  ASSERT_FALSE(limited);
  EXPECT_TRUE(c->last_failure().rate_limited);
  EXPECT_EQ(c->last_failure().status, 403);
  EXPECT_GE(c->last_failure().retry_after.count(), 1);
  EXPECT_EQ(c->rate_limit().remaining, 0);
  auto retry = run(io, c->checks(sha, 1));
  ASSERT_FALSE(retry);
  EXPECT_TRUE(c->last_failure().rate_limited);
  EXPECT_EQ(c->last_failure().retry_after.count(), 7);
  bool created = false;
  auto refused = run(io, c->open_pr({"loopr/001", "main", "t", "b"}, created));
  ASSERT_FALSE(refused);
  EXPECT_EQ(c->last_failure().status, 422);
  EXPECT_NE(refused.error().message.find("Validation Failed"), std::string::npos);
  // A wrong token: 401, said as such, the token not repeated.
  auto wrong = client(io, mock, "ghp_WRONG");
  auto denied = run(io, wrong->probe());
  ASSERT_FALSE(denied);
  EXPECT_EQ(wrong->last_failure().status, 401);
  EXPECT_NE(denied.error().message.find("token"), std::string::npos);
  EXPECT_EQ(denied.error().message.find("ghp_WRONG"), std::string::npos);
}

TEST_F(ForgeTest, ReviewCommentsSinceAMoment) {
  ASSERT_TRUE(push_branch(root, "origin", "loopr/001", ""));
  MockForge mock(json{{"repo", "acme/widgets"}}, kToken, bare.string());
  net::io_context io;
  auto c = client(io, mock);
  bool created = false;
  ASSERT_TRUE(run(io, c->open_pr({"loopr/001", "main", "t", "b"}, created)));
  mock.add_comments(1, json::array({{{"path", "old.c"}, {"line", 1}, {"body", "old"},
                                     {"created_at", "2020-01-01T00:00:00Z"}},
                                    {{"path", "src/add.c"}, {"line", 12}, {"body", "rename it"}}}));
  auto all = run(io, c->comments(1, 0));
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(all->size(), 2u);
  auto recent = run(io, c->comments(1, 1600000000000));  // 2020-09: after the old one
  ASSERT_TRUE(recent);
  ASSERT_EQ(recent->size(), 1u);
  EXPECT_EQ((*recent)[0].path, "src/add.c");
  EXPECT_EQ((*recent)[0].line, 12);
  EXPECT_EQ((*recent)[0].body, "rename it");
  EXPECT_EQ((*recent)[0].author, "reviewer");
}

TEST_F(ForgeTest, GitLabMergeRequestsPipelinesAndUnresolvedNotes) {
  ASSERT_TRUE(push_branch(root, "origin", "loopr/001", ""));
  json script = {{"kind", "gitlab"},
                 {"ci",
                  {{{"pending_polls", 1},
                    {"check_runs",
                     {{{"name", "unit"}, {"conclusion", "failure"}, {"output", {{"text", "JOB-LOG-55: 1 failed"}}}},
                      {{"name", "lint"}, {"conclusion", "success"}}}}}}}};
  MockForge mock(script, kToken, bare.string());
  net::io_context io;
  ForgeConfig f;
  f.kind = ForgeKind::gitlab;
  f.api_url = mock.url() + "/api/v4";
  auto made = make_client(io, f, "acme/widgets", kToken);
  ASSERT_TRUE(made) << made.error().message;
  auto& c = *made;
  EXPECT_EQ(*run(io, c->probe()), "acme/widgets");
  bool created = false;
  auto mr = run(io, c->open_pr({"loopr/001", "main", "t", "b"}, created));
  ASSERT_TRUE(mr) << mr.error().message;
  EXPECT_TRUE(created);
  EXPECT_EQ(mr->number, 1);
  EXPECT_EQ(mr->state, PullRequestState::open);
  EXPECT_EQ(mr->url, "https://gitlab.com/acme/widgets/-/merge_requests/1");
  auto again = run(io, c->open_pr({"loopr/001", "main", "t", "b"}, created));
  ASSERT_TRUE(again);
  EXPECT_FALSE(created);
  // The MR's pipeline of that commit: running, then failed with the failed job's log.
  auto running = run(io, c->checks(mr->head_sha, 1));
  ASSERT_TRUE(running) << running.error().message;
  EXPECT_EQ(running->state, CheckState::pending);
  auto failed = run(io, c->checks(mr->head_sha, 1));
  ASSERT_TRUE(failed) << failed.error().message;
  EXPECT_EQ(failed->state, CheckState::failed);
  ASSERT_EQ(failed->failing(), std::vector<std::string>{"unit"});
  EXPECT_NE(failed->checks[0].details.find("JOB-LOG-55"), std::string::npos);
  // Diff notes: the resolved one is left out.
  mock.add_comments(1, json::array({{{"path", "a.c"}, {"line", 3}, {"body", "open note"}},
                                    {{"path", "b.c"}, {"line", 4}, {"body", "done"}, {"resolved", true}}}));
  auto notes = run(io, c->comments(1, 0));
  ASSERT_TRUE(notes) << notes.error().message;
  ASSERT_EQ(notes->size(), 1u);
  EXPECT_EQ((*notes)[0].path, "a.c");
  EXPECT_EQ((*notes)[0].line, 3);
  for (const json& r : mock.requests()) {
    if (r["path"].get<std::string>().rfind("/_mock/", 0) != 0) {
      EXPECT_EQ(r["headers"]["authorization"], "[token]") << r.dump();
    }
  }
}

// Issue 44: the forge's words for a PR (GitHub's `state` with `merged`/`merged_at`, GitLab's
// `opened`/`closed`/`merged`) become loopr's three states where they are read.
TEST_F(ForgeTest, APullRequestsStateOnEitherForgeIsOneOfLooprsThree) {
  ASSERT_TRUE(push_branch(root, "origin", "loopr/001", ""));
  for (const char* kind : {"github", "gitlab"}) {
    MockForge mock(json{{"kind", kind}}, kToken, bare.string());
    net::io_context io;
    ForgeConfig f;
    const bool gitlab = std::string(kind) == "gitlab";
    f.kind = gitlab ? ForgeKind::gitlab : ForgeKind::github;
    f.api_url = mock.url() + (gitlab ? "/api/v4" : "");
    auto made = make_client(io, f, "acme/widgets", kToken);
    ASSERT_TRUE(made) << made.error().message;
    bool created = false;
    auto pr = run(io, (*made)->open_pr({"loopr/001", "main", "t", "b"}, created));
    ASSERT_TRUE(pr) << kind << ": " << pr.error().message;
    for (auto [word, state] : {std::pair{"merged", PullRequestState::merged},
                               std::pair{"closed", PullRequestState::closed},
                               std::pair{"open", PullRequestState::open}}) {
      mock.set_pull_state(pr->number, word);
      auto now = run(io, (*made)->get_pr(pr->number));
      ASSERT_TRUE(now) << kind << ": " << now.error().message;
      EXPECT_EQ(now->state, state) << kind << " " << word;
      EXPECT_STREQ(to_string(now->state), word);
    }
  }
}

// The checks' states are written as loopr's words in logs and events.
TEST(CheckStateTest, EachStateHasItsWord) {
  EXPECT_STREQ(to_string(CheckState::pending), "pending");
  EXPECT_STREQ(to_string(CheckState::passed), "passed");
  EXPECT_STREQ(to_string(CheckState::failed), "failed");
}

}  // namespace
}  // namespace loopr::forge
