// The bubblewrap command line, made from the sandbox's view (sandbox_view.cpp has the order:
// bubblewrap applies its options in order and a later mount shadows an earlier one).
#include "exec/bwrap_args.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

namespace loopr::exec {
namespace fs = std::filesystem;

namespace {

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
  // No setuid/setgid bit can be set inside, no keyring reached (seccomp_filter.hpp).
  if (seccomp_fd >= 0) a.insert(a.end(), {"--seccomp", std::to_string(seccomp_fd)});
  for (const ViewEntry& e : sandbox_view(layout, command)) {
    const std::string host = e.host.string(), inside = e.inside.string();
    switch (e.kind) {
      case ViewKind::read_only:
        a.insert(a.end(), {e.optional ? "--ro-bind-try" : "--ro-bind", host, inside});
        break;
      case ViewKind::read_write:
        a.insert(a.end(), {e.optional ? "--bind-try" : "--bind", host, inside});
        break;
      case ViewKind::tmpfs:
        // Each hidden place is an empty tmpfs of its own, private and bounded (a tmpfs lives
        // in memory). Not remounted read-only: that costs a mount operation each and protects
        // nothing — what is written there is seen by no one.
        a.insert(a.end(), {"--size", std::to_string(e.size), "--tmpfs", inside});
        break;
      case ViewKind::empty_file: a.insert(a.end(), {"--ro-bind", "/dev/null", inside}); break;
      case ViewKind::symlink: a.insert(a.end(), {"--symlink", host, inside}); break;
      case ViewKind::data:
        if (config_fd >= 0)
          a.insert(a.end(), {"--ro-bind-data", std::to_string(config_fd), inside});
        break;
      case ViewKind::devices:
        // bubblewrap's /dev is a tmpfs without a size (half the machine's memory): read-only
        // (device nodes are still written through their devices); /dev/shm follows as a
        // bounded tmpfs.
        a.insert(a.end(), {"--dev", inside, "--remount-ro", inside});
        break;
      case ViewKind::proc: a.insert(a.end(), {"--proc", inside}); break;
      case ViewKind::marker: a.insert(a.end(), {"--dir", inside}); break;
    }
  }
  // The root (bubblewrap's tmpfs, holding only the folders the mounts needed) read-only: the
  // marker stays, and nothing unbounded can be written beside the shown folders.
  a.insert(a.end(), {"--remount-ro", "/"});
  a.insert(a.end(), {"--chdir", command.workdir.string(), "--"});
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
