// What a loop may not change on its own (docs/confinement.md "Security model", "How a loop decides"): the
// test harness and existing tests (a code loop changes them only where its phase lists them
// under `- Files:`), and the files a tree may not bring into the base branch without the person
// (loopr's own settings and prompts, the harness, other tools' auto-run files). Pure functions
// over path lists; the engine and the manager read the changes from git and act on the result.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopr {

struct Config;

// ---------------------------------------------------------------- patterns

/// Whether `path` (relative to the repository root, `/`-separated) matches `pattern`, a subset
/// of .gitignore's syntax: `*` and `?` within one path segment (and `[...]`), `**` across
/// segments. A pattern with no `/` (other than a trailing one) matches at any depth
/// (`conftest.py`, `jest.config.*`); one with a `/` is anchored at the root (`tests/run.sh`,
/// `/Makefile`). A trailing `/` means a folder: everything under it (`.vscode/`). A pattern
/// also matches everything under a folder it matches (`.devcontainer` covers its files).
/// `file#key` patterns name a key of a JSON file (see `keyed_pattern`) and match only the
/// change records `add_keyed_changes` makes (`package.json#scripts.test`).
bool path_matches(std::string_view pattern, std::string_view path);

/// What a protecting pattern covers: `path_matches`, and also the folders above what it names
/// (`.claude` for `.claude/`, `.loopr` for `/.loopr/config.yml`), whatever the entry there is:
/// a symlink or a file put where a protected folder was redirects everything below it.
bool protects(std::string_view pattern, std::string_view path);
/// The first of `patterns` that `protects` `path`; nullptr when none does.
const std::string* first_protecting(const std::vector<std::string>& patterns,
                                    std::string_view path);

/// The first of `patterns` that matches `path`; nullptr when none does.
const std::string* first_match(const std::vector<std::string>& patterns, std::string_view path);

/// `file#a.b.c`: the value at key `a.b.c` of the JSON file `file`. nullopt for a plain pattern.
struct KeyedPattern {
  std::string file;
  std::string key;
};
std::optional<KeyedPattern> keyed_pattern(std::string_view pattern);

/// Whether the JSON value at the dotted `key` differs between two texts of a file. A missing
/// text (the file is added or deleted), a missing key and text that is not JSON are values
/// too: two unparsable texts differ when the texts do.
bool json_key_differs(const std::optional<std::string>& before,
                      const std::optional<std::string>& after, std::string_view key);

// ---------------------------------------------------------------- a loop's changes

/// One path a loop's work changed against where it started, as git sees it.
struct PathChange {
  enum class Kind { added, modified, deleted, renamed, mode_changed };
  Kind kind = Kind::modified;
  std::string path;      ///< the path now (for `deleted`: the path that was)
  std::string old_path;  ///< `renamed`: where it was; else empty
  /// The file's content before and after (nullopt: no file there), only for the files a
  /// `file#key` pattern names, so `add_keyed_changes` can compare the key.
  std::optional<std::string> before, after;
  /// Read from git objects (a committed diff, `Repository::path_changes_since_fork`), for the
  /// merge policy (core/merge_policy.hpp): the git modes (0: no entry on that side), the new
  /// blob's apparent size (what a checkout writes), and a new symlink's target.
  std::uint32_t old_mode = 0, new_mode = 0;
  std::uint64_t new_size = 0;
  std::string link_target;

  bool operator==(const PathChange&) const = default;
};
const char* to_string(PathChange::Kind kind);

/// The files whose content `add_keyed_changes` needs: the file parts of the `file#key`
/// patterns (patterns themselves: `path_matches` a changed path against them).
std::vector<std::string> keyed_files(const std::vector<std::string>& patterns);

/// For every `file#key` pattern whose file changed and whose key's value differs, a change
/// record `file#key` (kind `modified`) is appended, so the key is protected like a file.
void add_keyed_changes(std::vector<PathChange>& changes,
                       const std::vector<std::string>& patterns);

/// A change to a protected path that the loop's phase does not list.
struct Breach {
  enum class Role { harness, test };
  std::string path;
  PathChange::Kind kind = PathChange::Kind::modified;
  Role role = Role::harness;
  std::string pattern;  ///< the protect.harness / protect.tests pattern it matched

  bool operator==(const Breach&) const = default;
};

/// The protection rule. A change breaches it when it touches a `harness` path (added, modified,
/// deleted, renamed from or to, mode changed) or an EXISTING `tests` path (modified, deleted,
/// renamed from, mode changed; adding a new test is free), unless a `phase_files` entry (the
/// phase artifact's `- Files:` items, read as patterns; `package.json` also owns its keys)
/// matches it. A rename is the deletion of its old path plus the addition of its new one.
std::vector<Breach> unowned_changes(const std::vector<PathChange>& changes,
                                    const std::vector<std::string>& harness,
                                    const std::vector<std::string>& tests,
                                    const std::vector<std::string>& phase_files);

/// One line for the iteration's summary (`changed the test harness: tests/run.sh`).
std::string breach_summary(const std::vector<Breach>& breaches);
/// The feedback the model gets next iteration: each file, what to do, and why.
std::string breach_feedback(const std::vector<Breach>& breaches);

// ---------------------------------------------------------------- a tree held for the person

/// loopr's own files: a tree that changes them is always held (not configurable).
inline constexpr const char* kLooprOwnPatterns[] = {"/.loopr/config.yml", "/.loopr/prompts/"};

/// A path a tree changes that keeps it from being merged into the base branch automatically.
struct HeldPath {
  /// `refused`: never merged, not even by `loopr merge` (core/merge_policy.hpp); the others
  /// wait for the person.
  enum class Role { loopr, harness, auto_run, hooks, symlink, test, refused };
  std::string path;
  Role role = Role::loopr;
  std::string detail = {};  ///< `refused`: why (`a symlink to /home/me/.ssh/id_rsa`)

  bool operator==(const HeldPath&) const = default;
};

/// Which of `changed` (every path a tree's diff touches, keyed records included) are held:
/// loopr's own files, then `harness`, then `hold` (protect.hold: other tools' auto-run files).
std::vector<HeldPath> held_paths(const std::vector<std::string>& changed,
                                 const std::vector<std::string>& harness,
                                 const std::vector<std::string>& hold);

/// `loopr's own files: .loopr/config.yml; the test harness: tests/run.sh; …` for the plan's
/// reason and `show`.
std::string describe_held(const std::vector<HeldPath>& held);

// ---------------------------------------------------------------- defaults

/// The harness `loopr init` infers from the test command (and the default when
/// `protect.harness` is absent): the scripts the command runs (`sh tests/run.sh`, `./check`,
/// `python3 t.py`), the Makefile for `make`, `package.json#scripts.<name>` for `npm test` /
/// `npm run <name>` (yarn, pnpm), then test runner configs (`pytest.ini`, `conftest.py`,
/// `jest.config.*`, `vitest.config.*`, `package.json#scripts.test`) and CI workflows.
std::vector<std::string> default_harness(std::string_view validation_command);

/// The effective harness of a config: `protect.harness` when set, else the inferred default.
std::vector<std::string> harness_patterns(const Config& config);

}  // namespace loopr
