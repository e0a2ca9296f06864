// One loop, iteration after iteration (DESIGN.md "One iteration"):
//   1 read state · 2 render the prompt · 3+4 talk with the model (scheduler slots, tools)
//   5 validate · 6 checkpoint-commit and record atomically · 7 decide: complete, go on, or stop.
// The model never decides anything about the loop; every branch below is plain code.
#include <re2/re2.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <functional>

#include <loopr/core/ids.hpp>
#include <loopr/core/process.hpp>
#include <loopr/engine/engine.hpp>
#include <loopr/engine/feedback.hpp>
#include <loopr/engine/prompt_vars.hpp>
#include <loopr/engine/test_output.hpp>
#include <loopr/git/worktree.hpp>
#include <loopr/tools/tool_router.hpp>

#include "engine/conversation.hpp"
#include "engine/coordination.hpp"
#include "engine/transcript.hpp"
#include "engine/until_stopped.hpp"
#include "engine/validation.hpp"

namespace loopr::engine {
namespace {

// A check that ends the run before another iteration starts; empty when none applies.
struct Limit {
  LoopStatus status = LoopStatus::running;
  std::string reason;
};

// `plan_start`: when the tree's runtime started (`limits.max_runtime` counts from there): the
// plan's approval (or the person's last iterate), its submit before that.
Limit check_limits(EngineContext& ctx, const Loop& loop, const Config& config,
                   TimestampMs plan_start) {
  if (loop.iteration >= loop.max_iterations)
    return {LoopStatus::failed, "reached the maximum of " + std::to_string(loop.max_iterations) +
                                    " iterations without passing validation"};
  if (config.limits.max_loop_cost_usd > 0 && loop.usage.cost_usd >= config.limits.max_loop_cost_usd)
    return {LoopStatus::failed, "the loop's cost limit of $" + std::to_string(config.limits.max_loop_cost_usd) +
                                    " was reached (limits.max_loop_cost_usd)"};
  if (config.limits.max_cost_usd > 0) {
    double tree = ctx.costs.total(loop.plan_id);
    if (tree >= config.limits.max_cost_usd) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "plan %s has spent $%.2f, its cost limit is $%.2f (limits.max_cost_usd)",
                    loop.plan_id.c_str(), tree, config.limits.max_cost_usd);
      return {LoopStatus::failed, buf};
    }
  }
  if (config.limits.max_runtime.count() > 0) {
    if (now_ms() - plan_start >= config.limits.max_runtime.count())
      return {LoopStatus::failed,
              "plan " + loop.plan_id + " has worked longer than its limit of " +
                  format_duration(config.limits.max_runtime) +
                  (loop.type == LoopType::plan ? "" : " since it was approved") +
                  " (limits.max_runtime)"};
  }
  return {};
}

// The variables every command run for a loop gets (run_command, validation, stop scripts).
std::map<std::string, std::string> command_env(const Loop& loop, int n) {
  return {{"LOOPR_LOOP_ID", loop.id}, {"LOOPR_ITERATION", std::to_string(n)}, {"LOOPR_LOOP_TYPE", to_string(loop.type)},
          {"LOOPR_PLAN_ID", loop.plan_id}};
}

// Whether a loop runs commands at all (then it cannot go on without a working sandbox).
bool needs_commands(const Loop& loop, const Config& config) {
  return loop.type == LoopType::code || !config.limits.stop_scripts.empty();
}

// Stop scripts (`limits.stop_scripts`): exit 0 stops the loop, their output is the reason. They
// run in the sandbox like every command: they read the worktree the model changed.
std::optional<std::string> run_stop_scripts(exec::Executor& executor, const Loop& loop, const Config& config,
                                            const std::string& validation_log, int n) {
  for (const auto& script : config.limits.stop_scripts) {
    exec::Command cmd = exec::Command::shell(script, loop.worktree);
    cmd.timeout = std::chrono::minutes(1);
    cmd.output_cap = 4096;
    cmd.env = command_env(loop, n);
    cmd.stdin_data = validation_log;
    auto r = executor.run(cmd);
    if (r.exit_code == 0 && !r.timed_out) {
      std::string why = first_line(r.output, 200);
      return "stop script `" + script + "`: " + (why.empty() ? std::string("(no output)") : why);
    }
  }
  return std::nullopt;
}

std::optional<std::string> match_stop_pattern(const Config& config, const std::string& output) {
  for (const auto& pattern : config.limits.stop_on_patterns) {
    re2::RE2 re(pattern, re2::RE2::Quiet);
    if (re.ok() && re2::RE2::PartialMatch(output, re))
      return "the validation output matched the stop pattern `" + pattern + "` (limits.stop_on_patterns)";
  }
  return std::nullopt;
}

class IterationRun {
 public:
  IterationRun(EngineContext& ctx, std::shared_ptr<LoopControl> control) : ctx_(ctx), control_(std::move(control)) {}

  // Runs iteration `loop.iteration + 1`; `loop` is the stored loop afterwards. (The loop is
  // passed by reference down to the one write that stores it: every Loop a suspended coroutine
  // frame holds is ~0.9 KB per running loop.)
  awaitable<Result<void>> run(Loop& loop) {
    std::shared_ptr<const Config> config_ptr = ctx_.config;
    const Config& config = *config_ptr;
    const int n = loop.iteration + 1;
    const TimestampMs started = now_ms();
    const RepoPaths& paths = ctx_.paths;

    std::vector<Event> started_events;
    started_events.push_back(make_event(loop.id, "iteration_started", {{"n", n}}));
    co_await ctx_.journal.note(std::move(started_events));

    // 1. Read state.
    IterationState state = co_await run_blocking(ctx_.pool, [&] {
      const TimestampMs t0 = now_ms();
      IterationState read = read_state(loop, config, &ctx_.journal.store());
      state_ms_ = now_ms() - t0;
      return read;
    });
    if (!state.error.empty())
      co_return co_await finish(loop, LoopStatus::failed, "its worktree cannot be read: " + state.error, {});

    // 2. Render the prompt; the feedback of earlier iterations is IN it, never a message history.
    std::string template_name = loop.prompt_template.empty() ? to_string(loop.type) : loop.prompt_template;
    auto prompt = ctx_.prompts.render(template_name, prompt_vars(loop, config, state, n));
    if (!prompt) co_return co_await finish(loop, LoopStatus::failed, "its prompt template: " + prompt.error().message, {});
    // Notes from the plan's other loops and the person's answer (engine/coordination.hpp).
    *prompt += co_await run_blocking(ctx_.pool, [&] { return coordination_sections(ctx_.journal.store(), loop, config); });
    co_await run_blocking(ctx_.pool, [&] { write_iteration_file(paths, loop.id, n, "prompt.md", *prompt); });

    // 3+4. The conversation (scheduler slots are taken per model call inside).
    tools::ToolLimits limits;
    limits.command_max_timeout = std::chrono::duration_cast<std::chrono::seconds>(config.loop(loop.type).iteration_timeout);
    tools::ToolPolicy policy = tools::policy_for(
        loop.type, config, loop.output_artifacts.empty() ? std::string() : loop.output_artifacts.front());
    policy.command_env = command_env(loop, n);
    auto router = std::make_shared<tools::ToolRouter>(tools::Sandbox(loop.worktree), ctx_.runners, ctx_.executor,
                                                      std::move(policy), limits);
    std::string header_type = to_string(loop.type);
    Conversation conv = co_await converse(ctx_, loop, control_, *prompt, router, header_type,
                                          config.loop(loop.type).max_turns_per_iteration);
    co_await run_blocking(ctx_.pool, [&] {
      write_iteration_file(paths, loop.id, n, "conversation.jsonl", conversation_jsonl(conv.messages, conv.calls));
    });
    loop.usage += conv.usage;

    if (conv.end == Conversation::End::error) co_return co_await model_error(loop, conv);
    if (conv.end == Conversation::End::stopped) {
      Validation not_run;  // a named value: g++ 12 destroys a `{}` temporary twice across co_await
      co_return co_await record(loop, n, started, "stopped", not_run, conv, LoopStatus::stopped,
                                control_->stop_reason());
    }
    if (conv.end == Conversation::End::refused) {
      std::string why = "the model refused";
      if (conv.refusal.contains("category") && conv.refusal["category"].is_string())
        why += " (" + conv.refusal["category"].get<std::string>() + ")";
      if (conv.refusal.contains("explanation") && conv.refusal["explanation"].is_string())
        why += ": " + conv.refusal["explanation"].get<std::string>();
      Validation none;
      none.summary = why;
      co_return co_await record(loop, n, started, "error", none, conv, LoopStatus::failed, why);
    }

    // 5. Validate.
    Validation v = co_await validate(ctx_, loop, control_, state.input);
    loop.usage += v.judge_usage;
    co_await run_blocking(ctx_.pool, [&] {
      write_iteration_file(paths, loop.id, n, "validation.log", v.output + executor_note(v));
    });
    if (v.stopped)
      co_return co_await record(loop, n, started, "stopped", v, conv, LoopStatus::stopped,
                                control_->stop_reason());
    if (v.could_not_start) {
      // The sandbox or the cluster never ran the check: not the code's failure, so no failed
      // iteration and nothing for the model. The loop waits for the person (the work stays in
      // the worktree; `loopr resume` runs iteration n again).
      ctx_.costs.add(loop.plan_id, conv.usage.cost_usd);
      std::string why = "the validation could not run: " + v.feedback + "; then `loopr resume " + loop.id + "`";
      auto events = infrastructure_events(loop, n, v);
      co_return co_await finish(loop, LoopStatus::paused, why, std::move(events));
    }

    // 7 (decided before 6 so the record and the commit message say the same thing).
    re2::RE2 signal(config.limits.completion_signal, re2::RE2::Quiet);
    bool signalled = signal.ok() && !config.limits.completion_signal.empty() &&
                     re2::RE2::PartialMatch(conv.assistant_text, signal);
    bool passed = v.passed && (v.has_check || signalled);
    loop.run.consecutive_errors = 0;
    // An answer is shown once; a new question replaces the old one (a passing loop drops it).
    if (!loop.run.answer.empty()) loop.run.question.clear(), loop.run.answer.clear();
    if (!conv.question.empty() && !passed) loop.run.question = conv.question;

    LoopStatus next = LoopStatus::running;
    std::string reason;
    if (passed) {
      next = loop.type == LoopType::plan ? LoopStatus::awaiting_approval : LoopStatus::complete;
      reason = v.has_check ? v.summary : "completion signal matched";
      if (config.attended && loop.type != LoopType::plan) {
        // Attended: a passing iteration waits for the person too, before anything builds on it
        // (its merge, its children). A plan waits at its gate anyway.
        next = LoopStatus::paused;
        loop.run.attended_passed = n;
        reason = "attended mode: iteration " + std::to_string(n) + " passed (" + reason +
                 "); `loopr resume " + loop.id + "` completes it, `loopr iterate " + loop.id +
                 " --feedback …` sends it back to work";
      }
    } else {
      FeedbackEntry fb{n, loop.type == LoopType::code ? "validation" : "format check", v.summary, v.feedback};
      if (!v.has_check) {
        fb.summary = "no completion signal";
        fb.text = "There is no validation command for this loop, so it ends only when you write " +
                  config.limits.completion_signal + " after finishing the task.";
      }
      if (conv.end == Conversation::End::context_exceeded)
        fb.text += "\n\nThe conversation filled the model's context window. Do less per iteration and read only what you need.";
      if (conv.end == Conversation::End::max_turns)
        fb.text += "\n\nThe iteration ended after " + std::to_string(conv.turns) +
                   " model turns (max_turns_per_iteration). Work in smaller steps.";
      add_feedback(loop.run, fb);
    }

    // 6. Checkpoint commit, so git is the audit trail of every iteration.
    std::string message = "loopr(" + loop.id + "): iteration " + std::to_string(n) + ": " +
                          (passed ? "passed" : "failed: " + first_line(v.summary, 72));
    auto commit = co_await run_blocking(ctx_.pool, [&] {
      const TimestampMs t0 = now_ms();
      auto made = git::Worktree::checkpoint_at(loop.worktree, message);
      checkpoint_ms_ = now_ms() - t0;
      return made;
    });
    if (!commit) co_return co_await finish(loop, LoopStatus::failed, "its checkpoint commit failed: " + commit.error().message, {});
    bool changed = commit->kind == git::CommitOutcome::Kind::committed;
    loop.run.head = commit->sha;

    if (!passed) {
      // Deterministic stop conditions, in order of how much they say about the loop. "The same
      // failure" is the same output with timings, temp paths, pids … taken out (test_output.hpp).
      std::string hash = output_fingerprint(v.output, {{loop.worktree}});
      int stale =
          (!changed && loop.run.last_validation_hash == hash) ? loop.run.no_progress + 1 : 0;
      loop.run.no_progress = stale;
      loop.run.last_validation_hash = hash;
      if (auto why = match_stop_pattern(config, v.output)) {
        next = LoopStatus::stopped;
        reason = *why;
      } else if (auto script = co_await run_blocking(
                     ctx_.pool, [&] { return run_stop_scripts(ctx_.executor, loop, config, v.output, n); })) {
        next = LoopStatus::stopped;
        reason = *script;
      } else if (!conv.question.empty() && n < loop.max_iterations) {
        next = LoopStatus::awaiting_answer;  // holds no slot: the run ends until `loopr answer`
        reason = conv.question;
      } else if (stale >= config.limits.no_progress_iterations) {
        next = LoopStatus::failed;
        reason = "no progress: " + std::to_string(stale) + " iterations in a row changed nothing and failed the same way";
      } else if (n >= loop.max_iterations) {
        next = LoopStatus::failed;
        reason = "reached the maximum of " + std::to_string(loop.max_iterations) + " iterations; last: " + v.summary;
      } else if (config.attended || control_->pause_requested()) {
        next = LoopStatus::paused;
        reason = config.attended ? "attended mode: `loopr resume " + loop.id + "` to run the next iteration"
                                 : "paused by the user";
      }
    }
    const char* result = passed ? "passed" : next == LoopStatus::awaiting_answer ? "asked" : "failed";
    co_return co_await record(loop, n, started, result, v, conv, next, reason,
                              commit->sha);
  }

 private:
  // Where the check ran, for `loopr show ID --iteration N` (the log only: v.output is compared
  // between iterations, and job ids always differ).
  static std::string executor_note(const Validation& v) {
    if (v.jobs.empty() && v.infrastructure_failures.empty()) return {};
    std::string note = "\n[loopr: Slurm job";
    note += v.jobs.size() == 1 ? " " : "s ";
    for (std::size_t i = 0; i < v.jobs.size(); ++i) note += (i ? ", " : "") + v.jobs[i];
    note += "]\n";
    for (const auto& f : v.infrastructure_failures) note += "[loopr: retried: " + f + "]\n";
    return note;
  }

  // One `executor_retry` event per try the cluster lost (the job never ran, or was lost).
  static std::vector<Event> infrastructure_events(const Loop& loop, int n, const Validation& v) {
    std::vector<Event> events;
    for (const auto& what : v.infrastructure_failures)
      events.push_back(make_event(loop.id, "executor_retry", {{"n", n}, {"reason", what}, {"jobs", v.jobs}}));
    return events;
  }

  // Ends the run without an iteration record (setup problems).
  awaitable<Result<void>> finish(Loop& loop, LoopStatus status, std::string reason,
                                 std::vector<Event> events) {
    auto stored =
        co_await ctx_.journal.save_status(loop, status, std::move(reason), std::move(events));
    if (!stored) co_return stored.take_error();
    loop = std::move(*stored);
    co_return ok();
  }

  // Stores `loop` with `events`; `loop` is the stored record afterwards.
  awaitable<Result<void>> store(Loop& loop, std::vector<Event> events) {
    auto stored = co_await ctx_.journal.save(loop, std::move(events));
    if (!stored) co_return stored.take_error();
    loop = std::move(*stored);
    co_return ok();
  }

  // A model call failed for good. Fatal: the loop fails with the provider's message. Retryable
  // (retries used up): the iteration is not counted; the circuit breaker counts it. Its tokens
  // were spent all the same, so they stay in the loop's cost.
  awaitable<Result<void>> model_error(Loop& loop, const Conversation& conv) {
    const llm::LlmError& err = *conv.error;
    const Config& config = *ctx_.config;
    int errors = loop.run.consecutive_errors + 1;
    loop.run.consecutive_errors = errors;
    loop.run.last_error = err.describe();
    std::vector<Event> events = {make_event(loop.id, "llm_error", {{"kind", llm::to_string(err.kind)},
                                                                   {"retryable", err.retryable},
                                                                   {"status", err.http_status},
                                                                   {"message", err.describe()},
                                                                   {"consecutive", errors}})};
    if (!err.retryable)
      co_return co_await finish(loop, LoopStatus::failed, "model call failed: " + err.describe(),
                                std::move(events));
    if (errors >= config.limits.circuit_breaker)
      co_return co_await finish(loop, LoopStatus::failed,
                                "circuit breaker: " + std::to_string(errors) +
                                    " consecutive errors; last: " + err.describe(),
                                std::move(events));
    auto stored = co_await store(loop, std::move(events));
    if (!stored) co_return stored;
    // Back off before the same iteration is tried again: 2 s, 4 s, … at most a minute.
    auto wait = std::chrono::milliseconds(
        std::min<long long>(60'000, ctx_.error_backoff.count() << std::min(errors - 1, 6)));
    co_await sleep_unless_stopped(*control_, wait);
    co_return stored;
  }

  awaitable<Result<void>> record(Loop& loop, int n, TimestampMs started, std::string status,
                                 const Validation& v, const Conversation& conv, LoopStatus next,
                                 std::string reason, std::string sha = {}) {
    IterationRecord rec;
    rec.loop_id = loop.id;
    rec.n = n;
    rec.status = std::move(status);
    rec.exit_code = v.exit_code;
    rec.usage = conv.usage;
    rec.usage += v.judge_usage;
    rec.started_at = started;
    rec.finished_at = now_ms();
    rec.duration_ms = rec.finished_at - started;
    rec.summary = v.summary.empty() ? reason : v.summary;
    rec.output_excerpt = cap_head_tail(v.output, 4096);
    rec.details = {{"turns", conv.turns},
                   {"tool_calls", conv.tool_calls},
                   {"end", static_cast<int>(conv.end)},
                   {"commit", sha},
                   {"validation_command", v.command},
                   {"model_ms", conv.model_ms},
                   {"validation_ms", v.duration_ms},
                   // Where the rest of the iteration's time went (tools/bench/engine_bench).
                   {"state_ms", state_ms_},
                   {"checkpoint_ms", checkpoint_ms_},
                   {"timed_out", v.timed_out}};

    loop.iteration = n;
    loop.progress = render_feedback(loop.run.feedback, ctx_.config->limits.feedback_bytes);
    if (!v.jobs.empty()) rec.details["jobs"] = v.jobs;
    std::vector<Event> events = infrastructure_events(loop, n, v);
    events.push_back(make_event(loop.id, "validation_finished",
                                {{"n", n}, {"passed", rec.status == "passed"}, {"summary", v.summary},
                                 {"exit_code", v.exit_code ? nlohmann::json(*v.exit_code) : nlohmann::json(nullptr)},
                                 {"jobs", v.jobs}}));
    events.push_back(make_event(loop.id, "cost", {{"n", n}, {"cost_usd", rec.usage.cost_usd},
                                                  {"input_tokens", rec.usage.input_tokens},
                                                  {"output_tokens", rec.usage.output_tokens},
                                                  {"loop_cost_usd", loop.usage.cost_usd}}));
    events.push_back(make_event(loop.id, "iteration_finished", {{"n", n}, {"status", rec.status}, {"summary", rec.summary},
                                                                {"duration_ms", rec.duration_ms}}));
    if (next == LoopStatus::awaiting_answer)
      events.push_back(make_event(loop.id, "question_asked", {{"n", n}, {"question", loop.run.question}}));
    if (next != loop.status) {
      if (auto t = transition(loop, next, reason, events); !t) co_return t.take_error();
    }
    // The loop's new state, its iteration record and the events: ONE atomic write.
    WriteSet set;
    set.updates.push_back(loop);
    set.iterations.push_back(rec);
    set.events = std::move(events);
    auto stored = co_await ctx_.journal.commit(std::move(set));
    if (!stored) co_return stored.take_error();
    ctx_.costs.add(loop.plan_id, rec.usage.cost_usd);
    loop = std::move(stored->loops.front());
    co_return ok();
  }

  EngineContext& ctx_;
  std::shared_ptr<LoopControl> control_;
  std::int64_t state_ms_ = 0;       ///< reading the worktree's state for the prompt
  std::int64_t checkpoint_ms_ = 0;  ///< the checkpoint commit
};

// The run's one Loop is changed in place by these (see IterationRun::run on frame sizes).

// `loop` moved to `to` and stored; left as it was when that is refused.
awaitable<Result<void>> move_loop(LoopJournal& journal, Loop& loop, LoopStatus to,
                                  std::string reason) {
  auto stored = co_await journal.save_status(loop, to, std::move(reason));
  if (!stored) co_return stored.take_error();
  loop = std::move(*stored);
  co_return ok();
}

awaitable<Result<void>> load_loop(LoopJournal& journal, std::string id, Loop& out) {
  auto loaded = co_await journal.load(std::move(id));
  if (!loaded) co_return loaded.take_error();
  out = std::move(*loaded);
  co_return ok();
}

// When the plan was submitted (`fallback` if it cannot be read).
// When `plan`'s runtime started counting (TreeMarks::runtime_from): its last approval or
// iterate, else its submit.
TimestampMs runtime_start(const Loop& plan) {
  return plan.tree.runtime_from > 0 ? plan.tree.runtime_from : plan.created_at;
}

awaitable<TimestampMs> plan_runtime_start(LoopJournal& journal, std::string plan_id,
                                          TimestampMs fallback) {
  auto plan = co_await journal.load(std::move(plan_id));
  co_return plan ? runtime_start(*plan) : fallback;
}

// The gate's say; `loop` is the stored record afterwards.
awaitable<bool> ask_gate(IterationGate& gate, Loop& loop) {
  IterationGate::Verdict verdict = co_await gate.before_iteration(loop);
  loop = std::move(verdict.loop);
  co_return verdict.go_on;
}

}  // namespace

awaitable<RunExit> LoopRunner::run(std::string loop_id, std::shared_ptr<LoopControl> control,
                                   IterationGate* gate) {
  LoopJournal& journal = ctx_.journal;
  RunExit exit;
  Loop& loop = exit.loop;
  Result<void> step = co_await load_loop(journal, loop_id, loop);
  if (!step) {
    spdlog::error("cannot run loop {}: {}", loop_id, step.error().message);
    co_return RunExit{};
  }
  if (loop.status == LoopStatus::invalidated) co_return exit;
  if (loop.status != LoopStatus::running) {
    step = co_await move_loop(journal, loop, LoopStatus::running, "");
    if (!step) {
      spdlog::error("cannot start loop {}: {}", loop_id, step.error().message);
      co_return exit;
    }
  }
  // When the tree's runtime started (approval, not submit: the gate's wait is the person's
  // time); it changes only while no loop of the tree runs, so it is read once per run.
  TimestampMs plan_start = runtime_start(loop);
  if (loop.plan_id != loop.id)
    plan_start = co_await plan_runtime_start(journal, loop.plan_id, loop.created_at);

  IterationRun iteration(ctx_, control);
  while (true) {
    std::shared_ptr<const Config> config = ctx_.config;
    if (control->stop_requested()) {
      step = co_await move_loop(journal, loop, LoopStatus::stopped, control->stop_reason());
      co_return exit;
    }
    if (control->pause_requested()) {
      step = co_await move_loop(journal, loop, LoopStatus::paused, "paused by the user");
      co_return exit;
    }
    if (!loop.run.question.empty() && loop.run.answer.empty()) {
      // Resumed (or restarted) while its question is still open: it waits for the answer.
      step = co_await move_loop(journal, loop, LoopStatus::awaiting_answer, loop.run.question);
      co_return exit;
    }
    if (loop.run.attended_passed > 0 && loop.run.attended_passed == loop.iteration) {
      // Resumed after an attended pause on a passing iteration: the person let it complete.
      std::string why = "iteration " + std::to_string(loop.iteration) +
                        " passed; completed when the person resumed it";
      loop.run.attended_passed = 0;
      step = co_await move_loop(journal, loop, LoopStatus::complete, why);
      co_return exit;
    }
    if (gate) {
      bool go_on = co_await ask_gate(*gate, loop);
      if (!go_on) co_return exit;
    }
    if (needs_commands(loop, *config)) {
      // No silent fallback: without a working sandbox a loop that runs commands waits for the
      // person (who installs what is missing, or chooses `sandbox: none`) instead of failing.
      auto problem = co_await run_blocking(ctx_.pool, [&] { return ctx_.executor.unavailable(); });
      if (problem) {
        step = co_await move_loop(journal, loop, LoopStatus::blocked,
                                  "commands cannot run: " + *problem + "; then `loopr resume " + loop.id + "`");
        co_return exit;
      }
    }
    // Plain arithmetic on the record, the config and the cost ledger: no store read.
    if (Limit limit = check_limits(ctx_, loop, *config, plan_start);
        limit.status != LoopStatus::running) {
      step = co_await move_loop(journal, loop, limit.status, limit.reason);
      co_return exit;
    }

    step = co_await iteration.run(loop);
    if (!step) {
      // A store conflict or an illegal transition: a bug or a concurrent writer. Reload and end
      // the run rather than overwrite what someone else stored.
      spdlog::error("loop {}: {}", loop_id, step.error().message);
      step = co_await load_loop(journal, loop_id, loop);
      co_return exit;
    }
    if (loop.status != LoopStatus::running) co_return exit;
    if (config->limits.cooldown.count() > 0) co_await sleep_unless_stopped(*control, config->limits.cooldown);
  }
}

}  // namespace loopr::engine
