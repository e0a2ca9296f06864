// A subscription login written back from a command's copy (src/llm/login_sync.hpp), on the real
// file system: only the credential fields of the one login file, atomically, never through a
// symlink or a hard link, never from a malformed copy, and concurrent write-backs keep the newest.
#include "llm/login_sync.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "llm/providers.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::llm;
using loopr::testing::TempDir;
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

json claude_login(const std::string& access, const std::string& refresh, std::int64_t expires) {
  return {{"claudeAiOauth",
           {{"accessToken", access},
            {"refreshToken", refresh},
            {"expiresAt", expires},
            {"scopes", {"user:inference"}},
            {"subscriptionType", "max"}}}};
}

struct Homes {
  TempDir base{"loopr-login"};
  fs::path home = base.path() / "home";
  fs::path person = home / ".claude/.credentials.json";
  fs::path priv = base.path() / "run/claude/001";
  fs::path copy = priv / ".credentials.json";

  Homes() {
    json mine = claude_login("at-old", "rt-old", 1000);
    mine["claudeAiOauth"]["futureField"] = "the person's";
    mine["mcpOAuth"] = {{"server", {{"accessToken", "mcp-secret"}}}};
    put(person, mine.dump());
    put(home / ".claude/settings.json", "{\"theme\":\"dark\"}");
    fs::create_directories(priv);
  }
  WriteBackResult back(const std::string& cli = "claude") {
    return write_back_login(cli, person, priv,
                            cli == "gemini" ? ".gemini/oauth_creds.json" : ".credentials.json");
  }
  std::vector<std::string> folder() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(person.parent_path()))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

std::string b64url(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  unsigned acc = 0;
  int bits = 0;
  for (unsigned char c : in) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) out.push_back(t[(acc >> (bits -= 6)) & 63]);
  }
  if (bits > 0) out.push_back(t[(acc << (6 - bits)) & 63]);
  return out;
}

}  // namespace

TEST(LoginSyncTest, ARefreshedLoginIsWrittenBackWithOnlyItsCredentialFields) {
  Homes h;
  struct stat before {};
  ::stat(h.person.c_str(), &before);
  json copy = claude_login("at-new", "rt-new", 5000);
  copy["claudeAiOauth"]["evil"] = "planted";  // an extra key inside the credential
  copy["mcpOAuth"] = {{"server", {{"accessToken", "the model's"}}}};
  copy["hooks"] = {{"SessionStart", "touch /tmp/pwned"}};
  put(h.copy, copy.dump());

  WriteBackResult r = h.back();
  EXPECT_EQ(r.what, WriteBack::written) << r.reason;
  json now = json::parse(slurp(h.person));
  EXPECT_EQ(now["claudeAiOauth"]["accessToken"], "at-new");
  EXPECT_EQ(now["claudeAiOauth"]["refreshToken"], "rt-new");
  EXPECT_EQ(now["claudeAiOauth"]["expiresAt"], 5000);
  EXPECT_EQ(now["claudeAiOauth"]["futureField"], "the person's");
  EXPECT_FALSE(now["claudeAiOauth"].contains("evil"));
  EXPECT_EQ(now["mcpOAuth"]["server"]["accessToken"], "mcp-secret");
  EXPECT_FALSE(now.contains("hooks"));
  struct stat after {};
  ::stat(h.person.c_str(), &after);
  EXPECT_EQ(after.st_mode & 07777, 0600u);
  EXPECT_NE(after.st_ino, before.st_ino) << "not replaced by a rename";
  EXPECT_EQ(h.folder(), (std::vector<std::string>{".credentials.json", "settings.json"}))
      << "a temporary file was left, or another file written";
  EXPECT_EQ(slurp(h.home / ".claude/settings.json"), "{\"theme\":\"dark\"}");
}

TEST(LoginSyncTest, TheModeOfThePersonsFileIsKept) {
  Homes h;
  ::chmod(h.person.c_str(), 0640);
  put(h.copy, claude_login("at-new", "rt-new", 5000).dump());
  ASSERT_EQ(h.back().what, WriteBack::written);
  struct stat st {};
  ::stat(h.person.c_str(), &st);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST(LoginSyncTest, AnUnchangedOrOlderCopyLeavesThePersonsFileAsItIs) {
  Homes h;
  const std::string before = slurp(h.person);
  json same = json::parse(before);
  same.erase("mcpOAuth");
  put(h.copy, same.dump());
  EXPECT_EQ(h.back().what, WriteBack::unchanged);
  put(h.copy, claude_login("at-older", "rt-older", 500).dump());  // a downgrade
  EXPECT_EQ(h.back().what, WriteBack::unchanged);
  ::unlink(h.copy.c_str());
  EXPECT_EQ(h.back().what, WriteBack::unchanged);
  EXPECT_EQ(slurp(h.person), before);
}

// proves S6.3
TEST(LoginSyncTest, AHostileCopyIsNeverFollowedNorTrusted) {
  Homes h;
  const std::string before = slurp(h.person);
  const json good = claude_login("at-model", "rt-model", 9000);
  // A symlink to another file (of the person's) holding a well-formed login.
  fs::path elsewhere = h.base.path() / "elsewhere.json";
  put(elsewhere, good.dump());
  fs::create_symlink(elsewhere, h.copy);
  EXPECT_EQ(h.back().what, WriteBack::refused);
  ::unlink(h.copy.c_str());
  // A hard link to it.
  fs::create_hard_link(elsewhere, h.copy);
  EXPECT_EQ(h.back().what, WriteBack::refused);
  ::unlink(h.copy.c_str());
  // Garbage, the wrong shape, a token with control characters, a huge file, a folder.
  for (const std::string& bad :
       {std::string("not json"), std::string("[1,2]"), std::string("{\"claudeAiOauth\":\"x\"}"),
        json{{"claudeAiOauth", {{"accessToken", "a"}, {"expiresAt", 9000}}}}.dump(),
        claude_login("at\nX-Evil: 1", "rt", 9000).dump(), claude_login("at", "rt", -5).dump(),
        claude_login(std::string(70 * 1024, 'a'), "rt", 9000).dump()}) {
    put(h.copy, bad);
    EXPECT_EQ(h.back().what, WriteBack::refused) << bad.substr(0, 80);
  }
  ::unlink(h.copy.c_str());
  fs::create_directories(h.copy);
  EXPECT_EQ(h.back().what, WriteBack::refused);
  EXPECT_EQ(slurp(h.person), before);
  EXPECT_EQ(slurp(elsewhere), good.dump());
}

// proves S6.3
TEST(LoginSyncTest, AFolderOfTheCopyReplacedByASymlinkIsNotFollowed) {
  Homes h;
  fs::path person = h.home / ".gemini/oauth_creds.json";
  json mine = {{"access_token", "ya29.old"}, {"expiry_date", 1000}, {"refresh_token", "1//r"}};
  put(person, mine.dump(2));
  fs::path other = h.base.path() / "other";
  put(other / "oauth_creds.json",
      json{{"access_token", "ya29.model"}, {"expiry_date", 9000}, {"refresh_token", "1//m"}}
          .dump());
  fs::create_symlink(other, h.priv / ".gemini");
  EXPECT_EQ(write_back_login("gemini", person, h.priv, ".gemini/oauth_creds.json").what,
            WriteBack::refused);
  EXPECT_EQ(json::parse(slurp(person)), mine);
  // And the private folder itself a symlink.
  fs::path link = h.base.path() / "run/claude/002";
  fs::create_symlink(other, link);
  EXPECT_EQ(write_back_login("gemini", person, link, "oauth_creds.json").what, WriteBack::refused);
  EXPECT_EQ(json::parse(slurp(person)), mine);
}

TEST(LoginSyncTest, APersonsLoginThatIsASymlinkIsLeftAlone) {
  Homes h;
  fs::path target = h.home / "dotfiles/credentials.json";
  put(target, claude_login("at-old", "rt-old", 1000).dump());
  fs::remove(h.person);
  fs::create_symlink(target, h.person);
  put(h.copy, claude_login("at-new", "rt-new", 5000).dump());
  EXPECT_EQ(h.back().what, WriteBack::refused);
  EXPECT_TRUE(fs::is_symlink(h.person));
  EXPECT_EQ(json::parse(slurp(target))["claudeAiOauth"]["accessToken"], "at-old");
}

TEST(LoginSyncTest, GeminiAndCodexLoginsAreOrderedByTheirExpiry) {
  Homes h;
  fs::path gem = h.home / ".gemini/oauth_creds.json";
  put(gem, json{{"access_token", "ya29.old"},
                {"expiry_date", 1000.5},
                {"refresh_token", "1//r"},
                {"token_type", "Bearer"}}
               .dump(2));
  put(h.priv / ".gemini/oauth_creds.json", json{{"access_token", "ya29.new"},
                                                {"expiry_date", 4000},
                                                {"token_type", "Bearer"},
                                                {"extra", "dropped"}}
                                               .dump());
  ASSERT_EQ(write_back_login("gemini", gem, h.priv, ".gemini/oauth_creds.json").what,
            WriteBack::written);
  json g = json::parse(slurp(gem));
  EXPECT_EQ(g["access_token"], "ya29.new");
  EXPECT_EQ(g["refresh_token"], "1//r") << "kept: the refresh did not issue a new one";
  EXPECT_FALSE(g.contains("extra"));

  auto jwt = [](std::int64_t exp) {
    return b64url("{\"alg\":\"none\"}") + "." + b64url("{\"exp\":" + std::to_string(exp) + "}") +
           ".sig";
  };
  fs::path codex = h.home / ".codex/auth.json";
  json mine = {{"OPENAI_API_KEY", nullptr},
               {"tokens",
                {{"id_token", jwt(100)},
                 {"access_token", jwt(100)},
                 {"refresh_token", "rt-1"},
                 {"account_id", "acc"}}},
               {"last_refresh", "2026-11-01T00:00:00Z"}};
  put(codex, mine.dump(2));
  json theirs = mine;
  theirs["OPENAI_API_KEY"] = "sk-planted";
  theirs["tokens"]["access_token"] = jwt(50);  // older
  theirs["tokens"]["refresh_token"] = "rt-2";
  put(h.priv / "auth.json", theirs.dump());
  EXPECT_EQ(login_expiry("codex", *credential_fields("codex", theirs)), 50 * 1000);
  EXPECT_EQ(write_back_login("codex", codex, h.priv, "auth.json").what, WriteBack::unchanged);
  theirs["tokens"]["access_token"] = jwt(200);
  theirs["last_refresh"] = "2026-11-28T00:00:00Z";
  put(h.priv / "auth.json", theirs.dump());
  ASSERT_EQ(write_back_login("codex", codex, h.priv, "auth.json").what, WriteBack::written);
  json c = json::parse(slurp(codex));
  EXPECT_EQ(c["tokens"]["refresh_token"], "rt-2");
  EXPECT_EQ(c["last_refresh"], "2026-11-28T00:00:00Z");
  EXPECT_TRUE(c["OPENAI_API_KEY"].is_null()) << "only the credential fields are taken";
}

TEST(LoginSyncTest, ConcurrentWriteBacksKeepTheNewestLogin) {
  Homes h;
  constexpr int kProcs = 8;
  std::vector<pid_t> kids;
  for (int i = 0; i < kProcs; ++i) {
    fs::path priv = h.base.path() / ("run/claude/p" + std::to_string(i));
    put(priv / ".credentials.json",
        claude_login("at-" + std::to_string(i), "rt-" + std::to_string(i), 2000 + i).dump());
  }
  for (int i = 0; i < kProcs; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      fs::path priv = h.base.path() / ("run/claude/p" + std::to_string(i));
      for (int round = 0; round < 20; ++round)
        write_back_login("claude", h.person, priv, ".credentials.json");
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) ::waitpid(k, nullptr, 0);
  json now = json::parse(slurp(h.person));
  EXPECT_EQ(now["claudeAiOauth"]["expiresAt"], 2000 + kProcs - 1);
  EXPECT_EQ(now["claudeAiOauth"]["refreshToken"], "rt-" + std::to_string(kProcs - 1));
  EXPECT_EQ(now["mcpOAuth"]["server"]["accessToken"], "mcp-secret");
  EXPECT_EQ(h.folder(), (std::vector<std::string>{".credentials.json", "settings.json"}));
}

// proves S6.4
TEST(LoginSyncTest, LoginHostsAreAllowedOnlyWhenALoginIsUsed) {
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
  }
}
