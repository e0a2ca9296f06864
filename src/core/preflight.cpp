// Prerequisite checks shared by `loopr submit`, the daemon's start and `loopr doctor`.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>

#include <loopr/core/preflight.hpp>

namespace loopr {
namespace {

namespace fs = std::filesystem;

bool is_executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// The shell runs these itself (or they start a compound command): nothing to look up.
bool shell_runs_itself(std::string_view word) {
  static constexpr std::array<std::string_view, 40> kWords = {
      "cd",     "test",   "[",     "[[",    "true",  "false",  ":",        ".",
      "source", "export", "set",   "unset", "exit",  "return", "echo",     "printf",
      "read",   "eval",   "shift", "trap",  "umask", "ulimit", "wait",     "pwd",
      "type",   "alias",  "local", "for",   "case",  "select", "function", "{",
      "}",      "(",      ")",     "fi",    "done",  "esac",   "in",       "command"};
  return std::find(kWords.begin(), kWords.end(), word) != kWords.end();
}

// Words that come before the command they run: skipped to find the program.
bool is_command_prefix(std::string_view word) {
  static constexpr std::array<std::string_view, 14> kPrefixes = {
      "!",  "if",   "then", "else", "elif",  "while", "until",
      "do", "exec", "time", "nice", "nohup", "env",   "xargs"};
  return std::find(kPrefixes.begin(), kPrefixes.end(), word) != kPrefixes.end();
}

bool is_assignment(std::string_view word) {
  auto eq = word.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  if (!(std::isalpha(static_cast<unsigned char>(word[0])) || word[0] == '_')) return false;
  return std::all_of(word.begin(), word.begin() + static_cast<std::ptrdiff_t>(eq), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// `>out`, `2>&1`, `<in`: the word is a redirection (`>` alone: the next word is its target).
bool is_redirection(std::string_view word) {
  std::size_t i = 0;
  while (i < word.size() && std::isdigit(static_cast<unsigned char>(word[i]))) ++i;
  return i < word.size() && (word[i] == '>' || word[i] == '<');
}

struct Word {
  std::string text;
  bool expands = false;  ///< had an unquoted or double-quoted `$`, a backquote or a glob
};

// Splits a command line into parts (at unquoted `&&`, `||`, `;`, `|`, `&`, newlines) of words.
std::vector<std::vector<Word>> split_parts(std::string_view s) {
  std::vector<std::vector<Word>> parts(1);
  Word word;
  bool in_word = false;
  auto end_word = [&] {
    if (in_word) parts.back().push_back(std::move(word));
    word = Word{};
    in_word = false;
  };
  auto end_part = [&] {
    end_word();
    if (!parts.back().empty()) parts.emplace_back();
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\'') {
      auto close = s.find('\'', i + 1);
      if (close == std::string_view::npos) close = s.size();
      word.text += s.substr(i + 1, close - i - 1);
      in_word = true;
      i = close;
    } else if (c == '"') {
      in_word = true;
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\' && i + 1 < s.size()) {
          word.text += s[++i];
          continue;
        }
        if (s[i] == '$' || s[i] == '`') word.expands = true;
        word.text += s[i];
      }
    } else if (c == '\\' && i + 1 < s.size()) {
      word.text += s[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      end_word();
    } else if (c == '\n' || c == ';') {
      end_part();
    } else if (c == '&' || c == '|') {
      bool redirect = (c == '&' && ((in_word && !word.text.empty() &&
                                     (word.text.back() == '>' || word.text.back() == '<')) ||
                                    (i + 1 < s.size() && s[i + 1] == '>')));
      if (redirect) {
        word.text += c;
        in_word = true;
        continue;
      }
      if (i + 1 < s.size() && s[i + 1] == c) ++i;  // && or ||
      end_part();
    } else if (c == '(' || c == ')') {
      end_word();  // a subshell's parentheses separate words
    } else {
      if (c == '$' || c == '`' || c == '*' || c == '?' || c == '~') word.expands = true;
      word.text += c;
      in_word = true;
    }
  }
  end_word();
  if (parts.back().empty()) parts.pop_back();
  return parts;
}

std::string key_variable(const std::string& provider) {
  return provider == "openai" || provider == "openai-responses" ? "OPENAI_API_KEY"
                                                                : "ANTHROPIC_API_KEY";
}

}  // namespace

std::vector<std::string> command_programs(std::string_view command_line) {
  std::vector<std::string> out;
  for (const auto& part : split_parts(command_line)) {
    std::size_t i = 0;
    while (i < part.size()) {
      const Word& w = part[i];
      if (is_assignment(w.text) || is_command_prefix(w.text)) {
        ++i;
      } else if (is_redirection(w.text)) {
        // `> file` names its target in the next word; `>file` and `2>&1` do not.
        bool bare = w.text.find_first_not_of("0123456789<>&") == std::string::npos &&
                    w.text.back() != '&' && w.text.find('&') == std::string::npos;
        i += bare ? 2 : 1;
      } else if (!w.text.empty() && w.text[0] == '-' && i > 0 &&
                 (part[i - 1].text == "env" || part[i - 1].text == "nice" ||
                  part[i - 1].text == "time" || part[i - 1].text == "xargs")) {
        ++i;  // a prefix's own options
      } else {
        break;
      }
    }
    if (i >= part.size()) continue;
    const Word& program = part[i];
    if (program.expands || program.text.empty() || shell_runs_itself(program.text)) continue;
    out.push_back(program.text);
  }
  return out;
}

std::optional<fs::path> find_program(std::string_view program, std::string_view path_env,
                                     const fs::path& cwd) {
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string_view::npos) {
    fs::path p(program);
    if (p.is_relative()) p = cwd / p;
    if (is_executable_file(p)) return p.lexically_normal();
    return std::nullopt;
  }
  std::size_t start = 0;
  while (start <= path_env.size()) {
    std::size_t colon = path_env.find(':', start);
    if (colon == std::string_view::npos) colon = path_env.size();
    std::string_view dir = path_env.substr(start, colon - start);
    fs::path candidate = (dir.empty() ? cwd : fs::path(dir)) / fs::path(program);
    if (is_executable_file(candidate)) return candidate;
    start = colon + 1;
  }
  return std::nullopt;
}

bool is_loopback_url(std::string_view url) {
  auto scheme = url.find("://");
  std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (auto at = rest.rfind('@'); at != std::string_view::npos) rest = rest.substr(at + 1);
  std::string_view host = rest;
  if (!host.empty() && host[0] == '[') {
    host = host.substr(1, host.find(']') - 1);
  } else if (auto colon = host.rfind(':'); colon != std::string_view::npos) {
    host = host.substr(0, colon);
  }
  std::string h(host);
  std::transform(h.begin(), h.end(), h.begin(), [](unsigned char c) { return std::tolower(c); });
  if (h == "localhost" || h == "::1") return true;
  // 127.0.0.0/8: four dotted numbers, the first 127 (not a name such as 127.example.com).
  static const std::regex loopback_v4(R"(127(\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3})");
  return std::regex_match(h, loopback_v4);
}

std::string effective_base_url(const Config& config) {
  if (!config.llm.base_url.empty()) return config.llm.base_url;
  if (config.llm.provider == "anthropic") return "https://api.anthropic.com";
  const std::string& p = config.llm.provider;
  if (p == "openai" || p == "openai-responses" || p == "codex") return "https://api.openai.com";
  if (p == "gemini") return "https://generativelanguage.googleapis.com";
  return {};
}

namespace {

// One provider, chosen by `key` (llm.provider, loops.<type>.provider, …).
std::optional<PreflightProblem> check_one_provider(const Config& config, const std::string& key_name,
                                                   const EnvLookup& env) {
  const std::string& provider = config.llm.provider;
  if (provider == "claude-code" || provider == "codex" || provider == "gemini") {
    const bool claude = provider == "claude-code", codex = provider == "codex";
    const std::string& command = claude  ? config.llm.claude_code.command
                                 : codex ? config.llm.codex.command
                                         : config.llm.gemini.command;
    const std::string key = claude ? "claude_code" : provider;
    const std::string product = claude ? "Claude Code" : codex ? "Codex CLI" : "Gemini CLI";
    std::string path = env("PATH").value_or("");
    std::error_code ec;
    if (find_program(command, path, fs::current_path(ec))) return std::nullopt;
    return PreflightProblem{
        "the `" + command + "` CLI that " + key_name + " " + provider + " runs is not on the PATH",
        "install " + product + " and log in, or set llm." + key + ".command to its path", true};
  }
  if (provider != "anthropic" && provider != "openai" && provider != "openai-responses")
    return PreflightProblem{
        key_name + " '" + provider + "' is unknown",
        "write anthropic, openai, openai-responses, claude-code, codex or gemini", false};
  std::string var = key_variable(provider);
  auto key = env(var.c_str());
  if (key && !key->empty()) return std::nullopt;
  std::string url = effective_base_url(config);
  if (is_loopback_url(url)) return std::nullopt;  // a local server needs no key
  return PreflightProblem{
      var + " is not set, and " + key_name + " " + provider + " needs it for " + url,
      "export " + var +
          "=… in the shell you run loopr in, which the daemon inherits; for a "
          "local server set llm.base_url",
      true};
}

}  // namespace

std::optional<PreflightProblem> check_provider(const Config& config, const EnvLookup& env) {
  if (auto p = check_one_provider(config, "llm.provider", env)) return p;
  // Each loop type's own provider (loops.<type>.provider, loops.review, integration): its base
  // URL from its own variable, else llm.base_url (as the client that serves it).
  std::vector<std::pair<std::string, std::string>> chosen;
  for (const auto& [type, loop] : config.loops)
    chosen.emplace_back(std::string("loops.") + to_string(type) + ".provider", loop.provider);
  chosen.emplace_back("loops.review.provider", config.review.provider);
  chosen.emplace_back("integration.provider", config.integration.provider);
  for (const auto& [key, provider] : chosen) {
    if (provider.empty() || provider == config.llm.provider) continue;
    Config other = config;
    other.llm.provider = provider;
    if (auto u = env(base_url_variable(provider)); u && !u->empty()) other.llm.base_url = *u;
    if (auto p = check_one_provider(other, key, env)) return p;
  }
  return std::nullopt;
}

std::optional<PreflightProblem> check_validation_command(const Config& config,
                                                         const fs::path& repo_root,
                                                         const EnvLookup& env) {
  const std::string& command = config.loop(LoopType::code).validation;
  if (command.find_first_not_of(" \t\r\n") == std::string::npos)
    return PreflightProblem{
        "loops.code.validation is not set: code loops would have no test to pass",
        "set it in .loopr/config.yml to the command that runs your tests", true};
  std::string path = env("PATH").value_or("");
  for (const auto& program : command_programs(command)) {
    if (find_program(program, path, repo_root)) continue;
    bool is_path = program.find('/') != std::string::npos;
    return PreflightProblem{
        "the validation command `" + command + "` runs `" + program + "`, which " +
            (is_path ? "is not an executable file in " + repo_root.string()
                     : std::string("is not on the PATH")),
        "install it, or change loops.code.validation in .loopr/config.yml", true};
  }
  return std::nullopt;
}

}  // namespace loopr
