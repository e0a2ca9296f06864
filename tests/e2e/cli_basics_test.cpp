// The real `loopr` binary: help, init, and config errors (exit codes of INTERFACE.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace loopr::testing;

namespace {

std::string loopr_cmd(const std::string& args) { return std::string(LOOPR_BIN) + " " + args; }

struct Repo {
  TempDir dir{"loopr-e2e"};
  Repo() {
    auto r = run_command("git init -q -b main . && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m init",
                         dir.str());
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
};

}  // namespace

TEST(CliBasicsTest, HelpRunsAndListsCommands) {
  auto r = run_command(loopr_cmd("--help"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("init"), std::string::npos);
  EXPECT_NE(r.output.find("--json"), std::string::npos);
  auto sub = run_command(loopr_cmd("init --help"));
  EXPECT_EQ(sub.exit_code, 0);
  EXPECT_NE(sub.output.find("--base"), std::string::npos);
}

TEST(CliBasicsTest, UnknownFlagIsAUsageError) {
  auto r = run_command(loopr_cmd("--frobnicate"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output.rfind("loopr: ", 0), 0u) << r.output;
}

TEST(CliBasicsTest, InitWritesConfigAndGitignoreIdempotently) {
  Repo repo;
  auto r = run_command(loopr_cmd("-C " + shell_quote(repo.dir.str()) + " init"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string config = read_file(repo.dir / ".loopr/config.yml");
  EXPECT_NE(config.find("base_branch: main"), std::string::npos);
  std::string ignore = read_file(repo.dir / ".gitignore");
  for (const char* d : {".loopr/state/", ".loopr/run/", ".loopr/worktrees/", ".loopr/archive/", ".loopr/logs/"})
    EXPECT_NE(ignore.find(d), std::string::npos) << d;
  auto again = run_command(loopr_cmd("-C " + shell_quote(repo.dir.str()) + " init --json"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(nlohmann::json::parse(again.output)["changed"].empty());
  EXPECT_EQ(read_file(repo.dir / ".gitignore"), ignore);
  EXPECT_EQ(read_file(repo.dir / ".loopr/config.yml"), config);
  // git ignores what loopr keeps private.
  write_file(repo.dir / ".loopr/state/x", "x");
  auto status = run_command("git status --porcelain --untracked-files=all", repo.dir.str());
  EXPECT_EQ(status.output.find(".loopr/state"), std::string::npos) << status.output;
}

TEST(CliBasicsTest, BadConfigIsOneLineNamingKeyAndLineWithExit2) {
  Repo repo;
  write_file(repo.dir / ".loopr/config.yml", "merge: auto\nllm:\n  max_tokens: lots\n");
  auto r = run_command(loopr_cmd("-C " + shell_quote(repo.dir.str()) + " config"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_EQ(r.output.rfind("loopr: ", 0), 0u);
  EXPECT_NE(r.output.find("config.yml:3: llm.max_tokens: expected a whole number"), std::string::npos) << r.output;
  auto init = run_command(loopr_cmd("-C " + shell_quote(repo.dir.str()) + " init"));
  EXPECT_EQ(init.exit_code, 2) << "init must not overwrite a bad file silently";
  EXPECT_NE(read_file(repo.dir / ".loopr/config.yml").find("lots"), std::string::npos);
}

TEST(CliBasicsTest, OutsideARepositoryIsAUsageError) {
  TempDir dir;
  auto r = run_command(loopr_cmd("-C " + shell_quote(dir.str()) + " config"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("not inside a git repository"), std::string::npos) << r.output;
}

// The dispatcher checks a command's line before what its row needs (cli/command.hpp): a bad
// line is exit 2 with what to write, whether or not a daemon runs or a repository is there; a
// good line then meets the needs in order (a repository: exit 2, the daemon: exit 3).
TEST(CliBasicsTest, ABadLineIsAUsageErrorBeforeTheRepositoryOrTheDaemonIsLookedFor) {
  Repo repo;
  TempDir elsewhere{"loopr-e2e-elsewhere"};
  struct Case {
    std::string args, says;
  };
  const std::vector<Case> bad = {
      {"iterate 001 --feedback ' '", "the feedback is empty"},
      {"answer 001 ' '", "the answer is empty"},
      {"submit ' '", "the request is empty"},
      {"submit --dry-run --wait 'add a flag'", "--dry-run ends at the gate"},
      {"submit --max-cost -1 'add a flag'", "--max-cost must be above 0"},
      {"init --validation ' '", "--validation is empty"},
  };
  for (const std::string& dir : {repo.dir.str(), elsewhere.str()}) {
    for (const Case& c : bad) {
      auto r = run_command(loopr_cmd("-C " + shell_quote(dir) + " " + c.args));
      EXPECT_EQ(r.exit_code, 2) << c.args << " in " << dir << ": " << r.output;
      EXPECT_NE(r.output.find("loopr: " + c.says), std::string::npos) << c.args << ": " << r.output;
    }
  }
  // A good line: outside a repository exit 2, in one without a daemon exit 3; nothing was made.
  for (const char* args : {"list", "approve 001", "iterate 001 --feedback 'more tests'", "watch"}) {
    auto out = run_command(loopr_cmd("-C " + shell_quote(elsewhere.str()) + " " + args));
    EXPECT_EQ(out.exit_code, 2) << args << ": " << out.output;
    EXPECT_NE(out.output.find("not inside a git repository"), std::string::npos) << out.output;
    auto in = run_command(loopr_cmd("-C " + shell_quote(repo.dir.str()) + " " + args));
    EXPECT_EQ(in.exit_code, 3) << args << ": " << in.output;
  }
  EXPECT_FALSE(std::filesystem::exists(repo.dir / ".loopr/run")) << "no daemon was started";
}
