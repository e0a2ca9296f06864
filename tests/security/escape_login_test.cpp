// Subscription logins (issue 46, point 7) through the real daemon and the real bubblewrap sandbox:
// a scripted CLI stands in for claude, codex and gemini on a login, with no API key in the person's
// environment. loopr refreshes the person's login itself, outside the sandbox, at a mock token
// endpoint on loopback (LOOPR_LOGIN_TOKEN_URL) whose refresh tokens are single-use (as codex's
// are), so a refreshed login that was not kept breaks the next command. The CLI reports what its
// copy holds (an access token, no refresh token) and whether a token endpoint is reachable from
// its sandbox (it is not). The hostile variant forges a login of its own into its copy, turns it
// into a symlink to another of the person's files, garbage, and a FIFO: nothing is read back.
#include <sys/stat.h>

#include <regex>

#include "escape_fixture.hpp"
#include "scripted_cli.hpp"
#include "support/tree_artifacts.hpp"
#include "token_server.hpp"

using namespace loopr::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Cli {
  std::string name;        ///< provider, command file name
  std::string read_in;     ///< shell: sets $prompt, $type, $id
  std::string person;      ///< the login file, relative to the home
  std::string read_login;  ///< shell: sets $cred (its copy's path), $at and $rt from its copy
  std::string forge;       ///< shell: writes a well-formed login of the model's own into $cred
  std::string token_host;  ///< the CLI's own token endpoint (https)
  std::string answer;      ///< shell: prints the CLI's JSON lines saying "$found"
  json login(const std::string& at, const std::string& rt, std::int64_t exp) const {
    if (name == "codex")  // its access token is a JWT that says when it expires
      return {{"OPENAI_API_KEY", nullptr},
              {"tokens",
               {{"id_token", jwt_until(exp / 1000)},
                {"access_token", jwt_until(exp / 1000)},
                {"refresh_token", rt},
                {"account_id", "acct-person"}}},
              {"last_refresh", "2026-11-01T00:00:00Z"}};
    if (name == "gemini")
      return {{"access_token", at},
              {"refresh_token", rt},
              {"expiry_date", exp},
              {"token_type", "Bearer"}};
    return {{"claudeAiOauth",
             {{"accessToken", at},
              {"refreshToken", rt},
              {"expiresAt", exp},
              {"scopes", {"user:inference"}},
              {"subscriptionType", "max"}}}};
  }
  std::string access(const json& j) const {
    if (name == "codex") return j["tokens"]["access_token"].get<std::string>();
    return (name == "gemini" ? j["access_token"] : j["claudeAiOauth"]["accessToken"])
        .get<std::string>();
  }
  std::string refresh(const json& j) const {
    if (name == "codex") return j["tokens"]["refresh_token"].get<std::string>();
    return (name == "gemini" ? j["refresh_token"] : j["claudeAiOauth"]["refreshToken"])
        .get<std::string>();
  }
};

Cli claude() {
  return {"claude-code",
          "while [ $# -gt 0 ]; do case \"$1\" in -p) prompt=$2; shift 2;; *) shift;; esac; done\n"
          "type=$(printf '%s\\n' \"$ANTHROPIC_CUSTOM_HEADERS\" | sed -n 's/^x-loopr-loop-type: "
          "//p')\n"
          "id=$(printf '%s\\n' \"$ANTHROPIC_CUSTOM_HEADERS\" | sed -n 's/^x-loopr-loop-id: //p')\n",
          ".claude/.credentials.json",
          "cred=\"$CLAUDE_CONFIG_DIR/.credentials.json\"\n"
          "at=$(sed -n 's/.*\"accessToken\":\"\\([^\"]*\\)\".*/\\1/p' \"$cred\")\n"
          "rt=$(sed -n 's/.*\"refreshToken\":\"\\([^\"]*\\)\".*/\\1/p' \"$cred\")\n",
          "printf '%s' '{\"claudeAiOauth\":{\"accessToken\":\"at-evil\",\"refreshToken\":"
          "\"rt-evil\",\"expiresAt\":9999999999999,\"scopes\":[\"user:inference\"],"
          "\"subscriptionType\":\"max\",\"evil\":\"planted\"},\"hooks\":{\"x\":\"touch "
          "/tmp/LOGIN-HOOK\"}}' > \"$cred\"\n",
          "https://platform.claude.com/v1/oauth/token",
          kClaudeAnswer};
}

Cli gemini() {
  return {"gemini",
          kGeminiReadIn,
          ".gemini/oauth_creds.json",
          // gemini takes the access token alone from its environment (GOOGLE_GENAI_USE_GCA).
          "cred=\"$GEMINI_CLI_HOME/.gemini/oauth_creds.json\"\n"
          "[ \"$GOOGLE_GENAI_USE_GCA\" = true ] && at=$GOOGLE_CLOUD_ACCESS_TOKEN\n"
          "rt=$(sed -n 's/.*\"refresh_token\": *\"\\([^\"]*\\)\".*/\\1/p' \"$cred\" 2>/dev/null)\n",
          "mkdir -p \"$(dirname \"$cred\")\"; printf '%s' '{\"access_token\":\"at-evil\","
          "\"refresh_token\":\"rt-evil\",\"expiry_date\":9999999999999,\"token_type\":\"Bearer\","
          "\"evil\":\"planted\"}' > \"$cred\"\n",
          "https://oauth2.googleapis.com/token",
          kGeminiAnswer};
}

Cli codex() {
  return {"codex",
          // The prompt is the last argument. On a login loopr's config names no provider of its
          // own (so no loop headers): the loop is the worktree's folder, its type its shape.
          "for a in \"$@\"; do prompt=$a; done\n"
          "id=$(basename \"$PWD\")\n"
          "case \"$id\" in code-*) type=code;; *-*-*) type=phase;; *-*) type=spec;; "
          "*) type=plan;; esac\n",
          ".codex/auth.json",
          "cred=\"$CODEX_HOME/auth.json\"\n"
          "at=$(sed -n 's/.*\"access_token\": *\"\\([^\"]*\\)\".*/\\1/p' \"$cred\")\n"
          "rt=$(sed -n 's/.*\"refresh_token\": *\"\\([^\"]*\\)\".*/\\1/p' \"$cred\")\n",
          "printf '%s' '{\"OPENAI_API_KEY\":null,\"tokens\":{\"id_token\":\"x\",\"access_token\":"
          "\"at-evil\",\"refresh_token\":\"rt-evil\",\"account_id\":\"evil\"},\"last_refresh\":"
          "\"2099-01-01T00:00:00Z\",\"evil\":\"planted\"}' > \"$cred\"\n",
          "https://auth.openai.com/oauth/token",
          kCodexAnswer};
}

// The CLI on a login: reads the copy loopr gave it, tries to refresh at its own token host and
// at the mock token endpoint from inside its sandbox, then (hostile) forges a login of its own
// into the copy, or makes it a symlink to another of the person's files, garbage, a FIFO; writes
// the loop's artifact and answers with what it found.
std::string login_cli(const Cli& cli, const std::string& token_url, bool hostile,
                      const fs::path& other_file) {
  std::string s =
      "#!/bin/sh\n" + cli.read_in + cli.read_login +
      "artifact=$(printf '%s' \"$prompt\" | grep -o \"\\`\\.loopr/${type}s/[^\\`]*\\`\" "
      "| head -n1 | tr -d '\\`')\n"
      "tok=$(curl -s -m 10 -o /dev/null -w '%{http_connect}' -d x " +
      cli.token_host +
      " 2>/dev/null)\n"
      "mock=$(curl -s -m 10 -o /dev/null -w '%{http_code}' -d "
      "'grant_type=refresh_token&refresh_token=rt-0' " +
      token_url + " 2>/dev/null)\n";
  if (hostile)
    s += "case \"$type\" in\n  plan) " + cli.forge +
         ";;\n"
         "  spec) rm -f \"$cred\"; mkdir -p \"$(dirname \"$cred\")\"; ln -s " +
         shell_quote(other_file.string()) +
         " \"$cred\";;\n"
         "  phase) printf 'not json {{{' > \"$cred\";;\n"
         "  code) rm -f \"$cred\"; mkfifo \"$cred\";;\nesac\n";
  s += std::string("case \"$type\" in\n") +
       "  plan) mkdir -p \"$(dirname \"$artifact\")\"; cat > \"$artifact\" <<'EOF'\n" + kTreePlan +
       "EOF\n;;\n  spec) mkdir -p \"$(dirname \"$artifact\")\"; cat > \"$artifact\" <<'EOF'\n" +
       kTreeSpec +
       "EOF\n;;\n  phase) mkdir -p \"$(dirname \"$artifact\")\"; cat > \"$artifact\" <<'EOF'\n" +
       kTreePhase +
       "EOF\n;;\n  code) mkdir -p code; printf 'made by %s\\n' \"$id\" > \"code/$id.txt\";;\n"
       "esac\n"
       "found=\"at=$at rt=[$rt] tok=$tok mock=$mock " +
       cli.name + "-done\"\n" + cli.answer;
  return s;
}

class LoginEscapeTest : public EscapeTest, public ::testing::WithParamInterface<Cli> {
 protected:
  fs::path bin;
  const std::string person_other = "{\"theme\":\"dark\"}\n";

  /// The person's login (refresh token rt-0; expired an hour ago, or valid for a day) and
  /// another file beside it; loopr's token endpoint is the mock (LOOPR_LOGIN_TOKEN_URL), which
  /// is not among the hosts the CLI may reach.
  void prepare_login(const Cli& cli, const TokenServer& tokens, bool hostile, bool valid = false) {
    provider_keys = false;
    model_base_url = cli.name != "codex";
    extra_env = "LOOPR_LOGIN_TOKEN_URL=" + shell_quote(tokens.url()) + " ";
    const std::int64_t exp = (::time(nullptr) + (valid ? 86400 : -3600)) * 1000LL;
    json login = cli.login("at-0", "rt-0", exp);
    if (cli.name != "gemini") login["mcpOAuth"] = {{"srv", {{"accessToken", "the person's"}}}};
    write_file(home / cli.person, login.dump(2) + "\n");
    ::chmod((home / cli.person).c_str(), 0600);
    write_file((home / cli.person).parent_path() / "settings.json", person_other);
    bin = base.path() / "cli-bin";
    const std::string key = cli.name == "claude-code" ? "claude_code" : cli.name;
    llm_config = "  provider: " + cli.name + "\n  model: claude-opus-5-5\n  " + key +
                 ": {command: " + (bin / cli.name).string() +
                 (cli.name == "claude-code" ? ", skip_permissions: true" : "") + "}\n";
    prepare();
    write_file(bin / cli.name, login_cli(cli, tokens.url(), hostile,
                                         (home / cli.person).parent_path() / "settings.json"));
    ::chmod((bin / cli.name).c_str(), 0755);
  }

  /// What each CLI of the tree found: its access token, no refresh token, and neither its own
  /// token host nor the mock endpoint reachable from its sandbox.
  void expect_copies_without_refresh(const std::vector<std::string>& loops,
                                     const std::string& access_prefix) {
    for (const auto& loop : loops) {
      const std::string c = conversation(loop);
      EXPECT_NE(c.find("at=" + access_prefix), std::string::npos)
          << loop << ": " << c.substr(0, 800);
      EXPECT_NE(c.find("rt=[]"), std::string::npos) << loop << " found a refresh token";
      EXPECT_FALSE(std::regex_search(c, std::regex("rt-[0-9]"))) << loop << " saw a refresh token";
      EXPECT_NE(c.find("tok=403"), std::string::npos) << loop << ": the token host was not refused";
      EXPECT_EQ(c.find("mock=200"), std::string::npos) << loop;
      EXPECT_EQ(c.find("mock=400"), std::string::npos) << loop;
    }
  }

  std::size_t count_in_log(const std::string& what) {
    auto log = read_file(repo / ".loopr/logs/daemon.log");
    std::size_t n = 0;
    for (auto at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
    return n;
  }

  std::vector<std::string> login_folder(const Cli& cli) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator((home / cli.person).parent_path()))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

}  // namespace

const std::vector<std::string> kLoops = {"001", "001-001", "001-001-001", "code-001-001-001"};

// proves S6.3 S6.4
// A tree outlives its login's token: before every command loopr finds it expired (each token
// lasts a second) and refreshes it itself at the token endpoint, once per expiry, keeping each
// answer in the person's file, so no refresh token is used twice. No command holds a refresh
// token, and none reaches a token endpoint: every request the endpoint saw is loopr's.
TEST_P(LoginEscapeTest, ATreeOutlivesItsTokenAndTheRefreshedLoginIsKept) {
  const Cli cli = GetParam();
  TokenServer tokens("rt-0", 1);
  prepare_login(cli, tokens, false);
  submit();
  expect_tree_merged();

  EXPECT_EQ(tokens.reused(), 0) << "a refresh token was used twice: a refreshed login was lost";
  EXPECT_GE(tokens.refreshes(), 4) << "every command should have found its token expired";
  EXPECT_EQ(tokens.requests(), tokens.refreshes()) << "a request came from somewhere else";
  EXPECT_EQ(count_in_log("loopr refreshed the login"),
            static_cast<std::size_t>(tokens.refreshes()));
  json now = json::parse(read_file(home / cli.person));
  EXPECT_EQ(cli.refresh(now), tokens.latest_refresh_token());
  EXPECT_EQ(cli.access(now), "at-" + std::to_string(tokens.refreshes()));
  if (cli.name != "gemini") {
    EXPECT_EQ(now["mcpOAuth"]["srv"]["accessToken"], "the person's");
  }
  struct stat st {};
  ::stat((home / cli.person).c_str(), &st);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(read_file((home / cli.person).parent_path() / "settings.json"), person_other);
  EXPECT_EQ(login_folder(cli).size(), 2u) << "a file was added beside the login";
  expect_copies_without_refresh(kLoops, "at-");
  for (const auto& loop : kLoops)
    EXPECT_EQ(conversation(loop).find("at=at-0 "), std::string::npos) << loop << ": expired token";
  if (cli.name == "claude-code") {
    // The CLI's cost under a subscription is notional: a receipt, not counted.
    std::string shown = loopr("--json show code-001-001-001");
    auto j = json::parse(shown, nullptr, false);
    ASSERT_TRUE(j.is_object()) << shown;
    ASSERT_FALSE(j["iterations"].empty()) << shown;
    EXPECT_DOUBLE_EQ(j["iterations"][0]["notional_cost_usd"].get<double>(), 0.01) << shown;
    EXPECT_DOUBLE_EQ(j["iterations"][0]["cost_usd"].get<double>(), 0.0) << shown;
  }
  expect_no_secret_anywhere();
}

// proves S6.3 S6.4
// The model forges a well-formed login of its own with a later expiry into its copy, makes the
// copy a symlink to another of the person's files, garbage, a FIFO; it finds no refresh token
// in its copy and cannot reach a token host. Nothing of the copy is read back: the person's
// login (valid, so loopr does not refresh it) is byte-for-byte what it was, and so is the rest.
TEST_P(LoginEscapeTest, AHostileLoginCopyNeverReachesThePersonsLogin) {
  const Cli cli = GetParam();
  TokenServer tokens("rt-0", 3600);
  prepare_login(cli, tokens, true, /*valid=*/true);
  const std::string before = read_file(home / cli.person);
  const auto folder_before = login_folder(cli);
  submit();
  expect_tree_merged();

  EXPECT_EQ(read_file(home / cli.person), before);
  EXPECT_EQ(tokens.requests(), 0) << "nobody refreshed: not loopr (valid), not the model";
  EXPECT_EQ(read_file((home / cli.person).parent_path() / "settings.json"), person_other);
  EXPECT_FALSE(fs::is_symlink(home / cli.person));
  EXPECT_EQ(login_folder(cli), folder_before);
  EXPECT_FALSE(fs::exists("/tmp/LOGIN-HOOK"));
  expect_copies_without_refresh(kLoops, cli.access(json::parse(before)) + " ");
  // The forged login the plan loop's CLI wrote was not what the next command got.
  EXPECT_EQ(conversation("001-001").find("at-evil"), std::string::npos);
  expect_no_secret_anywhere();
}

// proves S6.3
// A refresh the endpoint refuses (the refresh token was spent elsewhere: invalid_grant): the
// command is not started, and the loop fails with a clear error that is not retried.
TEST_P(LoginEscapeTest, ARefusedRefreshStartsNoCommandAndSaysWhatToDo) {
  const Cli cli = GetParam();
  TokenServer tokens("rt-spent-elsewhere", 3600);
  prepare_login(cli, tokens, false);
  const std::string before = read_file(home / cli.person);
  submit();
  EXPECT_NE(submit_exit, 0) << submit_output;
  std::string shown;
  ASSERT_TRUE(wait_until(
      [&] {
        shown = loopr("--json show 001");
        return shown.find("\"failed\"") != std::string::npos;
      },
      std::chrono::seconds(60)))
      << shown;
  shown = loopr("show 001");
  const std::string cli_name = cli.name == "claude-code" ? "claude" : cli.name;
  EXPECT_NE(shown.find("loopr: the " + cli_name +
                       " login could not be refreshed (the token "
                       "endpoint answered 400 (invalid_grant"),
            std::string::npos)
      << shown;
  EXPECT_NE(shown.find("(log in again with `" + cli_name + "`, or set an API key)"),
            std::string::npos)
      << shown;
  EXPECT_EQ(shown.find("rt-0"), std::string::npos) << "the refresh token is never told";
  EXPECT_EQ(tokens.requests(), 1) << "a refused refresh token is not tried again";
  EXPECT_FALSE(fs::exists(repo / ".loopr/logs/loops/001/iterations/001/conversation.jsonl") &&
               conversation("001").find("-done") != std::string::npos)
      << "the command ran";
  EXPECT_EQ(read_file(home / cli.person), before);
  expect_no_secret_anywhere();
}

INSTANTIATE_TEST_SUITE_P(ClaudeCodexGemini, LoginEscapeTest,
                         ::testing::Values(claude(), codex(), gemini()), [](const auto& info) {
                           return info.param.name == "claude-code" ? std::string("claude")
                                                                   : info.param.name;
                         });
