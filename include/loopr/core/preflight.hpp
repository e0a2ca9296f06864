// What must hold before loops can do anything useful: the model provider's prerequisites and a
// code validation command whose programs exist. `loopr submit`, the daemon at start and
// `loopr doctor` ask the same questions, in the environment they run in.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/config.hpp>

namespace loopr {

/// One unmet prerequisite, worded for `loopr: what (hint)`.
struct PreflightProblem {
  std::string what;
  std::string hint;
  /// True when the check can be wrong (a gateway that needs no key, a program installed after
  /// the check): `submit --force` / `daemon --force` go on anyway.
  bool forceable = true;
};

/// The provider's prerequisites: the key variable for `anthropic`/`openai` (unless
/// `llm.base_url` is a loopback server, which needs none), the `claude` CLI (or
/// `llm.claude_code.command`) on the PATH for `claude-code`. nullopt when met.
std::optional<PreflightProblem> check_provider(const Config& config, const EnvLookup& env);

/// `loops.code.validation` is set, and the program of each part of it (`a && b | c; d`) is found
/// the way the shell would find it: a name in the PATH of `env`, a path relative to `repo_root`.
/// Words the shell runs itself (`cd`, `test`, `true`, …) and words that only the shell can
/// expand (`$X`, `*`) are not judged. nullopt when met.
std::optional<PreflightProblem> check_validation_command(const Config& config,
                                                         const std::filesystem::path& repo_root,
                                                         const EnvLookup& env);

/// The words that start a command in a shell command line: one per `&&`, `||`, `;`, `|`, `&`
/// or newline separated part, with leading `VAR=value` assignments, redirections and prefixes
/// (`env`, `exec`, `time`, `!`, `if`, `then`, …) skipped, quotes removed. A part whose first
/// word is unjudgeable (a builtin, `$X`, `for …`) gives nothing.
std::vector<std::string> command_programs(std::string_view command_line);

/// Where the shell would find `program`: a name with a '/' is a path (relative to `cwd`), else
/// the first executable regular file of that name in the ':'-separated `path_env`.
std::optional<std::filesystem::path> find_program(std::string_view program,
                                                  std::string_view path_env,
                                                  const std::filesystem::path& cwd);

/// True if `url`'s host is a loopback address (`localhost`, `127.x.x.x`, `[::1]`).
bool is_loopback_url(std::string_view url);

/// The base URL a provider talks to: `llm.base_url`, else the provider's public endpoint
/// (empty for `claude-code`, which picks its own).
std::string effective_base_url(const Config& config);

}  // namespace loopr
