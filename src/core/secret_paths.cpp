#include <loopr/core/secret_paths.hpp>

#include <algorithm>

namespace loopr {
namespace fs = std::filesystem;

namespace {

bool under_or_at(const fs::path& p, const fs::path& dir) {
  auto rel = p.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

// `p` with `~` expanded and `.`/`..` folded (no file system access: the entry may not exist).
fs::path expanded(std::string_view written, const fs::path& home) {
  std::string s(written);
  if (s == "~") return home.empty() ? fs::path("/~") : home;
  if (s.starts_with("~/")) return (home.empty() ? fs::path("/~") : home) / s.substr(2);
  return fs::path(s).lexically_normal();
}

// Whether `p` names `secret` (one or two parts, `.config/gh`) somewhere along it.
bool names_secret(const fs::path& p, const fs::path& secret) {
  std::vector<std::string> parts, want;
  for (const auto& x : p) parts.push_back(x.string());
  for (const auto& x : secret) want.push_back(x.string());
  return std::search(parts.begin(), parts.end(), want.begin(), want.end()) != parts.end();
}

}  // namespace

const std::vector<std::string>& secret_home_paths() {
  static const std::vector<std::string> kPaths = {
      ".ssh",           ".aws",        ".config/gh",    ".netrc",
      ".npmrc",         ".docker",     ".git-credentials", ".gnupg",
      ".pypirc",        ".kube",       ".azure",        ".config/gcloud",
      ".password-store", ".local/share/keyrings", "Library/Keychains",
      ".config/hub",    ".config/git/credentials", ".pgpass", ".vault-token"};
  return kPaths;
}

const std::vector<std::string>& masked_home_paths() {
  // In a toolchain's own folder (~/.cargo is where rustup puts cargo): the folder may be shown,
  // the file never is (the executor lays an empty file over it).
  static const std::vector<std::string> kPaths = {".cargo/credentials.toml", ".cargo/credentials"};
  return kPaths;
}

std::string secret_path_problem(std::string_view written, const fs::path& home) {
  if (written == "~" || written == "~/")
    return "is your whole home folder, with its keys and tokens (list the toolchain's own "
           "folder instead, e.g. ~/.pyenv/versions/3.11.7)";
  fs::path p = expanded(written, home);
  if (p == "/") return "is the whole file system (it holds every home and its secrets)";
  if (p == "/home" || p == "/root" || p == "/Users" || p.parent_path() == "/home" ||
      p.parent_path() == "/Users")
    return "is a whole home folder (list the toolchain's own folder instead, e.g. "
           "~/.pyenv/versions/3.11.7)";
  if (!home.empty() && under_or_at(home, p))
    return "is (or contains) your whole home folder, with its keys and tokens (list the "
           "toolchain's own folder instead, e.g. ~/.pyenv/versions/3.11.7)";
  for (const auto& s : secret_home_paths()) {
    if (names_secret(p, s))
      return "is a secret location (~/" + s + " holds credentials) and is never shown to commands";
    if (!home.empty() && under_or_at(home / s, p))
      return "contains ~/" + s + ", a secret location never shown to commands (list the "
             "folders you need inside it instead)";
  }
  for (const auto& s : masked_home_paths())
    if (names_secret(p, s))
      return "is a secret location (~/" + s + " holds credentials) and is never shown to commands";
  return {};
}

}  // namespace loopr
