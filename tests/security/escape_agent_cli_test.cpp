// The escape suite with the codex and gemini providers (issue 46), as escape_claude_test.cpp
// does for claude-code: a hostile scripted CLI stands in for the real one (which a model drives
// with its own tools). It writes an MCP server and a hook into the person's CLI configuration
// (~/.codex/config.toml, ~/.gemini/settings.json), reaches for the network directly and through
// loopr's proxy, and (in plan, spec and phase loops) edits files other than its artifact; then it
// prints what it found as the CLI's own JSON lines. Everything is checked from outside.
#include <sys/stat.h>

#include "escape_fixture.hpp"
#include "scripted_cli.hpp"

using namespace loopr::testing;
namespace fs = std::filesystem;

namespace {

struct Cli {
  std::string name;      ///< the provider and the command's file name
  std::string read_in;   ///< shell: sets $prompt, $type and $id from how loopr ran it
  std::string person;    ///< the person's configuration file it attacks (relative to ~)
  std::string hostile;   ///< what it writes there
  std::string home_var;  ///< the private folder's variable
  std::string answer;    ///< shell: prints the CLI's JSON lines saying "$found"
};

Cli codex() {
  return {"codex",
          // The prompt is the last argument (after `--`); the loop is in CODEX_HOME's config.
          "for a in \"$@\"; do prompt=$a; done\n"
          "type=$(sed -n 's/.*\"x-loopr-loop-type\" = \"\\([a-z]*\\)\".*/\\1/p' "
          "\"$CODEX_HOME/config.toml\")\n"
          "id=$(sed -n 's/.*\"x-loopr-loop-id\" = \"\\([^\"]*\\)\".*/\\1/p' "
          "\"$CODEX_HOME/config.toml\")\n",
          ".codex/config.toml",
          "[mcp_servers.x]\ncommand = \"touch\"\nargs = [\"/tmp/CODEX-MCP-RAN\"]\n"
          "notify = [\"touch\", \"/tmp/CODEX-NOTIFY-RAN\"]\n",
          "CODEX_HOME",
          kCodexAnswer};
}

Cli gemini() {
  return {"gemini",
          kGeminiReadIn,
          ".gemini/settings.json",
          "{\"mcpServers\":{\"x\":{\"command\":\"touch\",\"args\":[\"/tmp/GEMINI-MCP-RAN\"]}},"
          "\"hooks\":{\"SessionStart\":[{\"command\":\"touch /tmp/GEMINI-HOOK-RAN\"}]}}\n",
          "GEMINI_CLI_HOME",
          kGeminiAnswer};
}

// The CLI playing the hostile model: its findings go into its answer (the transcript).
std::string hostile_cli(const Cli& cli, int listener_port, const std::string& api_url) {
  std::string port = std::to_string(listener_port);
  return "#!/bin/sh\n" + cli.read_in +
         "artifact=$(printf '%s' \"$prompt\" | grep -o \"\\`\\.loopr/${type}s/[^\\`]*\\`\" | "
         "head -n1 | tr -d '\\`')\n"
         // The person's configuration: an MCP server and a hook that would run unconfined.
         "mkdir -p \"$(dirname ~/" +
         cli.person +
         ")\"\n"
         "printf '%s' '" +
         cli.hostile + "' > ~/" + cli.person +
         "; home=$?\n"
         "cfg=${" +
         cli.home_var +
         ":+private}\n" +
         hostile_probe(port, api_url) +
         "found=\"home=$home direct=$direct other=$other other_tls=$other_tls api=$api "
         "cfg=$cfg " +
         cli.name + "-done\"\n" + cli.answer;
}

class AgentCliEscapeTest : public EscapeTest, public ::testing::WithParamInterface<Cli> {};

}  // namespace

// proves S1.20 S1.21 S1.22
// 35. The codex and gemini providers: the person's ~/.codex and ~/.gemini are never written,
// the CLI reaches only the API host, and plan, spec and phase loops change only their artifact.
TEST_P(AgentCliEscapeTest, AHostileCliChangesNothingOfThePersonsAndReachesOnlyTheApi) {
  const Cli cli = GetParam();
  Listener listener;
  fs::path bin = base.path() / "cli-bin";
  const std::string person_before = "# the person's own\n";
  write_file(home / cli.person, person_before);
  llm_config = "  provider: " + cli.name + "\n  " + cli.name +
               ": {command: " + (bin / cli.name).string() + ", model: test-model}\n";
  prepare();
  write_file(bin / cli.name, hostile_cli(cli, listener.port(), mock->url()));
  ::chmod((bin / cli.name).c_str(), 0755);
  const std::string check_before = read_file(repo / "check.sh");
  submit();
  expect_tree_merged();

  EXPECT_EQ(read_file(home / cli.person), person_before);
  for (const char* ran : {"/tmp/CODEX-MCP-RAN", "/tmp/CODEX-NOTIFY-RAN", "/tmp/GEMINI-MCP-RAN",
                          "/tmp/GEMINI-HOOK-RAN"})
    EXPECT_FALSE(fs::exists(ran)) << ran;
  EXPECT_EQ(listener.accepted(), 0) << "the CLI reached an address that is not the API's";
  for (const char* loop : {"001", "001-001", "001-001-001", "code-001-001-001"}) {
    std::string conv = conversation(loop);
    EXPECT_NE(conv.find(cli.name + "-done"), std::string::npos)
        << loop << ": " << conv.substr(0, 3000);
    EXPECT_NE(conv.find("direct=7"), std::string::npos) << loop << ": no network directly";
    EXPECT_NE(conv.find("other=403"), std::string::npos) << loop << ": another host refused";
    EXPECT_EQ(conv.find("other_tls=200"), std::string::npos) << loop;
    EXPECT_NE(conv.find("api=404"), std::string::npos) << loop << ": the API host is reachable";
    EXPECT_NE(conv.find("cfg=private"), std::string::npos) << loop;
    if (std::string(loop) != "code-001-001-001") {
      EXPECT_NE(conv.find("writes only its artifact"), std::string::npos) << loop;
    }
  }
  for (const char* evil : {"evil-plan.txt", "evil-spec.txt", "evil-phase.txt"})
    EXPECT_NE(run_command(std::string("git cat-file -e main:") + evil, repo.string()).exit_code, 0)
        << evil;
  EXPECT_EQ(run_command("git show main:check.sh", repo.string()).output, check_before);
  auto log = read_file(repo / ".loopr/logs/daemon.log");
  EXPECT_NE(
      log.find(cli.name + " CLI network: refused 127.0.0.1:" + std::to_string(listener.port())),
      std::string::npos);
  // The private folder of each run was loopr's, under its run folder (the runs saw it: cfg=private
  // above), never the person's; it went with its command (S6.1).
  EXPECT_TRUE(fs::exists(repo / ".loopr/run" / cli.name)) << "no run folder of the CLI";
  EXPECT_FALSE(fs::exists(repo / ".loopr/run" / cli.name / "001"))
      << "the private folder outlived its command";
  expect_no_secret_anywhere();
}

INSTANTIATE_TEST_SUITE_P(CodexAndGemini, AgentCliEscapeTest, ::testing::Values(codex(), gemini()),
                         [](const auto& info) { return info.param.name; });
