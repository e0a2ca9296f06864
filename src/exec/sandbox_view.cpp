// The sandbox's view as an allowlist (docs/security.md, B1): the layout is what this host has,
// read once when the executor is made; the view is the ordered list for one command. Anything
// not listed is not there: bubblewrap's root is an empty tmpfs, made read-only after the last
// mount, so the folders bubblewrap makes for a mount's parents are empty and nothing can be
// written beside them.
#include <glob.h>

#include <algorithm>

#include <spdlog/spdlog.h>

#include <loopr/core/secret_paths.hpp>
#include <loopr/core/system_folders.hpp>
#include <loopr/exec/executor.hpp>

#include "exec/bwrap_args.hpp"

namespace loopr::exec {
namespace fs = std::filesystem;

namespace {

fs::path canonical_or_empty(const fs::path& p) {
  std::error_code ec;
  auto c = fs::canonical(p, ec);
  return ec ? fs::path() : c;
}

fs::path expand_home(const std::string& p, const fs::path& home) {
  if (p == "~") return home;
  if (p.starts_with("~/")) return home / p.substr(2);
  return p;
}

std::size_t depth(const fs::path& p) {
  return static_cast<std::size_t>(std::distance(p.begin(), p.end()));
}

bool at_or_under(const fs::path& p, const fs::path& dir) {
  auto rel = p.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

// The system's folders a program needs, as they are here: a link stays a link (/bin -> usr/bin
// on a merged /usr), a folder is shown read-only. /etc's secret files are hidden (layout).
std::vector<ViewEntry> system_entries() {
  std::vector<ViewEntry> out;
  for (const auto& [dir, why] : kSystemFolders) {
    std::error_code ec;
    auto st = fs::symlink_status(dir, ec);
    if (ec || !fs::exists(st)) continue;
    if (fs::is_symlink(st)) {
      fs::path target = fs::read_symlink(dir, ec);
      if (!ec) out.push_back({target, dir, ViewKind::symlink, why});
    } else if (fs::is_directory(st)) {
      out.push_back({dir, dir, ViewKind::read_only, why});
    }
  }
  return out;
}

struct Ordered {
  ViewEntry entry;
  int rank;  ///< at the same depth: hidden places (0) before what is shown (1)
};

}  // namespace

std::string_view view_kind_name(ViewKind kind) {
  switch (kind) {
    case ViewKind::read_only:
      return "ro";
    case ViewKind::read_write:
      return "rw";
    case ViewKind::tmpfs:
      return "tmpfs";
    case ViewKind::empty_file:
      return "empty";
    case ViewKind::symlink:
      return "link";
    case ViewKind::data:
      return "copy";
    case ViewKind::devices:
      return "dev";
    case ViewKind::proc:
      return "proc";
    case ViewKind::marker:
      return "mark";
  }
  return "?";
}

namespace {

// The repository's git folders (the common one and, for a linked worktree, its own).
void add_git_dirs(SandboxLayout& layout) {
  GitDirs git = find_git_dirs(layout.repo_root);
  std::error_code ec;
  if (!git.common_dir.empty() && fs::is_directory(git.common_dir, ec)) {
    layout.git_dirs.push_back(git.common_dir);
    if (fs::is_regular_file(git.common_dir / "config", ec))
      layout.git_config = git.common_dir / "config";
  }
  if (!git.git_dir.empty() && git.git_dir != git.common_dir && fs::is_directory(git.git_dir, ec))
    layout.git_dirs.push_back(git.git_dir);
}

void add_hidden(SandboxLayout& layout, const SandboxConfig& config, const fs::path& home) {
  std::error_code ec;
  for (const auto& h : config.hide) {
    fs::path p = canonical_or_empty(expand_home(h, home));
    if (p.empty() || p == "/" || p == "/tmp") continue;
    if (fs::is_directory(p, ec))
      layout.hide_dirs.push_back(p);
    else if (fs::exists(p, ec))
      layout.hide_files.push_back(p);
  }
  // Secrets that root can read, hidden even when the daemon runs as root.
  glob_t g{};
  for (const char* pattern : {"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-",
                              "/etc/ssh/ssh_host_*_key", "/etc/ssl/private/*"}) {
    if (::glob(pattern, GLOB_NOSORT, nullptr, &g) == 0)
      for (std::size_t i = 0; i < g.gl_pathc; ++i)
        if (fs::is_regular_file(g.gl_pathv[i], ec)) layout.hide_files.emplace_back(g.gl_pathv[i]);
    ::globfree(&g);
  }
}

// One `sandbox.read_only` path outside the checkout (absolute or under ~).
void add_read_only_outside(SandboxLayout& layout, const std::string& p, const fs::path& home) {
  std::error_code ec;
  fs::path c = canonical_or_empty(expand_home(p, home));
  if (c.empty()) return;
  // The config refuses a secret location by name; a link to one is refused here.
  if (std::string why = secret_path_problem(c.string(), home); !why.empty()) {
    spdlog::warn("sandbox.read_only: {} ({}) {}: not shown", p, c.string(), why);
    return;
  }
  layout.read_only.push_back(c);
  // A secret file inside a shown toolchain folder (~/.cargo/credentials.toml) stays hidden.
  for (const auto& s : masked_home_paths()) {
    fs::path secret = home / s;
    auto rel = secret.lexically_relative(c);
    if (!rel.empty() && *rel.begin() != ".." && fs::exists(secret, ec))
      layout.extra.push_back(
          {"", secret, ViewKind::empty_file, "hidden (a secret inside a shown folder)"});
  }
}

void add_read_only(SandboxLayout& layout, const SandboxConfig& config, const fs::path& home) {
  for (const auto& p : config.read_only) {
    bool relative = !p.empty() && p[0] != '/' && p[0] != '~';
    if (!relative) {
      add_read_only_outside(layout, p, home);
      continue;
    }
    // The checkout's own path: at its place (a venv's scripts name it in their shebangs)
    // and in each worktree. Made later (`npm install` after the daemon started) is fine:
    // the mounts are `-try`.
    fs::path source = canonical_or_empty(layout.repo_root / p);
    if (source.empty()) source = (layout.repo_root / p).lexically_normal();
    layout.read_only.push_back(source);
    layout.checkout_paths.push_back({source, p});
  }
}

}  // namespace

SandboxLayout make_sandbox_layout(const SandboxConfig& config, const ExecutorOptions& options) {
  SandboxLayout layout;
  layout.system = system_entries();
  const EnvLookup& env = options.env;
  fs::path home = canonical_or_empty(env("HOME").value_or(""));
  if (home.empty() || home == "/") home = "/tmp";  // the private /tmp then doubles as home
  layout.home = home == "/tmp" ? fs::path() : home;
  layout.repo_root = canonical_or_empty(options.paths.root);
  if (layout.repo_root.empty()) layout.repo_root = options.paths.root;
  fs::path worktrees = canonical_or_empty(options.paths.worktrees_dir());
  layout.worktrees_dir = worktrees.empty() ? options.paths.worktrees_dir() : worktrees;
  add_git_dirs(layout);
  add_hidden(layout, config, home);
  add_read_only(layout, config, home);
  // The repository's build caches, read-write at their place in the private home (after the
  // read-only paths: a cache inside a shown toolchain folder is still this repository's).
  layout.caches = cache_mounts(options.paths, home);
  for (const auto& c : layout.caches)
    layout.extra.push_back({c.host, c.inside, ViewKind::read_write,
                            "this repository's build cache (" + c.env + ")", true});
  // /etc/resolv.conf often points into /run, which is not shown: keep name resolution working
  // for the runner classes that have the network.
  fs::path resolv = canonical_or_empty("/etc/resolv.conf");
  if (!resolv.empty() && !at_or_under(resolv, "/etc"))
    layout.extra.push_back(
        {resolv, resolv, ViewKind::read_only, "name resolution (resolv.conf)", true});
  layout.tmp_size = config.limits.tmp_size;
  return layout;
}

std::vector<ViewEntry> sandbox_view(const SandboxLayout& layout, const Command& command) {
  std::vector<ViewEntry> v = layout.system;
  v.push_back({"", "/dev", ViewKind::devices, "devices (null, zero, random, tty)"});
  v.push_back({"", "/proc", ViewKind::proc, "the sandbox's own processes"});
  // The names of the keys the person's user may view (Docker masks it too).
  v.push_back({"", "/proc/keys", ViewKind::empty_file, "hidden: the kernel keyring's list"});
  v.push_back({"", "/dev/shm", ViewKind::tmpfs, "private shared memory", false, layout.tmp_size});
  v.push_back({"", "/tmp", ViewKind::tmpfs, "private temporary files", false, layout.tmp_size});

  // Below: parents before children (a later mount shadows an earlier one), so a hidden place
  // inside a shown folder is hidden, and a shown path inside a hidden one is shown again.
  std::vector<Ordered> rest;
  std::vector<fs::path> shown;  // read-only sources a hidden place may sit in
  for (const auto& e : layout.system)
    if (e.kind == ViewKind::read_only) shown.push_back(e.inside);
  auto show = [&](ViewEntry e) {
    if (e.kind == ViewKind::read_only) shown.push_back(e.inside);
    rest.push_back({std::move(e), 1});
  };
  if (!layout.home.empty())
    rest.push_back(
        {{"", layout.home, ViewKind::tmpfs, "a private, empty home", false, layout.tmp_size}, 0});
  for (const auto& g : layout.git_dirs)
    show({g, g, ViewKind::read_only, "the repository's git folder (history, objects), read-only"});
  if (!layout.git_config.empty())
    show({layout.git_config, layout.git_config, ViewKind::data,
          "the git config without remotes, credentials or commands"});
  for (const auto& p : layout.read_only)
    show({p, p, ViewKind::read_only, "sandbox.read_only", true});
  for (const auto& e : layout.extra) show(e);
  for (const auto& p : command.read_only)
    show({p, p, ViewKind::read_only, "the program's own folder", true});

  // Hidden: only where a shown folder would show them (the rest is not there at all). Nothing
  // at or inside the writable worktree: it is mounted over them anyway.
  auto hidden_in_view = [&](const fs::path& p) {
    if (p.empty() || p == "/" || p == "/tmp" || at_or_under(p, command.workdir)) return false;
    return std::any_of(shown.begin(), shown.end(),
                       [&](const fs::path& s) { return p != s && at_or_under(p, s); });
  };
  std::vector<fs::path> hide_dirs = layout.hide_dirs;
  hide_dirs.push_back(layout.repo_root);
  hide_dirs.push_back(layout.worktrees_dir);
  for (const auto& d : hide_dirs)
    if (hidden_in_view(d)) rest.push_back({{"", d, ViewKind::tmpfs, "hidden", false, 1 << 20}, 0});
  for (const auto& f : layout.hide_files)
    if (hidden_in_view(f)) rest.push_back({{"", f, ViewKind::empty_file, "hidden (a secret)"}, 0});
  std::stable_sort(rest.begin(), rest.end(), [](const Ordered& x, const Ordered& y) {
    auto dx = depth(x.entry.inside), dy = depth(y.entry.inside);
    return dx != dy ? dx < dy : x.rank < y.rank;
  });
  for (auto& o : rest) v.push_back(std::move(o.entry));

  v.push_back({"", kSandboxMarker, ViewKind::marker, "marks a loopr sandbox (daemons refuse it)"});
  // The one writable place, and its `.git` file pinned: rewritten, it could point loopr's own
  // commits (made outside the sandbox) at another repository or branch.
  v.push_back({command.workdir, command.workdir, ViewKind::read_write, "the loop's worktree"});
  std::error_code ec;
  if (fs::exists(command.workdir / ".git", ec)) {
    // The checkout's dependencies (node_modules, .venv) at the same place, read-only.
    for (const auto& cp : layout.checkout_paths) {
      fs::path dest = command.workdir / cp.rel;
      if (mount_point_free(dest))
        v.push_back(
            {cp.source, dest, ViewKind::read_only, "sandbox.read_only (the checkout's)", true});
    }
    v.push_back({command.workdir / ".git", command.workdir / ".git", ViewKind::read_only,
                 "the worktree's .git file, pinned"});
  }
  for (const auto& p : command.writable)
    v.push_back({p, p, ViewKind::read_write, "the program's own state", true});
  return v;
}

std::vector<ViewEntry> describe_sandbox_view(const SandboxConfig& config,
                                             const ExecutorOptions& options,
                                             const fs::path& workdir) {
  return sandbox_view(make_sandbox_layout(config, options), Command::shell("", workdir));
}

std::string format_view(const std::vector<ViewEntry>& view) {
  std::string out;
  for (const auto& e : view) {
    std::string line = std::string(view_kind_name(e.kind));
    line.resize(6, ' ');
    line += e.inside.string();
    if (e.kind == ViewKind::symlink) line += " -> " + e.host.string();
    if (!e.host.empty() && e.host != e.inside && e.kind != ViewKind::symlink)
      line += " (from " + e.host.string() + ")";
    out += line + "  — " + e.why + "\n";
  }
  return out;
}

}  // namespace loopr::exec
