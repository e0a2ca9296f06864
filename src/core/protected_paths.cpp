// The protection rule and the tree hold as functions of path lists (protected_paths.hpp).
#include <fnmatch.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include <loopr/core/config.hpp>
#include <loopr/core/protected_paths.hpp>
#include <loopr/core/text.hpp>

namespace loopr {
namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    std::size_t at = text.find(sep);
    if (!text.substr(0, at).empty()) out.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return out;
    text.remove_prefix(at + 1);
  }
}

// Segments of `pattern` from `pi` against segments of `path` from `si` up to `end`.
bool match_segments(const std::vector<std::string_view>& pattern, std::size_t pi,
                    const std::vector<std::string_view>& path, std::size_t si, std::size_t end) {
  if (pi == pattern.size()) return si == end;
  if (pattern[pi] == "**") {
    for (std::size_t k = si; k <= end; ++k)
      if (match_segments(pattern, pi + 1, path, k, end)) return true;
    return false;
  }
  if (si == end) return false;
  if (::fnmatch(std::string(pattern[pi]).c_str(), std::string(path[si]).c_str(), 0) != 0)
    return false;
  return match_segments(pattern, pi + 1, path, si + 1, end);
}

// A glob read once: its segments, whether it names a folder (a trailing '/') and whether it is
// anchored at the root (a leading '/' or a '/' inside); an unanchored one matches at any depth.
struct Glob {
  std::vector<std::string_view> segments;
  bool folder = false;
  bool anchored = false;
};

// nullopt for a pattern that is only slashes (it matches nothing).
std::optional<Glob> parse_glob(std::string_view pattern) {
  Glob g;
  while (!pattern.empty() && pattern.back() == '/') pattern.remove_suffix(1), g.folder = true;
  g.anchored = !pattern.empty() && pattern.front() == '/';
  while (!pattern.empty() && pattern.front() == '/') pattern.remove_prefix(1);
  if (pattern.empty()) return std::nullopt;
  g.anchored = g.anchored || pattern.find('/') != std::string_view::npos;
  g.segments = split(pattern, '/');
  return g;
}

bool glob_matches(std::string_view pattern, std::string_view path) {
  std::optional<Glob> glob = parse_glob(pattern);
  if (!glob) return false;
  const bool folder = glob->folder;
  std::vector<std::string_view> pat = std::move(glob->segments);
  if (!glob->anchored) pat.insert(pat.begin(), "**");
  std::vector<std::string_view> segs = split(path, '/');
  // The path itself, or one of the folders it is in (a folder pattern: only those).
  const std::size_t last = folder ? segs.size() - (segs.empty() ? 0 : 1) : segs.size();
  for (std::size_t end = 1; end <= last; ++end)
    if (match_segments(pat, 0, segs, 0, end)) return true;
  return false;
}

bool is_test_role(Breach::Role r) { return r == Breach::Role::test; }

const char* change_word(PathChange::Kind kind) {
  switch (kind) {
    case PathChange::Kind::added: return "added";
    case PathChange::Kind::deleted: return "deleted";
    case PathChange::Kind::renamed: return "renamed away";
    case PathChange::Kind::mode_changed: return "mode changed";
    default: return "modified";
  }
}

}  // namespace

bool path_matches(std::string_view pattern, std::string_view path) {
  if (auto keyed = keyed_pattern(pattern)) {
    std::size_t hash = path.find('#');
    if (hash == std::string_view::npos || path.substr(hash + 1) != keyed->key) return false;
    return glob_matches(keyed->file, path.substr(0, hash));
  }
  return glob_matches(pattern, path);
}

bool protects(std::string_view pattern, std::string_view path) {
  if (path_matches(pattern, path)) return true;
  if (keyed_pattern(pattern) || path.empty()) return false;
  std::optional<Glob> glob = parse_glob(pattern);
  if (!glob) return false;
  const std::vector<std::string_view>& pat = glob->segments;
  std::vector<std::string_view> segs = split(path, '/');
  // The folders above what the pattern names, and a folder pattern's own path.
  const std::size_t upto = glob->folder ? pat.size() : pat.size() - 1;
  for (std::size_t k = 1; k <= upto; ++k) {
    std::vector<std::string_view> prefix(pat.begin(), pat.begin() + static_cast<long>(k));
    if (!glob->anchored) prefix.insert(prefix.begin(), "**");
    if (match_segments(prefix, 0, segs, 0, segs.size())) return true;
  }
  return false;
}

const std::string* first_protecting(const std::vector<std::string>& patterns,
                                    std::string_view path) {
  for (const auto& p : patterns)
    if (protects(p, path)) return &p;
  return nullptr;
}

const std::string* first_match(const std::vector<std::string>& patterns, std::string_view path) {
  for (const auto& p : patterns)
    if (path_matches(p, path)) return &p;
  return nullptr;
}

std::optional<KeyedPattern> keyed_pattern(std::string_view pattern) {
  std::size_t hash = pattern.find('#');
  if (hash == std::string_view::npos || hash == 0 || hash + 1 == pattern.size()) return std::nullopt;
  return KeyedPattern{std::string(pattern.substr(0, hash)), std::string(pattern.substr(hash + 1))};
}

bool json_key_differs(const std::optional<std::string>& before,
                      const std::optional<std::string>& after, std::string_view key) {
  // The value at the key, as JSON text; "" when the file or the key is missing, nullopt when the
  // file is not JSON.
  auto value_at = [key](const std::optional<std::string>& text) -> std::optional<std::string> {
    if (!text) return std::string();
    nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
    if (doc.is_discarded()) return std::nullopt;
    const nlohmann::json* at = &doc;
    for (std::string_view part : split(key, '.')) {
      if (!at->is_object()) return std::string();
      auto it = at->find(std::string(part));
      if (it == at->end()) return std::string();
      at = &*it;
    }
    return at->dump();
  };
  std::optional<std::string> a = value_at(before), b = value_at(after);
  if (!a || !b) return !(a == b && before == after);
  return *a != *b;
}

const char* to_string(PathChange::Kind kind) {
  switch (kind) {
    case PathChange::Kind::added: return "added";
    case PathChange::Kind::deleted: return "deleted";
    case PathChange::Kind::renamed: return "renamed";
    case PathChange::Kind::mode_changed: return "mode_changed";
    default: return "modified";
  }
}

std::vector<std::string> keyed_files(const std::vector<std::string>& patterns) {
  std::set<std::string> files;
  for (const auto& p : patterns)
    if (auto keyed = keyed_pattern(p)) files.insert(keyed->file);
  return {files.begin(), files.end()};
}

void add_keyed_changes(std::vector<PathChange>& changes,
                       const std::vector<std::string>& patterns) {
  std::vector<PathChange> keyed;
  for (const auto& p : patterns) {
    auto k = keyed_pattern(p);
    if (!k) continue;
    for (const PathChange& c : changes) {
      if (c.path.find('#') != std::string::npos || !glob_matches(k->file, c.path)) continue;
      if (!json_key_differs(c.before, c.after, k->key)) continue;
      PathChange record;
      record.path = c.path + "#" + k->key;
      if (std::none_of(keyed.begin(), keyed.end(),
                       [&](const PathChange& x) { return x.path == record.path; }))
        keyed.push_back(std::move(record));
    }
  }
  for (auto& k : keyed) changes.push_back(std::move(k));
}

std::vector<Breach> unowned_changes(const std::vector<PathChange>& changes,
                                    const std::vector<std::string>& harness,
                                    const std::vector<std::string>& tests,
                                    const std::vector<std::string>& phase_files) {
  auto owned = [&](const std::string& path) {
    if (first_match(phase_files, path)) return true;
    std::size_t hash = path.find('#');  // a listed file owns its keys
    return hash != std::string::npos && first_match(phase_files, path.substr(0, hash));
  };
  std::vector<Breach> out;
  auto check = [&](const std::string& path, PathChange::Kind kind, bool existed) {
    if (path.empty() || owned(path)) return;
    if (const std::string* p = first_protecting(harness, path)) {
      out.push_back({path, kind, Breach::Role::harness, *p});
    } else if (existed && path.find('#') == std::string::npos) {
      if (const std::string* t = first_protecting(tests, path))
        out.push_back({path, kind, Breach::Role::test, *t});
    }
  };
  for (const PathChange& c : changes) {
    using K = PathChange::Kind;
    if (c.kind == K::renamed) {
      check(c.old_path, K::renamed, true);
      check(c.path, K::added, false);
    } else {
      check(c.path, c.kind, c.kind != K::added);
    }
  }
  return out;
}

std::string breach_summary(const std::vector<Breach>& breaches) {
  std::string harness, tests;
  for (const Breach& b : breaches) {
    std::string& list = is_test_role(b.role) ? tests : harness;
    list += (list.empty() ? "" : ", ") + b.path;
  }
  std::string out;
  if (!harness.empty()) out = "changed the test harness: " + harness;
  if (!tests.empty()) out += (out.empty() ? "" : "; ") + std::string("changed existing tests: ") + tests;
  return out + " (not listed in its phase)";
}

std::string breach_feedback(const std::vector<Breach>& breaches) {
  std::string out =
      "Your work changes files that decide whether the tests pass, and your phase does not list "
      "them under `- Files:`. Validation did not run: restore each of these exactly as it was "
      "where your work started (`git diff` shows what you changed; `git show HEAD~N:PATH` or the "
      "diff's `-` lines have the original), then make the code pass the tests as they are:\n\n";
  for (const Breach& b : breaches) {
    std::string what = b.kind == PathChange::Kind::added ? "remove it" : "restore it";
    if (b.kind == PathChange::Kind::mode_changed) what = "restore its mode";
    out += "- `" + b.path + "` (" + change_word(b.kind) + "): " + what + "; " +
           (is_test_role(b.role)
                ? "it is an existing test (protect.tests `" + b.pattern + "`)"
                : "it is the test harness (protect.harness `" + b.pattern +
                      "`): it decides whether tests pass") +
           ".\n";
  }
  out +=
      "\nAdding new tests is fine. If an existing test is really wrong, do not change it: say why "
      "in your reply, so the person can change the phase.\n";
  return out;
}

std::vector<HeldPath> held_paths(const std::vector<std::string>& changed,
                                 const std::vector<std::string>& harness,
                                 const std::vector<std::string>& hold) {
  static const std::vector<std::string> own(std::begin(kLooprOwnPatterns),
                                            std::end(kLooprOwnPatterns));
  std::vector<HeldPath> out;
  for (const auto& path : changed) {
    if (first_protecting(own, path))
      out.push_back({path, HeldPath::Role::loopr, {}});
    else if (first_protecting(harness, path))
      out.push_back({path, HeldPath::Role::harness, {}});
    else if (first_protecting(hold, path))
      out.push_back({path, HeldPath::Role::auto_run, {}});
  }
  return out;
}

std::string describe_held(const std::vector<HeldPath>& held) {
  using R = HeldPath::Role;
  std::string out;
  for (R role : {R::refused, R::loopr, R::harness, R::hooks, R::test, R::symlink, R::auto_run}) {
    std::string list;
    for (const auto& h : held) {
      if (h.role != role) continue;
      // A name is shown on one line (a newline in it must not forge a line of output).
      list += (list.empty() ? "" : ", ") + name_text(h.path, 300);
      if (!h.detail.empty()) list += " (" + name_text(h.detail, 300) + ")";
    }
    if (list.empty()) continue;
    const char* name = role == R::refused   ? "refused, never merged"
                       : role == R::loopr   ? "loopr's own files"
                       : role == R::harness ? "the test harness (protect.harness)"
                       : role == R::hooks   ? "the repository's git hooks"
                       : role == R::test    ? "existing tests the approved plan does not name"
                       : role == R::symlink ? "symlinks"
                                            : "other tools' auto-run files (protect.hold)";
    out += (out.empty() ? "" : "; ") + std::string(name) + ": " + list;
  }
  return out;
}

namespace {

// The words of a shell command line, quotes removed, split at blanks and operators.
std::vector<std::string> command_words(std::string_view command) {
  std::vector<std::string> words;
  std::string word;
  char quote = 0;
  auto flush = [&] {
    if (!word.empty()) words.push_back(std::move(word));
    word.clear();
  };
  for (char c : command) {
    if (quote) {
      if (c == quote) quote = 0;
      else if (c == ' ' || c == '\t') flush();  // `sh -c "a b"`: the inner command's words too
      else word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (std::string_view(" \t\n;&|()<>`").find(c) != std::string_view::npos) {
      flush();
      if (c != ' ' && c != '\t') words.push_back(std::string(1, c));
    } else {
      word += c;
    }
  }
  flush();
  return words;
}

bool is_script_path(const std::string& w) {
  if (w.empty() || w.front() == '-' || w.front() == '/' || w.front() == '~' || w.back() == '/' ||
      w.find_first_of("=$*?{}") != std::string::npos || w.find("://") != std::string::npos ||
      w.find("...") != std::string::npos)
    return false;
  if (w.rfind("./", 0) == 0 && w.size() > 2) return true;
  static const char* kScripts[] = {".sh", ".bash", ".bats", ".py", ".js", ".mjs", ".cjs",
                                   ".ts",  ".pl",   ".rb",   ".mk"};
  for (const char* ext : kScripts) {
    std::string_view e(ext);
    if (w.size() > e.size() && w.compare(w.size() - e.size(), e.size(), e) == 0) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> default_harness(std::string_view validation_command) {
  std::vector<std::string> out;
  auto add = [&out](std::string p) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(std::move(p));
  };
  std::vector<std::string> words = command_words(validation_command);
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const std::string next = i + 1 < words.size() ? words[i + 1] : "";
    if (w == "make" || w == "gmake") {
      add("/Makefile");
      add("/GNUmakefile");
      add("/makefile");
    } else if (w == "npm" || w == "yarn" || w == "pnpm") {
      if (next == "test" || next == "t") add("/package.json#scripts.test");
      if (next == "run" && i + 2 < words.size() && words[i + 2].front() != '-')
        add("/package.json#scripts." + words[i + 2]);
    } else if (is_script_path(w)) {
      std::string path = w.rfind("./", 0) == 0 ? w.substr(2) : w;
      add("/" + path);
    }
  }
  for (const char* p : {"pytest.ini", "conftest.py", "jest.config.*", "vitest.config.*",
                        "/package.json#scripts.test", "/.github/workflows/", "/.gitlab-ci.yml"})
    add(p);
  return out;
}

std::vector<std::string> ProtectConfig::default_tests() {
  return {"tests/", "test/", "__tests__/", "*_test.*", "*_tests.*", "test_*.py", "*.test.*",
          "*.spec.*"};
}

std::vector<std::string> ProtectConfig::default_hold() {
  return {".claude/",       ".vscode/",         ".envrc",  ".devcontainer/",
          "/.github/workflows/", ".gitmodules", ".gitattributes", ".husky/",
          ".pre-commit-config.yaml"};
}

std::vector<std::string> harness_patterns(const Config& config) {
  if (config.protect.harness) return *config.protect.harness;
  return default_harness(config.loop(LoopType::code).validation);
}

}  // namespace loopr
