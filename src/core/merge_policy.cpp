// The merge policy (core/merge_policy.hpp): one verdict per changed path of a committed diff.
#include <algorithm>
#include <set>

#include <loopr/core/config.hpp>
#include <loopr/core/merge_policy.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/core/text.hpp>
#include <loopr/core/utf8.hpp>

namespace loopr {
namespace {

constexpr std::uint32_t kLinkMode = 0120000;
constexpr std::uint32_t kGitlinkMode = 0160000;

// `.loopr/state/` → `.loopr/state`; `/x/` → `x`.
std::string_view bare(std::string_view line) {
  while (!line.empty() && (line.back() == '/' || line.back() == ' ' || line.back() == '\r'))
    line.remove_suffix(1);
  while (!line.empty() && line.front() == '/') line.remove_prefix(1);
  return line;
}

// The lines of a .gitignore, bare; a negation keeps its `!`.
std::set<std::string> ignore_lines(const std::optional<std::string>& text) {
  std::set<std::string> out;
  if (!text) return out;
  std::size_t pos = 0;
  while (pos <= text->size()) {
    std::size_t nl = text->find('\n', pos);
    std::string_view line = std::string_view(*text).substr(pos, nl - pos);
    const bool negated = !line.empty() && line.front() == '!';
    out.insert((negated ? "!" : "") + std::string(bare(line.substr(negated ? 1 : 0))));
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

// The root .gitignore no longer keeps out a folder of loopr's it kept out (or now lets it in).
bool drops_loopr_lines(const PathChange& c) {
  const bool gone = c.kind == PathChange::Kind::deleted;
  std::set<std::string> before = ignore_lines(c.before);
  std::set<std::string> after = ignore_lines(gone ? std::nullopt : c.after);
  for (const char* dir : kIgnoredDirs) {
    std::string d(bare(dir));
    if (before.count(d) && !after.count(d)) return true;
    if (after.count("!" + d)) return true;
  }
  return false;
}

std::string mib(std::uint64_t bytes) { return format_size(bytes); }

bool has_new_side(const PathChange& c) {
  return c.kind != PathChange::Kind::deleted && c.new_mode != 0;
}

struct Checker {
  const MergeRules& rules;
  std::vector<std::string> own =
      std::vector<std::string>(std::begin(kLooprOwnPatterns), std::end(kLooprOwnPatterns));
  std::vector<std::string> hooks = {"/.githooks/", "/.husky/"};

  explicit Checker(const MergeRules& r) : rules(r) {
    if (!r.hooks_path.empty()) hooks.push_back("/" + std::string(bare(r.hooks_path)) + "/");
  }

  // The refusal of one entry (its new side), or nullopt.
  std::optional<HeldPath> refusal(const PathChange& c) const {
    using R = HeldPath::Role;
    for (const std::string* p : {&c.path, &c.old_path})
      if (std::string why = bad_name(*p); !p->empty() && !why.empty())
        return HeldPath{*p, R::refused, why};
    if (!has_new_side(c)) return std::nullopt;
    if (c.new_mode == kLinkMode) {
      std::string to = link_destination(c.path, c.link_target);
      if (to.empty())
        return HeldPath{c.path, R::refused,
                        "a symlink to " + c.link_target + ", outside the repository"};
      if (to == ".git" || to.rfind(".git/", 0) == 0)
        return HeldPath{c.path, R::refused, "a symlink into .git"};
    }
    if (c.new_mode != kGitlinkMode && c.new_size > rules.max_file_size)
      return HeldPath{c.path, R::refused,
                      mib(c.new_size) + ", past protect.max_file_size " + mib(rules.max_file_size)};
    return std::nullopt;
  }

  // Why a person looks at this entry first, or nullopt.
  std::optional<HeldPath> hold(const PathChange& c) const {
    using R = HeldPath::Role;
    using K = PathChange::Kind;
    auto any = [&](const std::vector<std::string>& patterns) {
      return first_protecting(patterns, c.path) ||
             (!c.old_path.empty() && first_protecting(patterns, c.old_path));
    };
    if (any(own) || (c.path == ".gitignore" && drops_loopr_lines(c)))
      return HeldPath{c.path, R::loopr, {}};
    if (any(rules.harness)) return HeldPath{c.path, R::harness, {}};
    if (any(hooks)) return HeldPath{c.path, R::hooks, {}};
    if (any(rules.hold)) return HeldPath{c.path, R::auto_run, {}};
    if (has_new_side(c) && c.new_mode == kLinkMode) return HeldPath{c.path, R::symlink, {}};
    // An existing test modified, deleted, renamed away or its mode changed: only the approved
    // plan (the person's word) may name it.
    const std::string& was = c.kind == K::renamed ? c.old_path : c.path;
    if (c.kind != K::added && c.path.find('#') == std::string::npos &&
        first_protecting(rules.tests, was) && rules.approved_plan.find(was) == std::string::npos)
      return HeldPath{was, R::test, {}};
    return std::nullopt;
  }
};

}  // namespace

std::string bad_name(std::string_view path) {
  if (!is_valid_utf8(path)) return "its name is not UTF-8";
  for (std::size_t i = 0; i < path.size();) {
    const Utf8Step step = utf8_step(path, i);
    // C0, DEL, C1, and the bidirectional overrides and isolates: a name that reads otherwise in
    // the person's `ls` and editor than it is ("report\u202Efdp.sh" shows as "reporths.pdf").
    if (step.cp < 0x20 || step.cp == 0x7F || is_hidden_control(step.cp))
      return "its name has a control character";
    i += step.len;
  }
  return {};
}

std::string link_destination(std::string_view path, std::string_view target) {
  if (target.empty() || target.front() == '/') return {};
  std::vector<std::string> parts;
  auto push = [&](std::string_view text) -> bool {
    std::size_t pos = 0;
    while (pos <= text.size()) {
      std::size_t at = text.find('/', pos);
      std::string_view seg = text.substr(pos, at - pos);
      if (seg == "..") {
        if (parts.empty()) return false;
        parts.pop_back();
      } else if (!seg.empty() && seg != ".") {
        parts.emplace_back(seg);
      }
      if (at == std::string_view::npos) break;
      pos = at + 1;
    }
    return true;
  };
  std::size_t slash = path.rfind('/');
  if (slash != std::string_view::npos && !push(path.substr(0, slash))) return {};
  if (!push(target)) return {};
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out.empty() ? "." : out;
}

std::vector<HeldPath> merge_policy(const std::vector<PathChange>& changes,
                                   const MergeRules& rules) {
  Checker check(rules);
  std::vector<HeldPath> out;
  std::uint64_t total = 0;
  for (const PathChange& c : changes) {
    if (c.path.find('#') == std::string::npos && has_new_side(c) && c.new_mode != kGitlinkMode)
      total += c.new_size;
    if (auto refused = check.refusal(c)) {
      out.push_back(std::move(*refused));
    } else if (rules.tree) {
      if (auto held = check.hold(c)) out.push_back(std::move(*held));
    }
  }
  if (total > rules.max_tree_size)
    out.push_back({"(all files)", HeldPath::Role::refused,
                   mib(total) + " of added or changed files, past protect.max_tree_size " +
                       mib(rules.max_tree_size)});
  // One entry per path (a `file#key` record and its file, a rename's two sides).
  std::vector<HeldPath> unique;
  for (auto& h : out)
    if (std::none_of(unique.begin(), unique.end(),
                     [&](const HeldPath& u) { return u.path == h.path; }))
      unique.push_back(std::move(h));
  return unique;
}

MergeRules merge_rules(const Config& config) {
  MergeRules r;
  r.harness = harness_patterns(config);
  r.hold = config.protect.hold;
  r.tests = config.protect.tests;
  r.max_file_size = config.protect.max_file_size;
  r.max_tree_size = config.protect.max_tree_size;
  return r;
}

bool any_refused(const std::vector<HeldPath>& held) {
  return std::any_of(held.begin(), held.end(),
                     [](const HeldPath& h) { return h.role == HeldPath::Role::refused; });
}

}  // namespace loopr
