// Every command of INTERFACE.md through the real binary and a real daemon: exit codes 0-5,
// `--json` documents checked field by field, the daemon's start/status/stop, merge, show
// --iteration.
#include <sys/stat.h>

#include <fstream>

#include "e2e/cli_fixture.hpp"

using namespace loopr::testing;
using nlohmann::json;

namespace {

void expect_one_error_line(const CliRun& r, const std::string& contains) {
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("loopr: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(contains), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
}

// INTERFACE.md's loop, with loopr's `end_reason` (docs/differences.md "Where loopr differs").
const char* const kLoopFields[] = {
    "id",         "type",         "status",        "parent_id", "iteration", "max_iterations",
    "cost_usd",   "input_tokens", "output_tokens", "artifacts", "worktree",  "branch",
    "created_at", "updated_at",   "end_reason"};

void expect_interface_loop(const json& l) {
  EXPECT_EQ(l.size(), std::size(kLoopFields)) << l.dump();
  for (const char* f : kLoopFields) EXPECT_TRUE(l.contains(f)) << f << " in " << l.dump();
  EXPECT_TRUE(l["id"].is_string());
  EXPECT_TRUE(l["iteration"].is_number_integer());
  EXPECT_TRUE(l["max_iterations"].is_number_integer());
  EXPECT_TRUE(l["cost_usd"].is_number());
  EXPECT_TRUE(l["input_tokens"].is_number_integer());
  EXPECT_TRUE(l["output_tokens"].is_number_integer());
  EXPECT_TRUE(l["artifacts"].is_array());
  EXPECT_TRUE(l["created_at"].is_string());
}

}  // namespace

TEST_F(CliE2E, WithoutADaemonEveryCommandExits3AndSaysHowToStartIt) {
  make_repo();
  for (const char* args : {"list", "show 001", "daemon status", "daemon stop", "logs", "watch",
                           "approve 001", "reject 001", "iterate 001 --feedback x", "pause 001",
                           "resume 001", "stop 001", "merge 001", "review"}) {
    CliRun r = loopr(args);
    EXPECT_EQ(r.exit_code, 3) << args << "\n" << r.out << r.err;
    expect_one_error_line(r, "start it with `loopr daemon`");
  }
  CliRun status = loopr("--json daemon status");
  EXPECT_EQ(status.exit_code, 3);
  EXPECT_EQ(status.json()["running"], false);
}

TEST_F(CliE2E, UsageErrorsExit2) {
  make_repo();
  for (const char* args :
       {"show", "iterate 001", "iterate 001 --feedback ''", "submit", "submit '  '", "list extra",
        "show 001 --iteration 0", "--frobnicate", "daemon --foreground extra"}) {
    CliRun r = loopr(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
    EXPECT_EQ(r.err.rfind("loopr: ", 0), 0u) << args << ": " << r.err;
  }
  // No config: the daemon cannot run, so starting it is a usage error naming `loopr init`.
  std::filesystem::remove(dir / ".loopr/config.yml");
  for (const char* args : {"daemon", "submit 'a thing'"}) {
    CliRun r = loopr(args);
    EXPECT_EQ(r.exit_code, 2) << args << r.err;
    expect_one_error_line(r, "loopr init");
  }
}

TEST_F(CliE2E, DaemonStartsDetachedReportsStatusAndStops) {
  make_repo();
  CliRun start = loopr("--json daemon");
  ASSERT_EQ(start.exit_code, 0) << start.err;
  json s = start.json();
  EXPECT_EQ(s["started"], true);
  long pid = s["pid"].get<long>();
  EXPECT_GT(pid, 0);
  EXPECT_EQ(pid, daemon_pid());
  EXPECT_EQ(s["socket"], (dir / ".loopr/run/loopr.sock").string());

  CliRun again = loopr("daemon");
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.out.find("already serves this repository (pid " + std::to_string(pid) + ")"),
            std::string::npos)
      << again.out;
  CliRun fg = loopr("daemon --foreground");
  EXPECT_EQ(fg.exit_code, 1);
  expect_one_error_line(fg, "already serves this repository");

  CliRun status = loopr("--json daemon status");
  ASSERT_EQ(status.exit_code, 0) << status.err;
  json h = status.json();
  EXPECT_EQ(h["running"], true);
  EXPECT_EQ(h["pid"], pid);
  EXPECT_EQ(h["repo"], dir.str());
  EXPECT_TRUE(h["uptime_s"].is_number());
  EXPECT_EQ(h["loops"]["total"], 0);
  CliRun text = loopr("daemon status");
  EXPECT_NE(text.out.find("pid " + std::to_string(pid)), std::string::npos) << text.out;

  CliRun stop = loopr("--json daemon stop");
  ASSERT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_EQ(stop.json()["stopped"], true);
  EXPECT_TRUE(process_gone(pid)) << "the daemon process is gone when stop returns";
  EXPECT_EQ(loopr("daemon status").exit_code, 3);
  EXPECT_EQ(loopr("daemon stop").exit_code, 3);
}

TEST_F(CliE2E, DaemonThatCannotStartShowsTheEndOfItsOutput) {
  make_repo();
  // A socket path the daemon cannot bind: `.loopr/run` is a file.
  std::filesystem::remove_all(dir / ".loopr/run");
  write_file(dir / ".loopr/run", "not a folder");
  CliRun r = loopr("daemon");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  expect_one_error_line(r, "the daemon did not start");
  EXPECT_NE(r.err.find("daemon.out"), std::string::npos) << r.err;
  std::filesystem::remove(dir / ".loopr/run");
}

TEST_F(CliE2E, SubmitListShowJsonAndTheGateExitCodes) {
  make_repo();
  CliRun submit = loopr("--json submit 'Add a thing'");
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_EQ(submit.json(), json({{"id", "001"}}));
  EXPECT_NE(submit.err.find("started the loopr daemon"), std::string::npos) << submit.err;
  ASSERT_TRUE(wait_status("001", "awaiting_approval"));

  CliRun list = loopr("--json list");
  ASSERT_EQ(list.exit_code, 0);
  json l = list.json();
  ASSERT_EQ(l.size(), 1u);
  ASSERT_EQ(l["loops"].size(), 1u);
  const json& plan = l["loops"][0];
  expect_interface_loop(plan);
  EXPECT_EQ(plan["id"], "001");
  EXPECT_EQ(plan["type"], "plan");
  EXPECT_EQ(plan["status"], "awaiting_approval");
  EXPECT_TRUE(plan["parent_id"].is_null());
  EXPECT_EQ(plan["iteration"], 1);
  EXPECT_EQ(plan["max_iterations"], 5);
  EXPECT_GT(plan["cost_usd"].get<double>(), 0);
  EXPECT_EQ(plan["input_tokens"], 2000);
  EXPECT_EQ(plan["output_tokens"], 400);
  EXPECT_EQ(plan["artifacts"], json::array({".loopr/plans/001-add-a-thing.plan.md"}));
  EXPECT_EQ(plan["worktree"], (dir / ".loopr/worktrees/001").string());
  EXPECT_TRUE(plan["branch"].is_string());
  EXPECT_TRUE(plan["end_reason"].is_null()) << "at the gate it has not ended";

  CliRun show = loopr("--json show 001");
  ASSERT_EQ(show.exit_code, 0);
  json d = show.json();
  // A plan at the gate also has its forecast (docs/guide.md "Coordination").
  EXPECT_EQ(d.size(), std::size(kLoopFields) + 2) << d.dump();
  EXPECT_TRUE(d["forecast"].is_object()) << d.dump();
  ASSERT_EQ(d["iterations"].size(), 1u);
  const json& it = d["iterations"][0];
  EXPECT_EQ(it.size(), 6u) << it.dump();
  EXPECT_EQ(it["n"], 1);
  EXPECT_EQ(it["status"], "passed");
  EXPECT_TRUE(it.contains("exit_code"));
  EXPECT_GT(it["cost_usd"].get<double>(), 0);
  EXPECT_TRUE(it["duration_ms"].is_number());
  EXPECT_NE(it["summary"].get<std::string>().find("format check passed"), std::string::npos);

  CliRun text = loopr("show 001");
  for (const char* s :
       {"001  plan  awaiting_approval", "Add a thing", ".loopr/plans/001-add-a-thing.plan.md",
        "last validation output:", "iterations:", "format check passed"})
    EXPECT_NE(text.out.find(s), std::string::npos) << s << "\n" << text.out;

  // 4: unknown ids, for every command that takes one.
  for (const char* args :
       {"show 999", "show code-001-009-009", "approve 999", "reject 999",
        "iterate 999 --feedback x", "pause 999", "resume 999", "stop 999", "merge 999",
        "review 999", "logs 999", "show 999 --iteration 1", "show 001 --iteration 7"}) {
    CliRun r = loopr(args);
    EXPECT_EQ(r.exit_code, 4) << args << "\n" << r.err;
    expect_one_error_line(r, "");
  }
  // 5: not allowed in the current state.
  for (const char* args : {"merge 001", "resume 001"}) {
    CliRun r = loopr(args);
    EXPECT_EQ(r.exit_code, 5) << args << "\n" << r.err;
    expect_one_error_line(r, "");
  }

  CliRun approve = loopr("--json approve 001");
  ASSERT_EQ(approve.exit_code, 0) << approve.err;
  expect_interface_loop(approve.json());
  EXPECT_EQ(approve.json()["id"], "001");
  CliRun twice = loopr("approve 001");
  EXPECT_EQ(twice.exit_code, 5) << twice.err;
  expect_one_error_line(twice, "");
  CliRun review_done = loopr("review 001");
  EXPECT_EQ(review_done.exit_code, 5) << review_done.err;
  EXPECT_EQ(loopr("iterate 001-001 --feedback x").exit_code, 5);

  // The tree runs to the end; merge: auto lands it on main.
  ASSERT_TRUE(wait_status("code-001-001-001", "complete"));
  EXPECT_TRUE(wait_until([&] { return on_branch(dir.str(), "main", "code/code-001-001-001.txt"); }))
      << git("log --format=%s main");
  CliRun all = loopr("--json list");
  ASSERT_EQ(all.json()["loops"].size(), 4u);
  for (const auto& loop : all.json()["loops"]) expect_interface_loop(loop);
  // Why each ended, for scripts (docs/architecture.md "End reasons").
  EXPECT_EQ(all.json()["loops"][0]["end_reason"], "approved");
  for (int i = 1; i < 4; ++i)
    EXPECT_EQ(all.json()["loops"][i]["end_reason"], "validation_passed") << all.out;
  EXPECT_EQ(loopr("--json show code-001-001-001").json()["end_reason"], "validation_passed");
  EXPECT_EQ(all.json()["loops"][3]["parent_id"], "001-001-001");
  CliRun tree = loopr("list");
  EXPECT_NE(tree.out.find("`- code-001-001-001"), std::string::npos) << tree.out;
  EXPECT_EQ(tree.out.find('\x1b'), std::string::npos) << "no colour off a terminal";
  CliRun merged_again = loopr("merge 001");
  EXPECT_EQ(merged_again.exit_code, 5) << merged_again.err;

  // Control commands on finished loops: wrong state.
  EXPECT_EQ(loopr("pause 001").exit_code, 5);
  EXPECT_EQ(loopr("stop code-001-001-001").exit_code, 5);
}

TEST_F(CliE2E, SubmitWaitYesRunsTheTreeToTheEndAndExits0) {
  make_repo(CliScript{{"alpha", "beta"}});
  CliRun r = loopr("submit --wait --yes 'Add two things'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("001\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("approved 001 (--yes)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plan 001 complete"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("merged into main at"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("code-001-002-001"), std::string::npos)
      << "the tree was printed as it changed";
  auto l = loops();
  EXPECT_EQ(l.size(), 7u);
  for (auto& [id, loop] : l) EXPECT_EQ(loop["status"], "complete") << id;
  EXPECT_TRUE(on_branch(dir.str(), "main", "code/code-001-002-001.txt"))
      << git("log --format=%s main");

  // --json: one document, the id; -q: the id alone.
  CliRun quiet = loopr("-q submit --wait --yes 'A second thing'");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out, "002\n");
  CliRun json_run = loopr("--json submit --wait --yes 'A third thing'");
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  EXPECT_EQ(json_run.json(), json({{"id", "003"}}));
}

TEST_F(CliE2E, SubmitWaitExits1WhenTheTreeFails) {
  make_repo({}, "auto", /*code_passes=*/false);
  CliRun r = loopr("submit --wait --yes 'Something that cannot pass'");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("plan 001 ended without completing"), std::string::npos) << r.out;
  EXPECT_EQ(loops()["001"]["status"], "failed");
  EXPECT_EQ(loops()["001"]["end_reason"], "child_failed");
  EXPECT_EQ(loops()["code-001-001-001"]["end_reason"], "max_iterations");
  EXPECT_FALSE(on_branch(dir.str(), "main", "code/code-001-001-001.txt"));
}

TEST_F(CliE2E, RejectFromPipedReviewEndsAWaitWith1) {
  make_repo();
  CliRun r = loopr("submit --wait 'Not this one'", "r\nnot what I meant\n");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("Plan 001"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rejected 001"), std::string::npos) << r.out;
  json show = loopr("--json show 001").json();
  EXPECT_EQ(show["status"], "failed");
  EXPECT_EQ(show["end_reason"], "rejected");
  // Skipping at the gate leaves the plan waiting and ends the wait with 0.
  CliRun skip = loopr("submit --wait 'Later'", "s\n");
  EXPECT_EQ(skip.exit_code, 0) << skip.out << skip.err;
  EXPECT_NE(skip.out.find("awaits approval"), std::string::npos) << skip.out;
  EXPECT_EQ(loops()["002"]["status"], "awaiting_approval");
  // End of input at the gate: the same.
  CliRun eof = loopr("review 002", "");
  EXPECT_EQ(eof.exit_code, 0) << eof.err;
  EXPECT_EQ(loops()["002"]["status"], "awaiting_approval");
}

// The model writes the plan's worktree: a plan artifact swapped for a symlink to the person's
// secret, or for a FIFO, is never opened by `loopr review`; the gate shows the plan as committed
// on its branch (docs/security.md S1.12: the one reader, now also the terminal's gate).
TEST_F(CliE2E, TheGateShowsTheCommittedPlanWhenItsFileIsASymlinkOrAFifo) {
  make_repo();
  CliRun skip = loopr("submit --wait 'Later'", "s\n");
  ASSERT_EQ(skip.exit_code, 0) << skip.out << skip.err;
  json plan = loopr("--json show 001").json();
  ASSERT_EQ(plan["status"], "awaiting_approval");
  const std::string rel = plan["artifacts"][0].get<std::string>();
  const std::filesystem::path file = plan["worktree"].get<std::string>() + "/" + rel;
  ASSERT_TRUE(std::filesystem::is_regular_file(file)) << file;
  const std::filesystem::path secret = dir / "id_rsa_of_the_person";
  { std::ofstream(secret) << "TOP-SECRET-KEY-MATERIAL\n"; }
  std::filesystem::remove(file);
  std::filesystem::create_symlink(secret, file);
  CliRun linked = loopr("review 001", "s\n");
  EXPECT_EQ(linked.exit_code, 0) << linked.err;
  EXPECT_EQ(linked.out.find("TOP-SECRET"), std::string::npos) << linked.out;
  EXPECT_NE(linked.out.find("Plan 001"), std::string::npos) << linked.out;
  EXPECT_NE(linked.out.find("# "), std::string::npos) << linked.out;  // the committed plan
  std::filesystem::remove(file);
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  CliRun fifo = loopr("review 001", "s\n");  // would block forever if it opened the FIFO
  EXPECT_EQ(fifo.exit_code, 0) << fifo.err;
  EXPECT_NE(fifo.out.find("Plan 001"), std::string::npos) << fifo.out;
  EXPECT_EQ(loops()["001"]["status"], "awaiting_approval");
}

TEST_F(CliE2E, ManualMergeWaitsForLooprMerge) {
  make_repo({}, "manual");
  CliRun r = loopr("submit --wait --yes 'Merge by hand'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("`loopr merge 001` merges it into main"), std::string::npos) << r.out;
  EXPECT_FALSE(on_branch(dir.str(), "main", "code/code-001-001-001.txt"));
  CliRun merge = loopr("--json merge 001");
  ASSERT_EQ(merge.exit_code, 0) << merge.err;
  json m = merge.json();
  EXPECT_EQ(m["id"], "001");
  EXPECT_EQ(m["merged"], true);
  EXPECT_EQ(m["base_branch"], "main");
  EXPECT_EQ(m["sha"].get<std::string>().size(), 40u);
  EXPECT_TRUE(on_branch(dir.str(), "main", "code/code-001-001-001.txt"));
  EXPECT_EQ(loopr("merge 001").exit_code, 5);
}

TEST_F(CliE2E, ShowIterationPrintsPromptConversationAndValidation) {
  make_repo();
  ASSERT_EQ(loopr("submit --wait --yes 'Show me'").exit_code, 0);
  CliRun text = loopr("show code-001-001-001 --iteration 1");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* s : {"code-001-001-001 iteration 1", "== prompt", "== conversation",
                        "-- assistant", "→ write_file", "== validation", "ok"})
    EXPECT_NE(text.out.find(s), std::string::npos) << s << "\n" << text.out;
  CliRun j = loopr("--json show code-001-001-001 --iteration 1");
  ASSERT_EQ(j.exit_code, 0);
  json doc = j.json();
  EXPECT_EQ(doc["id"], "code-001-001-001");
  EXPECT_EQ(doc["iteration"], 1);
  EXPECT_TRUE(doc["prompt"].is_string());
  EXPECT_GE(doc["conversation"].size(), 2u);
  EXPECT_NE(doc["validation_log"].get<std::string>().find("ok"), std::string::npos);
  // The transcript is files: it reads without a daemon too.
  ASSERT_EQ(loopr("daemon stop").exit_code, 0);
  EXPECT_EQ(loopr("show code-001-001-001 --iteration 1").exit_code, 0);
}

TEST_F(CliE2E, PauseResumeStopActOnTheTree) {
  CliScript slow;  // a plan that keeps failing its format check, a second per iteration
  slow.plan_delay = "1s";
  slow.invalid_plan = true;
  make_repo(slow);
  ASSERT_EQ(loopr("submit 'Slow plan'").exit_code, 0);
  ASSERT_TRUE(wait_status("001", "running"));
  CliRun pause = loopr("--json pause 001");
  ASSERT_EQ(pause.exit_code, 0) << pause.err;
  expect_interface_loop(pause.json());
  ASSERT_TRUE(wait_status("001", "paused", std::chrono::seconds(30)));
  EXPECT_EQ(loops()["001"]["end_reason"], "paused_by_user");
  EXPECT_EQ(loopr("pause 001").exit_code, 5);
  CliRun resume = loopr("resume 001");
  ASSERT_EQ(resume.exit_code, 0) << resume.err;
  EXPECT_NE(resume.out.find("resumed 001 and its descendants (now "), std::string::npos)
      << resume.out;
  CliRun stop = loopr("stop 001");
  ASSERT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_NE(stop.out.find("stopped 001 and its descendants (now "), std::string::npos) << stop.out;
  ASSERT_TRUE(wait_status("001", "stopped", std::chrono::seconds(30)));
  EXPECT_EQ(loops()["001"]["end_reason"], "stopped_by_user");
  CliRun logs = loopr("--json logs 001");
  ASSERT_EQ(logs.exit_code, 0);
  json events = logs.json()["events"];
  ASSERT_FALSE(events.empty());
  std::uint64_t last = 0;
  bool saw_stop = false;
  for (const auto& e : events) {
    EXPECT_GT(e["seq"].get<std::uint64_t>(), last);
    last = e["seq"];
    EXPECT_EQ(e["loop_id"], "001");
    if (e["type"] == "status_changed" && e["data"]["to"] == "stopped") {
      saw_stop = true;
      EXPECT_EQ(e["data"]["end_reason"], "stopped_by_user") << e.dump();
    }
  }
  EXPECT_TRUE(saw_stop) << logs.out;
}

TEST_F(CliE2E, SubmitDryRunStopsAtTheGateShowsThePlanAndKeepsItAsFailed) {
  make_repo(CliScript{{"alpha", "beta"}});
  CliRun r = loopr("submit --dry-run 'Add two things'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("spec-alpha"), std::string::npos) << "the plan, rendered\n" << r.out;
  EXPECT_NE(r.out.find("code loops run `"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dry run of plan 001"), std::string::npos) << r.out;
  auto l = loops();
  ASSERT_EQ(l.size(), 1u) << "nothing was spawned";
  EXPECT_EQ(l["001"]["status"], "failed");
  json show = loopr("--json show 001").json();
  EXPECT_EQ(show["status"], "failed");
  EXPECT_NE(loopr("show 001").out.find("dry run"), std::string::npos);
  EXPECT_EQ(git("branch --list 'loopr/001-loops/001-*'"), "") << "no spec branch";
  EXPECT_EQ(git("log --format=%s main").find("loopr("), std::string::npos) << "nothing merged";
  // --json: the plan text and the command, one document.
  CliRun j = loopr("--json submit --dry-run 'Another'");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  json doc = j.json();
  EXPECT_EQ(doc["id"], "002");
  EXPECT_EQ(doc["reached_gate"], true);
  EXPECT_EQ(doc["status"], "failed");
  EXPECT_EQ(doc["reason"], "dry run");
  EXPECT_NE(doc["plan"].get<std::string>().find("## Specs to Create"), std::string::npos);
  EXPECT_FALSE(doc["validation"].is_null());
  EXPECT_EQ(loopr("submit --dry-run --wait 'x'").exit_code, 2);
}
