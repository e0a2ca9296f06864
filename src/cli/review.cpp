#include "cli/review.hpp"

#include <optional>
#include <ostream>
#include <set>

#include <loopr/api/comments.hpp>
#include <loopr/core/text.hpp>
#include <loopr/git/artifact.hpp>

#include "cli/baseline_view.hpp"  // issue 27
#include "cli/coordination.hpp"
#include "cli/format.hpp"
#include "cli/markdown_render.hpp"
#include "cli/wire.hpp"

namespace loopr::cli {

const char* to_string(Choice choice) {
  switch (choice) {
    case Choice::approve:
      return "approve";
    case Choice::reject:
      return "reject";
    case Choice::iterate:
      return "iterate";
    case Choice::answer:
      return "answer";
    case Choice::skip:
      break;
  }
  return "skip";
}

using nlohmann::json;

// What the gate shows of a plan (the format check refuses one past artifacts.max_bytes).
constexpr std::size_t kPlanShownBytes = 1 << 20;

std::string read_plan_artifact(const RepoPaths& paths, const api::LoopRow& loop) {
  const std::string rel = loop.artifacts.empty() ? std::string() : loop.artifacts.front();
  const std::string& id = loop.id;
  if (rel.empty())
    throw CommandError{kFailed, "plan " + id + " names no artifact",
                       "`loopr show " + id + "` shows the loop"};
  // The one reader (git/artifact.hpp): the model writes the worktree, so its file is read only
  // when it is a regular file reached without a symlink (a FIFO there never hangs the person's
  // command), else as committed on the plan's branches.
  git::ArtifactText read = git::read_loop_artifact(
      {paths.root, loop.worktree, rel, git::artifact_branches(loop.branch, loop.id, loop.plan_id)},
      kPlanShownBytes);
  if (!read.bytes)
    throw CommandError{kFailed, "cannot read the plan of " + id + ": " + read.problem,
                       "`loopr show " + id + "` shows where it should be"};
  std::string text = valid_utf8(*read.bytes);
  if (read.truncated) text += "\n\n[… the plan is longer than 1 MiB: the rest is in " + rel + "]\n";
  return text;
}

// The plan at the gate as the person reads it: its task, artifact, baseline and forecast.
void show_plan(const DaemonClient& api, const api::LoopRow& loop, std::ostream& ui,
               const Style& style) {
  std::string text = read_plan_artifact(api.paths(), loop);
  const std::string path = loop.artifacts.empty() ? std::string() : loop.artifacts.front();
  int width = std::min(terminal_width(), 100);
  std::string rule(static_cast<std::size_t>(std::min(width, 72)), '-');
  ui << "\n" << style.dim(rule) << "\n";
  ui << style.bold("Plan " + loop.id) << " awaits your approval: " << terminal_text(loop.task)
     << "\n";
  ui << style.dim(path + " · iteration " + std::to_string(loop.iteration) + "/" +
                  std::to_string(loop.max_iterations) + " · " + format_cost(loop.cost_usd))
     << "\n"
     << style.dim(rule) << "\n\n";
  ui << render_markdown(text, style, width) << "\n";
  // The forecast is made when the plan reaches the gate; the detail has it.
  try {
    api::LoopDetail detail = show_loop(api, loop.id);
    ui << render_baseline(detail.loop, style);
    std::string forecast = render_forecast(detail, style);
    if (!forecast.empty()) ui << forecast << "\n";
  } catch (const CommandError&) {
  }
}

ReviewDecision review_plan(const DaemonClient& api, const api::LoopRow& loop, Prompter& prompter,
                           std::ostream& ui, const Style& style) {
  const std::string& id = loop.id;
  ReviewDecision d{id, Choice::skip, {}, false};
  show_plan(api, loop, ui, style);
  while (true) {
    auto key = prompter.choose(style.bold("[a]pprove [r]eject [i]terate [s]kip") + " " + id + "? ",
                               "aris");
    if (!key) {
      d.end_of_input = true;
      ui << "no answer: " << id << " still awaits approval\n";
      return d;
    }
    if (*key == 's') {
      ui << "skipped " << id << "; it still awaits approval (`loopr review " << id << "`)\n";
      return d;
    }
    if (*key == 'a') {
      act_on(api, id, "approve");
      d.decision = Choice::approve;
      ui << style.green("approved") << " " << id << ": its specs start now\n";
      return d;
    }
    if (*key == 'r') {
      auto reason = prompter.read_line("reason (optional, Enter for none): ");
      act_on(api, id, "reject", api::to_json(api::RejectRequest{reason.value_or("")}));
      d.decision = Choice::reject;
      d.text = reason.value_or("");
      ui << style.red("rejected") << " " << id << "\n";
      return d;
    }
    // 'i'
    std::string feedback =
        prompter.read_text("feedback for the next iteration (end with an empty line or Ctrl-D):\n");
    if (feedback.empty()) {
      ui << "no feedback given; choose again\n";
      continue;
    }
    act_on(api, id, "iterate", api::to_json(api::IterateRequest{feedback, false, false}));
    d.decision = Choice::iterate;
    d.text = feedback;
    ui << style.yellow("iterating") << " " << id << " with your feedback\n";
    return d;
  }
}

namespace {

// A plan whose tree passed but changes what the person must see first (issue 29: the test
// harness, other tools' auto-run files, loopr's own settings): what holds it, and how to merge.
bool held_for_review(const api::LoopRow& loop) {
  return loop.is_plan() && loop.status == LoopStatus::blocked &&
         loop.end_reason == EndReason::held_for_review;
}

void show_held(const api::LoopRow& plan, std::ostream& ui, const Style& style) {
  // One line, whatever the names in it hold (a file name must not forge a line).
  ui << style.bold("Plan " + plan.id) << " is held for you: " << name_text(plan.status_reason)
     << "\n"
     << "  look at the change (`git diff " << name_text(plan.base_branch) << "...loopr/" << plan.id
     << "`), then `loopr merge " << plan.id << "` merges it\n";
}

// A loop paused at its tree's cap (limits.at_cost_limit: pause): the person raises it or not.
bool paused_at_cap(const api::LoopRow& loop) {
  return loop.status == LoopStatus::paused &&
         (loop.end_reason == EndReason::cost_limit || loop.end_reason == EndReason::runtime_limit);
}

// One line per tree that waits at its cap (its loops paused after their current model turn).
void show_capped(const std::vector<api::LoopRow>& loops, std::ostream& ui, const Style& style) {
  std::set<std::string> shown_plans;
  for (const auto& l : loops) {
    if (!shown_plans.insert(l.plan_id).second) continue;
    ui << style.bold("Plan " + l.plan_id) << " paused at its limit: " << shown(l.status_reason)
       << "\n";
  }
}

// merge: pr: the review comments on the plan's pull request since its last push (without
// `listing_one`, only when there are some); whether it printed anything.
bool show_pr_comments(const DaemonClient& api, const api::LoopRow& plan, std::ostream& ui,
                      const Style& style, bool listing_one = true) {
  const std::vector<api::PrReviewComment> list = pr_comments(api, plan.id).comments;
  if (list.empty() && !listing_one) return false;  // `review` without an id: only the news
  ui << style.bold("Plan " + plan.id) << ": pull request #" << plan.pr->number << " "
     << name_text(plan.pr->url) << " (checks: "
     << (plan.pr->checks == PrChecks::none ? "-" : name_text(to_string(plan.pr->checks))) << ")\n";
  if (list.empty()) {
    ui << "  no new review comments since its last push\n";
    return true;
  }
  for (const api::PrReviewComment& c : list)
    ui << "  " << shown(c.path) << (c.line > 0 ? ":" + std::to_string(c.line) : "") << " ("
       << shown(c.author) << "): " << one_line(shown(c.body), 400) << "\n";
  ui << "  `loopr iterate " << plan.id << " --from-pr` gives them to a fix loop\n";
  return true;
}

}  // namespace

namespace {

// What waits for the person: plans at the gate and loops' questions (`ask`), plans held for a
// review of their integration branch, loops paused at a cap, plans whose pull request has news.
struct Pending {
  std::vector<api::LoopRow> ask, held, capped, with_pr;
};

// `loopr review ID`: the one loop, when it waits for the person. nullopt when what it has to
// show was shown already (a held plan, a pull request's comments).
std::optional<Pending> pending_one(const DaemonClient& api, const GlobalOptions& opts,
                                   const std::string& id) {
  api::LoopRow loop = show_loop(api, id).loop;
  if (held_for_review(loop)) {
    show_held(loop, ui_stream(opts), Style{stdout_color(opts)});
    return std::nullopt;
  }
  if (loop.is_plan() && loop.pr && loop.pr->number > 0 &&
      loop.status != LoopStatus::awaiting_approval) {
    show_pr_comments(api, loop, ui_stream(opts), Style{stdout_color(opts)});
    return std::nullopt;
  }
  if (loop.status != LoopStatus::awaiting_answer) {
    if (!loop.is_plan())
      throw CommandError{kWrongState,
                         id + " is a " + to_string(loop.type) +
                             " loop that asks nothing; only plans wait for approval",
                         "`loopr review` without an id shows every plan and question that waits"};
    if (loop.status != LoopStatus::awaiting_approval)
      throw CommandError{
          kWrongState,
          "plan " + id + " is not awaiting approval (it is " + to_string(loop.status) + ")",
          "`loopr show " + id + "` shows why"};
  }
  Pending p;
  p.ask.push_back(std::move(loop));
  return p;
}

// `loopr review`: everything that waits, plans at the gate before the loops' questions.
Pending pending_all(const DaemonClient& api, const GlobalOptions& opts) {
  const std::string waiting = std::string("?status=") + to_string(LoopStatus::awaiting_approval) +
                              "," + to_string(LoopStatus::awaiting_answer) + "," +
                              to_string(LoopStatus::blocked) + "," + to_string(LoopStatus::paused);
  Pending p;
  auto all = list_loops(api, waiting);
  for (const auto& l : all)
    if (l.is_plan() && l.status == LoopStatus::awaiting_approval) p.ask.push_back(l);
  for (const auto& l : all)
    if (l.status == LoopStatus::awaiting_answer) p.ask.push_back(l);
  for (const auto& l : all)
    if (held_for_review(l)) p.held.push_back(l);
  for (const auto& l : all)
    if (paused_at_cap(l)) p.capped.push_back(l);
  // merge: pr: plans whose open pull request has review comments since its last push.
  if (!opts.quiet)
    for (const auto& l : list_loops(api, "?type=plan&status=complete,blocked"))
      if (l.pr && l.pr->number > 0 && l.pr->state == PullRequestState::open) p.with_pr.push_back(l);
  return p;
}

// Shows what needs no answer here (held plans, capped loops, pull requests' comments); true
// when it showed something.
bool show_the_rest(const DaemonClient& api, const Pending& p, std::ostream& ui,
                   const Style& style) {
  for (const auto& plan : p.held) show_held(plan, ui, style);
  show_capped(p.capped, ui, style);
  bool pr_news = false;
  for (const auto& plan : p.with_pr) {
    try {
      pr_news = show_pr_comments(api, plan, ui, style, false) || pr_news;
    } catch (const CommandError& e) {  // one forge that does not answer stops no review
      ui << style.bold("Plan " + plan.id) << ": cannot read its pull request's comments: "
         << one_line(shown(e.what), 300) << "\n";
      pr_news = true;
    }
  }
  return pr_news || !p.held.empty() || !p.capped.empty();
}

}  // namespace

std::vector<ReviewDecision> review_pending(const DaemonClient& api, const GlobalOptions& opts,
                                           const std::string& only_id, Prompter& prompter) {
  std::optional<Pending> pending =
      only_id.empty() ? pending_all(api, opts) : pending_one(api, opts, only_id);
  if (!pending) return {};
  std::ostream& ui = ui_stream(opts);
  Style style{stdout_color(opts)};
  std::vector<ReviewDecision> out;
  const bool shown_some = show_the_rest(api, *pending, ui, style);
  if (pending->ask.empty()) {
    if (!shown_some && !opts.quiet)
      ui << "no plan is awaiting approval and no loop asks a question\n";
    return out;
  }
  for (const auto& loop : pending->ask) {
    ReviewDecision d = loop.status == LoopStatus::awaiting_answer
                           ? review_question(api, loop, prompter, ui, style)
                           : review_plan(api, loop, prompter, ui, style);
    out.push_back(d);
    if (d.end_of_input) break;
  }
  return out;
}

}  // namespace loopr::cli
