// Coordination through the real daemon and CLI against the scripted model (issue 16): a note one
// loop shares reaches its sibling's next prompt; a loop that asks waits in `awaiting_answer`
// (holding no run, across a daemon restart, stoppable) until `loopr answer`, then uses the
// answer; the user's notify commands get the events; the forecast shown at the gate is compared
// with what the tree spent.
#include "e2e/cli_fixture.hpp"
#include "e2e/pty.hpp"

using namespace loopr::testing;
using nlohmann::json;

namespace {

// A mock-llm script: the plan names `specs`, each spec one phase, each phase one code loop;
// `code_rules` decide what the code loops do (a code loop passes when it wrote
// code/<its id>.txt, see kCheck).
std::string script(const std::vector<std::string>& specs, const std::string& code_rules) {
  std::string y =
      "defaults:\n  usage: {input_tokens: 1000, output_tokens: 200}\n  thinking: false\nrules:\n";
  y += "  - name: finish\n    match: {turn: 2}\n    reply: {text: \"Done.\"}\n";
  y += "  - name: plan\n    match: {loop_type: plan, first_user: "
       "\"`(\\\\.loopr/plans/[^`]+)`\"}\n    reply:\n" +
       CliScript::writer(CliScript::plan(specs));
  y += "  - name: spec\n    match: {loop_type: spec, first_user: "
       "\"`(\\\\.loopr/specs/[^`]+)`\"}\n    reply:\n" +
       CliScript::writer(
           "# Spec {{loop_id}}\n\n## Parent Plan\nThe plan.\n\n## Overview\nFiles.\n\n## Phases\n"
           "1. **Part one**\n   Write part one.\n   - Files: code/x.txt\n");
  y += "  - name: phase\n    match: {loop_type: phase, first_user: "
       "\"`(\\\\.loopr/phases/[^`]+)`\"}\n    reply:\n" +
       CliScript::writer(
           "# Phase {{loop_id}}\n\n## Parent Spec\nThe spec.\n\n## Task\nWrite the file.\n\n"
           "## Specific Work\n- Write it.\n\n## Success Criteria\n- check.sh passes.\n");
  return y + code_rules;
}

// The code loops' validation: the loop wrote its file (the integration check of the whole tree,
// run as the plan, passes).
const char* const kCheck =
    "case \"$LOOPR_LOOP_ID\" in code-*) test -f \"code/$LOOPR_LOOP_ID.txt\" || { echo missing; "
    "exit 1; } ;; esac\n";

// A code loop that writes its file (and passes).
const char* const kCodeWrites =
    "  - name: code\n    match: {loop_type: code}\n    reply:\n"
    "      tool_use:\n        - name: write_file\n          input: {path: "
    "\"code/{{loop_id}}.txt\", content: \"made by {{loop_id}}\\n\"}\n";

std::string config_tail(const std::string& more = "", int code_iterations = 3) {
  return "merge: auto\nlimits:\n  no_progress_iterations: 30\n" + more +
         "loops:\n  code: {max_iterations: " + std::to_string(code_iterations) +
         ", validation: \"sh check.sh\", iteration_timeout: 1m}\n";
}

}  // namespace

class CoordinationE2E : public CliE2E {
 protected:
  // The prompt of iteration `n` of loop `id` (`loopr show ID --iteration N --json`).
  std::string prompt_of(const std::string& id, int n) {
    CliRun r = loopr("--json show " + id + " --iteration " + std::to_string(n));
    if (r.exit_code != 0) return "";
    auto j = json::parse(r.out, nullptr, false);
    return j.is_object() && j["prompt"].is_string() ? j["prompt"].get<std::string>() : "";
  }
};

TEST_F(CoordinationE2E, ANoteOneLoopSharesIsInItsSiblingsNextPrompt) {
  std::string rules =
      "  - name: alpha-shares\n    match: {loop_id: \"^code-001-001-001$\"}\n    reply:\n"
      "      tool_use:\n"
      "        - name: share_note\n          input: {text: \"NOTE-FROM-ALPHA: the port is 8080\"}\n"
      // Hostile calls: the wrong type, nothing to say. Each is an error the model reads.
      "        - name: share_note\n          input: {text: 42}\n"
      "        - name: share_note\n          input: {text: \"   \"}\n"
      "        - name: write_file\n          input: {path: \"code/{{loop_id}}.txt\", content: "
      "\"alpha\\n\"}\n"
      // The sibling passes only once its prompt carries the note (under its heading).
      "  - name: beta-with-note\n    match: {loop_id: \"^code-001-002-001$\", first_user: "
      "\"## Notes from other loops[\\\\s\\\\S]*from code-001-001-001 [^\\\\n]*NOTE-FROM-ALPHA: the "
      "port is (\\\\d+)\"}\n    reply:\n"
      "      tool_use:\n        - name: write_file\n          input: {path: "
      "\"code/{{loop_id}}.txt\", content: \"port {{first_user.1}}\\n\"}\n"
      "  - name: beta-waits\n    match: {loop_id: \"^code-001-002-001$\"}\n    reply:\n"
      "      tool_use:\n        - name: write_file\n          input: {path: "
      "\"tries/{{loop_id}}-{{n}}.txt\", content: \"no note yet\\n\"}\n";
  make_repo_with(script({"alpha", "beta"}, rules), kCheck, config_tail("", 30));
  ASSERT_EQ(loopr("submit --wait --yes 'Two parts'", "", 300).exit_code, 0);

  // The sibling's file says what the note said: it read the note in its prompt.
  EXPECT_EQ(git("show main:code/code-001-002-001.txt"), "port 8080\n");
  auto loops_now = loops();
  int n = loops_now["code-001-002-001"]["iteration"].get<int>();
  std::string last = prompt_of("code-001-002-001", n);
  EXPECT_NE(last.find("## Notes from other loops"), std::string::npos) << last;
  EXPECT_NE(last.find("- from code-001-001-001 ("), std::string::npos) << last;
  // The loop that shared it does not get its own note back.
  EXPECT_EQ(prompt_of("code-001-001-001", 1).find("NOTE-FROM-ALPHA"), std::string::npos);

  CliRun first = loopr("--json show code-001-001-001 --iteration 1");
  EXPECT_NE(first.out.find("share_note needs `text` (a string)"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("share_note: `text` is empty"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("shared with the other loops of plan 001"), std::string::npos);

  // The note is an event in logs (and their --json).
  CliRun logs = loopr("logs code-001-001-001");
  EXPECT_NE(logs.out.find("note_shared"), std::string::npos) << logs.out;
  CliRun jlogs = loopr("--json logs code-001-001-001");
  EXPECT_NE(jlogs.out.find("\"NOTE-FROM-ALPHA: the port is 8080\""), std::string::npos)
      << jlogs.out;
}

TEST_F(CoordinationE2E, ALoopAsksWaitsAcrossARestartIsAnsweredAndUsesTheAnswer) {
  TempDir notes{"loopr-notify"};
  std::string rules =
      "  - name: code-uses-answer\n    match: {loop_type: code, first_user: \"## Answer from the "
      "user[\\\\s\\\\S]*The user answered:\\\\s+(GREETING-\\\\w+)\"}\n    reply:\n"
      "      tool_use:\n        - name: write_file\n          input: {path: "
      "\"code/{{loop_id}}.txt\", content: \"{{first_user.1}}\\n\"}\n"
      "  - name: code-asks\n    match: {loop_type: code}\n    reply:\n"
      "      tool_use:\n        - name: ask_user\n          input: {question: \"Which greeting "
      "should the file hold?\"}\n";
  std::string notify = "notify:\n  - command: 'echo \"$LOOPR_EVENT $LOOPR_LOOP_ID\" >> " +
                       (notes / "events.txt").string() + "'\n    events: [awaiting_answer]\n";
  make_repo_with(script({"alpha"}, rules), kCheck, config_tail() + notify);
  ASSERT_NO_FATAL_FAILURE(submit_and_approve("--yes 'Greet'"));
  const std::string id = "code-001-001-001";
  ASSERT_TRUE(wait_status(id, "awaiting_answer"));

  // list --json carries the question; show says it; the wait holds no run.
  json row = loops()[id];
  EXPECT_EQ(row["question"], "Which greeting should the file hold?");
  EXPECT_EQ(row["iteration"], 1);  // the question counted as an iteration
  CliRun show = loopr("show " + id);
  EXPECT_NE(show.out.find("question:"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("Which greeting should the file hold?"), std::string::npos);
  EXPECT_NE(show.out.find("asked"), std::string::npos) << show.out;
  CliRun health = loopr("--json daemon status");
  EXPECT_EQ(health.json()["active_runs"], 0) << health.out;
  EXPECT_TRUE(wait_until([&] {
    return read_file(notes / "events.txt").find("awaiting_answer " + id) != std::string::npos;
  }));

  // A restart keeps the question.
  ASSERT_EQ(loopr("daemon stop").exit_code, 0);
  ASSERT_EQ(loopr("daemon").exit_code, 0);
  ASSERT_TRUE(wait_status(id, "awaiting_answer"));
  EXPECT_EQ(loops()[id]["question"], "Which greeting should the file hold?");

  // Wrong uses: an empty answer, a loop that asks nothing.
  EXPECT_EQ(loopr("answer " + id + " '  '").exit_code, 2);
  CliRun not_asked = loopr("answer 001 'x'");
  EXPECT_EQ(not_asked.exit_code, 5) << not_asked.err;
  EXPECT_NE(not_asked.err.find("no question"), std::string::npos) << not_asked.err;
  EXPECT_EQ(loopr("answer 999 'x'").exit_code, 4);

  CliRun answered = loopr("--json answer " + id + " GREETING-HELLO");
  ASSERT_EQ(answered.exit_code, 0) << answered.err;
  EXPECT_EQ(answered.json()["answer"], "GREETING-HELLO");
  ASSERT_TRUE(wait_status(id, "complete"));
  EXPECT_TRUE(wait_until([&] { return on_branch(dir.str(), "main", "code/" + id + ".txt"); }));
  EXPECT_EQ(git("show main:code/" + id + ".txt"), "GREETING-HELLO\n");
  std::string prompt = prompt_of(id, 2);
  EXPECT_NE(prompt.find("## Answer from the user"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("Which greeting should the file hold?"), std::string::npos);
  EXPECT_EQ(loopr("answer " + id + " again").exit_code, 5);  // nothing waits any more
  CliRun logs = loopr("logs " + id);
  for (const char* e : {"question_asked", "question_answered"})
    EXPECT_NE(logs.out.find(e), std::string::npos) << e << "\n" << logs.out;
}

TEST_F(CoordinationE2E, StopAndPauseWorkOnAWaitingLoop) {
  std::string rules =
      "  - name: code-asks\n    match: {loop_type: code}\n    reply:\n"
      "      tool_use:\n        - name: ask_user\n          input: {question: \"Q?\"}\n";
  make_repo_with(script({"alpha", "beta"}, rules), kCheck, config_tail());
  ASSERT_NO_FATAL_FAILURE(submit_and_approve("--yes 'Two'"));
  ASSERT_TRUE(wait_status("code-001-001-001", "awaiting_answer"));
  ASSERT_TRUE(wait_status("code-001-002-001", "awaiting_answer"));

  // Pause: the waiting loop is paused with its question; answered, it stays paused until resume.
  ASSERT_EQ(loopr("pause 001-001").exit_code, 0);
  EXPECT_TRUE(wait_status("code-001-001-001", "paused"));
  ASSERT_EQ(loopr("answer code-001-001-001 later").exit_code, 0);
  EXPECT_EQ(loops()["code-001-001-001"]["status"], "paused");

  // Stop: a waiting loop stops at once.
  CliRun stop = loopr("stop code-001-002-001");
  ASSERT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_TRUE(wait_status("code-001-002-001", "stopped"));
  EXPECT_EQ(loopr("answer code-001-002-001 x").exit_code, 5);
}

TEST_F(CoordinationE2E, NotifyCommandsGetTheEventsAndTheirFailuresAreNotFatal) {
  TempDir notes{"loopr-notify"};
  const std::string events = (notes / "events.jsonl").string();
  const std::string env = (notes / "env.txt").string();
  std::string notify =
      "notify:\n"
      "  - command: 'cat >> " +
      events + "; echo \"$LOOPR_EVENT $LOOPR_LOOP_ID $LOOPR_PLAN_ID\" >> " + env +
      "'\n"
      "    events: [awaiting_approval, tree_complete, cost_threshold]\n"
      "  - command: 'exit 3'\n"
      "  - command: 'sleep 30'\n    timeout: 200ms\n";
  make_repo_with(script({"alpha"}, kCodeWrites), kCheck,
                 config_tail("  max_cost_usd: 100\n  notify_cost_fraction: 0.00001\n") + notify);
  ASSERT_EQ(loopr("submit --wait --yes 'Notify me'", "", 300).exit_code, 0);
  ASSERT_TRUE(wait_until([&] {
    std::string got = read_file(env);
    return got.find("tree_complete 001 001") != std::string::npos &&
           got.find("awaiting_approval 001 001") != std::string::npos &&
           got.find("cost_threshold") != std::string::npos;
  })) << read_file(env);
  std::string got = read_file(env);
  EXPECT_EQ(std::count(got.begin(), got.end(), '\n'), 3) << got;  // each once
  // stdin: one JSON document per event.
  std::size_t lines = 0;
  for (std::istringstream in(read_file(events)); !in.eof();) {
    std::string line;
    std::getline(in, line);
    if (line.empty()) continue;
    auto j = json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    EXPECT_EQ(j["plan_id"], "001");
    EXPECT_TRUE(j["event"].is_string());
    if (j["event"] == "cost_threshold") {
      EXPECT_EQ(j["max_cost_usd"], 100);
    }
    ++lines;
  }
  EXPECT_EQ(lines, 3u);
  // The failing and the hanging command were logged; the daemon still answers.
  EXPECT_TRUE(wait_until([&] {
    std::string log = read_file(dir / ".loopr/logs/daemon.log");
    return log.find("notify: `exit 3`") != std::string::npos &&
           log.find("notify: `sleep 30`") != std::string::npos;
  })) << read_file(dir / ".loopr/logs/daemon.log");
  EXPECT_EQ(loopr("daemon status").exit_code, 0);
}

TEST_F(CoordinationE2E, AForecastAtTheGateIsComparedWithTheActualSpendingAfterTheRun) {
  make_repo_with(script({"alpha", "beta"}, kCodeWrites), kCheck,
                 config_tail("  max_cost_usd: 0.5\n"));
  ASSERT_EQ(loopr("submit 'Two parts'").exit_code, 0);
  ASSERT_TRUE(wait_status("001", "awaiting_approval"));

  CliRun show = loopr("--json show 001");
  ASSERT_EQ(show.exit_code, 0);
  json f = show.json()["forecast"];
  ASSERT_TRUE(f.is_object()) << show.out;
  for (const char* k : {"cost_usd", "low", "high", "loops", "basis"})
    EXPECT_TRUE(f.contains(k)) << k << " in " << f.dump();
  EXPECT_EQ(f["loops"], 1 + 2 + 2 * 2 * 3);  // no history: 3 phases per spec
  EXPECT_NE(f["basis"].get<std::string>().find("built-in defaults"), std::string::npos);
  EXPECT_LE(f["low"].get<double>(), f["cost_usd"].get<double>());
  EXPECT_LE(f["cost_usd"].get<double>(), f["high"].get<double>());
  EXPECT_EQ(f["over_limit"], f["high"].get<double>() > 0.5);
  EXPECT_FALSE(show.json().contains("actual"));

  // The gate shows it (review, skip), with the warning when the high estimate passes the limit.
  CliRun review = loopr("review", "s\n");
  EXPECT_EQ(review.exit_code, 0) << review.err;
  EXPECT_NE(review.out.find("forecast:"), std::string::npos) << review.out;
  EXPECT_NE(review.out.find("warning:"), std::string::npos) << review.out;
  EXPECT_NE(review.out.find("limits.max_cost_usd"), std::string::npos) << review.out;

  ASSERT_EQ(loopr("approve 001").exit_code, 0);
  ASSERT_TRUE(wait_until([&] {
    return loops()["001"]["status"] == "complete" &&
           on_branch(dir.str(), "main", "code/code-001-002-001.txt");
  }));
  ASSERT_TRUE(wait_until([&] { return loopr("--json show 001").json().contains("actual"); }));
  json done = loopr("--json show 001").json();
  EXPECT_EQ(done["forecast"], f) << "the forecast made at the gate is kept";
  EXPECT_EQ(done["actual"]["loops"], 7);
  EXPECT_GT(done["actual"]["cost_usd"].get<double>(), 0);
  CliRun text = loopr("show 001");
  EXPECT_NE(text.out.find("actual:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("7 loops against 15"), std::string::npos) << text.out;

  // The next plan's forecast comes from this repository's history.
  ASSERT_EQ(loopr("submit 'Again'").exit_code, 0);
  ASSERT_TRUE(wait_status("002", "awaiting_approval"));
  json g = loopr("--json show 002").json()["forecast"];
  EXPECT_NE(g["basis"].get<std::string>().find("history"), std::string::npos) << g.dump();
  EXPECT_EQ(g["loops"], 1 + 2 + 2 * 2 * 1);  // one phase per spec, as before
  CliRun logs = loopr("logs 002");
  EXPECT_NE(logs.out.find("forecast"), std::string::npos) << logs.out;
}

TEST_F(CoordinationE2E, SubmitWaitShowsTheQuestionAndReviewOnATerminalAnswersIt) {
  std::string rules =
      "  - name: code-uses-answer\n    match: {loop_type: code, first_user: \"The user "
      "answered:\\\\s+([\\\\s\\\\S]+?)\\\\s*$\"}\n    reply:\n"
      "      tool_use:\n        - name: write_file\n          input: {path: "
      "\"code/{{loop_id}}.txt\", content: \"{{first_user.1}}\"}\n"
      "  - name: code-asks\n    match: {loop_type: code}\n    reply:\n"
      "      tool_use:\n        - name: ask_user\n          input: {question: \"Tabs or "
      "spaces?\"}\n";
  make_repo_with(script({"alpha"}, rules), kCheck, config_tail());
  // submit --wait (not a terminal: it prints the tree on change) shows the question and how to
  // answer it.
  const std::string out = (io / "wait.out").string();
  auto waiting = run_command(loopr_command("submit --wait --yes 'Indent'") + " > " +
                             shell_quote(out) + " 2>&1 &");
  ASSERT_EQ(waiting.exit_code, 0);
  const std::string id = "code-001-001-001";
  ASSERT_TRUE(wait_status(id, "awaiting_answer"));
  EXPECT_TRUE(wait_until([&] {
    std::string got = read_file(out);
    return got.find("? " + id + " asks: Tabs or spaces?") != std::string::npos &&
           got.find("loopr answer " + id) != std::string::npos;
  })) << read_file(out);

  // `loopr review` on a terminal: the question, `a`, two lines, an empty line.
  Pty pty("exec " + loopr_command("review"));
  ASSERT_TRUE(pty.wait_for("[a]nswer [s]kip")) << pty.output();
  EXPECT_NE(pty.output().find("Tabs or spaces?"), std::string::npos) << pty.output();
  pty.type("a");
  ASSERT_TRUE(pty.wait_for("your answer")) << pty.output();
  pty.type("Spaces,\r");
  pty.type("four of them.\r");
  pty.type("\r");
  EXPECT_EQ(pty.wait_exit(), 0) << pty.output();
  EXPECT_NE(pty.output().find("answered"), std::string::npos) << pty.output();

  ASSERT_TRUE(wait_status(id, "complete"));
  EXPECT_TRUE(wait_until([&] { return on_branch(dir.str(), "main", "code/" + id + ".txt"); }));
  EXPECT_EQ(git("show main:code/" + id + ".txt"), "Spaces,\nfour of them.");
  // The background `submit --wait` ends with the tree.
  EXPECT_TRUE(wait_until([&] {
    return read_file(out).find("plan 001 complete") != std::string::npos;
  })) << read_file(out);
}
