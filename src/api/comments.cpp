// The diff comments' codec and the feedback text they become (loopr/api/comments.hpp).
#include <loopr/api/comments.hpp>
#include <loopr/core/text.hpp>

#include "json_read.hpp"

namespace loopr::api {
namespace {

using json = nlohmann::json;
using namespace read;

/// A file name on one line: controls visible (terminal_text), line breaks as `\n`.
std::string one_line(std::string_view text) {
  std::string out;
  for (char c : terminal_text(text)) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string_view to_string(DiffSide side) { return side == DiffSide::old_file ? "old" : "new"; }

std::optional<DiffSide> parse_diff_side(std::string_view text) {
  if (text == "new") return DiffSide::new_file;
  if (text == "old") return DiffSide::old_file;
  return std::nullopt;
}

json to_json(const DiffComment& c) {
  return json{{"n", c.n},
              {"file", c.file},
              {"line", c.line},
              {"side", to_string(c.side)},
              {"text", c.text},
              {"created_at", c.created_at},
              {"iteration", c.iteration == 0 ? json(nullptr) : json(c.iteration)}};
}

DiffComment comment_from_json(const json& j) {
  DiffComment c;
  if (!j.is_object()) return c;
  c.n = i32(j, "n");
  c.file = str(j, "file");
  c.line = i32(j, "line");
  c.side = parse_diff_side(str(j, "side")).value_or(DiffSide::new_file);
  c.text = str(j, "text");
  c.created_at = i64(j, "created_at");
  c.iteration = i32(j, "iteration");
  return c;
}

json to_json(const CommentRequest& r) {
  return {{"file", r.file}, {"line", r.line}, {"side", to_string(r.side)}, {"text", r.text}};
}

Result<CommentRequest> comment_request_from_json(const json& body) {
  CommentRequest r{str(body, "file"), i32(body, "line"), DiffSide::new_file, str(body, "text")};
  if (auto side = body.find("side"); side != body.end()) {  // end() for a non-object
    std::optional<DiffSide> read =
        side->is_string() ? parse_diff_side(side->get<std::string>()) : std::nullopt;
    if (!read) return make_error(ErrorCode::invalid_argument, "`side` is `new` or `old`");
    r.side = *read;
  }
  return r;
}

json to_json(const CommentsView& v) {
  json list = json::array();
  for (const auto& c : v.comments) list.push_back(to_json(c));
  return json{{"comments", std::move(list)}};
}

CommentsView comments_from_json(const json& j) {
  CommentsView v;
  if (!j.is_object()) return v;
  if (auto it = j.find("comments"); it != j.end() && it->is_array())
    for (const auto& c : *it) v.comments.push_back(comment_from_json(c));
  return v;
}

json to_json(const IterateRequest& r) {
  json j{{"feedback", r.feedback}};
  if (r.comments) j["comments"] = true;
  if (r.from_pr) j["from_pr"] = true;
  return j;
}

IterateRequest iterate_request_from_json(const json& j) {
  IterateRequest r;
  if (!j.is_object()) return r;
  r.feedback = str(j, "feedback");
  r.comments = flag(j, "comments");
  r.from_pr = flag(j, "from_pr");
  return r;
}

std::string comments_feedback(const std::vector<DiffComment>& pending) {
  if (pending.empty()) return {};
  std::string out =
      "Comments on lines of the diff (" + std::to_string(pending.size()) + ", in order):\n";
  int i = 0;
  for (const auto& c : pending) {
    out += std::to_string(++i) + ". " + one_line(c.file) + " line " + std::to_string(c.line) +
           (c.side == DiffSide::old_file ? " (a removed line, numbered in the old version)" : "") +
           ":\n";
    // The text indented under its entry, so that a line of it cannot pass for another entry.
    std::string text = valid_utf8(c.text);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    std::size_t pos = 0;
    while (pos <= text.size()) {
      std::size_t nl = text.find('\n', pos);
      std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
      out += "   " + std::string(line) + "\n";
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
  }
  return out;
}

}  // namespace loopr::api
