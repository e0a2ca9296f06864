// A loop's diff as a reviewer reads it (pages.hpp `diff_html`): one row per line of the
// unified diff with the line numbers of both sides, one folding section per file, the changed
// words of a changed line marked, and the person's comments under the lines they are on.
// Everything from the diff (names, lines) is model-written: it goes through `esc` only.
#include <algorithm>

#include <loopr/core/loop.hpp>

#include "web/html.hpp"
#include "web/pages.hpp"

namespace loopr::web {

namespace {

enum class Kind { ctx, add, del, hunk, note };

struct Row {
  Kind kind = Kind::ctx;
  int old_no = 0, new_no = 0;  ///< 0: none on that side
  std::string text;            ///< without the +/-/space sign
  std::size_t hl_begin = std::string::npos, hl_end = std::string::npos;  ///< changed words
};

struct FileDiff {
  std::string path;               ///< the new side's name (the old side's for a deletion)
  std::vector<std::string> meta;  ///< header lines worth showing (new file mode …)
  std::vector<Row> rows;
  int adds = 0, dels = 0;
};

/// A name as git writes it: `"b/na\nme"` (C-quoted when it holds odd bytes) or `b/name`.
std::string unquote_path(std::string_view s) {
  std::string out;
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') {
    s = s.substr(1, s.size() - 2);
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '\\' || i + 1 == s.size()) {
        out.push_back(s[i]);
        continue;
      }
      char e = s[++i];
      if (e >= '0' && e <= '7' && i + 2 < s.size()) {
        out.push_back(
            static_cast<char>(((e - '0') << 6) | ((s[i + 1] - '0') << 3) | (s[i + 2] - '0')));
        i += 2;
        continue;
      }
      static const std::string_view from = "ntrabfv", to = "\n\t\r\a\b\f\v";
      auto k = from.find(e);
      out.push_back(k == std::string_view::npos ? e : to[k]);
    }
  } else {
    out = std::string(s);
  }
  if (out.rfind("a/", 0) == 0 || out.rfind("b/", 0) == 0) out.erase(0, 2);
  return out;
}

/// `@@ -a,b +c,d @@`: the first line numbers of both sides.
void hunk_start(std::string_view line, int& old_no, int& new_no) {
  auto number_after = [&](char sign) {
    auto at = line.find(sign, 2);
    if (at == std::string_view::npos) return 1;
    int n = 0;
    for (std::size_t i = at + 1; i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i)
      n = std::min(n * 10 + (line[i] - '0'), 100'000'000);
    return n;
  };
  old_no = number_after('-');
  new_no = number_after('+');
}

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::vector<FileDiff> parse(const std::string& text) {
  std::vector<FileDiff> files;
  bool in_hunk = false;
  int old_no = 0, new_no = 0;
  std::string old_path;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    if (starts(line, "diff --git ") || files.empty()) {
      files.emplace_back();
      in_hunk = false;
      old_path.clear();
      if (starts(line, "diff --git ")) {
        // A fallback name until `+++` names it: the part after " b/".
        auto b = line.rfind(" b/");
        files.back().path =
            unquote_path(b == std::string_view::npos ? line.substr(11) : line.substr(b + 1));
        continue;
      }
    }
    FileDiff& f = files.back();
    if (starts(line, "@@")) {
      in_hunk = true;
      hunk_start(line, old_no, new_no);
      f.rows.push_back({Kind::hunk, 0, 0, std::string(line)});
      continue;
    }
    if (!in_hunk) {
      if (starts(line, "--- ")) {
        old_path = unquote_path(line.substr(4));
      } else if (starts(line, "+++ ")) {
        std::string p = unquote_path(line.substr(4));
        f.path = p == "/dev/null" ? old_path : p;
      } else if (!starts(line, "index ") && !line.empty()) {
        f.meta.emplace_back(line);
      }
      continue;
    }
    const char sign = line.empty() ? ' ' : line[0];
    std::string rest(line.empty() ? line : line.substr(1));
    if (sign == '+') {
      f.rows.push_back({Kind::add, 0, new_no++, std::move(rest)});
      ++f.adds;
    } else if (sign == '-') {
      f.rows.push_back({Kind::del, old_no++, 0, std::move(rest)});
      ++f.dels;
    } else if (sign == '\\') {
      f.rows.push_back({Kind::note, 0, 0, std::string(line)});
    } else {
      f.rows.push_back({Kind::ctx, old_no++, new_no++, std::move(rest)});
    }
  }
  return files;
}

bool continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

/// Marks the changed middle of a removed line and the added line that replaced it (their common
/// start and end are left plain), on character boundaries. Nothing when they share nothing.
void mark_words(Row& del, Row& add) {
  constexpr std::size_t kMaxLine = 2000;  // longer lines: no marking (it stays cheap)
  const std::string& a = del.text;
  const std::string& b = add.text;
  if (a.size() > kMaxLine || b.size() > kMaxLine) return;
  std::size_t p = 0;
  while (p < a.size() && p < b.size() && a[p] == b[p]) ++p;
  while (p > 0 && p < a.size() && continuation(static_cast<unsigned char>(a[p]))) --p;
  std::size_t s = 0;
  while (s < a.size() - p && s < b.size() - p && a[a.size() - 1 - s] == b[b.size() - 1 - s]) ++s;
  while (s > 0 && continuation(static_cast<unsigned char>(a[a.size() - s]))) --s;
  if (p + s == 0) return;
  del.hl_begin = p;
  del.hl_end = a.size() - s;
  add.hl_begin = p;
  add.hl_end = b.size() - s;
}

/// Pairs each run of removed lines with the run of added lines right after it, line by line.
void mark_changes(std::vector<Row>& rows) {
  for (std::size_t i = 0; i < rows.size();) {
    if (rows[i].kind != Kind::del) {
      ++i;
      continue;
    }
    std::size_t d = i;
    while (i < rows.size() && rows[i].kind == Kind::del) ++i;
    std::size_t a = i;
    while (i < rows.size() && rows[i].kind == Kind::add) ++i;
    for (std::size_t k = 0; d + k < a && a + k < i; ++k) mark_words(rows[d + k], rows[a + k]);
  }
}

}  // namespace

std::string code_text(std::string_view text) {
  // A carriage return would break the row in two (HTML reads it as a line break): shown as ␍.
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\r')
      out += "\xE2\x90\x8D";
    else
      out.push_back(c);
  }
  return esc(out);
}

namespace {

std::string code_cell(const Row& r) {
  if (r.hl_begin == std::string::npos) return code_text(r.text);
  return code_text(std::string_view(r.text).substr(0, r.hl_begin)) + "<span class=\"w\">" +
         code_text(std::string_view(r.text).substr(r.hl_begin, r.hl_end - r.hl_begin)) + "</span>" +
         code_text(std::string_view(r.text).substr(r.hl_end));
}

std::string number(int n) { return n > 0 ? std::to_string(n) : std::string(); }

bool on_row(const api::DiffComment& c, const std::string& file, const Row& r) {
  if (c.file != file) return false;
  return c.side == api::DiffSide::old_file
             ? (r.kind == Kind::del && r.old_no == c.line)
             : (r.kind != Kind::del && r.new_no == c.line && r.new_no > 0);
}

std::string row_html(const std::string& file, const Row& r, const DiffContext& ctx) {
  static const char* kClass[] = {"ctx", "add", "del", "hunk", "note"};
  const char* cls = kClass[static_cast<int>(r.kind)];
  if (r.kind == Kind::hunk || r.kind == Kind::note)
    return std::string("<tr class=\"") + cls + "\"><td class=\"ln\"></td><td class=\"ln\"></td>" +
           "<td class=\"c\">" + code_text(r.text) + "</td></tr>";
  const bool old_side = r.kind == Kind::del;
  const char* sign = r.kind == Kind::add ? "+" : r.kind == Kind::del ? "-" : " ";
  std::string out =
      std::string("<tr class=\"l ") + cls + "\" data-side=\"" + (old_side ? "old" : "new") +
      "\" data-line=\"" + std::to_string(old_side ? r.old_no : r.new_no) + "\"><td class=\"ln\">" +
      number(r.old_no) + "</td><td class=\"ln\">" + number(r.new_no) +
      "</td><td class=\"c\"><span class=\"sg\">" + sign + "</span>" + code_cell(r) + "</td></tr>";
  for (const auto& c : ctx.comments)
    if (on_row(c, file, r))
      out += "<tr class=\"cmt\"><td colspan=\"3\">" + comment_html(c, ctx.loop_id, ctx.token) +
             "</td></tr>";
  return out;
}

}  // namespace

std::string diff_html(const std::string& text, const DiffContext& ctx) {
  std::vector<FileDiff> files = parse(text);
  std::size_t lines = 0;
  for (const auto& f : files) lines += f.rows.size();
  std::string out = "<div class=\"diff\" data-files=\"" + std::to_string(files.size()) +
                    "\" data-rows=\"" + std::to_string(lines) + "\"" +
                    (ctx.commentable ? " data-comment=\"yes\"" : "") + ">";
  for (auto& f : files) {
    mark_changes(f.rows);
    // Long diffs of many files open folded past the first few, so the page stays quick to scan.
    const bool open = files.size() <= 12 || &f - files.data() < 12;
    out += std::string("<details class=\"dfile\"") + (open ? " open" : "") + " data-file=\"" +
           esc(f.path) + "\"><summary><span class=\"fname\">" + esc(f.path) +
           "</span> <span class=\"stat\"><span class=\"a\">+" + std::to_string(f.adds) +
           "</span> <span class=\"d\">-" + std::to_string(f.dels) + "</span></span>";
    if (!ctx.loop_id.empty() && !f.path.empty())
      out += " <a class=\"whole\" href=\"" +
             href("/loop/" + url_encode(ctx.loop_id) + "/file", ctx.token,
                  "path=" + url_encode(f.path)) +
             "\">whole file</a>";
    out += "</summary>";
    for (const auto& m : f.meta) out += "<div class=\"fmeta\">" + code_text(m) + "</div>";
    out +=
        "<table class=\"dl\"><colgroup><col class=\"lnc\"><col class=\"lnc\"><col></colgroup>"
        "<tbody>";
    for (const auto& r : f.rows) out += row_html(f.path, r, ctx);
    out += "</tbody></table></details>";
  }
  out += "</div>";
  return out;
}

std::string file_body(const std::string& loop_id, const ShownFile& f, const std::string& token) {
  std::string out = "<h1>" + esc(f.path) + "</h1><p class=\"meta\">as loop <a href=\"" +
                    href("/loop/" + url_encode(loop_id), token) + "\">" + esc(loop_id) +
                    "</a> has it on <code>" + esc(f.problem.empty() ? f.source : f.problem) +
                    "</code></p>";
  if (!f.text) return out;
  out += "<table class=\"dl whole\"><colgroup><col class=\"lnc\"><col></colgroup><tbody>";
  std::size_t pos = 0;
  int n = 0;
  const std::string& t = *f.text;
  while (pos < t.size()) {
    std::size_t nl = t.find('\n', pos);
    std::string_view line(t.data() + pos, (nl == std::string::npos ? t.size() : nl) - pos);
    pos = nl == std::string::npos ? t.size() : nl + 1;
    out += "<tr class=\"l ctx\"><td class=\"ln\">" + std::to_string(++n) + "</td><td class=\"c\">" +
           code_text(line) + "</td></tr>";
  }
  out += "</tbody></table>";
  if (f.truncated) out += "<p class=\"problem\">(cut: the file is longer)</p>";
  return out;
}

}  // namespace loopr::web
