// The commands about loops: submit, list, show, review, approve/reject/iterate,
// pause/resume/stop and merge. Each is one or two calls of the control API.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <thread>

#include <loopr/api/comments.hpp>
#include <loopr/core/text.hpp>

#include "cli/command.hpp"
#include "cli/commands.hpp"
#include "cli/coordination.hpp"
#include "cli/daemon_client.hpp"
#include "cli/format.hpp"
#include "cli/iteration_log.hpp"
#include "cli/markdown_render.hpp"
#include "cli/preflight.hpp"
#include "cli/review.hpp"
#include "cli/terminal.hpp"
#include "cli/tree_view.hpp"
#include "cli/wire.hpp"

namespace loopr::cli {

using nlohmann::json;

namespace {

void print_loop_json(const api::LoopRow& loop) {
  std::cout << interface_loop_json(loop).dump() << "\n";
}

// A loop on its way somewhere (not ended, not waiting for a person's decision about its end).
bool under_way(LoopStatus s) {
  switch (s) {
    case LoopStatus::pending:
    case LoopStatus::running:
    case LoopStatus::paused:
    case LoopStatus::rebasing:
    case LoopStatus::awaiting_approval:
      return true;
    default:
      return false;
  }
}

// What `submit` (and `submit --dry-run`) does before anything is created: the prerequisites
// hold, and a daemon answers (started if needed). The line was checked before (check_submit).
struct Submitting {
  RepoPaths paths;
  Config config;
  DaemonClient api;
};
Submitting prepare_submit(Session& s, bool force) {
  const RepoPaths& paths = s.paths();
  Config config = require_existing_config(paths);
  // A running daemon checked its own provider setup at its start.
  bool daemon_running = DaemonClient(paths).health().has_value();
  refuse_if_any(submit_problems(paths, config, !daemon_running, force),
                "; `loopr submit --force` skips this check");
  DaemonClient api = connect_or_start(paths, s.opts, force);
  return Submitting{paths, std::move(config), std::move(api)};
}

// The request's own limits as `POST /v1/plans` takes them; a usage error for a value that is not
// one.
api::LimitsRequest limit_fields(const SubmitLimits& l) {
  api::LimitsRequest out;
  if (l.max_cost < 0)
    throw CommandError{kUsage, "--max-cost must be above 0", "give US dollars, e.g. --max-cost 5"};
  if (l.max_cost > 0) out.max_cost_usd = l.max_cost;
  if (!l.max_runtime.empty()) {
    auto d = parse_duration(l.max_runtime);
    if (!d || d->count() <= 0)
      throw CommandError{kUsage, "--max-runtime " + l.max_runtime + " is not a duration",
                         "write e.g. --max-runtime 2h or 90m"};
    out.max_runtime = l.max_runtime;
  }
  if (l.max_iterations < 0)
    throw CommandError{kUsage, "--max-iterations must be 1 or more", "e.g. --max-iterations 3"};
  if (l.max_iterations > 0) out.max_iterations = l.max_iterations;
  return out;
}

}  // namespace

int run_submit(Session& s, const std::string& request, bool wait, bool yes, bool force,
               const SubmitLimits& limits) {
  const GlobalOptions& opts = s.opts;
  const api::LimitsRequest fields = limit_fields(limits);
  Submitting sub = prepare_submit(s, force);
  DaemonClient& api = sub.api;
  std::string id = submit_plan(api, request, fields);
  // The id is the command's result: printed even with -q, so `id=$(loopr -q submit …)` works.
  if (opts.json)
    std::cout << json{{"id", id}}.dump() << "\n" << std::flush;
  else
    std::cout << id << "\n" << std::flush;
  if (!wait) return kOk;
  return wait_for_plan(api, opts, id, yes);
}

int run_dry_run(Session& s, const std::string& request, bool force, const SubmitLimits& limits) {
  const GlobalOptions& opts = s.opts;
  const api::LimitsRequest fields = limit_fields(limits);
  Submitting sub = prepare_submit(s, force);
  const RepoPaths& paths = sub.paths;
  const Config& config = sub.config;
  DaemonClient& api = sub.api;
  const std::string id = submit_request(api, api::PlanRequest{request, /*dry_run=*/true, fields});
  if (!opts.quiet && !opts.json)
    std::cerr << "dry run: plan " << id << " runs up to the gate (Ctrl-C leaves it running)\n";
  // The plan loop ends on its own at the gate (the daemon ends a dry run there).
  api::LoopDetail detail;
  for (;;) {
    detail = show_loop(api, id);
    if (!under_way(detail.loop.status)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const api::LoopRow& loop = detail.loop;
  const bool reached_gate = loop.end_reason == EndReason::dry_run;
  std::string plan_text;
  if (reached_gate) plan_text = read_plan_artifact(paths, loop);
  const std::string validation = config.loop(LoopType::code).validation;
  if (opts.json) {
    json out = {{"id", id},
                {"reached_gate", reached_gate},
                {"status", to_string(loop.status)},
                {"reason", loop.status_reason},
                {"plan", reached_gate ? json(plan_text) : json(nullptr)},
                {"cost_usd", loop.cost_usd},
                {"validation", validation.empty() ? json(nullptr) : json(validation)}};
    if (detail.forecast) out["forecast"] = api::to_json(*detail.forecast);
    std::cout << out.dump() << "\n";
    return reached_gate ? kOk : kFailed;
  }
  if (!reached_gate) {
    throw CommandError{kFailed,
                       "the dry run's plan " + id + " ended before the gate: " +
                           to_string(loop.status) + " (" + loop.status_reason + ")",
                       "`loopr show " + id + "` has its iterations"};
  }
  if (opts.quiet) return kOk;
  Style style{stdout_color(opts)};
  std::cout << render_markdown(plan_text, style, terminal_width()) << "\n";
  std::cout << render_forecast(detail, style);
  std::cout << style.bold("validation: ")
            << (validation.empty() ? std::string("(none configured: loops.code.validation)")
                                   : "code loops run `" + validation + "`")
            << "\n";
  std::cout << "dry run of plan " << id << ": " << format_cost(loop.cost_usd)
            << " spent; the plan is kept as failed (`dry run`), nothing was merged; `loopr show "
            << id << "`\n";
  return kOk;
}

int run_list(Session& s, bool all, const ListFilter& filter) {
  const GlobalOptions& opts = s.opts;
  DaemonClient& api = s.api();
  // The daemon filters (and says what a bad filter should be: a 400 is exit 2).
  std::string query;
  auto add = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    query += (query.empty() ? "?" : "&") + std::string(key) + "=" + url_encode(value);
  };
  if (all) add("all", "true");
  add("status", filter.status);
  add("type", filter.type);
  add("plan", filter.plan);
  if (opts.json) {
    // The daemon writes INTERFACE.md's shape itself: passed on as it comes, not parsed and
    // written again (issue 18: a fresh `list --json` with 1,000 loops).
    add("view", "interface");
    std::cout << api.get_text("/v1/loops" + query) << "\n";
    return kOk;
  }
  std::vector<api::LoopRow> loops = list_loops(api, query);
  if (opts.quiet) return kOk;
  if (loops.empty()) {
    std::cout << "no loops yet; `loopr submit \"…\"` starts a plan\n";
    return kOk;
  }
  std::cout << render_tree_table(loops, Style{stdout_color(opts)}, now_ms());
  return kOk;
}

int run_show(Session& s, const std::string& id, std::optional<int> iteration) {
  const GlobalOptions& opts = s.opts;
  const RepoPaths& paths = s.paths();
  if (iteration) {
    // The transcript is files: readable without the daemon.
    if (*iteration < 1)
      throw CommandError{kUsage, "--iteration counts from 1",
                         "write `--iteration 1` for the first"};
    auto dir = paths.iteration_dir(id, *iteration);
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      api::LoopDetail loop = show_loop(s.api(), id);  // unknown id → exit 4
      if (*iteration <= loop.loop.iteration)
        throw CommandError{kUnknownId,
                           "the logs of loop " + id + "'s iteration " + std::to_string(*iteration) +
                               " are gone (`loopr gc` removed them)",
                           "`loopr show " + id + "` still lists its iterations"};
      throw CommandError{kUnknownId,
                         "loop " + id + " has no iteration " + std::to_string(*iteration) +
                             " (it has " + std::to_string(loop.loop.iteration) + ")",
                         "`loopr show " + id + "` lists its iterations"};
    }
    IterationLog log = read_iteration_log(paths, id, *iteration);
    if (opts.json)
      std::cout << iteration_log_json(log).dump(-1, ' ', false, json::error_handler_t::replace)
                << "\n";
    else if (!opts.quiet)
      std::cout << render_iteration_log(log, Style{stdout_color(opts)});
    return kOk;
  }
  DaemonClient& api = s.api();
  api::LoopDetail detail = show_loop(api, id);
  if (opts.json)
    std::cout << interface_show_json(detail).dump(-1, ' ', false, json::error_handler_t::replace)
              << "\n";
  else if (!opts.quiet)
    std::cout << render_loop_details(detail, Style{stdout_color(opts)}, now_ms());
  return kOk;
}

int run_review(Session& s, const std::string& id) {
  const GlobalOptions& opts = s.opts;
  DaemonClient& api = s.api();
  install_interrupt_handlers();
  Prompter prompter(STDIN_FILENO, ui_stream(opts));
  auto decisions = review_pending(api, opts, id, prompter);
  if (opts.json) {
    json list = json::array();
    for (const auto& d : decisions) {
      json item{{"id", d.id}, {"decision", to_string(d.decision)}};
      if (!d.text.empty()) item["text"] = d.text;
      list.push_back(std::move(item));
    }
    std::cout << json{{"reviewed", list}}.dump() << "\n";
  }
  return kOk;
}

namespace {

// One decision or control of a loop, `POST /v1/loops/{id}/{action}` with `body`: prints the loop
// after it (--json), or the line `said` makes of it (unless --quiet).
using Said = std::function<std::string(const api::LoopRow& after)>;

int act(Session& s, const std::string& action, const std::string& id, const json& body,
        const Said& said) {
  api::LoopRow loop = act_on(s.api(), id, action, body);
  if (s.opts.json)
    print_loop_json(loop);
  else if (!s.opts.quiet)
    std::cout << said(loop) << "\n";
  return kOk;
}

// pause, resume and stop: the loop and all its descendants. `raised`: `resume --max-cost USD
// --max-runtime D`, the tree's new caps after it paused at one (limits.at_cost_limit: pause).
int control(Session& s, const std::string& action, const std::string& id,
            const SubmitLimits& raised = {}) {
  struct Done {
    std::string_view action;
    const char* done;
  };
  static constexpr Done kDone[] = {{"pause", "paused"}, {"resume", "resumed"}, {"stop", "stopped"}};
  std::string done = action;
  for (const auto& d : kDone)
    if (d.action == action) done = d.done;
  return act(s, action, id, api::to_json(limit_fields(raised)), [&](const api::LoopRow& loop) {
    return done + " " + id + " and its descendants (now " + std::string(to_string(loop.status)) +
           ")";
  });
}

}  // namespace

int run_merge(Session& s, const std::string& plan_id, bool force) {
  const GlobalOptions& opts = s.opts;
  DaemonClient& api = s.api();
  // An integration tip changed since its last check is checked first: that runs the test
  // command, so the daemon may take as long as a code iteration may.
  MergeAnswer r = merge_plan(api, plan_id, force);
  if (opts.json) {
    std::cout << r.document.dump() << "\n";
  } else if (!opts.quiet && r.view.pr) {
    // merge: pr: pushed again and the pull request opened (or found); the base is the team's.
    const api::MergedPr& pr = *r.view.pr;
    const std::string number = "pull request #" + std::to_string(pr.number) + " " + shown(pr.url);
    if (pr.state == PullRequestState::merged)
      std::cout << number << " was merged on the forge: nothing to push\n";
    else
      std::cout << "pushed loopr/" << plan_id << " (" << r.view.sha.substr(0, 10) << "); "
                << number << "\n";
  } else if (!opts.quiet) {
    std::cout << "merged " << plan_id << " into " << r.view.base_branch;
    if (!r.view.sha.empty()) std::cout << " at " << r.view.sha.substr(0, 10);
    std::cout << "\n";
  }
  return kOk;
}

namespace {

CommandRun define_submit(CLI::App& submit) {
  struct Values {
    std::vector<std::string> request;
    bool wait = false, yes = false, dry_run = false, force = false;
    SubmitLimits limits;
  };
  auto v = std::make_shared<Values>();
  submit.add_option("request", v->request, "What you want built, in one line (quote it)")
      ->required();
  submit.add_flag("--wait", v->wait,
                  "Show the tree live until it ends (exit 0 complete, 1 failed or stopped); ask "
                  "at the approval gate");
  submit.add_flag("--yes", v->yes, "With --wait: approve the plan at the gate without asking");
  submit.add_flag("--dry-run", v->dry_run,
                  "Run the plan loop only up to the gate: show the plan, its forecast and the "
                  "code loops' validation command, then end it (kept as failed, reason `dry "
                  "run`; nothing is merged)");
  submit
      .add_option("--max-cost", v->limits.max_cost,
                  "This request's cost limit in US dollars, for its whole tree, in place of "
                  "limits.max_cost_usd (checked between model turns too)")
      ->option_text("USD");
  submit
      .add_option("--max-runtime", v->limits.max_runtime,
                  "This request's runtime limit from its approval (e.g. 2h), in place of "
                  "limits.max_runtime")
      ->option_text("D");
  submit
      .add_option("--max-iterations", v->limits.max_iterations,
                  "The most iterations each loop of this request's tree runs, in place of "
                  "loops.<type>.max_iterations")
      ->option_text("N");
  submit.add_flag("--force", v->force,
                  "Skip the checks that can be wrong (API key, validation command's program; "
                  "not the base branch or a merge in progress)");
  return CommandRun([v](Session& s) {
           if (v->dry_run) return run_dry_run(s, join_words(v->request), v->force, v->limits);
           return run_submit(s, join_words(v->request), v->wait, v->yes, v->force, v->limits);
         })
      .checked_by([v] {
        if (v->dry_run && (v->wait || v->yes))
          throw CommandError{kUsage, "--dry-run ends at the gate", "leave out --wait and --yes"};
        limit_fields(v->limits);
        if (join_words(v->request).find_first_not_of(" \t\r\n") == std::string::npos)
          throw CommandError{kUsage, "the request is empty",
                             v->dry_run ? "write `loopr submit --dry-run \"what you want built\"`"
                                        : "write `loopr submit \"what you want built\"`"};
      });
}

CommandRun define_list(CLI::App& list) {
  struct Values {
    bool all = false;
    ListFilter filter;
  };
  auto v = std::make_shared<Values>();
  list.add_flag("--all", v->all, "Include invalidated loops");
  list.add_option("--status", v->filter.status,
                  "Only loops with these statuses, comma-separated (e.g. running,blocked)")
      ->option_text("LIST");
  list.add_option("--type", v->filter.type, "Only loops of this type: plan, spec, phase or code")
      ->option_text("TYPE");
  list.add_option("--plan", v->filter.plan, "Only this plan's tree (e.g. 001)")->option_text("ID");
  return CommandRun([v](Session& s) { return run_list(s, v->all, v->filter); });
}

CommandRun define_show(CLI::App& show) {
  struct Values {
    std::string id;
    int iteration = 0;
    CLI::Option* iteration_opt = nullptr;
  };
  auto v = std::make_shared<Values>();
  show.add_option("id", v->id, "The loop's id, e.g. 001 or code-001-001-001")->required();
  v->iteration_opt =
      show.add_option("--iteration", v->iteration,
                      "Print that iteration's prompt, conversation and validation log instead")
          ->option_text("N");
  return CommandRun([v](Session& s) {
    return run_show(s, v->id,
                    v->iteration_opt->count() ? std::optional<int>(v->iteration) : std::nullopt);
  });
}

CommandRun define_review(CLI::App& review) {
  auto id = std::make_shared<std::string>();
  review.add_option("id", *id, "Only this plan or loop");
  return CommandRun([id](Session& s) { return run_review(s, *id); });
}

CommandRun define_approve(CLI::App& approve) {
  auto id = std::make_shared<std::string>();
  approve.add_option("id", *id, "The plan's id")->required();
  return CommandRun([id](Session& s) {
    return act(s, "approve", *id, json::object(),
               [&](const api::LoopRow&) { return "approved " + *id + "; its specs start now"; });
  });
}

CommandRun define_reject(CLI::App& reject) {
  auto id = std::make_shared<std::string>(), reason = std::make_shared<std::string>();
  reject.add_option("id", *id, "The plan's id")->required();
  reject.add_option("--reason", *reason, "Why, for the record")->option_text("TEXT");
  return CommandRun([id, reason](Session& s) {
    return act(s, "reject", *id, api::to_json(api::RejectRequest{*reason}),
               [&](const api::LoopRow&) { return "rejected " + *id; });
  });
}

CommandRun define_iterate(CLI::App& iterate) {
  struct Values {
    std::string id, feedback;
    bool from_pr = false;
  };
  auto v = std::make_shared<Values>();
  iterate.add_option("id", v->id, "The loop's id")->required();
  auto* feedback_opt =
      iterate.add_option("--feedback", v->feedback, "What to change")->option_text("TEXT");
  iterate
      .add_flag("--from-pr", v->from_pr,
                "merge: pr: the review comments on the plan's pull request since its last push "
                "are the feedback of a fix loop on its integration branch, whose work is pushed")
      ->excludes(feedback_opt);
  return CommandRun([v](Session& s) {
           if (v->from_pr)
             return act(s, "iterate", v->id, api::to_json(api::IterateRequest{"", false, true}),
                        [&](const api::LoopRow&) {
                          return v->id +
                                 ": a fix loop takes the review comments of its pull request; "
                                 "its work is pushed when it passes";
                        });
           return act(
               s, "iterate", v->id, api::to_json(api::IterateRequest{v->feedback, false, false}),
               [&](const api::LoopRow&) { return v->id + " iterates again with your feedback"; });
         })
      .checked_by([v] {
        if (!v->from_pr && v->feedback.find_first_not_of(" \t\r\n") == std::string::npos)
          throw CommandError{
              kUsage, "the feedback is empty",
              "write `loopr iterate " + v->id + " --feedback \"what to change\"` (or --from-pr)"};
      });
}

// pause and stop: the loop's id, nothing else.
CommandRun define_control(CLI::App& sub) {
  auto id = std::make_shared<std::string>();
  sub.add_option("id", *id, "The loop's id")->required();
  const std::string action = sub.get_name();
  return CommandRun([id, action](Session& s) { return control(s, action, *id); });
}

CommandRun define_resume(CLI::App& resume) {
  struct Values {
    std::string id;
    SubmitLimits raised;
  };
  auto v = std::make_shared<Values>();
  resume.add_option("id", v->id, "The loop's id")->required();
  resume
      .add_option("--max-cost", v->raised.max_cost,
                  "The tree's new cost limit in US dollars (a tree paused at its cap goes on; "
                  "must be above what it spent)")
      ->option_text("USD");
  resume
      .add_option("--max-runtime", v->raised.max_runtime,
                  "The tree's new runtime limit from its approval (e.g. 6h)")
      ->option_text("D");
  return CommandRun([v](Session& s) { return control(s, "resume", v->id, v->raised); });
}

CommandRun define_merge(CLI::App& merge) {
  struct Values {
    std::string id;
    bool force = false;
  };
  auto v = std::make_shared<Values>();
  merge.add_option("plan_id", v->id, "The plan's id")->required();
  merge.add_flag("--force", v->force,
                 "Merge even though the integration branch fails the code validation");
  return CommandRun([v](Session& s) { return run_merge(s, v->id, v->force); });
}

}  // namespace

const Command kSubmitCommand{
    "submit", "Create a plan loop for REQUEST and print its id; starts the daemon if needed", false,
    Needs::repo, define_submit};
const Command kListCommand{"list", "The loop tree: id, type, status, iteration/max, cost, age",
                           false, Needs::daemon, define_list};
const Command kShowCommand{
    "show",
    "One loop: fields, artifacts, last validation output, iterations table (exit 4 unknown id)",
    false, Needs::repo, define_show};
const Command kReviewCommand{"review",
                             "The approval gate: shows each plan awaiting approval and asks "
                             "[a]pprove [r]eject [i]terate [s]kip, and each question of a "
                             "loop and asks [a]nswer [s]kip (from stdin "
                             "line by line when it is not a terminal); lists plans held "
                             "for you with what holds them, and (merge: pr) new review "
                             "comments on their pull requests",
                             false, Needs::daemon, define_review};
const Command kApproveCommand{"approve",
                              "Approve a plan awaiting approval: its specs start (exit 4 "
                              "unknown id, 5 not awaiting approval)",
                              false, Needs::daemon, define_approve};
const Command kRejectCommand{"reject", "Reject a plan awaiting approval: it fails (exit 4, 5)",
                             false, Needs::daemon, define_reject};
const Command kIterateCommand{
    "iterate",
    "Run a loop again with your feedback: a plan (at the gate or after), or a failed, stopped "
    "or paused spec, phase or code loop; its children are invalidated (exit 4, 5)",
    false, Needs::daemon, define_iterate};
const Command kPauseCommand{
    "pause", "Pause a loop and all its descendants after their current iteration (exit 4, 5)",
    false, Needs::daemon, define_control};
const Command kResumeCommand{"resume",
                             "Resume a paused or stopped loop and its descendants (exit 4, 5)",
                             false, Needs::daemon, define_resume};
const Command kStopCommand{"stop", "Stop a loop and all its descendants now (exit 4, 5)", false,
                           Needs::daemon, define_control};
const Command kMergeCommand{
    "merge",
    "Merge a complete plan's integration branch into the base branch, for `merge: manual` or a "
    "plan its integration check blocked; a branch that fails the code validation is refused "
    "(exit 4, 5)",
    false, Needs::daemon, define_merge};

}  // namespace loopr::cli
