#include "llm/claude_confinement.hpp"

#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <loopr/core/text.hpp>

namespace loopr::llm {
namespace fs = std::filesystem;

namespace {

// The keys of ~/.claude.json that say who is logged in; the rest (mcpServers, projects with
// their allowed tools and MCP servers, hooks) is the person's own.
constexpr const char* kAccountKeys[] = {"oauthAccount",           "userID",
                                        "primaryApiKey",          "customApiKeyResponses",
                                        "hasCompletedOnboarding", "lastOnboardingVersion"};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool write_private(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  ::chmod(p.c_str(), 0600);
  return static_cast<bool>(out);
}

}  // namespace

Result<fs::path> make_private_claude_config(const fs::path& root, const std::string& loop_id,
                                            const std::string& home) {
  fs::path dir = root / loop_id;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec)
    return make_error(ErrorCode::io, "cannot make the claude CLI's configuration folder " +
                                         dir.string() + ": " + ec.message());
  ::chmod(root.c_str(), 0700);
  ::chmod(dir.c_str(), 0700);
  nlohmann::json account = nlohmann::json::object();
  if (!home.empty()) {
    // On a login, the client writes its copy (.credentials.json, without the refresh token).
    auto global = nlohmann::json::parse(slurp(fs::path(home) / ".claude.json"), nullptr, false);
    if (global.is_object())
      for (const char* key : kAccountKeys)
        if (global.contains(key)) account[key] = global[key];
  }
  if (!account.contains("hasCompletedOnboarding")) account["hasCompletedOnboarding"] = true;
  if (!write_private(dir / ".claude.json", json_text(account)))
    return make_error(ErrorCode::io, "cannot write " + (dir / ".claude.json").string());
  return dir;
}

}  // namespace loopr::llm
