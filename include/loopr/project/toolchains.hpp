// Toolchains found, not guessed (issue 41): what a test command runs, followed to where it really
// lives — the program on the PATH, each symlink hop, a virtualenv's `pyvenv.cfg` `home`, a version
// manager's shim (pyenv, rbenv, nodenv, asdf, mise), a script's `#!` interpreter, and for `make
// TARGET` the commands `make -n TARGET` prints — and the folders of those places that the sandbox
// hides (a home, /opt, …) as `sandbox.read_only` entries, each with why. Never a whole home, never
// a secret location (secret_paths.hpp).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>

namespace loopr::project {

/// One folder the test command needs that the sandbox hides.
struct ToolchainPath {
  std::string path;  ///< absolute: the `sandbox.read_only` entry
  std::string why;   ///< `.venv/bin/python → /home/u/.pyenv/versions/3.11.7/bin/python3.11`
};

/// Whether `p` (absolute) is hidden in the sandbox of the repository at `root`: outside the
/// system's folders (/usr, /bin, /sbin, /lib*, /etc) and outside the checkout (whose own paths
/// are relative `sandbox.read_only` entries).
bool hidden_in_sandbox(const std::filesystem::path& p, const std::filesystem::path& root);

/// The hidden folders `command` (a shell command line run in `root`) needs, outermost only, in
/// the order found. `env` gives PATH and HOME.
std::vector<ToolchainPath> resolve_toolchains(const std::filesystem::path& root,
                                              const std::string& command, const EnvLookup& env);

/// Every place `program` (a name on PATH, or a path relative to `root`) passes through on its way
/// to the file that runs: each symlink hop, a shim's target, a venv's interpreter, a script's
/// interpreter. Absolute, in order. Empty when it is not found.
std::vector<std::filesystem::path> program_hops(const std::string& program,
                                                const std::filesystem::path& root,
                                                const EnvLookup& env);

/// For a failed test command's output: the first path it could not find (`sh: 1:
/// .venv/bin/python: not found`, `No such file or directory`) that exists on this machine but
/// passes through a folder the sandbox hides and `config` does not show; the sentence saying
/// which, and the `sandbox.read_only` line that shows it. nullopt when there is none.
std::optional<std::string> explain_hidden_path(const std::string& output,
                                               const std::filesystem::path& root,
                                               const Config& config, const EnvLookup& env);

}  // namespace loopr::project
