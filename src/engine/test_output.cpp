// The rules are ordered: the run's folders and temporary paths go first (a path may hold digits
// that look like a duration), timestamps before bare clock times, pids and addresses before
// durations, and the layout (separator runs, spaces) last, since the replacements above change
// the widths that runners pad to (pytest centres its summary line in `=`, ctest pads with dots).
#include <re2/re2.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include <loopr/core/stable_hash.hpp>
#include <loopr/engine/test_output.hpp>

namespace loopr::engine {
namespace {

struct Rule {
  std::unique_ptr<re2::RE2> re;
  std::string rewrite;
};

Rule rule(const char* pattern, const char* rewrite) {
  return Rule{std::make_unique<re2::RE2>(pattern), rewrite};
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> all = [] {
    std::vector<Rule> r;
    // Colours and cursor movement.
    r.push_back(rule(R"(\x1b\[[0-9;?]*[ -/]*[@-~])", ""));
    r.push_back(rule(R"(\x1b\][^\x07\x1b]*(?:\x07|\x1b\\))", ""));
    // Any loop's worktree (the baseline's, a code loop's, a fix loop's).
    r.push_back(rule(R"([^\s'"():]*/\.loopr/worktrees/[^/\s'"():]+)", "<WT>"));
    r.push_back(rule(R"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)",
                     "<TS>"));
    // Temporary paths (mkdtemp, pytest's tmp_path, t.TempDir()); a `:line` after one is kept.
    r.push_back(rule(R"((?m)(^|[^\w./-])(?:/private)?(?:/var)?/tmp/[^\s'"(),;:\]]*)", "\\1<TMP>"));
    r.push_back(rule(R"(0x[0-9a-fA-F]{4,})", "0x<ADDR>"));
    r.push_back(rule(R"(-[0-9a-f]{16}\b)", "-<HASH>"));
    r.push_back(rule(R"((?i)\b(pid|tid)\b([ =:#]*)\d+)", "\\1\\2<PID>"));
    r.push_back(rule(R"(\b([Pp]rocess) \d{3,})", "\\1 <PID>"));
    r.push_back(rule(R"((thread '[^'\n]*') \(\d+\))", "\\1 (<PID>)"));
    r.push_back(rule(R"(\bgoroutine \d+)", "goroutine <PID>"));
    // Durations: clock times, compound ones, then a number with a unit.
    r.push_back(rule(R"(\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b)", "<T>"));
    r.push_back(rule(R"(\b\d+h\d+m(?:\d+(?:\.\d+)?s)?\b)", "<T>"));
    r.push_back(rule(R"(\b\d+m\d+(?:\.\d+)?s\b)", "<T>"));
    r.push_back(
        rule(R"(\b\d+(?:\.\d+)?[ \t]?(?:ns|µs|μs|us|ms|s|sec|secs|seconds?|min|mins|minutes?)\b)",
             "<T>"));
    r.push_back(rule(R"(\(cached\))", "<T>"));  // go test: `ok  pkg  (cached)` or `0.005s`
    // A duration that only some runs print (mocha's slow tests, jest's estimate) goes entirely.
    r.push_back(rule(R"(,? estimated <T>)", ""));
    r.push_back(rule(R"([ \t]*\(<T>\))", ""));
    // cargo's progress lines (right-aligned verbs): a build that was cached prints fewer.
    r.push_back(rule(
        R"((?m)^ {1,12}(?:Compiling|Finished|Fresh|Blocking|Downloaded|Downloading|Updating|Locking)[ \t][^\n]*\n?)",
        ""));
    for (const char* sep : {R"(={4,})", R"(-{4,})", R"(_{4,})", R"(\.{4,})", R"(\*{4,})",
                            R"(#{4,})", R"(~{4,})", R"(!{4,})", R"(\+{4,})"}) {
      std::string three(3, sep[0] == '\\' ? sep[1] : sep[0]);
      r.push_back(Rule{std::make_unique<re2::RE2>(sep), three});
    }
    r.push_back(rule(R"([ \t]+)", " "));
    r.push_back(rule(R"((?m) +$)", ""));
    r.push_back(rule(R"(\n{3,})", "\n\n"));
    return r;
  }();
  return all;
}

// `\r` redraws a line (progress bars): only what was written after the last one stays.
std::string drop_overwritten(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (auto cr = line.rfind('\r'); cr != std::string_view::npos) line.remove_prefix(cr + 1);
    out.append(line);
    if (nl == std::string_view::npos) break;
    out.push_back('\n');
    pos = nl + 1;
  }
  return out;
}

void replace_all(std::string& text, const std::string& what, const std::string& with) {
  if (what.empty()) return;
  for (std::size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + with.size()))
    text.replace(at, what.size(), with);
}

}  // namespace

std::string normalize_test_output(std::string_view output, const NormalizeOptions& options) {
  std::string text = drop_overwritten(output);
  // Longest first: a worktree inside another named folder is replaced whole.
  std::vector<std::string> dirs;
  for (const auto& d : options.workdirs) {
    std::string dir = d;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (dir.size() > 1) dirs.push_back(dir);
  }
  std::sort(dirs.begin(), dirs.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const auto& d : dirs) replace_all(text, d, "<WT>");
  for (const Rule& r : rules()) re2::RE2::GlobalReplace(&text, *r.re, r.rewrite);
  auto first = text.find_first_not_of('\n');
  if (first == std::string::npos) return {};
  auto last = text.find_last_not_of('\n');
  return text.substr(first, last - first + 1) + "\n";
}

std::string output_fingerprint(std::string_view output, const NormalizeOptions& options) {
  std::string normalized = normalize_test_output(output, options);
  return stable_hash_hex(stable_hash(normalized));
}

}  // namespace loopr::engine
