// The bubblewrap command line for one command: what is visible, writable and hidden. A pure
// function of the layout, so the mount order (later mounts shadow earlier ones) is unit-tested.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <loopr/exec/build_caches.hpp>
#include <loopr/exec/executor.hpp>
#include <loopr/exec/sandbox_view.hpp>

namespace loopr::exec {

/// A path of the user's checkout (`sandbox.read_only: [node_modules]`) shown read-only at the
/// same relative place in each worktree.
struct CheckoutPath {
  std::filesystem::path source;  ///< `<checkout>/<rel>`
  std::string rel;
};

/// What the host has, from which each command's view (sandbox_view) is made.
struct SandboxLayout {
  /// The system's read-only folders that exist here (/usr, /bin -> usr/bin, /lib*, /etc, …).
  std::vector<ViewEntry> system;
  std::filesystem::path repo_root;               ///< never shown (hidden if under a shown path)
  std::filesystem::path worktrees_dir;           ///< never shown but the command's own worktree
  std::vector<std::filesystem::path> git_dirs;   ///< read-only again (objects, refs, admin folders)
  std::filesystem::path git_config;              ///< replaced by a copy without credentials
  std::filesystem::path home;                    ///< an empty writable home
  std::vector<std::filesystem::path> hide_dirs;  ///< an empty tmpfs over each (if shown at all)
  std::vector<std::filesystem::path> hide_files;  ///< an empty file over each (if shown at all)
  std::vector<std::filesystem::path> read_only;   ///< `sandbox.read_only` and provisioning's
  /// More read-only entries with their reason (toolchains, build caches): shown like
  /// `read_only`, parents before children.
  std::vector<ViewEntry> extra;
  /// The repository's build caches (their mounts are in `extra`; the environment names them).
  std::vector<CacheMount> caches;
  /// Shown again at `<workdir>/<rel>` when the command runs in a git worktree whose own path
  /// there is free (missing, or an empty folder or file: a mount point made before).
  std::vector<CheckoutPath> checkout_paths;
  std::uint64_t tmp_size = 1ULL << 30;  ///< each of /tmp, /dev/shm and the home
};

/// The layout of a daemon of `options.paths` with `config` on this host.
SandboxLayout make_sandbox_layout(const SandboxConfig& config, const ExecutorOptions& options);

/// The command's view: the system's folders, /dev, /proc, a private /tmp, /dev/shm and home,
/// the repository's `.git` (read-only, its config sanitised), `read_only` and `extra`, the
/// hidden places inside what is shown, the marker, the worktree (writable) with its `.git` file
/// pinned, and the command's own extras. Nothing else.
std::vector<ViewEntry> sandbox_view(const SandboxLayout& layout, const Command& command);

/// Arguments after `bwrap` (up to and including `--`, then the command's argv). `config_fd`
/// (the sanitised git config, or -1), `status_fd` and `seccomp_fd` (the filter of
/// seccomp_filter.hpp, or -1) are descriptor numbers in bwrap.
std::vector<std::string> bwrap_arguments(const SandboxLayout& layout, const Command& command,
                                         bool network, int config_fd, int status_fd,
                                         int seccomp_fd = -1);

/// Whether `<workdir>/<rel>` can take a checkout path's mount: nothing there, or an empty folder
/// or file (what an earlier mount left). A worktree that has its own (tracked) copy keeps it.
bool mount_point_free(const std::filesystem::path& dest);

/// `value` with `$NAME` / `${NAME}` replaced from `vars` (unknown: empty) and `$$` as `$`: the
/// values of `sandbox.env` entries written `NAME=value` (`$WORKTREE` is the command's folder).
std::string expand_env_value(std::string_view value, const std::map<std::string, std::string>& vars);

/// `env` with `values` set on top, each expanded against `env` and `WORKTREE` = `workdir`.
void apply_env_values(std::map<std::string, std::string>& env,
                      const std::map<std::string, std::string>& values,
                      const std::filesystem::path& workdir);

/// Writes `<git dir of workdir>/loopr-mounts` (kWorktreeMountsFile) listing `rels`, when `workdir`
/// is a linked git worktree and the file does not say so already: git never commits them there.
void note_checkout_mounts(const std::filesystem::path& workdir, const std::vector<std::string>& rels);

/// A repository's git config with only what git needs to read the repository (`[core]` format
/// keys and `[extensions]`): no remote URLs (they may carry tokens), credentials, includes or
/// commands.
std::string sanitize_git_config(std::string_view text);

/// The git dir of a work tree (`.git`, or where a `.git` file points) and its common dir.
struct GitDirs {
  std::filesystem::path git_dir, common_dir;
};
GitDirs find_git_dirs(const std::filesystem::path& work_tree);

}  // namespace loopr::exec
