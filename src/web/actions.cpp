// The loop page's actions and comments (pages.hpp): the forms of every action the CLI has,
// the confirmation before a stop or a merge, the diff comments with their outcome, and what the
// page title says waits for the person.
#include <loopr/core/loop.hpp>

#include "web/html.hpp"
#include "web/pages.hpp"

namespace loopr::web {

namespace {

std::string hidden(const std::string& token, const std::string& back) {
  return "<input type=\"hidden\" name=\"token\" value=\"" + esc(token) +
         "\"><input type=\"hidden\" name=\"back\" value=\"" + esc(back) + "\">";
}

std::string action_path(const std::string& id, std::string_view action) {
  return "/loop/" + url_encode(id) + "/" + std::string(action);
}

/// A one-button form; `extra` is more HTML inside it (fields).
std::string button_form(const std::string& id, std::string_view action, const std::string& label,
                        const std::string& token, const std::string& extra = {}) {
  return "<form method=\"post\" action=\"" + esc(action_path(id, action)) + "\">" +
         hidden(token, "loop") + extra + "<button type=\"submit\" class=\"" + std::string(action) +
         "\">" + label + "</button></form>";
}

bool terminal(LoopStatus s) {
  return s == LoopStatus::complete || s == LoopStatus::failed || s == LoopStatus::stopped ||
         s == LoopStatus::invalidated;
}

/// Whether `iterate` takes feedback for the loop now (the manager's rule; the plan at its gate
/// has the gate's own forms).
bool takes_feedback(const api::LoopRow& d) {
  if (d.is_plan())
    return d.status == LoopStatus::complete || d.status == LoopStatus::failed ||
           d.status == LoopStatus::blocked;
  return d.status == LoopStatus::failed || d.status == LoopStatus::stopped ||
         d.status == LoopStatus::paused || d.status == LoopStatus::blocked;
}

/// Whether `loopr merge` is what the plan's tree waits for: complete under `merge: manual`, held
/// back for review, or a merge that failed; under `merge: pr`, a push or pull request that failed
/// (`loopr merge` retries it; the base branch is the team's to merge).
bool waits_for_merge(const api::LoopRow& d) {
  if (!d.is_plan() || !d.merged_into_base.empty()) return false;
  if (d.pr) return !d.pr->error.empty();
  if (d.status == LoopStatus::blocked && d.end_reason == EndReason::held_for_review) return true;
  return d.tree_verdict &&
         (*d.tree_verdict == TreeVerdict::complete || *d.tree_verdict == TreeVerdict::merge_failed);
}

}  // namespace

std::string action_forms(const LoopView& v, const std::string& token) {
  const api::LoopRow& d = v.detail.loop;
  const std::string& id = d.id;
  std::string buttons;
  if (d.status == LoopStatus::pending || d.status == LoopStatus::running ||
      d.status == LoopStatus::rebasing || d.status == LoopStatus::awaiting_answer)
    buttons += button_form(id, "pause", "Pause", token);
  if (d.status == LoopStatus::paused) buttons += button_form(id, "resume", "Resume", token);
  if (waits_for_merge(d))
    buttons += button_form(id, "merge",
                           d.pr ? "Retry the push and pull request…" : "Merge into the base branch…",
                           token);
  if (!terminal(d.status)) buttons += button_form(id, "stop", "Stop…", token);
  std::string out;
  if (!buttons.empty()) out += "<div class=\"actions\">" + buttons + "</div>";
  if (takes_feedback(d))
    out += "<div class=\"actions\"><form method=\"post\" class=\"wide\" action=\"" +
           esc(action_path(id, "iterate")) + "\">" + hidden(token, "loop") +
           "<textarea name=\"feedback\" required rows=\"3\" placeholder=\"what to change\" "
           "aria-label=\"feedback\"></textarea><button type=\"submit\" class=\"iterate\">Iterate "
           "with this feedback</button></form></div>";
  if (out.empty()) return {};
  return "<section class=\"decide loop-actions\"><h2>Actions</h2>" + out + "</section>";
}

namespace {

// What the page says before an action that cannot be taken back (web/ui.cpp's table marks which
// ask): per action, and for merge whether the plan opens a pull request instead.
struct ConfirmText {
  std::string_view action;
  bool pull_request;
  const char* title;
  const char* what;
  const char* yes;
};

const ConfirmText kConfirmTexts[] = {
    {"stop", false, "Stop loop ",
     "The loop and every loop below it stop now; their work so far stays on their branches "
     "(iterate to go on).",
     "Yes, stop it"},
    {"merge", false, "Merge plan ", "The plan's integration branch is merged into the base branch.",
     "Yes, merge it"},
    {"merge", true, "Retry the pull request of plan ",
     "The plan's integration branch is pushed again and its pull request opened or updated; the "
     "base branch is not touched (merging the pull request is the team's).",
     "Yes, retry it"},
};

// The text for `action`: the one for `pull_request` when the action has two, else its only one.
const ConfirmText* confirm_text(std::string_view action, bool pull_request) {
  const ConfirmText* found = nullptr;
  for (const auto& t : kConfirmTexts)
    if (t.action == action && (!found || t.pull_request == pull_request)) found = &t;
  return found;
}

}  // namespace

std::string confirm_body(const std::string& id, const std::string& action, const std::string& token,
                         const std::string& back_href, bool pull_request) {
  const ConfirmText* text = confirm_text(action, pull_request);
  const std::string title = text ? text->title : action + " ";
  return "<section class=\"confirm\"><h1>" + esc(title) + esc(id) + "?</h1><p>" +
         (text ? text->what : "") + "</p><div class=\"actions\"><form method=\"post\" action=\"" +
         esc(action_path(id, action)) + "\">" + hidden(token, "loop") +
         "<input type=\"hidden\" name=\"confirmed\" value=\"yes\"><button "
         "type=\"submit\" class=\"confirm " +
         esc(action) + "\">" + (text ? text->yes : "Yes") + "</button></form><a href=\"" +
         back_href + "\">No, go back</a></div></section>";
}

std::string comment_html(const api::DiffComment& c, const std::string& loop_id,
                         const std::string& token) {
  std::string outcome = "waiting to be sent";
  if (c.iteration > 0) {
    const std::string n = std::to_string(c.iteration);
    outcome = "sent: iteration <a href=\"" +
              href("/loop/" + url_encode(loop_id) + "/iterations/" + n, token) + "\">#" + n +
              "</a> took it";
  }
  return "<div class=\"comment " + std::string(c.iteration > 0 ? "sent" : "pending") +
         "\" data-n=\"" + std::to_string(c.n) + "\"><span class=\"where\">" + esc(c.file) +
         " line " + std::to_string(c.line) + (c.side == api::DiffSide::old_file ? " (old)" : "") +
         "</span> <span class=\"outcome\">" + outcome + "</span><div class=\"text\">" +
         esc(c.text) + "</div></div>";
}

std::string comments_section(const LoopView& v, const std::string& token) {
  const api::LoopRow& d = v.detail.loop;
  std::string out = "<section class=\"comments\" id=\"comments\"><h2>Comments on the diff</h2>";
  if (v.comments.empty()) {
    out +=
        "<p class=\"empty\">None. Click a line of the diff to comment on it; the comments go "
        "back to the loop together, as one iteration's feedback.</p></section>";
    return out;
  }
  int pending = 0;
  out += "<ol class=\"comment-list\">";
  for (const auto& c : v.comments) {
    out += "<li>" + comment_html(c, d.id, token) + "</li>";
    if (c.iteration == 0) ++pending;
  }
  out += "</ol>";
  if (pending == 0) return out + "</section>";
  const bool gate = d.is_plan() && d.status == LoopStatus::awaiting_approval;
  if (gate || takes_feedback(d))
    out += "<form method=\"post\" class=\"wide send-comments\" action=\"" +
           esc(action_path(d.id, "send-comments")) + "\">" + hidden(token, "loop") +
           "<textarea name=\"feedback\" rows=\"2\" placeholder=\"more feedback (optional)\" "
           "aria-label=\"more feedback\"></textarea><button type=\"submit\" "
           "class=\"send-comments\">Send " +
           std::to_string(pending) + (pending == 1 ? " comment" : " comments") +
           " as one iteration</button></form>";
  else
    out +=
        "<p class=\"dim\">The loop takes them when it can take feedback: once it is paused, "
        "stopped or failed (a plan: at its gate or when its tree ended).</p>";
  return out + "</section>";
}

std::string pr_comments_section(const LoopView& v, const std::string& token) {
  if (v.pr_comments.empty() && v.pr_comments_problem.empty()) return {};
  const std::string& id = v.detail.loop.id;
  std::string out = "<section class=\"pr-comments\"><h2>Review comments since the last push</h2>";
  if (!v.pr_comments_problem.empty())
    out += "<p class=\"problem\">" + esc(v.pr_comments_problem) + "</p>";
  if (v.pr_comments.empty()) return out + "</section>";
  out += "<ul>";
  for (const api::PrReviewComment& c : v.pr_comments)
    out += "<li><code>" + esc(c.path) + (c.line > 0 ? ":" + std::to_string(c.line) : "") +
           "</code> " + esc(c.author) + ": " + esc(c.body) + "</li>";
  out += "</ul><div class=\"actions\">" +
         button_form(id, "from-pr", "Give them to a fix loop", token) +
         "</div><p class=\"dim\">The same as <code>loopr iterate " + esc(id) +
         " --from-pr</code>: a fix loop on the integration branch takes them, and its work is "
         "pushed to the pull request.</p></section>";
  return out;
}

std::string waiting_summary(const std::vector<api::LoopRow>& loops) {
  std::vector<std::string> items;
  for (const auto& row : loops) {
    if (row.is_plan() && row.status == LoopStatus::awaiting_approval)
      items.push_back("plan " + row.id + " at the gate");
    else if (row.status == LoopStatus::awaiting_answer)
      items.push_back(row.id + " asks");
    else if (waits_for_merge(row))
      items.push_back("plan " + row.id +
                      (row.pr ? "'s pull request failed" : " waits for its merge"));
  }
  if (items.empty()) return {};
  std::string out = items.front();
  if (items.size() > 1) out += " (+" + std::to_string(items.size() - 1) + " more)";
  return out;
}

}  // namespace loopr::web
