// Mount order matters: bubblewrap applies its options in order and a later mount shadows an
// earlier one. So: everything read-only, then fresh /dev /proc /tmp, then the hidden places
// (parents before children), then what must be visible again inside them (the git folders,
// the user's read-only extras), and last the one writable worktree with its `.git` file locked.
#include "exec/bwrap_args.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

namespace loopr::exec {
namespace fs = std::filesystem;

namespace {

std::size_t depth(const fs::path& p) {
  return static_cast<std::size_t>(std::distance(p.begin(), p.end()));
}

bool under(const fs::path& p, const fs::path& dir) {
  auto rel = p.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return std::string(s);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::vector<std::string> bwrap_arguments(const SandboxLayout& layout, const Command& command,
                                         bool network, int config_fd, int status_fd,
                                         int seccomp_fd) {
  std::vector<std::string> a = {
      "--unshare-all", "--unshare-user",    "--disable-userns", "--cap-drop",
      "ALL",           "--die-with-parent", "--new-session",
  };
  if (network) a.push_back("--share-net");
  if (status_fd >= 0) a.insert(a.end(), {"--json-status-fd", std::to_string(status_fd)});
  // No setuid/setgid bit can be set inside (seccomp_filter.hpp).
  if (seccomp_fd >= 0) a.insert(a.end(), {"--seccomp", std::to_string(seccomp_fd)});
  a.insert(a.end(), {"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"});
  // /dev is a tmpfs of bubblewrap's without a size (half the machine's memory), and /dev/shm a
  // folder in it: /dev read-only, and /dev/shm a private tmpfs bounded like /tmp (device nodes
  // are still written through their devices).
  a.insert(a.end(), {"--remount-ro", "/dev", "--size", std::to_string(layout.tmp_size), "--tmpfs",
                     "/dev/shm"});
  a.insert(a.end(), {"--size", std::to_string(layout.tmp_size), "--tmpfs", "/tmp"});

  // Hidden folders, parents first (a tmpfs inside a hidden parent is made in that tmpfs). Each
  // is an empty tmpfs of its own, private to this command and bounded (a tmpfs lives in memory):
  // 1 MiB, the home as much as /tmp. (Not remounted read-only: that costs a mount operation
  // each, ~1 ms in all, and protects nothing — what is written there is seen by no one.)
  std::vector<fs::path> hide = layout.hide_dirs;
  hide.push_back(layout.repo_root);
  if (!layout.worktrees_dir.empty() && !under(layout.worktrees_dir, layout.repo_root))
    hide.push_back(layout.worktrees_dir);
  if (!layout.home.empty()) hide.push_back(layout.home);
  std::sort(hide.begin(), hide.end(), [](const fs::path& x, const fs::path& y) {
    return depth(x) != depth(y) ? depth(x) < depth(y) : x < y;
  });
  hide.erase(std::unique(hide.begin(), hide.end()), hide.end());
  // Nothing at or inside the writable worktree is hidden: it is mounted over them anyway, and a
  // read-only remount of the worktree's own path would hit the worktree.
  hide.erase(std::remove_if(hide.begin(), hide.end(),
                            [&](const fs::path& d) {
                              return d.empty() || d == "/" || d == "/tmp" || d == command.workdir ||
                                     under(d, command.workdir);
                            }),
             hide.end());
  for (const auto& d : hide) {
    std::uint64_t size = d == layout.home ? layout.tmp_size : 1 << 20;
    a.insert(a.end(), {"--size", std::to_string(size), "--tmpfs", d.string()});
  }
  for (const auto& f : layout.hide_files) a.insert(a.end(), {"--ro-bind", "/dev/null", f.string()});

  // Visible again, read-only: git's folders (git works inside the worktree; nothing in them
  // can be changed), the user's extras, the program's own folder.
  for (const auto& g : layout.git_dirs) a.insert(a.end(), {"--ro-bind", g.string(), g.string()});
  if (config_fd >= 0 && !layout.git_config.empty())
    a.insert(a.end(), {"--ro-bind-data", std::to_string(config_fd), layout.git_config.string()});
  for (const auto& p : layout.read_only)
    a.insert(a.end(), {"--ro-bind-try", p.string(), p.string()});
  for (const auto& p : command.read_only)
    a.insert(a.end(), {"--ro-bind-try", p.string(), p.string()});
  for (const auto& m : layout.masks) a.insert(a.end(), {"--ro-bind", "/dev/null", m.string()});
  for (const auto& c : layout.caches)
    a.insert(a.end(), {"--bind-try", c.host.string(), c.inside.string()});

  // The one writable place, and its `.git` file pinned: rewritten, it could point loopr's own
  // commits (made outside the sandbox) at another repository or branch.
  std::string wt = command.workdir.string();
  a.insert(a.end(), {"--bind", wt, wt});
  std::error_code ec;
  // The checkout's dependencies (node_modules, .venv) at the same place in a worktree, read-only.
  if (fs::exists(command.workdir / ".git", ec))
    for (const auto& cp : layout.checkout_paths) {
      fs::path dest = command.workdir / cp.rel;
      if (mount_point_free(dest))
        a.insert(a.end(), {"--ro-bind-try", cp.source.string(), dest.string()});
    }
  if (fs::exists(command.workdir / ".git", ec)) {
    std::string dotgit = (command.workdir / ".git").string();
    a.insert(a.end(), {"--ro-bind", dotgit, dotgit});
  }
  for (const auto& p : command.writable) a.insert(a.end(), {"--bind-try", p.string(), p.string()});
  a.insert(a.end(), {"--chdir", wt, "--"});
  a.insert(a.end(), command.argv.begin(), command.argv.end());
  return a;
}

bool mount_point_free(const fs::path& dest) {
  std::error_code ec;
  auto st = fs::symlink_status(dest, ec);
  if (ec || st.type() == fs::file_type::not_found) return true;
  if (st.type() == fs::file_type::directory) return fs::is_empty(dest, ec) && !ec;
  if (st.type() == fs::file_type::regular) return fs::file_size(dest, ec) == 0 && !ec;
  return false;
}

std::string expand_env_value(std::string_view value, const std::map<std::string, std::string>& vars) {
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '$' || i + 1 == value.size()) {
      out += value[i];
      continue;
    }
    std::string name;
    std::size_t next = i + 1;
    if (value[next] == '$') {
      out += '$';
      i = next;
      continue;
    }
    if (value[next] == '{') {
      auto close = value.find('}', next);
      if (close == std::string_view::npos) {
        out += value.substr(i);
        break;
      }
      name = std::string(value.substr(next + 1, close - next - 1));
      i = close;
    } else {
      std::size_t end = next;
      while (end < value.size() && name_char(value[end])) ++end;
      if (end == next) {
        out += '$';
        continue;
      }
      name = std::string(value.substr(next, end - next));
      i = end - 1;
    }
    if (auto it = vars.find(name); it != vars.end()) out += it->second;
  }
  return out;
}

void apply_env_values(std::map<std::string, std::string>& env,
                      const std::map<std::string, std::string>& values, const fs::path& workdir) {
  if (values.empty()) return;
  std::map<std::string, std::string> vars = env;
  vars["WORKTREE"] = workdir.string();
  for (const auto& [name, value] : values) env[name] = expand_env_value(value, vars);
}

void note_checkout_mounts(const fs::path& workdir, const std::vector<std::string>& rels) {
  std::error_code ec;
  if (rels.empty() || !fs::is_regular_file(workdir / ".git", ec)) return;
  GitDirs dirs = find_git_dirs(workdir);
  if (dirs.git_dir.empty() || dirs.git_dir == dirs.common_dir) return;
  std::string text;
  for (const auto& r : rels) text += r + "\n";
  fs::path file = dirs.git_dir / kWorktreeMountsFile;
  {
    std::ifstream in(file, std::ios::binary);
    std::string have((std::istreambuf_iterator<char>(in)), {});
    if (have == text) return;
  }
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string sanitize_git_config(std::string_view text) {
  static const std::set<std::string> kCoreKeys = {"repositoryformatversion",
                                                  "filemode",
                                                  "bare",
                                                  "logallrefupdates",
                                                  "ignorecase",
                                                  "precomposeunicode",
                                                  "symlinks",
                                                  "autocrlf",
                                                  "eol",
                                                  "safecrlf",
                                                  "quotepath",
                                                  "abbrev",
                                                  "bigfilethreshold"};
  std::istringstream in{std::string(text)};
  std::string section, out;
  std::map<std::string, std::vector<std::string>> kept;
  std::vector<std::string> order;
  bool continued = false;
  for (std::string raw; std::getline(in, raw);) {
    bool drop_continuation = continued;
    continued = !raw.empty() && raw.back() == '\\';
    if (drop_continuation) continue;
    std::string line = trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      auto close = line.find(']');
      std::string head = close == std::string::npos ? line.substr(1) : line.substr(1, close - 1);
      auto space = head.find_first_of(" \t.");
      // A subsection (`[remote "origin"]`, `[core.x]`) is never one we keep.
      section = space == std::string::npos ? lower(trim(head)) : "(sub)";
      std::string rest = close == std::string::npos ? "" : trim(line.substr(close + 1));
      if (rest.empty() || rest[0] == '#' || rest[0] == ';') continue;
      line = rest;  // `[core] bare = false` on one line
    }
    auto eq = line.find('=');
    std::string key = lower(trim(line.substr(0, eq)));
    bool keep = (section == "core" && kCoreKeys.count(key)) || section == "extensions";
    if (!keep || continued) continue;
    std::string value = eq == std::string::npos ? "true" : trim(line.substr(eq + 1));
    if (!kept.count(section)) order.push_back(section);
    kept[section].push_back("\t" + key + " = " + value);
  }
  for (const auto& s : order) {
    out += "[" + s + "]\n";
    for (const auto& l : kept[s]) out += l + "\n";
  }
  return out;
}

GitDirs find_git_dirs(const fs::path& work_tree) {
  GitDirs d;
  fs::path dotgit = work_tree / ".git";
  std::error_code ec;
  if (fs::is_regular_file(dotgit, ec)) {
    std::ifstream f(dotgit);
    std::string line;
    std::getline(f, line);
    if (line.rfind("gitdir:", 0) == 0) {
      fs::path p = trim(line.substr(7));
      d.git_dir = p.is_absolute() ? p : (work_tree / p).lexically_normal();
    }
  } else {
    d.git_dir = dotgit;
  }
  d.common_dir = d.git_dir;
  std::ifstream common(d.git_dir / "commondir");
  std::string rel;
  if (common && std::getline(common, rel) && !trim(rel).empty()) {
    fs::path p = trim(rel);
    d.common_dir = p.is_absolute() ? p : (d.git_dir / p).lexically_normal();
  }
  auto canon = [](fs::path& p) {
    std::error_code e;
    auto c = fs::canonical(p, e);
    if (!e) p = c;
  };
  canon(d.git_dir);
  canon(d.common_dir);
  return d;
}

}  // namespace loopr::exec
