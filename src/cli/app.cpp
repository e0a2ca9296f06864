#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <optional>
#include <utility>
#include <vector>

#include <loopr/core/log.hpp>
#include <loopr/llm/mcp.hpp>

#include "cli/commands.hpp"
#include "cli/docgen.hpp"
#include "cli/terminal_guard.hpp"
#if __has_include("cli/demo.hpp")
#include "cli/demo.hpp"
#define LOOPR_HAS_DEMO 1
#endif

namespace loopr::cli {

namespace {

// Joins the words of an unquoted request (`loopr submit add a flag`) with single spaces.
std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

int run(int argc, char** argv) {
  setup_logging();
  CLI::App app{
      "loopr: turns a one-line feature request into reviewed, tested code in a git repository.\n"
      "A daemon runs a tree of LLM loops (plan -> spec -> phase -> code); you approve plans,\n"
      "review artifacts and commits in git.\n"
      "Exit codes: 0 ok, 1 failed, 2 usage or config error, 3 daemon not reachable,\n"
      "4 unknown id, 5 not allowed in the loop's current state, 130 interrupted.",
      "loopr"};
  app.set_version_flag("--version", "loopr 0.1.0");
  app.require_subcommand(0, 1);
  GlobalOptions opts;
  app.add_option("-C", opts.directory, "Run as if started in DIR")->option_text("DIR");
  app.add_flag("--json", opts.json, "Print one JSON document on stdout (no colour), for scripts");
  app.add_flag("-q,--quiet", opts.quiet,
               "Print nothing but errors (and a command's result, e.g. submit's id)");
  app.fallthrough();
  // The build makes the man page and the shell completions from this definition (docgen.hpp).
  std::string generate_docs;
  app.add_option("--generate-docs", generate_docs, "man | bash | zsh")->group("");

  // The command table: each subcommand with what runs it, registered where it is defined; a
  // nested command comes before its parent (the first parsed one runs).
  std::vector<std::pair<CLI::App*, std::function<int()>>> commands;
  auto on = [&commands](CLI::App* sub, std::function<int()> run) {
    commands.emplace_back(sub, std::move(run));
  };

  std::string base;
  auto* init = app.add_subcommand(
      "init",
      "Write .loopr/config.yml (commented defaults, and the test command found in the "
      "repository) and ignore loopr's runtime folders in git");
  init->add_option("--base", base,
                   "Base branch the plans' work merges into (default: the current branch)")
      ->option_text("BRANCH");
  std::string init_validation;
  auto* init_validation_opt =
      init->add_option("--validation", init_validation,
                       "The command that runs your tests (loops.code.validation); default: found "
                       "from the repository (package.json, Cargo.toml, go.mod, CMakeLists.txt and "
                       "others; see docs/guide.md)")
          ->option_text("CMD");
  bool init_dry_run = false;
  init->add_flag("--dry-run", init_dry_run,
                 "Only show the test commands found, which ones can run here (and why not), the "
                 "choice and the toolchain folders it would show; write nothing");
  on(init, [&] {
    return run_init(opts, base,
                    init_validation_opt->count() ? std::optional(init_validation) : std::nullopt,
                    init_dry_run);
  });
  auto* config = app.add_subcommand(
      "config", "Check .loopr/config.yml and print the effective settings (environment applied)");
  on(config, [&] { return run_config(opts); });
  std::string validate_kind, validate_file;
  auto* validate = app.add_subcommand("validate",
                                      "Check the format of a plan, spec or phase artifact; prints "
                                      "FILE:LINE: message per problem (exit 1 if any)");
  validate->add_option("kind", validate_kind, "plan | spec | phase")->required();
  validate->add_option("file", validate_file, "The artifact's markdown file")->required();
  on(validate, [&] { return run_validate(opts, validate_kind, validate_file); });

  bool foreground = false;
  auto* daemon = app.add_subcommand("daemon",
                                    "Run the service for this repository; without --foreground it "
                                    "starts in the background and returns once it "
                                    "answers (exit 0 also when it already runs)");
  daemon->add_flag("--foreground", foreground,
                   "Run in this process until Ctrl-C, SIGTERM or `loopr daemon stop` (exit 1 if "
                   "another daemon serves the repository)");
  bool daemon_force = false;
  daemon->add_flag("--force", daemon_force,
                   "Start even if the model provider's prerequisites look unmet (API key, the "
                   "claude CLI)");
  daemon->require_subcommand(0, 1);
  auto* daemon_status = daemon->add_subcommand(
      "status", "Is the daemon up: pid, uptime, loops by status (exit 3 if not running)");
  auto* daemon_stop =
      daemon->add_subcommand("stop",
                             "Stop the daemon gracefully and wait until it has exited (exit 3 if "
                             "not running): running iterations are cut short, what they wrote is "
                             "checkpointed, and their loops resume when the daemon starts again");
  bool drain = false;
  std::string drain_timeout;
  daemon_stop->add_flag("--drain", drain,
                        "Let the iterations in flight finish (model turns, validation, "
                        "checkpoint, record) and start no new one, then stop");
  daemon_stop
      ->add_option("--timeout", drain_timeout,
                   "With --drain: stop as without it once this has passed (default 30m)")
      ->option_text("D");
  on(daemon_status, [&] { return run_daemon_status(opts); });
  on(daemon_stop, [&] {
    if (!drain && !drain_timeout.empty())
      throw CommandError{kUsage, "--timeout is the limit of a drain", "add --drain"};
    return run_daemon_stop(opts, drain, drain_timeout);
  });
  on(daemon, [&] { return run_daemon_command(opts, foreground, daemon_force); });

  std::vector<std::string> request;
  bool wait = false, yes = false;
  auto* submit = app.add_subcommand(
      "submit", "Create a plan loop for REQUEST and print its id; starts the daemon if needed");
  submit->add_option("request", request, "What you want built, in one line (quote it)")->required();
  submit->add_flag("--wait", wait,
                   "Show the tree live until it ends (exit 0 complete, 1 failed or stopped); ask "
                   "at the approval gate");
  submit->add_flag("--yes", yes, "With --wait: approve the plan at the gate without asking");
  bool dry_run = false;
  submit->add_flag("--dry-run", dry_run,
                   "Run the plan loop only up to the gate: show the plan, its forecast and the "
                   "code loops' validation command, then end it (kept as failed, reason `dry "
                   "run`; nothing is merged)");
  SubmitLimits limits;
  submit
      ->add_option("--max-cost", limits.max_cost,
                   "This request's cost limit in US dollars, for its whole tree, in place of "
                   "limits.max_cost_usd (checked between model turns too)")
      ->option_text("USD");
  submit
      ->add_option("--max-runtime", limits.max_runtime,
                   "This request's runtime limit from its approval (e.g. 2h), in place of "
                   "limits.max_runtime")
      ->option_text("D");
  submit
      ->add_option("--max-iterations", limits.max_iterations,
                   "The most iterations each loop of this request's tree runs, in place of "
                   "loops.<type>.max_iterations")
      ->option_text("N");
  bool force = false;
  submit->add_flag("--force", force,
                   "Skip the checks that can be wrong (API key, validation command's program; "
                   "not the base branch or a merge in progress)");
  on(submit, [&] {
    if (dry_run && (wait || yes))
      throw CommandError{kUsage, "--dry-run ends at the gate", "leave out --wait and --yes"};
    if (dry_run) return run_dry_run(opts, join_words(request), force, limits);
    return run_submit(opts, join_words(request), wait, yes, force, limits);
  });

  bool all = false;
  auto* list =
      app.add_subcommand("list", "The loop tree: id, type, status, iteration/max, cost, age");
  list->add_flag("--all", all, "Include invalidated loops");
  ListFilter list_filter;
  list->add_option("--status", list_filter.status,
                   "Only loops with these statuses, comma-separated (e.g. running,blocked)")
      ->option_text("LIST");
  list->add_option("--type", list_filter.type, "Only loops of this type: plan, spec, phase or code")
      ->option_text("TYPE");
  list->add_option("--plan", list_filter.plan, "Only this plan's tree (e.g. 001)")
      ->option_text("ID");
  on(list, [&] { return run_list(opts, all, list_filter); });

  std::string id;
  int iteration = 0;
  auto* show = app.add_subcommand(
      "show",
      "One loop: fields, artifacts, last validation output, iterations table (exit 4 unknown id)");
  show->add_option("id", id, "The loop's id, e.g. 001 or code-001-001-001")->required();
  auto* iteration_opt =
      show->add_option("--iteration", iteration,
                       "Print that iteration's prompt, conversation and validation log instead")
          ->option_text("N");
  on(show, [&] {
    return run_show(opts, id,
                    iteration_opt->count() ? std::optional<int>(iteration) : std::nullopt);
  });

  auto* review = app.add_subcommand("review",
                                    "The approval gate: shows each plan awaiting approval and asks "
                                    "[a]pprove [r]eject [i]terate [s]kip, and each question of a "
                                    "loop and asks [a]nswer [s]kip (from stdin "
                                    "line by line when it is not a terminal); lists plans held "
                                    "for you with what holds them, and (merge: pr) new review "
                                    "comments on their pull requests");
  review->add_option("id", id, "Only this plan or loop");
  on(review, [&] { return run_review(opts, id); });

  auto* approve = app.add_subcommand("approve",
                                     "Approve a plan awaiting approval: its specs start (exit 4 "
                                     "unknown id, 5 not awaiting approval)");
  approve->add_option("id", id, "The plan's id")->required();
  on(approve, [&] { return run_gate(opts, "approve", id, ""); });
  std::string reason;
  auto* reject =
      app.add_subcommand("reject", "Reject a plan awaiting approval: it fails (exit 4, 5)");
  reject->add_option("id", id, "The plan's id")->required();
  reject->add_option("--reason", reason, "Why, for the record")->option_text("TEXT");
  on(reject, [&] { return run_gate(opts, "reject", id, reason); });
  std::string feedback;
  auto* iterate = app.add_subcommand(
      "iterate",
      "Run a loop again with your feedback: a plan (at the gate or after), or a failed, stopped "
      "or paused spec, phase or code loop; its children are invalidated (exit 4, 5)");
  iterate->add_option("id", id, "The loop's id")->required();
  bool from_pr = false;
  auto* feedback_opt =
      iterate->add_option("--feedback", feedback, "What to change")->option_text("TEXT");
  iterate
      ->add_flag("--from-pr", from_pr,
                 "merge: pr: the review comments on the plan's pull request since its last push "
                 "are the feedback of a fix loop on its integration branch, whose work is pushed")
      ->excludes(feedback_opt);
  on(iterate, [&] {
    return from_pr ? run_gate(opts, "iterate-from-pr", id, "")
                   : run_gate(opts, "iterate", id, feedback);
  });

  auto* pause = app.add_subcommand(
      "pause", "Pause a loop and all its descendants after their current iteration (exit 4, 5)");
  pause->add_option("id", id, "The loop's id")->required();
  on(pause, [&] { return run_control(opts, "pause", id); });
  auto* resume = app.add_subcommand(
      "resume", "Resume a paused or stopped loop and its descendants (exit 4, 5)");
  resume->add_option("id", id, "The loop's id")->required();
  SubmitLimits raised;
  resume
      ->add_option("--max-cost", raised.max_cost,
                   "The tree's new cost limit in US dollars (a tree paused at its cap goes on; "
                   "must be above what it spent)")
      ->option_text("USD");
  resume
      ->add_option("--max-runtime", raised.max_runtime,
                   "The tree's new runtime limit from its approval (e.g. 6h)")
      ->option_text("D");
  on(resume, [&] { return run_control(opts, "resume", id, raised); });
  auto* stop = app.add_subcommand("stop", "Stop a loop and all its descendants now (exit 4, 5)");
  stop->add_option("id", id, "The loop's id")->required();
  on(stop, [&] { return run_control(opts, "stop", id); });

  std::vector<std::string> answer_words;
  auto* answer = app.add_subcommand(
      "answer",
      "Answer a loop's question (status awaiting_answer); it runs again with the answer in its "
      "next prompt (exit 4 unknown id, 5 no question waiting)");
  answer->add_option("id", id, "The loop's id")->required();
  answer->add_option("text", answer_words, "The answer (quote it)")->required();
  on(answer, [&] { return run_answer(opts, id, join_words(answer_words)); });

  bool follow = false;
  auto* logs =
      app.add_subcommand("logs", "The event log, of everything or of one loop and its descendants");
  logs->add_option("id", id, "Only this loop and its descendants");
  logs->add_flag("-f,--follow", follow,
                 "Keep printing new events until Ctrl-C; survives a daemon restart (--json: one "
                 "event per line)");
  on(logs, [&] { return run_logs(opts, id, follow); });

  auto* watch = app.add_subcommand(
      "watch",
      "The live loop tree, redrawn in place until Ctrl-C (printed on change when not a terminal)");
  on(watch, [&] { return run_watch(opts); });

  bool force_merge = false;
  auto* merge = app.add_subcommand(
      "merge",
      "Merge a complete plan's integration branch into the base branch, for `merge: manual` or a "
      "plan its integration check blocked; a branch that fails the code validation is refused "
      "(exit 4, 5)");
  merge->add_option("plan_id", id, "The plan's id")->required();
  merge->add_flag("--force", force_merge,
                  "Merge even though the integration branch fails the code validation");
  on(merge, [&] { return run_merge(opts, id, force_merge); });

  // Hidden: loopr's own network bridge inside the claude CLI's sandbox (llm/host_proxy.hpp).
  std::string bridge_socket;
  int bridge_port = 0;
  std::vector<std::string> bridge_command;
  auto* bridge = app.add_subcommand("sandbox-bridge", "loopr's network bridge in a sandbox");
  bridge->group("");
  bridge->add_option("socket", bridge_socket)->required();
  bridge->add_option("port", bridge_port)->required();
  bridge->add_option("command", bridge_command)->required();
  on(bridge, [&] { return run_sandbox_bridge(bridge_socket, bridge_port, bridge_command); });

  // Hidden: loopr's own tools as an MCP server for an agent CLI, in its sandbox (llm/mcp.hpp).
  std::string mcp_socket;
  auto* mcp = app.add_subcommand("mcp-serve", "loopr's tools as an MCP server for an agent CLI");
  mcp->group("");
  mcp->add_option("socket", mcp_socket)->required();
  std::vector<std::string> mcp_aliases;
  mcp->add_option("--alias", mcp_aliases, "an own tool shown under another name: NAME=SHOWN");
  on(mcp, [&] {
    llm::McpAliases aliases;
    for (const std::string& a : mcp_aliases) {
      auto eq = a.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == a.size()) {
        std::cerr << "loopr: --alias takes NAME=SHOWN, not `" << a
                  << "` (e.g. ask_user=ask_person)\n";
        return 2;
      }
      aliases[a.substr(0, eq)] = a.substr(eq + 1);
    }
    return llm::run_mcp_serve(mcp_socket, aliases);
  });

  bool offline = false;
  auto* doctor = app.add_subcommand(
      "doctor",
      "Check that this machine and repository are ready: git, config, sandbox, the model "
      "provider's key or CLI, the test command, the model endpoint, disk space, the daemon, and "
      "the tests in a fresh worktree of the base branch (exit 1 if not)");
  doctor->add_flag("--offline", offline, "Do not send the request that checks the model endpoint");
  bool skip_tests = false;
  doctor->add_flag("--skip-tests", skip_tests,
                   "Do not run the setup and the tests in a fresh worktree of the base branch");
  on(doctor, [&] { return run_doctor(opts, offline, skip_tests); });

  int web_port = 0;
  bool web_open = false, web_stop = false;
  auto* web = app.add_subcommand(
      "web",
      "Serve the browser view (tree, loops, diffs, transcripts, the gate) on 127.0.0.1 behind a "
      "random token and print its address; starts the daemon if needed");
  web->add_option("--port", web_port, "Listen on this port (default: a free one)")
      ->option_text("N");
  web->add_flag("--open", web_open,
                "Open the address in the browser (xdg-open, else sensible-browser)");
  web->add_flag("--stop", web_stop, "Stop serving it (the address stops working)");
  on(web, [&] { return run_web(opts, web_port, web_open, web_stop); });

  std::string stats_since;
  auto* stats = app.add_subcommand(
      "stats",
      "What loopr has spent, per plan and in total: cost, tokens, model calls, iterations, loops "
      "by outcome, wall time (from the store; works without the daemon)");
  stats
      ->add_option("--since", stats_since,
                   "Only what happened in this last stretch, e.g. 7d or 12h")
      ->option_text("D");
  on(stats, [&] { return run_stats(opts, stats_since); });

  bool gc_dry_run = false;
  std::string gc_older_than;
  auto* gc = app.add_subcommand(
      "gc",
      "Remove what trees that ended left behind: their worktrees (what they held is kept on "
      "loopr/archive/<id>), loop branches whose commits are merged, archived attempts after "
      "gc.keep_archived, merged integration branches; prints what went and the space freed "
      "(exit 1 if something could not be removed)");
  gc->add_flag("--dry-run", gc_dry_run, "Only say what would be removed");
  gc->add_option("--older-than", gc_older_than,
                 "Only trees that ended at least this long ago (default gc.older_than, 7d)")
      ->option_text("D");
  bool gc_caches = false;
  gc->add_flag("--caches", gc_caches,
               "Also clear this repository's build caches (.loopr/cache/: Go, cargo, npm, pip, "
               "uv, ccache, Gradle); the next commands fill them again");
  on(gc, [&] { return run_gc(opts, gc_dry_run, gc_older_than, gc_caches); });

#ifdef LOOPR_HAS_DEMO
  bool demo_yes = false;
  auto* demo = app.add_subcommand(
      "demo",
      "Run the bundled example end to end, offline, with the scripted model (.loopr-example/)");
  demo->add_flag("--yes", demo_yes, "Approve the plan without asking");
  on(demo, [&] { return run_demo(opts, demo_yes); });
#endif

  // Subcommand help shows only the subcommand's own options: point at the global ones.
  const std::string footer =
      "Global options (before or after the command): -C DIR, --json, -q; see `loopr --help`.";
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    sub->footer(footer);
    for (CLI::App* nested : sub->get_subcommands([](CLI::App*) { return true; }))
      nested->footer(footer);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kOk;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return kOk;
  } catch (const CLI::CallForVersion&) {
    std::cout << "loopr 0.1.0\n";
    return kOk;
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    return report(CommandError{kUsage, msg, "see loopr --help"});
  }

  if (!generate_docs.empty()) return print_generated_doc(app, generate_docs, "loopr 0.1.0");

  // Everything a command prints passes the terminal filter (terminal_guard.hpp); the daemon in
  // the foreground writes only its log.
  std::optional<TerminalGuard> guard;
  if (!(daemon->parsed() && foreground) && !bridge->parsed() && !mcp->parsed())
    guard.emplace(opts.json);
  try {
    for (const auto& [sub, run_it] : commands)
      if (sub->parsed()) return run_it();
    std::cout << app.help();
    return kOk;
  } catch (const CommandError& e) {
    return report(e);
  } catch (const std::exception& e) {
    return report(CommandError{kFailed, e.what(), "this is a bug in loopr; please report it"});
  }
}

}  // namespace loopr::cli
