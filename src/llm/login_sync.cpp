#include "llm/login_sync.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include <loopr/core/fd.hpp>

namespace loopr::llm {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::size_t kMaxLogin = 64 * 1024;
constexpr std::size_t kMaxToken = 16 * 1024;

// A token as the providers issue them: printable ASCII, not empty, bounded.
bool token_like(const json& v, bool may_be_empty = false) {
  if (!v.is_string()) return false;
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() > kMaxToken || (s.empty() && !may_be_empty)) return false;
  for (unsigned char c : s)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

bool number_like(const json& v) {
  return v.is_number() && !(v.is_number_float() && !std::isfinite(v.get<double>())) &&
         v.get<double>() >= 0;
}

// Copies `from[key]` into `to` when `ok` says it is well-formed; false when it is present and
// malformed, or absent and `required`.
template <typename Check>
bool take(const json& from, json& to, const char* key, bool required, Check ok) {
  auto it = from.find(key);
  if (it == from.end() || (it->is_null() && !required)) return !required;
  if (!ok(*it)) return false;
  to[key] = *it;
  return true;
}

auto tok = [](const json& v) { return token_like(v); };
auto opt_tok = [](const json& v) { return token_like(v, true); };

std::optional<json> claude_fields(const json& doc) {
  auto it = doc.find("claudeAiOauth");
  if (it == doc.end() || !it->is_object()) return std::nullopt;
  json out = json::object();
  auto scopes = [](const json& v) {
    if (!v.is_array() || v.size() > 32) return false;
    for (const auto& s : v)
      if (!token_like(s)) return false;
    return true;
  };
  if (!take(*it, out, "accessToken", true, tok) || !take(*it, out, "refreshToken", true, tok) ||
      !take(*it, out, "expiresAt", true, number_like) || !take(*it, out, "scopes", false, scopes) ||
      !take(*it, out, "subscriptionType", false, opt_tok) ||
      !take(*it, out, "rateLimitTier", false, opt_tok))
    return std::nullopt;
  return json{{"claudeAiOauth", out}};
}

std::optional<json> codex_fields(const json& doc) {
  auto it = doc.find("tokens");
  if (it == doc.end() || !it->is_object()) return std::nullopt;
  json tokens = json::object();
  if (!take(*it, tokens, "id_token", true, tok) || !take(*it, tokens, "access_token", true, tok) ||
      !take(*it, tokens, "refresh_token", true, tok) ||
      !take(*it, tokens, "account_id", false, opt_tok))
    return std::nullopt;
  json out = {{"tokens", tokens}};
  if (!take(doc, out, "last_refresh", false, tok)) return std::nullopt;
  return out;
}

std::optional<json> gemini_fields(const json& doc) {
  json out = json::object();
  if (!take(doc, out, "access_token", true, tok) ||
      !take(doc, out, "expiry_date", true, number_like) ||
      !take(doc, out, "refresh_token", false, tok) || !take(doc, out, "token_type", false, tok) ||
      !take(doc, out, "id_token", false, tok) || !take(doc, out, "scope", false, opt_tok))
    return std::nullopt;
  return out;
}

// The `exp` claim (seconds) of a JWT, read without checking its signature: only to order two
// logins of the same person, never to trust one.
std::optional<std::int64_t> jwt_exp(const std::string& token) {
  auto first = token.find('.');
  auto second = first == std::string::npos ? first : token.find('.', first + 1);
  if (second == std::string::npos) return std::nullopt;
  std::string payload;
  unsigned bits = 0, acc = 0;
  for (char c : token.substr(first + 1, second - first - 1)) {
    int v = c >= 'A' && c <= 'Z'   ? c - 'A'
            : c >= 'a' && c <= 'z' ? c - 'a' + 26
            : c >= '0' && c <= '9' ? c - '0' + 52
            : c == '-' || c == '+' ? 62
            : c == '_' || c == '/' ? 63
                                   : -1;
    if (v < 0) break;
    acc = (acc << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      payload.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  auto claims = json::parse(payload, nullptr, false);
  if (!claims.is_object() || !claims.contains("exp") || !number_like(claims["exp"]))
    return std::nullopt;
  return static_cast<std::int64_t>(claims["exp"].get<double>()) * 1000;
}

// Reads `fd` whole (a regular file of one link, at most kMaxLogin bytes).
Result<std::string> read_regular(int fd, const std::string& what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return make_error(ErrorCode::invalid_argument, what + " is not a regular file");
  if (st.st_nlink != 1)
    return make_error(ErrorCode::invalid_argument, what + " has other names (a hard link)");
  if (static_cast<std::size_t>(st.st_size) > kMaxLogin)
    return make_error(ErrorCode::invalid_argument, what + " is larger than 64 KiB");
  std::string text(static_cast<std::size_t>(st.st_size) + 1, '\0');
  ssize_t n = ::read(fd, text.data(), text.size());
  if (n < 0 || static_cast<std::size_t>(n) > kMaxLogin)
    return make_error(ErrorCode::io, "cannot read " + what);
  text.resize(static_cast<std::size_t>(n));
  return text;
}

// A refresh holds the lock across one exchange with the token endpoint (at most a minute).
bool lock_folder(int dir) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(150);
  while (::flock(dir, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Writes `text` to `name` in `dir` (mode `mode`) through a temporary file renamed over it.
Result<void> replace_file(int dir, const std::string& name, const std::string& text, mode_t mode) {
  std::random_device rd;
  const std::string tmp =
      "." + name + ".loopr-" + std::to_string(::getpid()) + "-" + std::to_string(rd()) + ".tmp";
  int fd = ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return make_error(ErrorCode::io, "cannot make a temporary file beside " + name);
  bool good = ::fchmod(fd, mode & 07777) == 0;
  for (std::size_t done = 0; good && done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0)
      good = false;
    else
      done += static_cast<std::size_t>(n);
  }
  good = good && ::fsync(fd) == 0;
  good = ::close(fd) == 0 && good;
  good = good && ::renameat(dir, tmp.c_str(), dir, name.c_str()) == 0;
  if (!good) {
    ::unlinkat(dir, tmp.c_str(), 0);
    return make_error(ErrorCode::io, "cannot replace " + name);
  }
  ::fsync(dir);
  return ok();
}

// The person's document with the credential fields of `fields` put in (the rest kept).
json merged(json person, const json& fields) {
  for (const auto& [key, value] : fields.items()) {
    if (value.is_object() && person.contains(key) && person[key].is_object())
      for (const auto& [k, v] : value.items()) person[key][k] = v;
    else
      person[key] = value;
  }
  return person;
}

// Each agent CLI's login, as data: where it lives, what says it is not on a login, and its shape.
struct LoginKind {
  const char* provider;  ///< the provider name of the config (claude-code, codex, gemini)
  const char* cli;       ///< the CLI's own name, used by login_refresh.cpp's table
  const char* home_path;
  const char* copy_path;
  std::array<const char*, 2> hosts;    ///< login_hosts (nullptr: none)
  std::array<const char*, 2> key_env;  ///< any of these set: a key, not the login
  const char* root;  ///< the key a well-formed login's credential fields sit under
  std::optional<json> (*fields)(const json& doc);
  std::optional<std::int64_t> (*expiry)(const json& fields);
};

const LoginKind kLogins[] = {
    {"claude-code",
     "claude",
     ".claude/.credentials.json",
     ".credentials.json",
     // Never a token host: loopr refreshes the login itself (login_refresh.hpp). Claude's
     // subscription API is api.anthropic.com, its base URL's host already.
     {},
     {"ANTHROPIC_API_KEY"},
     "claudeAiOauth",
     claude_fields,
     [](const json& c) -> std::optional<std::int64_t> {
       return static_cast<std::int64_t>(c["claudeAiOauth"]["expiresAt"].get<double>());
     }},
    {"codex",
     "codex",
     ".codex/auth.json",
     "auth.json",
     {"chatgpt.com"},
     {"OPENAI_API_KEY", "OPENAI_BASE_URL"},
     "tokens",
     codex_fields,
     [](const json& c) { return jwt_exp(c["tokens"]["access_token"].get<std::string>()); }},
    {"gemini",
     "gemini",
     ".gemini/oauth_creds.json",
     ".gemini/oauth_creds.json",
     {"cloudcode-pa.googleapis.com"},
     {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
     "expiry_date",
     gemini_fields,
     [](const json& c) -> std::optional<std::int64_t> {
       return static_cast<std::int64_t>(c["expiry_date"].get<double>());
     }},
};

const LoginKind* by_provider(const std::string& provider) {
  for (const auto& k : kLogins)
    if (provider == k.provider) return &k;
  return nullptr;
}

const LoginKind* by_cli(const std::string& cli) {
  for (const auto& k : kLogins)
    if (cli == k.cli) return &k;
  return nullptr;
}

}  // namespace

json merge_credentials(json person, const json& fields) { return merged(std::move(person), fields); }

std::optional<LoginFile> login_file(const std::string& provider) {
  const LoginKind* k = by_provider(provider);
  if (!k) return std::nullopt;
  return LoginFile{k->cli, k->home_path, k->copy_path};
}

std::vector<std::string> login_hosts(const std::string& provider) {
  const LoginKind* k = by_provider(provider);
  std::vector<std::string> out;
  for (const char* host : k ? k->hosts : std::array<const char*, 2>{})
    if (host) out.emplace_back(host);
  return out;
}

bool uses_login(const std::string& provider, const std::map<std::string, std::string>& env) {
  const LoginKind* k = by_provider(provider);
  if (!k) return false;
  for (const char* name : k->key_env)
    if (auto it = name ? env.find(name) : env.end(); it != env.end() && !it->second.empty())
      return false;
  return true;
}

std::optional<json> credential_fields(const std::string& cli, const json& doc) {
  const LoginKind* k = by_cli(cli);
  if (!k || !doc.is_object()) return std::nullopt;
  return k->fields(doc);
}

std::optional<std::int64_t> login_expiry(const std::string& cli, const json& c) {
  const LoginKind* k = by_cli(cli);
  if (!k || !c.contains(k->root)) return std::nullopt;
  return k->expiry(c);
}

Result<json> read_login(const fs::path& path) {
  Fd dir(::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0)
    return make_error(ErrorCode::not_found, "no folder " + path.parent_path().string());
  Fd fd(::openat(dir.get(), path.filename().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    const int e = errno;
    return make_error(e == ENOENT ? ErrorCode::not_found : ErrorCode::invalid_argument,
                      path.string() + (e == ELOOP ? " is a symlink" : " cannot be opened"));
  }
  LOOPR_ASSIGN(std::string text, read_regular(fd.get(), path.string()));
  auto doc = json::parse(text, nullptr, false);
  if (!doc.is_object())
    return make_error(ErrorCode::invalid_argument, path.string() + " is not a JSON object");
  return doc;
}

Result<json> update_login(const fs::path& person, const LoginUpdate& update) {
  Fd dir(::open(person.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0)
    return make_error(ErrorCode::not_found, "no folder " + person.parent_path().string());
  if (!lock_folder(dir.get()))
    return make_error(ErrorCode::timeout, "cannot lock " + person.parent_path().string());
  const std::string name = person.filename().string();
  Fd cur(::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (cur.get() < 0) {
    const int e = errno;
    return make_error(e == ENOENT ? ErrorCode::not_found : ErrorCode::invalid_argument,
                      person.string() + (e == ELOOP ? " is a symlink (left alone)"
                                                    : " cannot be opened"));
  }
  struct stat st {};
  ::fstat(cur.get(), &st);
  LOOPR_ASSIGN(std::string text, read_regular(cur.get(), person.string()));
  auto doc = json::parse(text, nullptr, false);
  if (!doc.is_object())
    return make_error(ErrorCode::invalid_argument, person.string() + " is not a JSON object");
  LOOPR_ASSIGN(std::optional<json> changed, update(doc));
  if (!changed) return doc;
  // The person's layout kept: pretty when it was written pretty.
  const bool pretty = text.find('\n') != std::string::npos && text.find('\n') + 1 < text.size();
  LOOPR_TRY(replace_file(dir.get(), name, (pretty ? changed->dump(2) + "\n" : changed->dump()),
                         st.st_mode));
  return *changed;
}

}  // namespace loopr::llm
