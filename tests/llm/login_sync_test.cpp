// A subscription login refreshed by loopr itself (src/llm/login_refresh.hpp, login_sync.hpp), on
// the real file system and over real HTTP to a mock token endpoint on loopback: the refresh is the
// CLI's own request, its answer goes into the one login file (its credential fields only,
// atomically, never through a symlink), concurrent refreshes spend a refresh token once, a refused
// or failed refresh says why, and the copy a command gets holds no refresh token.
#include "llm/login_sync.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "llm/login_refresh.hpp"
#include "llm/providers.hpp"
#include "security/token_server.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::llm;
using loopr::testing::TempDir;
using loopr::testing::TokenServer;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void put(const fs::path& p, const std::string& text, mode_t mode = 0600) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::trunc) << text;
  ::chmod(p.c_str(), mode);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TokenEndpoint at(const std::string& url) {
  TokenEndpoint e;
  e.url = url;
  return e;
}

json claude_login(const std::string& access, const std::string& refresh, std::int64_t expires) {
  return {{"claudeAiOauth",
           {{"accessToken", access},
            {"refreshToken", refresh},
            {"expiresAt", expires},
            {"scopes", {"user:inference"}},
            {"subscriptionType", "max"}}}};
}

constexpr auto kMargin = std::chrono::minutes(10);

struct Homes {
  TempDir base{"loopr-login"};
  fs::path home = base.path() / "home";
  fs::path person = home / ".claude/.credentials.json";

  /// The person's claude login, expired (or valid for `valid_for` more), with keys of its own.
  explicit Homes(std::chrono::milliseconds valid_for = std::chrono::milliseconds(-3600'000)) {
    json mine = claude_login("at-0", "rt-0", loopr::now_ms() + valid_for.count());
    mine["claudeAiOauth"]["futureField"] = "the person's";
    mine["mcpOAuth"] = {{"server", {{"accessToken", "mcp-secret"}}}};
    put(person, mine.dump(2) + "\n", 0640);
    put(home / ".claude/settings.json", "{\"theme\":\"dark\"}");
  }
  RefreshOutcome fresh(const TokenServer& tokens, const std::string& cli = "claude") {
    return fresh_login(cli, person, kMargin, at(tokens.url()));
  }
  std::vector<std::string> folder() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(person.parent_path()))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

}  // namespace

// proves S6.3
TEST(LoginSyncTest, AnExpiredLoginIsRefreshedByLooprAndKeptWithOnlyItsCredentialFields) {
  Homes h;
  TokenServer tokens("rt-0", 28800);
  RefreshOutcome r = h.fresh(tokens);
  ASSERT_TRUE(r.login) << r.reason;
  EXPECT_TRUE(r.login->refreshed);
  EXPECT_EQ(tokens.refreshes(), 1);
  // The CLI's own request: JSON with its public client id, at its endpoint's path.
  const std::string req = tokens.last_request();
  EXPECT_NE(req.find("POST /token "), std::string::npos) << req;
  auto body = json::parse(req.substr(req.find("\r\n\r\n") + 4), nullptr, false);
  EXPECT_EQ(body["grant_type"], "refresh_token") << req;
  EXPECT_EQ(body["refresh_token"], "rt-0");
  EXPECT_EQ(body["client_id"], "9d1c250a-e61b-44d9-88ed-5944d1962f5e");
  json now = json::parse(slurp(h.person));
  EXPECT_EQ(now, r.login->doc);
  EXPECT_EQ(now["claudeAiOauth"]["accessToken"], "at-1");
  EXPECT_EQ(now["claudeAiOauth"]["refreshToken"], "rt-1");
  EXPECT_NEAR(now["claudeAiOauth"]["expiresAt"].get<double>(), loopr::now_ms() + 28800e3, 60e3);
  EXPECT_EQ(now["claudeAiOauth"]["futureField"], "the person's");
  EXPECT_EQ(now["mcpOAuth"]["server"]["accessToken"], "mcp-secret");
  EXPECT_EQ(h.folder(), (std::vector<std::string>{".credentials.json", "settings.json"}));
  struct stat st {};
  ::stat(h.person.c_str(), &st);
  EXPECT_EQ(st.st_mode & 07777, 0640u) << "the mode of the person's file is kept";
  EXPECT_NE(slurp(h.person).find("\n  "), std::string::npos) << "pretty stays pretty";
}

TEST(LoginSyncTest, ALoginThatOutlivesTheMarginIsLeftByteForByte) {
  Homes h(std::chrono::hours(2));
  const std::string before = slurp(h.person);
  TokenServer tokens("rt-0", 3600);
  RefreshOutcome r = h.fresh(tokens);
  ASSERT_TRUE(r.login) << r.reason;
  EXPECT_FALSE(r.login->refreshed);
  EXPECT_EQ(tokens.requests(), 0);
  EXPECT_EQ(slurp(h.person), before);
  // Within the margin (a command's time limit): refreshed before the command starts.
  Homes soon(std::chrono::minutes(5));
  r = soon.fresh(tokens);
  ASSERT_TRUE(r.login) << r.reason;
  EXPECT_TRUE(r.login->refreshed);
}

// proves S6.3
TEST(LoginSyncTest, ARefusedRefreshSaysWhyAndLeavesTheLoginAlone) {
  Homes h;
  const std::string before = slurp(h.person);
  TokenServer tokens("rt-someone-else", 3600);  // rt-0 is refused: invalid_grant
  RefreshOutcome r = h.fresh(tokens);
  EXPECT_FALSE(r.login);
  EXPECT_FALSE(r.transient) << "a refused refresh token is not retried";
  EXPECT_NE(r.reason.find("400"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("invalid_grant"), std::string::npos) << r.reason;
  EXPECT_EQ(r.reason.find("rt-0"), std::string::npos) << "the refresh token is never told";
  EXPECT_EQ(slurp(h.person), before);

  tokens.fail_with(503);
  r = h.fresh(tokens);
  EXPECT_FALSE(r.login);
  EXPECT_TRUE(r.transient) << r.reason;
  EXPECT_EQ(slurp(h.person), before);

  RefreshOutcome down = fresh_login("claude", h.person, kMargin, at("http://127.0.0.1:1/token"));
  EXPECT_FALSE(down.login);
  EXPECT_TRUE(down.transient) << down.reason;
  EXPECT_NE(down.reason.find("cannot reach"), std::string::npos) << down.reason;

  put(h.person, "{\"claudeAiOauth\":{\"accessToken\":\"x\"}}");
  r = h.fresh(tokens);
  EXPECT_FALSE(r.login);
  EXPECT_FALSE(r.absent);
  EXPECT_NE(r.reason.find("no well-formed claude login"), std::string::npos) << r.reason;
  fs::remove(h.person);
  r = h.fresh(tokens);
  EXPECT_TRUE(r.absent) << "no login: the CLI says so itself";
}

TEST(LoginSyncTest, APersonsLoginThatIsASymlinkIsLeftAlone) {
  Homes h;
  fs::path target = h.home / "dotfiles/credentials.json";
  put(target, claude_login("at-0", "rt-0", 1000).dump());
  fs::remove(h.person);
  fs::create_symlink(target, h.person);
  TokenServer tokens("rt-0", 3600);
  RefreshOutcome r = h.fresh(tokens);
  EXPECT_FALSE(r.login);
  EXPECT_NE(r.reason.find("symlink"), std::string::npos) << r.reason;
  EXPECT_EQ(tokens.requests(), 0);
  EXPECT_TRUE(fs::is_symlink(h.person));
  EXPECT_EQ(json::parse(slurp(target))["claudeAiOauth"]["accessToken"], "at-0");
}

TEST(LoginSyncTest, CodexAndGeminiAreRefreshedWithTheirOwnRequests) {
  TempDir base{"loopr-login"};
  auto jwt = loopr::testing::jwt_until;
  fs::path codex = base.path() / ".codex/auth.json";
  put(codex, json{{"OPENAI_API_KEY", nullptr},
                  {"tokens",
                   {{"id_token", jwt(100)},
                    {"access_token", jwt(100)},
                    {"refresh_token", "rt-0"},
                    {"account_id", "acc"}}},
                  {"last_refresh", "2026-11-01T00:00:00Z"}}
                 .dump(2));
  TokenServer tokens("rt-0", 3600);
  RefreshOutcome r = fresh_login("codex", codex, kMargin, at(tokens.url()));
  ASSERT_TRUE(r.login) << r.reason;
  auto req = tokens.last_request();
  auto body = json::parse(req.substr(req.find("\r\n\r\n") + 4), nullptr, false);
  EXPECT_EQ(body["client_id"], "app_EMoamEEZ73f0CkXaXp7hrann") << req;
  EXPECT_EQ(body["grant_type"], "refresh_token");
  EXPECT_EQ(body["refresh_token"], "rt-0");
  EXPECT_EQ(body["scope"], "openid profile email");
  json c = json::parse(slurp(codex));
  EXPECT_EQ(c["tokens"]["access_token"], "at-1");
  EXPECT_EQ(c["tokens"]["refresh_token"], "rt-1");
  EXPECT_EQ(c["tokens"]["id_token"], jwt(100)) << "kept: the answer had none";
  EXPECT_EQ(c["tokens"]["account_id"], "acc");
  EXPECT_NE(c["last_refresh"], "2026-11-01T00:00:00Z");
  EXPECT_TRUE(c["OPENAI_API_KEY"].is_null());

  fs::path gem = base.path() / ".gemini/oauth_creds.json";
  put(gem, json{{"access_token", "ya29.old"},
                {"expiry_date", 1000.5},
                {"refresh_token", "rt-1"},
                {"token_type", "Bearer"}}
               .dump());
  r = fresh_login("gemini", gem, kMargin, at(tokens.url()));
  ASSERT_TRUE(r.login) << r.reason;
  req = tokens.last_request();
  EXPECT_NE(req.find("application/x-www-form-urlencoded"), std::string::npos) << req;
  EXPECT_NE(req.find("client_id=681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps."
                     "googleusercontent.com&client_secret=GOCSPX-"),
            std::string::npos)
      << req;
  EXPECT_NE(req.find("&refresh_token=rt-1&grant_type=refresh_token"), std::string::npos) << req;
  json g = json::parse(slurp(gem));
  EXPECT_EQ(g["access_token"], "at-2");
  EXPECT_EQ(g["refresh_token"], "rt-2");
  EXPECT_GT(g["expiry_date"].get<double>(), loopr::now_ms() + 3000e3);
}

// proves S6.3
TEST(LoginSyncTest, TheCopyACommandGetsHoldsNoRefreshToken) {
  json claude = claude_login("at-1", "rt-1", 5000);
  claude["mcpOAuth"] = {{"server", {{"accessToken", "mcp-secret"}}}};
  json copy = login_copy("claude", claude, 1000);
  EXPECT_EQ(copy["claudeAiOauth"]["accessToken"], "at-1");
  EXPECT_EQ(copy["claudeAiOauth"]["refreshToken"], "");
  EXPECT_FALSE(copy.contains("mcpOAuth")) << "only what the CLI needs to call its API";
  EXPECT_EQ(copy.dump().find("rt-1"), std::string::npos);
  json codex = {
      {"OPENAI_API_KEY", "sk-x"},
      {"tokens", {{"id_token", "id"}, {"access_token", "at-1"}, {"refresh_token", "rt-1"}}},
      {"last_refresh", "2026-01-01T00:00:00Z"}};
  copy = login_copy("codex", codex, 1764288000000);
  EXPECT_EQ(copy["tokens"]["access_token"], "at-1");
  EXPECT_EQ(copy["tokens"]["id_token"], "id");
  EXPECT_EQ(copy["tokens"]["refresh_token"], "");
  // RFC 3339 with milliseconds, which codex reads (chrono DateTime<Utc>).
  EXPECT_EQ(copy["last_refresh"], "2025-11-28T00:00:00.000Z") << "codex does not try to refresh";
  EXPECT_TRUE(copy["OPENAI_API_KEY"].is_null());
  EXPECT_EQ(copy.dump().find("rt-1"), std::string::npos);
  json gemini = {{"access_token", "ya29"}, {"refresh_token", "rt-1"}, {"expiry_date", 5}};
  EXPECT_EQ(login_copy("gemini", gemini, 0).dump().find("rt-1"), std::string::npos);
  EXPECT_EQ(access_token("gemini", gemini), "ya29");
}

// proves S6.3
// Two commands at once (threads of one daemon, as two loops are) find the login expired: the
// lock of its folder makes the second wait and read it again, so the refresh token is spent once.
TEST(LoginSyncTest, ConcurrentCommandsRefreshOnce) {
  Homes h;
  TokenServer tokens("rt-0", 3600);
  tokens.delay(300);
  constexpr int kThreads = 4;
  std::vector<RefreshOutcome> got(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back([&, i] { got[i] = h.fresh(tokens); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(tokens.refreshes(), 1);
  EXPECT_EQ(tokens.reused(), 0);
  int refreshed = 0;
  for (const auto& r : got) {
    ASSERT_TRUE(r.login) << r.reason;
    EXPECT_EQ(r.login->doc["claudeAiOauth"]["accessToken"], "at-1");
    refreshed += r.login->refreshed;
  }
  EXPECT_EQ(refreshed, 1);
  EXPECT_EQ(json::parse(slurp(h.person))["claudeAiOauth"]["refreshToken"], "rt-1");
  EXPECT_EQ(h.folder(), (std::vector<std::string>{".credentials.json", "settings.json"}));
}

// proves S6.4
TEST(LoginSyncTest, OnALoginOnlyTheSubscriptionApiIsAllowedNeverATokenHost) {
  for (const std::string provider : {"claude-code", "codex", "gemini"}) {
    LlmConfig c;
    c.provider = provider;
    auto with_login = cli_allowed_hosts(c, {});
    auto key = provider == "claude-code" ? "ANTHROPIC_API_KEY"
               : provider == "codex"     ? "OPENAI_API_KEY"
                                         : "GEMINI_API_KEY";
    auto with_key = cli_allowed_hosts(c, {{key, "k"}});
    for (const auto& host : login_hosts(provider)) {
      EXPECT_TRUE(with_login.count(host + ":443")) << provider << " " << host;
      EXPECT_FALSE(with_key.count(host + ":443")) << provider << " " << host;
    }
    EXPECT_EQ(with_login.size(), with_key.size() + login_hosts(provider).size());
    for (const char* token_host : {"console.anthropic.com:443", "platform.claude.com:443",
                                   "auth.openai.com:443", "oauth2.googleapis.com:443"})
      EXPECT_FALSE(with_login.count(token_host)) << provider << " " << token_host;
  }
  EXPECT_EQ(login_hosts("codex"), std::vector<std::string>{"chatgpt.com"});
  EXPECT_EQ(login_hosts("gemini"), std::vector<std::string>{"cloudcode-pa.googleapis.com"});
}
