#include <loopr/project/toolchains.hpp>

#include <fstream>
#include <set>
#include <sstream>

#include <loopr/core/preflight.hpp>
#include <loopr/core/process.hpp>
#include <loopr/core/secret_paths.hpp>
#include <loopr/core/system_folders.hpp>

namespace loopr::project {
namespace fs = std::filesystem;

namespace {

constexpr int kMaxHops = 40;

bool under(const fs::path& p, const fs::path& dir) {
  auto rel = p.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

bool under_or_at(const fs::path& p, const fs::path& dir) { return p == dir || under(p, dir); }

fs::path home_of(const EnvLookup& env) {
  std::string h = env("HOME").value_or("");
  if (h.empty()) return {};
  std::error_code ec;
  fs::path c = fs::weakly_canonical(h, ec);
  return ec ? fs::path(h) : c;
}

std::string first_line(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::string line;
  std::getline(in, line);
  return line;
}

// `home = /x/bin` of a virtualenv's pyvenv.cfg.
std::optional<fs::path> venv_home(const fs::path& venv) {
  std::ifstream in(venv / "pyvenv.cfg");
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq);
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key != "home") continue;
    std::string value = line.substr(eq + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t\r") + 1);
    if (!value.empty()) return fs::path(value);
  }
  return std::nullopt;
}

// The version manager whose shims folder is `shims` (`~/.pyenv/shims`), by its root's name.
std::string shim_manager(const fs::path& shims) {
  std::string root = shims.parent_path().filename().string();
  for (const char* m : {"pyenv", "rbenv", "nodenv", "goenv", "jenv", "plenv", "asdf"})
    if (root == std::string(".") + m || root == m) return m;
  if (root == "mise" || root == "rtx") return root;
  return {};
}

std::optional<fs::path> run_which(const std::string& manager, const fs::path& manager_root,
                                  const std::string& name, const fs::path& root,
                                  const EnvLookup& env) {
  std::string path_env = env("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  std::optional<fs::path> tool = find_program(manager, path_env, root);
  for (const char* sub : {"bin", "libexec"}) {
    std::error_code ec;
    if (!tool && fs::exists(manager_root / sub / manager, ec)) tool = manager_root / sub / manager;
  }
  if (!tool) return std::nullopt;
  ProcessSpec spec;
  spec.argv = {tool->string(), "which", name};
  spec.cwd = root.string();
  spec.timeout = std::chrono::seconds(20);
  spec.merge_stderr = false;
  ProcessResult r = run_process(spec);
  if (!r.succeeded()) return std::nullopt;
  std::string line = r.output.substr(0, r.output.find('\n'));
  if (line.empty() || line[0] != '/') return std::nullopt;
  return fs::path(line);
}

struct Walker {
  const fs::path& root;
  const EnvLookup& env;
  std::vector<fs::path> hops;
  std::set<fs::path> seen;
  /// Ask a version manager which program its shim runs (`pyenv which`): only for `init`, which
  /// the person runs; the daemon's explanations never start a program the checkout configures.
  bool ask_managers = true;

  void add(const fs::path& raw) {
    fs::path p = raw.lexically_normal();
    if (seen.insert(p).second) hops.push_back(p);
  }

  // `p` (absolute), each link followed, then what the file it ends at runs.
  void walk(fs::path p, int depth) {
    if (depth > 3) return;
    std::error_code ec;
    for (int i = 0; i < kMaxHops; ++i) {
      add(p);
      fs::path dir = fs::weakly_canonical(p.parent_path(), ec);
      if (ec) return;
      p = dir / p.filename();
      add(p);
      if (!fs::is_symlink(p, ec)) break;
      fs::path target = fs::read_symlink(p, ec);
      if (ec) return;
      p = (target.is_absolute() ? target : dir / target).lexically_normal();
    }
    if (!fs::is_regular_file(p, ec)) return;
    fs::path dir = p.parent_path();
    if (dir.filename() == "shims") {
      if (std::string m = shim_manager(dir); !m.empty() && ask_managers)
        if (auto real = run_which(m, dir.parent_path(), p.filename().string(), root, env))
          walk(*real, depth + 1);
      return;
    }
    if ((dir.filename() == "bin" || dir.filename() == "Scripts") &&
        fs::is_regular_file(dir.parent_path() / "pyvenv.cfg", ec))
      if (auto home = venv_home(dir.parent_path())) add(*home);
    std::string line = first_line(p);
    if (line.rfind("#!", 0) != 0) return;
    std::istringstream words(line.substr(2));
    std::string interpreter, arg;
    words >> interpreter >> arg;
    if (fs::path(interpreter).filename() == "env" && !arg.empty() && arg[0] != '-') {
      std::string path_env = env("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
      if (auto found = find_program(arg, path_env, root)) walk(fs::absolute(*found, ec), depth + 1);
    } else if (!interpreter.empty() && interpreter[0] == '/') {
      walk(fs::path(interpreter).lexically_normal(), depth + 1);
    }
  }
};

// The folder to show for a hidden `hop`: a version manager's root for its shims, an
// installation's prefix for what is in its `bin/` (a Python finds its stdlib in the prefix's
// lib/), else the hop's own folder; never a home or a secret location (then nothing).
std::optional<fs::path> folder_to_show(const fs::path& hop, const fs::path& home) {
  std::error_code ec;
  fs::path d = fs::is_directory(hop, ec) ? hop : hop.parent_path();
  if (d.filename() == "shims" && !shim_manager(d).empty()) {
    d = d.parent_path();
  } else if (d.filename() == "bin" || d.filename() == "sbin" || d.filename() == "Scripts") {
    fs::path prefix = d.parent_path();
    if (secret_path_problem(prefix.string(), home).empty() && prefix.has_relative_path())
      d = prefix;
  }
  if (!d.has_relative_path() || !secret_path_problem(d.string(), home).empty()) return std::nullopt;
  return d;
}

// Whether `p` is shown by one of `read_only` (absolute entries, `~/` expanded, resolved).
bool shown_by(const fs::path& p, const std::vector<std::string>& read_only, const fs::path& root,
              const fs::path& home) {
  for (const auto& entry : read_only) {
    fs::path e = entry.starts_with("~/") ? home / entry.substr(2)
                 : entry[0] == '/'       ? fs::path(entry)
                                         : root / entry;
    std::error_code ec;
    fs::path c = fs::weakly_canonical(e, ec);
    if (under_or_at(p, e) || (!ec && under_or_at(p, c))) return true;
  }
  return false;
}

// The commands `make ARGS` would run (`make -n`), for the programs in them.
std::vector<std::string> make_recipe_lines(const std::string& args, const fs::path& root,
                                           const EnvLookup& env) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "exec make -n " + args};
  spec.cwd = root.string();
  spec.timeout = std::chrono::seconds(30);
  spec.merge_stderr = false;
  if (auto path = env("PATH")) spec.env_set["PATH"] = *path;
  if (auto home = env("HOME")) spec.env_set["HOME"] = *home;
  ProcessResult r = run_process(spec);
  std::vector<std::string> lines;
  if (!r.succeeded()) return lines;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line.rfind("make", 0) != 0) lines.push_back(line);
  return lines;
}

// `make …` parts of a command line, as their argument text.
std::vector<std::string> make_invocations(const std::string& command) {
  std::vector<std::string> out;
  std::string part;
  auto flush = [&] {
    std::istringstream words(part);
    std::string first;
    words >> first;
    if (first == "make" || first == "gmake") {
      std::string rest;
      std::getline(words, rest);
      // Only plain words (targets, VAR=value, -C dir): nothing the shell would expand.
      if (rest.find_first_of("$`\\\"'*?()<>") == std::string::npos) out.push_back(rest);
    }
    part.clear();
  };
  for (char c : command) {
    if (c == '&' || c == '|' || c == ';' || c == '\n')
      flush();
    else
      part += c;
  }
  flush();
  return out;
}

}  // namespace

bool hidden_in_sandbox(const fs::path& p, const fs::path& root) {
  for (const SystemFolder& system : kSystemFolders)  // what every sandbox shows
    if (under_or_at(p, system.path)) return false;
  std::error_code ec;
  fs::path r = fs::weakly_canonical(root, ec);
  return !under_or_at(p, root) && !under_or_at(p, r);
}

std::vector<fs::path> program_hops(const std::string& program, const fs::path& root,
                                   const EnvLookup& env) {
  std::string path_env = env("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  auto found = find_program(program, path_env, root);
  if (!found) return {};
  Walker w{root, env, {}, {}, true};
  fs::path start = (found->is_absolute() ? *found : root / *found).lexically_normal();
  w.walk(start, 0);
  return w.hops;
}

std::vector<ToolchainPath> resolve_toolchains(const fs::path& root, const std::string& command,
                                              const EnvLookup& env) {
  const fs::path home = home_of(env);
  std::vector<std::pair<std::string, std::string>> programs;  // program, as seen in
  for (const auto& p : command_programs(command)) programs.emplace_back(p, "");
  for (const auto& args : make_invocations(command))
    for (const auto& line : make_recipe_lines(args, root, env))
      for (const auto& p : command_programs(line)) programs.emplace_back(p, "make -n" + args);
  std::vector<ToolchainPath> out;
  for (const auto& [program, via] : programs) {
    std::vector<fs::path> hops = program_hops(program, root, env);
    for (const auto& hop : hops) {
      if (!hidden_in_sandbox(hop, root)) continue;
      auto show = folder_to_show(hop, home);
      if (!show) continue;
      bool covered = false;
      for (auto& t : out) {
        if (under_or_at(*show, t.path)) covered = true;
        else if (under(t.path, *show)) t.path.clear();  // the new one contains it
      }
      std::erase_if(out, [](const ToolchainPath& t) { return t.path.empty(); });
      if (covered) continue;
      std::string why = "`" + program + "`" + (via.empty() ? "" : " (from `" + via + "`)");
      if (hop != hops.front()) why += " → " + hop.string();
      out.push_back({show->string(), why});
      // rustup's proxies in ~/.cargo/bin run the toolchains of ~/.rustup.
      std::error_code ec;
      if (!home.empty() && *show == home / ".cargo" && fs::is_directory(home / ".rustup", ec))
        out.push_back({(home / ".rustup").string(), why + " (rustup's toolchains)"});
    }
  }
  return out;
}

std::optional<std::string> explain_hidden_path(const std::string& output, const fs::path& root,
                                               const Config& config, const EnvLookup& env) {
  const fs::path home = home_of(env);
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("not found") == std::string::npos &&
        line.find("No such file") == std::string::npos &&
        line.find("bad interpreter") == std::string::npos)
      continue;
    std::string token;
    std::istringstream words(line);
    while (words >> token) {
      while (!token.empty() && std::string(":;,'\"`()").find(token.back()) != std::string::npos)
        token.pop_back();
      while (!token.empty() && std::string("'\"`(").find(token.front()) != std::string::npos)
        token.erase(0, 1);
      if (token.find('/') == std::string::npos) {
        // A bare name the shell did not find (`sh: 1: pytest: not found`, `bash: pytest: command
        // not found`): the host's PATH finds it under a folder the sandbox hides (~/.local/bin,
        // a pyenv or asdf shim)?
        if (token.empty() || (line.find(token + ": not found") == std::string::npos &&
                              line.find(token + ": command not found") == std::string::npos))
          continue;
        auto found = find_program(token, env("PATH").value_or(""), root);
        if (!found || !found->is_absolute()) continue;
        Walker w{root, env, {}, {}, false};
        w.walk(*found, 0);
        for (const auto& hop : w.hops) {
          if (!hidden_in_sandbox(hop, root) || shown_by(hop, config.sandbox.read_only, root, home))
            continue;
          auto show = folder_to_show(hop, home);
          if (!show) continue;
          return "`" + token + "` is " + found->string() + " on your PATH, under " +
                 hop.string() + ", which the sandbox hides: add `" + show->string() +
                 "` to sandbox.read_only in .loopr/config.yml (`sandbox: {read_only: [" +
                 show->string() + "]}`)";
        }
        continue;
      }
      fs::path p = token;
      // A worktree's path stands for the checkout's.
      std::string s = p.string();
      if (auto at = s.find("/.loopr/worktrees/"); at != std::string::npos) {
        auto rest = s.find('/', at + 18);
        p = rest == std::string::npos ? root : root / s.substr(rest + 1);
      }
      std::error_code ec;
      fs::path abs = p.is_absolute() ? p : root / p;
      if (!fs::exists(abs, ec)) continue;
      if (!p.is_absolute() && !shown_by(abs, config.sandbox.read_only, root, home)) {
        std::string top = p.begin()->string();
        return "`" + token + "` is in your checkout but not in git, so not in the worktree: add `" +
               top + "` to sandbox.read_only in .loopr/config.yml (`sandbox: {read_only: [" + top +
               "]}`)";
      }
      Walker w{root, env, {}, {}, false};
      w.walk(abs, 0);
      for (const auto& hop : w.hops) {
        if (!hidden_in_sandbox(hop, root) || shown_by(hop, config.sandbox.read_only, root, home))
          continue;
        auto show = folder_to_show(hop, home);
        if (!show) continue;
        return "`" + token + "` exists here but goes through " + hop.string() +
               ", which the sandbox hides: add `" + show->string() +
               "` to sandbox.read_only in .loopr/config.yml (`sandbox: {read_only: [" +
               show->string() + "]}`)";
      }
    }
  }
  return std::nullopt;
}

}  // namespace loopr::project
