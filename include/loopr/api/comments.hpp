// Comments a person wrote on lines of a loop's diff (the web UI's review), typed: what
// `POST /v1/loops/{id}/comments` takes, what `GET /v1/loops/{id}/comments` answers, and the
// `iterate` body that sends the pending ones as one iteration's feedback. One codec each way,
// keeping the JSON as src/daemon/API.md has it; reading never throws.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/result.hpp>

namespace loopr::api {

/// The version of the file a comment's line is numbered in: `new` (an added or unchanged line)
/// or `old` (a removed line) on the wire.
enum class DiffSide { new_file, old_file };
std::string_view to_string(DiffSide side);
/// `new` or `old`; nullopt for anything else.
std::optional<DiffSide> parse_diff_side(std::string_view text);

/// One comment on one line of a loop's diff.
struct DiffComment {
  int n = 0;                    ///< 1, 2, … in the order they were written (per loop)
  std::string file;             ///< the path as the diff names it
  int line = 0;                 ///< 1-based, in `side`'s version of the file
  DiffSide side = DiffSide::new_file;
  std::string text;             ///< what the person wrote
  std::int64_t created_at = 0;  ///< ms since the epoch
  int iteration = 0;            ///< the iteration whose feedback took it; 0: not sent yet
};

/// `POST /v1/loops/{id}/comments`: a new comment (the daemon numbers and dates it). Its
/// limits (a file, a line from 1, a text not blank; the sizes below) are the daemon's to check.
struct CommentRequest {
  std::string file;
  int line = 0;
  DiffSide side = DiffSide::new_file;
  std::string text;
};

/// `GET /v1/loops/{id}/comments`: every comment of the loop, oldest first.
struct CommentsView {
  std::vector<DiffComment> comments;
};

/// `POST /v1/loops/{id}/iterate`: the person's feedback and, with `comments`, the loop's
/// pending diff comments appended to it (then the feedback may be empty).
/// With `from_pr` (merge: pr, a plan): the pull request's review comments since the last push
/// are the feedback instead (`loopr iterate PLAN --from-pr`).
struct IterateRequest {
  std::string feedback;
  bool comments = false;
  bool from_pr = false;
};

/// The longest comment text and file name the API takes (bytes).
inline constexpr std::size_t kMaxCommentBytes = 16 * 1024;
inline constexpr std::size_t kMaxCommentFileBytes = 4096;
/// Comments a loop may hold (sent ones included); more are refused.
inline constexpr std::size_t kMaxCommentsPerLoop = 500;

nlohmann::json to_json(const DiffComment& c);
DiffComment comment_from_json(const nlohmann::json& j);
nlohmann::json to_json(const CommentRequest& r);
/// A side that is not `new` or `old` is refused (invalid_argument, the daemon's 400); any other
/// field of the wrong type reads as empty, which the daemon's checks then name.
Result<CommentRequest> comment_request_from_json(const nlohmann::json& body);
nlohmann::json to_json(const CommentsView& v);
CommentsView comments_from_json(const nlohmann::json& j);
nlohmann::json to_json(const IterateRequest& r);
IterateRequest iterate_request_from_json(const nlohmann::json& j);

/// The pending comments as the feedback text a loop reads: one numbered entry per comment, in
/// order, each naming its file and line (the file name on one line, its controls made visible).
std::string comments_feedback(const std::vector<DiffComment>& pending);

}  // namespace loopr::api
