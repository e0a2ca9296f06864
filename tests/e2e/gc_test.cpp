// `loopr gc` through the real binary, on a repository with ended trees of every kind: merged
// (with an invalidated generation), rejected, failed (with an archived first attempt), stopped,
// and a plan still waiting at the gate that must be left alone. Through the daemon, then on the
// store itself; a dry run first, a second run that finds nothing, archived attempts after
// gc.keep_archived, and a gc interrupted half way that the next run finishes.
#include "e2e/cli_fixture.hpp"

using namespace loopr::testing;
using nlohmann::json;

namespace {

std::set<std::string> lines(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    while (!l.empty() && (l.back() == ' ' || l.back() == '\r')) l.pop_back();
    auto start = l.find_first_not_of(" *+");
    if (start != std::string::npos) out.insert(l.substr(start));
  }
  return out;
}

}  // namespace

class GcE2E : public CliE2E {
 protected:
  std::set<std::string> branches() { return lines(git("branch --list 'loopr/*'")); }
  std::string main_sha() { return git("rev-parse main"); }
  std::set<std::string> worktree_dirs() {
    std::set<std::string> out;
    std::error_code ec;
    for (auto& e : std::filesystem::directory_iterator(dir / ".loopr/worktrees", ec))
      out.insert(e.path().filename().string());
    return out;
  }
  // What the trees spent (the wall time aside: the waiting plan's grows).
  json stats_total() {
    json t = loopr("--json stats").json()["total"];
    t.erase("wall_ms");
    return t;
  }

  // The trees: 001 merged twice (its first generation invalidated), 002 rejected, 003 failed
  // (its code loop's first attempt archived, the second's worktree left), 004 stopped at the
  // gate, 005 waiting at the gate.
  void make_ended_trees() {
    make_repo(CliScript{{"alpha"}});
    // 003's code loop runs (and fails) on a base whose check fails: no baseline check blocks it.
    write_file(dir / ".loopr/config.yml", read_file(dir / ".loopr/config.yml") + "baseline: off\n");
    ASSERT_EQ(run_command("git commit -qam 'baseline: off'", dir.str()).exit_code, 0);
    ASSERT_EQ(loopr("submit --wait --yes 'First'").exit_code, 0);
    ASSERT_EQ(loopr("iterate 001 --feedback 'USE-GAMMA please'").exit_code, 0);
    ASSERT_TRUE(wait_status("001", "awaiting_approval"));
    ASSERT_EQ(loopr("approve 001").exit_code, 0);
    ASSERT_TRUE(wait_until(
        [&] {
          return on_branch(dir.str(), "main", "code/code-001-002-001.txt") &&
                 on_branch(dir.str(), "main", "code/code-001-003-001.txt");
        },
        std::chrono::seconds(120)))
        << git("log --format=%s main");
    ASSERT_EQ(loopr("submit 'Not this'").exit_code, 0);
    ASSERT_TRUE(wait_status("002", "awaiting_approval"));
    ASSERT_EQ(loopr("reject 002 --reason no").exit_code, 0);
    write_file(dir / "check.sh", "echo 'the test fails on purpose'; exit 1\n");
    ASSERT_EQ(run_command("git commit -qam 'a failing check'", dir.str()).exit_code, 0);
    ASSERT_EQ(loopr("submit --wait --yes 'Cannot pass'").exit_code, 1);
    ASSERT_EQ(loopr("submit 'Stop me'").exit_code, 0);
    ASSERT_TRUE(wait_status("004", "awaiting_approval"));
    ASSERT_EQ(loopr("stop 004").exit_code, 0);
    ASSERT_EQ(loopr("submit 'Wait for me'").exit_code, 0);
    ASSERT_TRUE(wait_status("005", "awaiting_approval"));
  }
};

TEST_F(GcE2E, RemovesWhatEndedTreesLeftKeepsWhatAPersonMayNeedAndFinishesAfterACrash) {
  ASSERT_NO_FATAL_FAILURE(make_ended_trees());
  auto l = loops();
  ASSERT_EQ(l["001-001"]["status"], "invalidated");
  ASSERT_EQ(l["003"]["status"], "failed");
  ASSERT_EQ(l["004"]["status"], "stopped");
  const std::string main_before = main_sha();
  const json spent_before = stats_total();
  const auto branches_before = branches();
  ASSERT_TRUE(branches_before.count("loopr/archive/code-003-001-001")) << git("branch");
  ASSERT_TRUE(worktree_dirs().count("code-003-001-001"));

  // Trees that ended moments ago are younger than gc.older_than (7d): nothing goes.
  CliRun young = loopr("gc");
  ASSERT_EQ(young.exit_code, 0) << young.err;
  EXPECT_NE(young.out.find("nothing to remove"), std::string::npos) << young.out;

  // A dry run says what would go and changes nothing.
  CliRun dry = loopr("--json gc --dry-run --older-than 0s");
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  json d = dry.json();
  EXPECT_TRUE(d["dry_run"].get<bool>());
  EXPECT_GT(d["removed"].size(), 5u) << d.dump(2);
  EXPECT_EQ(branches(), branches_before);
  EXPECT_TRUE(worktree_dirs().count("code-003-001-001"));

  // Through the daemon.
  CliRun run = loopr("--json gc --older-than 0s");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  json r = run.json();
  EXPECT_TRUE(r["errors"].empty()) << r.dump(2);
  EXPECT_GT(r["bytes_freed"].get<long long>(), 0);
  EXPECT_EQ(r["removed"].size(), d["removed"].size()) << "the dry run said what went";
  auto after = branches();
  // Kept: the waiting plan's branches, the failed tree's integration branch (it has work main
  // lacks), every archived attempt (gc.keep_archived is 30 days).
  for (const char* kept :
       {"loopr/005", "loopr/005-loops/005", "loopr/003", "loopr/archive/code-003-001-001",
        "loopr/archive/code-003-001-001-2", "loopr/archive/002", "loopr/archive/004"})
    EXPECT_TRUE(after.count(kept)) << kept << " in\n" << git("branch");
  // Gone: merged and rejected integration branches, every loop branch of an ended tree.
  for (const auto& b : after) {
    EXPECT_TRUE(b.rfind("loopr/archive/", 0) == 0 || b == "loopr/003" ||
                b.rfind("loopr/005", 0) == 0)
        << b << " was left";
  }
  EXPECT_EQ(worktree_dirs(), std::set<std::string>{"005"});
  EXPECT_EQ(lines(git("worktree list --porcelain")).count("branch refs/heads/loopr/005-loops/005"),
            1u);
  EXPECT_EQ(main_sha(), main_before) << "the base branch is never touched";
  EXPECT_EQ(run_command("git fsck --no-progress 2>&1", dir.str()).exit_code, 0);
  l = loops();
  EXPECT_TRUE(l["code-003-001-001"]["worktree"].is_null());
  EXPECT_EQ(l["code-003-001-001"]["branch"], "loopr/archive/code-003-001-001-2");
  EXPECT_EQ(l["005"]["status"], "awaiting_approval");
  EXPECT_TRUE(l["005"]["worktree"].is_string());
  EXPECT_EQ(stats_total(), spent_before) << "gc changes no loop's spending or times";
  // The work of the failed loop is on its archive branch.
  EXPECT_TRUE(
      on_branch(dir.str(), "loopr/archive/code-003-001-001-2", "code/code-003-001-001.txt"));

  // A second run finds nothing.
  CliRun again = loopr("gc --older-than 0s");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("nothing to remove"), std::string::npos) << again.out;

  // Without a daemon, on the store itself, with archived attempts kept for no time: they go.
  ASSERT_EQ(loopr("daemon stop").exit_code, 0);
  write_file(dir / ".loopr/config.yml",
             read_file(dir / ".loopr/config.yml") + "gc:\n  keep_archived: 0s\n");
  CliRun offline = loopr("--json gc --older-than 0s");
  ASSERT_EQ(offline.exit_code, 0) << offline.out << offline.err;
  after = branches();
  EXPECT_EQ(after, (std::set<std::string>{"loopr/003", "loopr/005", "loopr/005-loops/005"}))
      << git("branch");
  EXPECT_EQ(main_sha(), main_before);
  EXPECT_FALSE(std::filesystem::exists(dir / ".loopr/run/loopr.sock")) << "gc started no daemon";
}

TEST_F(GcE2E, AGcInterruptedHalfWayIsFinishedByTheNext) {
  make_repo({}, "auto", /*code_passes=*/false);
  ASSERT_EQ(loopr("submit --wait --yes 'Cannot pass'").exit_code, 1);
  ASSERT_EQ(loopr("daemon stop").exit_code, 0);
  ASSERT_TRUE(worktree_dirs().count("code-001-001-001"));
  // What a gc killed after its first git step leaves: the worktree gone, its branch renamed,
  // nothing written to the store yet.
  ASSERT_EQ(
      run_command("git worktree remove --force .loopr/worktrees/code-001-001-001 && git "
                  "branch -m loopr/001-loops/code-001-001-001 loopr/archive/code-001-001-001-2",
                  dir.str())
          .exit_code,
      0)
      << git("branch");
  CliRun r = loopr("--json gc --older-than 0s");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(r.json()["errors"].empty()) << r.out;
  EXPECT_TRUE(branches().count("loopr/archive/code-001-001-001-2"))
      << "archived moments ago: kept for gc.keep_archived";
  EXPECT_TRUE(worktree_dirs().empty());
  EXPECT_EQ(loopr("gc --older-than 0s").exit_code, 0);
  ASSERT_EQ(loopr("daemon").exit_code, 0);
  auto l = loops();
  EXPECT_TRUE(l["code-001-001-001"]["worktree"].is_null());
  EXPECT_EQ(run_command("git fsck --no-progress 2>&1", dir.str()).exit_code, 0);
}

// Issue 47 item 6: gc takes an ended tree's logs (its loops' transcripts) with its worktrees,
// reports them, and leaves the logs of a tree that is still at work; `show --iteration` of a
// pruned iteration says where its logs went.
TEST_F(GcE2E, RemovesTheLogsOfTheTreesItTakesAndKeepsTheOthers) {
  make_repo({}, "auto", /*code_passes=*/false);
  ASSERT_EQ(loopr("submit --wait --yes 'Cannot pass'").exit_code, 1);
  ASSERT_EQ(loopr("submit 'Wait for me'").exit_code, 0);
  ASSERT_TRUE(wait_status("002", "awaiting_approval"));
  const auto logs = dir / ".loopr/logs/loops";
  ASSERT_TRUE(std::filesystem::is_directory(logs / "code-001-001-001/iterations/001"));
  ASSERT_TRUE(std::filesystem::is_directory(logs / "001/iterations/001"));
  ASSERT_TRUE(std::filesystem::is_directory(logs / "002/iterations/001"));

  CliRun dry = loopr("--json gc --dry-run --older-than 0s");
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_GE(dry.json()["logs"].get<int>(), 4) << dry.out;  // plan, spec, phase, code
  EXPECT_TRUE(std::filesystem::is_directory(logs / "code-001-001-001/iterations/001"));

  CliRun run = loopr("--json gc --older-than 0s");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  json r = run.json();
  EXPECT_TRUE(r["errors"].empty()) << r.dump(2);
  EXPECT_EQ(r["logs"], dry.json()["logs"]) << r.dump(2);
  EXPECT_GT(r["logs_bytes"].get<long long>(), 0) << r.dump(2);
  bool listed = false;
  for (const auto& item : r["removed"])
    listed = listed || (item["kind"] == "logs" &&
                        item["name"] == ".loopr/logs/loops/code-001-001-001");
  EXPECT_TRUE(listed) << r.dump(2);
  for (const char* id : {"001-001", "001-001-001", "code-001-001-001"})
    EXPECT_FALSE(std::filesystem::exists(logs / id)) << id;
  // The plan keeps its event log (gc's own event is its last line), nothing else.
  EXPECT_FALSE(std::filesystem::exists(logs / "001/iterations"));
  EXPECT_NE(read_file(logs / "001/events.log").find(" gc "), std::string::npos);
  // The tree at its gate keeps everything.
  EXPECT_TRUE(std::filesystem::is_directory(logs / "002/iterations/001"));

  CliRun gone = loopr("show code-001-001-001 --iteration 1");
  EXPECT_NE(gone.exit_code, 0);
  EXPECT_NE(gone.err.find("`loopr gc` removed them"), std::string::npos) << gone.err;
  CliRun again = loopr("--json gc --older-than 0s");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.json()["logs"], 0) << again.out;
}
