// Budgets that pause and ask, and a model per loop type, through the real daemon and CLI against
// the scripted model (issue 42): at the tree's cost cap (`limits.at_cost_limit: pause`, the
// default) its code loop pauses after the model turn that crossed it, `cost_limit` is an event
// and `loopr review` lists it, a cap below what was spent is refused, `loopr resume PLAN
// --max-cost USD` raises it and the tree finishes; `loops.<type>.model` reaches the requests of
// that type and the receipts; the model cannot raise its own budget; the prompt cache's reads
// and writes per loop and per tree reach the API and `loopr show`.
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <loopr/core/figures.hpp>

#include "e2e/cli_fixture.hpp"

using namespace loopr::testing;
using nlohmann::json;

namespace {

// The e2e tree with the code loop's first three model turns costing $2 each (a million input
// tokens of claude-sonnet-5-5), each asking for another turn; after them it writes its file.
std::string costly_then_done_script(const std::string& hostile = "") {
  std::string y = CliScript{}.yaml();
  const std::string rules = "rules:\n";
  const std::string costly =
      "  - name: costly-code\n    match: {loop_type: code}\n    times: 3\n    per_loop: true\n"
      "    reply:\n      usage: {input_tokens: 1000000, output_tokens: 0}\n"
      "      tool_use:\n        - name: write_file\n          input: {path: "
      "\"code/turn-{{turn}}.txt\", content: \"turn {{turn}}\\n\"}\n" +
      hostile;
  return y.insert(y.find(rules) + rules.size(), costly);
}

}  // namespace

class CostLimitE2E : public CliE2E {
 protected:
  json show(const std::string& id) {
    CliRun r = loopr("--json show " + id);
    auto j = json::parse(r.out, nullptr, false);
    return j.is_discarded() ? json::object() : j;
  }
};

TEST_F(CostLimitE2E, AtTheCapTheTreePausesAndResumeMaxCostFinishesIt) {
  make_repo_with(
      costly_then_done_script(), "echo ok\n",
      "notify:\n  - command: \"cat >> " + (io / "notified.jsonl").string() +
          "\"\n    events: [cost_limit]\n"
          "limits:\n  no_progress_iterations: 3\nloops:\n  code: {max_iterations: 3, "
          "max_turns_per_iteration: 40, validation: \"sh check.sh\", iteration_timeout: 1m}\n");
  ASSERT_NO_FATAL_FAILURE(submit_and_approve("--max-cost 5 'Costly code'"));
  const std::string code = "code-001-001-001";
  ASSERT_TRUE(wait_status(code, "paused", std::chrono::seconds(120))) << loopr("list --all").out;

  json c = show(code);
  EXPECT_EQ(c["end_reason"], "cost_limit") << c.dump();
  const std::string why = loopr("show " + code).out;
  EXPECT_NE(why.find("loopr resume 001 --max-cost"), std::string::npos) << why;
  ASSERT_EQ(c["iterations"].size(), 1u) << c.dump();
  EXPECT_EQ(c["iterations"][0]["status"], "stopped");
  // The typed event, and the person told once.
  EXPECT_NE(loopr("logs 001").out.find("cost_limit"), std::string::npos);
  auto notified = [&] {  // what the notify command wrote so far ("" before it ran)
    std::ifstream in(io / "notified.jsonl");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  ASSERT_TRUE(wait_until([&] { return notified().find("cost_limit") != std::string::npos; },
                         std::chrono::seconds(30)));
  json note = json::parse(notified().substr(0, notified().find('\n')));
  EXPECT_EQ(note["event"], "cost_limit");
  EXPECT_EQ(note["limit"], "cost");
  EXPECT_EQ(note["max_cost_usd"], 5.0);
  // `loopr review` lists the tree that waits at its cap.
  CliRun review = loopr("review");
  EXPECT_NE((review.out + review.err).find("paused at its limit"), std::string::npos)
      << review.out << review.err;

  // A cap the tree already spent would pause it again at once: refused, nothing changes.
  CliRun low = loopr("resume 001 --max-cost 3");
  EXPECT_EQ(low.exit_code, 2) << low.out << low.err;
  EXPECT_NE(low.err.find("has spent"), std::string::npos) << low.err;
  EXPECT_EQ(show(code)["status"], "paused");

  CliRun raise = loopr("resume 001 --max-cost 20");
  ASSERT_EQ(raise.exit_code, 0) << raise.out << raise.err;
  EXPECT_EQ(show("001")["budget"]["max_cost_usd"], 20.0);
  // The plan is `complete` since its approval: the tree's end is its work merged into main.
  ASSERT_TRUE(wait_until([&] { return on_branch(dir.str(), "main", "code/" + code + ".txt"); },
                         std::chrono::seconds(120)))
      << loopr("list --all").out;
  EXPECT_EQ(show(code)["status"], "complete");
  EXPECT_EQ(show(code)["iterations"].size(), 2u);
}

TEST_F(CostLimitE2E, EachLoopTypeUsesItsModelInRequestsAndReceipts) {
  make_repo_with(CliScript{}.yaml(), "echo ok\n",
                 "loops:\n  plan: {model: claude-opus-5-5}\n  code: {model: claude-haiku-5-5, "
                 "max_iterations: 2, validation: \"sh check.sh\", iteration_timeout: 1m}\n");
  ASSERT_EQ(loopr("submit --yes --wait 'Models per type'").exit_code, 0);
  std::map<std::string, std::set<std::string>> models;  // x-loopr-loop-type → models asked
  for (const auto& r : mock->requests()) {
    if (!r["body"].is_object()) continue;
    models[r["headers"].value("x-loopr-loop-type", "")].insert(r["body"].value("model", ""));
  }
  EXPECT_EQ(models["plan"], std::set<std::string>{"claude-opus-5-5"});
  EXPECT_EQ(models["code"], std::set<std::string>{"claude-haiku-5-5"});
  EXPECT_EQ(models["spec"], std::set<std::string>{"claude-sonnet-5-5"}) << "llm.model for the rest";
  // The receipts: each iteration's conversation names the model that answered.
  CliRun it = loopr("--json show code-001-001-001 --iteration 1");
  EXPECT_NE(it.out.find("claude-haiku-5-5"), std::string::npos) << it.out.substr(0, 2000);
  CliRun plan = loopr("--json show 001 --iteration 1");
  EXPECT_NE(plan.out.find("claude-opus-5-5"), std::string::npos);
  // The cost is priced per model: the code loop's haiku turns cost a twentieth of sonnet's.
  json c = show("code-001-001-001");
  EXPECT_GT(c.value("cost_usd", 0.0), 0.0);
  EXPECT_LT(c.value("cost_usd", 1.0), 0.001) << c.dump();
}

TEST_F(CostLimitE2E, TheModelCannotRaiseItsOwnBudget) {
  // Hostile turns: the model writes a config with a huge cap into its worktree and into the
  // repository's .loopr through a path that climbs out, and asks to be resumed.
  const std::string hostile =
      "        - name: write_file\n          input: {path: \".loopr/config.yml\", content: "
      "\"limits: {max_cost_usd: 100000, at_cost_limit: fail}\\n\"}\n"
      "        - name: write_file\n          input: {path: \"../../../.loopr/config.yml\", "
      "content: "
      "\"limits: {max_cost_usd: 100000}\\n\"}\n"
      "        - name: run_command\n          input: {command: \"loopr resume 001 --max-cost "
      "100000; echo tried\"}\n";
  make_repo_with(
      costly_then_done_script(hostile), "echo ok\n",
      "limits:\n  no_progress_iterations: 3\nloops:\n  code: {max_iterations: 3, "
      "max_turns_per_iteration: 40, validation: \"sh check.sh\", iteration_timeout: 1m}\n");
  const std::string config_before = read_file(dir / ".loopr/config.yml");
  ASSERT_NO_FATAL_FAILURE(submit_and_approve("--max-cost 5 'Costly code'"));
  const std::string code = "code-001-001-001";
  ASSERT_TRUE(wait_status(code, "paused", std::chrono::seconds(120))) << loopr("list --all").out;
  EXPECT_EQ(show(code)["end_reason"], "cost_limit");
  EXPECT_EQ(show("001")["budget"]["max_cost_usd"], 5.0) << "the cap is the person's alone";
  EXPECT_EQ(read_file(dir / ".loopr/config.yml"), config_before);
}

// Prompt caching across loops (issue 42): the code loops of one tree send a byte-identical
// `system` block and tool list (what changes per loop or iteration is in the messages), so a
// second loop of the type reads the cache the first one wrote.
TEST_F(CostLimitE2E, TheLoopsOfOneTypeSendTheSameSystemBlockAndTools) {
  make_repo_with(CliScript{{"alpha", "beta"}}.yaml(), "echo ok\n",
                 "loops:\n  code: {max_iterations: 2, validation: \"sh check.sh\", "
                 "iteration_timeout: 1m}\n");
  ASSERT_EQ(loopr("submit --yes --wait 'Two code loops'").exit_code, 0) << loopr("list --all").out;
  std::map<std::string, std::string> system_of, tools_of;  // loop id → what it sent
  for (const auto& r : mock->requests()) {
    if (!r["body"].is_object() || r["headers"].value("x-loopr-loop-type", "") != "code") continue;
    const std::string loop = r["headers"].value("x-loopr-loop-id", "");
    const std::string system = r["body"].value("system", json()).dump();
    const std::string tools = r["body"].value("tools", json()).dump();
    EXPECT_NE(system, "null") << "a code loop's request has no system block";
    auto [s, fresh] = system_of.emplace(loop, system);
    EXPECT_EQ(s->second, system) << loop << ": the system block changed between its turns";
    tools_of.emplace(loop, tools);
  }
  ASSERT_GE(system_of.size(), 2u) << "the tree should have two code loops";
  for (const auto& [loop, system] : system_of) {
    EXPECT_EQ(system, system_of.begin()->second) << loop << " and " << system_of.begin()->first;
    EXPECT_EQ(tools_of[loop], tools_of.begin()->second) << loop;
  }
}

TEST_F(CostLimitE2E, ShowAndTheApiGiveTheCacheOfEachLoopAndOfTheTree) {
  // The model emulates Anthropic's prompt cache (each loop's second turn reads what its first
  // wrote); the figures come back per loop and per tree (issue 42 item 4).
  std::string y = CliScript{}.yaml();
  const std::string defaults = "defaults:\n";
  y.insert(y.find(defaults) + defaults.size(), "  prompt_cache: true\n  cache_min_tokens: 64\n");
  make_repo_with(y, "echo ok\n",
                 "loops:\n  code: {max_iterations: 2, validation: \"sh check.sh\", "
                 "iteration_timeout: 1m}\n");
  ASSERT_EQ(loopr("submit --yes --wait 'Cached tree'").exit_code, 0);
  const std::string code = "code-001-001-001";
  auto api_row = [&](const std::string& id) {  // the API's detail: show --json has INTERFACE's
    auto r = run_command("curl -s -m 30 --unix-socket " +
                         shell_quote((dir / ".loopr/run/loopr.sock").string()) +
                         " http://loopr/v1/loops/" + id);
    auto j = json::parse(r.output, nullptr, false);
    return j.is_object() ? j : json::object();
  };
  json c = api_row(code);
  std::int64_t read = 0, written = 0;
  for (const auto& it : c["iterations"]) {
    read += it.value("cache_read_tokens", std::int64_t{0});
    written += it.value("cache_write_tokens", std::int64_t{0});
  }
  ASSERT_GT(read, 0) << c.dump();
  EXPECT_EQ(c.value("cache_read_tokens", std::int64_t{-1}), read) << c.dump();
  EXPECT_EQ(c.value("cache_write_tokens", std::int64_t{-1}), written) << c.dump();
  // Without the cache the same calls cost more: reads are a tenth of the input price.
  EXPECT_GT(c.value("uncached_cost_usd", 0.0), c.value("cost_usd", 1.0)) << c.dump();

  // The tree's totals: every loop's reads and writes.
  std::int64_t tree_read = 0, tree_written = 0;
  for (const auto& [id, row] : loops()) {
    json detail = api_row(id);
    tree_read += detail.value("cache_read_tokens", std::int64_t{0});
    tree_written += detail.value("cache_write_tokens", std::int64_t{0});
  }
  json plan = api_row("001");
  ASSERT_TRUE(plan["tree_usage"].is_object()) << plan.dump();
  EXPECT_EQ(plan["tree_usage"]["cache_read_tokens"], tree_read) << plan.dump();
  EXPECT_EQ(plan["tree_usage"]["cache_write_tokens"], tree_written) << plan.dump();
  EXPECT_GT(tree_read, read);

  // `loopr show` prints them on one line; `show --json` keeps INTERFACE.md's fields.
  const std::string shown = loopr("show 001").out;
  EXPECT_NE(shown.find("\ncache:"), std::string::npos) << shown;
  EXPECT_NE(shown.find("of input read"), std::string::npos) << shown;
  EXPECT_NE(shown.find("; whole tree " + loopr::format_count(tree_read) + " read"), std::string::npos)
      << shown;
  EXPECT_FALSE(show(code).contains("cache_read_tokens"));
}
