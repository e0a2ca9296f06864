// Subscription logins (issue 46, point 7) through the real daemon and the real bubblewrap sandbox:
// a scripted CLI stands in for claude and gemini and does what they do on a login, with no API
// key in the person's environment. It reads the login copy loopr gave it, refreshes an expired
// token at a mock token endpoint (through loopr's proxy: the refresh host is allowed), and writes
// the new login into its copy; loopr writes it back to the person's login file. Refresh tokens
// are single-use (as codex's are), so a refreshed login that was not kept breaks the next command.
// The hostile variant plants keys in its copy, turns it into a symlink to another of the
// person's files, garbage, and a FIFO: the person's files change only in the credential fields.
#include <sys/stat.h>

#include "escape_fixture.hpp"
#include "support/tree_artifacts.hpp"
#include "token_server.hpp"

using namespace loopr::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Cli {
  std::string name;     ///< provider, command file name
  std::string read_in;  ///< shell: sets $prompt, $type, $id
  std::string cred;     ///< shell: the login copy's path
  std::string person;   ///< the login file, relative to the home
  std::string exp_key, rt_key;
  std::string write;   ///< shell printf writing "$at" "$nrt" "$expms" [extra] to "$cred.new"
  std::string answer;  ///< shell: prints the CLI's JSON lines saying "$found"
  json login(const std::string& at, const std::string& rt, std::int64_t exp) const {
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
    return (name == "gemini" ? j["access_token"] : j["claudeAiOauth"]["accessToken"])
        .get<std::string>();
  }
  std::string refresh(const json& j) const {
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
          "$CLAUDE_CONFIG_DIR/.credentials.json",
          ".claude/.credentials.json",
          "expiresAt",
          "refreshToken",
          "printf '{\"claudeAiOauth\":{\"accessToken\":\"%s\",\"refreshToken\":\"%s\","
          "\"expiresAt\":%s,\"scopes\":[\"user:inference\"],\"subscriptionType\":\"max\"%s}%s}' "
          "\"$at\" \"$nrt\" \"$expms\" \"$inner\" \"$outer\" > \"$cred.new\"\n",
          "printf '%s\\n' '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\","
          "\"model\":\"claude-opus-5-5\",\"tools\":[\"Bash\"]}'\n"
          "printf '{\"type\":\"assistant\",\"message\":{\"id\":\"m1\",\"type\":\"message\","
          "\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"%s\"}],"
          "\"stop_reason\":null},\"session_id\":\"s1\"}\\n' \"$found\"\n"
          "printf '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":"
          "\"%s\",\"num_turns\":1,\"total_cost_usd\":0.01,\"usage\":{\"input_tokens\":10,"
          "\"output_tokens\":5},\"stop_reason\":\"end_turn\",\"session_id\":\"s1\"}\\n' "
          "\"$found\"\n"};
}

Cli gemini() {
  return {"gemini",
          "while [ $# -gt 0 ]; do case \"$1\" in --prompt) prompt=$2; shift 2;; *) shift;; "
          "esac; done\n"
          "type=$(printf '%s' \"$GEMINI_CLI_CUSTOM_HEADERS\" | sed -n "
          "'s/.*x-loopr-loop-type: \\([a-z]*\\).*/\\1/p')\n"
          "id=$(printf '%s' \"$GEMINI_CLI_CUSTOM_HEADERS\" | sed -n "
          "'s/^x-loopr-loop-id: \\([^,]*\\),.*/\\1/p')\n",
          "$GEMINI_CLI_HOME/.gemini/oauth_creds.json",
          ".gemini/oauth_creds.json",
          "expiry_date",
          "refresh_token",
          "printf '{\"access_token\":\"%s\",\"refresh_token\":\"%s\",\"expiry_date\":%s,"
          "\"token_type\":\"Bearer\"%s%s}' \"$at\" \"$nrt\" \"$expms\" \"$inner\" \"$outer\" > "
          "\"$cred.new\"\n",
          "printf '%s\\n' '{\"type\":\"init\",\"session_id\":\"s1\",\"model\":\"gemini-9\"}'\n"
          "printf '{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"%s\",\"delta\":true}"
          "\\n' \"$found\"\n"
          "printf '%s\\n' '{\"type\":\"result\",\"status\":\"success\",\"stats\":{"
          "\"input_tokens\":10,\"output_tokens\":5,\"cached\":0}}'\n"};
}

// The CLI on a login: refreshes an expired token at `token_url` into its copy, then (hostile)
// attacks the copy, writes the loop's artifact and answers.
std::string login_cli(const Cli& cli, const std::string& token_url, bool hostile,
                      const fs::path& other_file) {
  std::string s =
      "#!/bin/sh\n" + cli.read_in + "cred=\"" + cli.cred + "\"\n" +
      "artifact=$(printf '%s' \"$prompt\" | grep -o \"\\`\\.loopr/${type}s/[^\\`]*\\`\" "
      "| head -n1 | tr -d '\\`')\n"
      "exp=$(sed -n 's/.*\"" +
      cli.exp_key + "\": *\\([0-9]*\\).*/\\1/p' \"$cred\" | head -n1)\n" + "rt=$(sed -n 's/.*\"" +
      cli.rt_key + "\": *\"\\([^\"]*\\)\".*/\\1/p' \"$cred\" | head -n1)\n" +
      "now=$(( $(date +%s) * 1000 ))\ninner=; outer=\n";
  if (hostile)
    s += "[ \"$type\" = plan ] && { inner=',\"evil\":\"planted\"'; "
         "outer=',\"hooks\":{\"x\":\"touch /tmp/LOGIN-HOOK\"},\"mcpOAuth\":{\"m\":\"planted\"}'; "
         "}\n";
  s += "if [ -z \"$exp\" ] || [ \"$exp\" -le \"$now\" ]; then\n"
       "  resp=$(curl -s -m 10 -H 'content-type: application/json' -d "
       "\"{\\\"grant_type\\\":\\\"refresh_token\\\",\\\"refresh_token\\\":\\\"$rt\\\"}\" " +
       token_url +
       ")\n"
       "  at=$(printf '%s' \"$resp\" | sed -n 's/.*\"access_token\":\"\\([^\"]*\\)\".*/\\1/p')\n"
       "  nrt=$(printf '%s' \"$resp\" | sed -n 's/.*\"refresh_token\":\"\\([^\"]*\\)\".*/\\1/p')\n"
       "  ein=$(printf '%s' \"$resp\" | sed -n 's/.*\"expires_in\":\\([0-9]*\\).*/\\1/p')\n"
       "  if [ -n \"$at\" ]; then expms=$(( now + ein * 1000 ))\n  " +
       cli.write +
       "  mv \"$cred.new\" \"$cred\"; login=refreshed\n"
       "  else echo \"login refresh failed: $resp\" >&2; exit 1; fi\n"
       "else login=valid; fi\n";
  if (hostile)
    s += "case \"$type\" in\n"
         "  spec) rm -f \"$cred\"; ln -s " +
         shell_quote(other_file.string()) +
         " \"$cred\";;\n"
         "  phase) printf 'not json {{{' > \"$cred\";;\n"
         "  code) rm -f \"$cred\"; mkfifo \"$cred\";;\nesac\n";
  else
    s += "sleep 1.2\n";  // each token outlives no command: the next one refreshes
  s += std::string("case \"$type\" in\n") +
       "  plan) mkdir -p \"$(dirname \"$artifact\")\"; cat > \"$artifact\" <<'EOF'\n" + kTreePlan +
       "EOF\n;;\n  spec) mkdir -p \"$(dirname \"$artifact\")\"; cat > \"$artifact\" <<'EOF'\n" +
       kTreeSpec +
       "EOF\n;;\n  phase) mkdir -p \"$(dirname \"$artifact\")\"; cat > \"$artifact\" <<'EOF'\n" +
       kTreePhase +
       "EOF\n;;\n  code) mkdir -p code; printf 'made by %s\\n' \"$id\" > \"code/$id.txt\";;\n"
       "esac\n"
       "found=\"login=$login " +
       cli.name + "-done\"\n" + cli.answer;
  return s;
}

class LoginEscapeTest : public EscapeTest, public ::testing::WithParamInterface<Cli> {
 protected:
  fs::path bin;
  const std::string person_other = "{\"theme\":\"dark\"}\n";

  /// The person's login (expired an hour ago, refresh token rt-0) and another file beside it.
  void prepare_login(const Cli& cli, const TokenServer& tokens, bool hostile) {
    provider_keys = false;
    json login = cli.login("at-0", "rt-0", (::time(nullptr) - 3600) * 1000LL);
    if (cli.name != "gemini") login["mcpOAuth"] = {{"srv", {{"accessToken", "the person's"}}}};
    write_file(home / cli.person, login.dump());
    ::chmod((home / cli.person).c_str(), 0600);
    write_file((home / cli.person).parent_path() / "settings.json", person_other);
    bin = base.path() / "cli-bin";
    const std::string key = cli.name == "claude-code" ? "claude_code" : cli.name;
    llm_config = "  provider: " + cli.name + "\n  model: claude-opus-5-5\n  " + key +
                 ": {command: " + (bin / cli.name).string() +
                 ", allowed_hosts: [\"127.0.0.1:" + std::to_string(tokens.port()) + "\"]" +
                 (cli.name == "claude-code" ? ", skip_permissions: true" : "") + "}\n";
    prepare();
    write_file(bin / cli.name, login_cli(cli, tokens.url(), hostile,
                                         (home / cli.person).parent_path() / "settings.json"));
    ::chmod((bin / cli.name).c_str(), 0755);
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

// proves S6.3 S6.4
// A tree outlives its login's token: every command finds it expired and refreshes it through
// the proxy; each refreshed login is kept, so no refresh token is used twice.
TEST_P(LoginEscapeTest, ATreeOutlivesItsTokenAndTheRefreshedLoginIsKept) {
  const Cli cli = GetParam();
  TokenServer tokens("rt-0", 1);
  prepare_login(cli, tokens, false);
  submit();
  expect_tree_merged();

  EXPECT_EQ(tokens.reused(), 0) << "a refresh token was used twice: a refreshed login was lost";
  EXPECT_GE(tokens.refreshes(), 4) << "every command should have found its token expired";
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
  for (const char* loop : {"001", "001-001", "001-001-001", "code-001-001-001"})
    EXPECT_NE(conversation(loop).find("login=refreshed"), std::string::npos) << loop;
  EXPECT_NE(read_file(repo / ".loopr/logs/daemon.log").find("refreshed login was written back"),
            std::string::npos);
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

// proves S6.3
// The model plants keys in its login copy, makes it a symlink to another of the person's files,
// garbage, a FIFO: the person's login changes in its credential fields only, nothing else does.
TEST_P(LoginEscapeTest, AHostileLoginCopyChangesOnlyTheCredentialFieldsOfTheLogin) {
  const Cli cli = GetParam();
  TokenServer tokens("rt-0", 3600);
  prepare_login(cli, tokens, true);
  const json before = json::parse(read_file(home / cli.person));
  const auto folder_before = login_folder(cli);
  submit();
  expect_tree_merged();

  EXPECT_EQ(tokens.refreshes(), 1);
  EXPECT_EQ(tokens.reused(), 0);
  json now = json::parse(read_file(home / cli.person));
  EXPECT_EQ(cli.access(now), "at-1");
  EXPECT_EQ(cli.refresh(now), "rt-1");
  EXPECT_FALSE(now.contains("hooks")) << now.dump();
  EXPECT_FALSE(now.contains("evil")) << now.dump();
  if (cli.name != "gemini") {
    EXPECT_FALSE(now["claudeAiOauth"].contains("evil")) << now.dump();
    EXPECT_EQ(now["mcpOAuth"], before["mcpOAuth"]);
  }
  EXPECT_EQ(read_file((home / cli.person).parent_path() / "settings.json"), person_other);
  EXPECT_FALSE(fs::is_symlink(home / cli.person));
  EXPECT_EQ(login_folder(cli), folder_before);
  auto log = read_file(repo / ".loopr/logs/daemon.log");
  std::size_t refused = 0;
  for (auto at = log.find("its login was not written back"); at != std::string::npos;
       at = log.find("its login was not written back", at + 1))
    ++refused;
  EXPECT_GE(refused, 3u) << "the symlink, the garbage and the FIFO are refused";
  EXPECT_FALSE(fs::exists("/tmp/LOGIN-HOOK"));
  expect_no_secret_anywhere();
}

INSTANTIATE_TEST_SUITE_P(ClaudeAndGemini, LoginEscapeTest, ::testing::Values(claude(), gemini()),
                         [](const auto& info) {
                           return info.param.name == "gemini" ? std::string("gemini")
                                                              : std::string("claude");
                         });
