#include <unistd.h>

#include <set>
#include <sstream>

#include <loopr/core/secret_paths.hpp>
#include <loopr/exec/executor.hpp>
#include <loopr/exec/program_check.hpp>

namespace loopr::exec {
namespace fs = std::filesystem;

namespace {

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::optional<PreflightProblem> check_validation_in_sandbox(const Config& config,
                                                            const RepoPaths& paths,
                                                            const EnvLookup& env) {
  if (!config.sandbox.confined()) return std::nullopt;
  const std::string& validation = config.loop(LoopType::code).validation;
  std::string path_env = env("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  // Only names the shell looks up in PATH and that the daemon's own PATH has: a missing one is
  // reported by check_validation_command, a path is in the repository.
  std::map<std::string, fs::path> on_host;
  for (const auto& program : command_programs(validation)) {
    if (program.find('/') != std::string::npos) continue;
    if (auto found = find_program(program, path_env, paths.root)) on_host[program] = *found;
  }
  if (on_host.empty()) return std::nullopt;

  ExecutorOptions options{paths, env};
  auto executor = make_executor(config.sandbox, options);
  if (executor->unavailable()) return std::nullopt;
  std::error_code ec;
  fs::path scratch = paths.run_dir() / ("program-check-" + std::to_string(::getpid()));
  fs::create_directories(scratch, ec);
  if (ec) return std::nullopt;
  std::string script = "for p in";
  for (const auto& [program, where] : on_host) script += " " + quote(program);
  script += "; do command -v \"$p\" >/dev/null 2>&1 || printf '%s\\n' \"$p\"; done";
  Command probe = Command::shell(script, scratch);
  probe.timeout = std::chrono::seconds(20);
  ProcessResult r = executor->run(probe);
  fs::remove_all(scratch, ec);
  if (!r.succeeded()) return std::nullopt;

  std::vector<std::string> missing;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);)
    if (on_host.count(line)) missing.push_back(line);
  if (missing.empty()) return std::nullopt;

  // What to make visible: the program's top folder under the home (~/.cargo), else its folder.
  fs::path home = env("HOME").value_or("");
  std::set<std::string> show;
  std::string where;
  for (const auto& program : missing) {
    fs::path p = on_host[program];
    where += (where.empty() ? "" : ", ") + ("`" + program + "` (" + p.string() + ")");
    auto rel = home.empty() ? fs::path() : p.lexically_relative(home);
    // Never a folder the config refuses (~/.local holds the keyrings): then the program's own.
    if (!rel.empty() && *rel.begin() != ".." &&
        secret_path_problem("~/" + rel.begin()->string(), home).empty())
      show.insert("~/" + rel.begin()->string());
    else if (!rel.empty() && *rel.begin() != "..")
      show.insert("~/" + rel.parent_path().string());
    else
      show.insert(p.parent_path().string());
  }
  std::string list;
  for (const auto& s : show) list += (list.empty() ? "" : ", ") + s;
  return PreflightProblem{
      "the test command's " + where + (missing.size() == 1 ? " is" : " are") +
          " on your PATH but not inside the sandbox, which hides your home and /root",
      "make it visible with `sandbox: {read_only: [" + list +
          "]}` in .loopr/config.yml (and what it needs, e.g. ~/.rustup for cargo), or install it "
          "system-wide",
      true};
}

}  // namespace loopr::exec
