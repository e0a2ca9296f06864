// The web UI's pages as pure functions of what the control API answers (decoded into the typed
// views of loopr/api/views.hpp, the CLI's own decoding) and of files
// read for them (artifacts, the diff, transcripts): no I/O here, so every page is unit-tested with
// hostile strings. Every model-written string goes through web::esc or markdown::render_safe_html.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <loopr/api/answers.hpp>
#include <loopr/api/comments.hpp>
#include <loopr/api/files.hpp>
#include <loopr/api/views.hpp>
#include <loopr/core/iteration_files.hpp>

namespace loopr::web {

/// The tree page's data: `GET /v1/loops` rows (tree order) and, per plan, its
/// `GET /v1/loops/{id}` detail (forecast and actual).
struct TreeView {
  std::vector<api::LoopRow> loops;
  std::map<std::string, api::LoopDetail> plans;
  std::int64_t now_ms = 0;
};

/// The live part of the tree page: `<section data-live="tree">` with one table per plan.
std::string tree_section(const TreeView& view, const std::string& token);

/// How many things wait for the person: plans awaiting approval and loops awaiting an answer.
int waiting_count(const std::vector<api::LoopRow>& loops);

/// A file shown on a page: its text, or why it could not be read (api/files.hpp).
using ShownFile = api::FileView;

/// A plan at the gate: its detail and its plan artifact.
struct GatePlan {
  api::LoopDetail detail;
  ShownFile plan;
};

struct GateView {
  std::vector<GatePlan> plans;
  std::vector<api::LoopRow> questions;  ///< loop rows in `awaiting_answer`
};

/// The gate page's body: each plan awaiting approval (forecast, the plan rendered, approve /
/// reject / iterate) and each open question (answer).
std::string gate_body(const GateView& view, const std::string& token);

/// One iteration's transcript files (`.loopr/logs/loops/<id>/iterations/NNN/`), as the one
/// reader reads them (core/iteration_files.hpp).
using IterationFiles = loopr::IterationRead;

/// The transcript of one iteration: prompt (collapsed), conversation with tool calls and
/// results, validation log.
std::string iteration_body(const IterationFiles& files);

/// The loop page's data.
struct LoopView {
  api::LoopDetail detail;                  ///< `GET /v1/loops/{id}`
  std::vector<api::LoopRow> children;      ///< rows whose parent is this loop
  std::vector<ShownFile> artifacts;        ///< its output artifacts
  std::string diff_label;                  ///< e.g. `git diff main...loopr/001-loops/002`
  ShownFile diff;                          ///< the branch's whole change
  std::vector<api::DiffComment> comments;  ///< `GET /v1/loops/{id}/comments`
  std::int64_t now_ms = 0;
  /// merge: pr: the review comments since the last push (`GET /v1/plans/{id}/pr/comments`), or
  /// why they could not be read.
  std::vector<api::PrReviewComment> pr_comments;
  std::string pr_comments_problem;
};

/// What a diff is rendered for: the loop (links, comment forms) and its comments.
struct DiffContext {
  std::string loop_id;
  std::string token;
  std::vector<api::DiffComment> comments;
  bool commentable = false;  ///< lines take comments (the page's script offers a form)
};

/// A unified diff as a reviewer reads it: `<div class="diff">` with one folding
/// `<details class="dfile" data-file>` per file, each a table of one row per line (`tr.l` with
/// `data-side` and `data-line`, the old and new line numbers, the changed words in `span.w`),
/// hunk headers as rows, and each comment in a row under the line it is on.
std::string diff_html(const std::string& text, const DiffContext& ctx);

/// Model-written code as HTML text: `esc`, and a carriage return shown as ␍ (it would break a row).
std::string code_text(std::string_view text);

/// One diff comment: its place, its text and its outcome (pending, or the iteration that took it).
std::string comment_html(const api::DiffComment& c, const std::string& loop_id,
                         const std::string& token);

/// The loop page's comments section: every comment with its outcome, and the form that sends the
/// pending ones as one `iterate` (when the loop can take feedback).
std::string comments_section(const LoopView& view, const std::string& token);

/// merge: pr: the pull request's review comments since the last push, and the button that gives
/// them to a fix loop (`loopr iterate PLAN --from-pr`: `iterate` with `from_pr`). Empty: none.
std::string pr_comments_section(const LoopView& view, const std::string& token);

/// The whole-file view of a file a loop's diff names: every line numbered.
std::string file_body(const std::string& loop_id, const ShownFile& f, const std::string& token);

/// The actions the loop's state allows (pause, resume, stop, iterate, merge) as forms that post
/// to the page's own routes; stop and merge ask for a confirmation first.
std::string action_forms(const LoopView& view, const std::string& token);

/// The page that asks "really?" before a stop or a merge: the same form, confirmed.
/// `pull_request`: the plan is under `merge: pr` (its "merge" retries the push and the PR).
std::string confirm_body(const std::string& id, const std::string& action, const std::string& token,
                         const std::string& back_href, bool pull_request = false);

/// What waits for the person, for the page title: "plan 001 at the gate", "code-… asks",
/// "plan 002 waits for its merge"; empty when nothing does.
std::string waiting_summary(const std::vector<api::LoopRow>& loops);

/// The live part of the loop page: `<section data-live="summary">` (status, iteration, cost …).
std::string loop_summary_section(const LoopView& view, const std::string& token);

/// The loop page's body: the summary, the decisions that wait (gate, question), artifacts, the
/// diff, the last validation output and every iteration collapsed (loaded when opened).
std::string loop_body(const LoopView& view, const std::string& token);

/// The approve / reject / iterate forms of a plan at the gate. `back`: "gate" or "loop".
std::string gate_forms(const std::string& id, const std::string& token, const std::string& back);

/// The answer form of a loop with an open question.
std::string answer_form(const std::string& id, const std::string& token, const std::string& back);

/// A page body saying what went wrong (an action the API refused, a missing loop).
std::string error_body(const std::string& message, const std::string& back_href);

}  // namespace loopr::web
