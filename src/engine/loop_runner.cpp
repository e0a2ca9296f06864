// One loop, iteration after iteration (DESIGN.md "One iteration"):
//   1 read state · 2 render the prompt · 3+4 talk with the model (scheduler slots, tools)
//   5 validate · 6 checkpoint-commit and record atomically · 7 decide: complete, go on, or stop.
// The model never decides anything about the loop; every branch below is plain code.
#include <re2/re2.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <functional>

#include <loopr/api/events.hpp>
#include <loopr/core/disk.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/core/process.hpp>
#include <loopr/core/sweep_handoff.hpp>
#include <loopr/engine/engine.hpp>
#include <loopr/engine/feedback.hpp>
#include <loopr/engine/prompt_vars.hpp>
#include <loopr/git/worktree.hpp>
#include <loopr/tools/tool_router.hpp>

#include "engine/conversation.hpp"
#include "engine/coordination.hpp"
#include "engine/iteration_rules.hpp"
#include "engine/protection.hpp"
#include "engine/review.hpp"
#include "engine/transcript.hpp"
#include "engine/until_stopped.hpp"
#include "engine/validation.hpp"

namespace loopr::engine {
namespace {

// The variables every command run for a loop gets (run_command, validation, stop scripts).
std::map<std::string, std::string> command_env(const Loop& loop, int n) {
  return {{"LOOPR_LOOP_ID", loop.id}, {"LOOPR_ITERATION", std::to_string(n)},
          {"LOOPR_LOOP_TYPE", to_string(loop.type)}, {"LOOPR_PLAN_ID", loop.plan_id}};
}

// Whether a loop runs commands at all (then it cannot go on without a working sandbox).
bool needs_commands(const Loop& loop, const Config& config) {
  return loop.type == LoopType::code || !config.limits.stop_scripts.empty();
}

// Stop scripts (`limits.stop_scripts`): exit 0 stops the loop, their output is the reason. They
// run in the sandbox like every command: they read the worktree the model changed.
std::optional<std::string> run_stop_scripts(exec::Executor& executor, const Loop& loop,
                                            const Config& config,
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

// Why the model refused, for a person.
std::string refusal_text(const Conversation& conv) {
  std::string why = "the model refused";
  if (conv.refusal.contains("category") && conv.refusal["category"].is_string())
    why += " (" + conv.refusal["category"].get<std::string>() + ")";
  if (conv.refusal.contains("explanation") && conv.refusal["explanation"].is_string())
    why += ": " + conv.refusal["explanation"].get<std::string>();
  return why;
}

// The state and the rendered prompt of one iteration (steps 1 and 2).
struct Prepared {
  IterationState state;
  std::string system;  ///< the template's fixed sections (prompt caching's shared prefix)
  std::string prompt;  ///< the iteration's opening message
};

// Template variables whose values are the same for every loop of a type and every iteration:
// a section that uses only these goes to the system block, which prompt caching shares.
const std::vector<std::string> kStableVariables = {"completion-signal", "validation-command",
                                                   "max-items", "loop-type"};

// The free space where the loop writes: the repository (store, logs) and its worktree, the
// smaller of the two (they may be different file systems: executor.worktree_root).
struct DiskLook {
  std::optional<std::uint64_t> free;
  std::string dir;
};

DiskLook look_at_disk(const RepoPaths& paths, const Loop& loop) {
  DiskLook look{free_bytes(paths.root), paths.root.string()};
  if (!loop.worktree.empty()) {
    auto wt = free_bytes(loop.worktree);
    if (wt && (!look.free || *wt < *look.free)) look = {wt, loop.worktree};
  }
  return look;
}

// The `cost_limit` event of a loop that pauses at its tree's cap (limits.at_cost_limit: pause),
// for notify and `loopr review`; nullopt for any other move.
std::optional<Event> limit_event(const EngineContext& ctx, const Loop& loop, const Move& move,
                                 const Config& file_config, const RequestBudget& budget) {
  const bool capped = move.end == EndReason::cost_limit || move.end == EndReason::runtime_limit;
  if (move.status != LoopStatus::paused || !capped) return std::nullopt;
  const Config config = with_budget(file_config, budget);
  api::CostLimitEvent e;
  e.plan_id = loop.plan_id;
  e.spent_usd = ctx.costs.total(loop.plan_id);
  e.max_cost_usd = config.limits.max_cost_usd;
  e.input_tokens = ctx.costs.input_tokens(loop.plan_id);
  e.max_input_tokens = config.limits.max_input_tokens;
  const bool tokens = e.max_input_tokens > 0 && e.input_tokens >= e.max_input_tokens &&
                      !(e.max_cost_usd > 0 && e.spent_usd >= e.max_cost_usd);
  e.limit = move.end == EndReason::runtime_limit ? "runtime" : tokens ? "input_tokens" : "cost";
  e.reason = move.reason;
  return api::encode(loop.id, e);
}

class IterationRun {
 public:
  IterationRun(EngineContext& ctx, std::shared_ptr<LoopControl> control, RequestBudget budget,
               TimestampMs plan_start)
      : ctx_(ctx), control_(std::move(control)), budget_(budget), plan_start_(plan_start) {}

  // Runs iteration `loop.iteration + 1`; `loop` is the stored loop afterwards. (The loop is
  // passed by reference down to the one write that stores it: every Loop a suspended coroutine
  // frame holds is ~0.9 KB per running loop.) The decisions are iteration_rules'; this is the
  // I/O around them: read → render → converse → validate → checkpoint → decide → record.
  awaitable<Result<void>> run(Loop& loop) {
    std::shared_ptr<const Config> config_ptr = tree_config(ctx_.config, budget_);
    const Config& config = *config_ptr;
    const int n = loop.iteration + 1;
    const TimestampMs started = now_ms();
    commands_ran_ = false;
    validated_last_ = false;
    tool_writes_ = {};
    std::vector<Event> started_events = {api::encode(loop.id, api::IterationStarted{n})};
    co_await ctx_.journal.note(std::move(started_events));

    // 1+2. Read state and render the prompt (the feedback of earlier iterations is IN it).
    Result<Prepared> prepared = co_await prepare(loop, config, n);
    if (!prepared) co_return co_await fail(loop, prepared.error().message);

    // 3+4. The conversation (scheduler slots are taken per model call inside).
    Conversation conv = co_await talk(loop, config, n, *prepared);
    loop.usage += conv.usage;
    if (conv.end == Conversation::End::error) co_return co_await model_error(loop, conv);
    IterationFacts facts = facts_of(conv);

    // 5. Validate, unless the conversation ended the iteration (stopped, refused, a limit): first the
    // protected files (a changed harness must not decide), then the check, then the review.
    if (facts.end != Conversation::End::stopped && facts.end != Conversation::End::refused &&
        facts.end != Conversation::End::limit) {
      if (checks_protection(loop)) {
        auto breaches = co_await run_blocking(ctx_.pool, [&] {
          return protection_breaches(loop, config, prepared->state.input);
        });
        if (!breaches) co_return co_await fail(loop, "its changes cannot be checked against the protected paths: " + breaches.error().message);
        facts.breaches = std::move(*breaches);
      }
      if (!facts.breaches.empty()) {
        facts.validation = breach_validation(loop, config, facts.breaches);
      } else {
        commands_ran_ = commands_ran_ || loop.type == LoopType::code;  // the validation command
        facts.validation = co_await validate(ctx_, loop, control_, prepared->state.input);
        // Nothing writes the worktree between it and the checkpoint (the review only reads).
        validated_last_ = loop.type == LoopType::code;
      }
      loop.usage += facts.validation->judge_usage;
      co_await run_blocking(ctx_.pool, [&] {
        write_iteration_file(ctx_.paths, loop.id, n, "validation.log",
                             facts.validation->output + executor_note(*facts.validation));
      });
      if (checks_passed(facts) && wants_review(loop, config))
        co_await review(loop, n, prepared->state.input, facts);
    }

    // 6. Checkpoint commit (git is the audit trail of every iteration), then the stop scripts.
    std::string sha;
    // Whether anything but loopr's file tools may have written the worktree since the last
    // checkpoint: then the checkpoint walks it whole, else it stages what the tools wrote.
    commands_ran_ =
        commands_ran_ || tool_writes_.unknown ||
        ctx_.llm.for_provider(config.provider_for(call_role(loop, to_string(loop.type))))
            .runs_own_tools();
    if (checkpointed(facts)) {
      auto commit = co_await checkpoint(loop, checkpoint_message(loop, n, facts));
      if (!commit) {
        const std::string why = "its checkpoint commit failed: " + commit.error().message;
        // A full disk is not the loop's failure: it pauses, and the iteration runs again.
        if (auto full = co_await disk_full(loop, config, why)) co_return co_await finish(loop, *full, {});
        co_return co_await fail(loop, why);
      }
      facts.changed = commit->kind == git::CommitOutcome::Kind::committed;
      sha = loop.run.head = commit->sha;
      if (checks_protection(loop) && checks_passed(facts))
        co_await check_committed(loop, config, prepared->state.input, sha, facts);
      if (wants_stop_scripts(facts, config))
        facts.stop_script = co_await run_blocking(ctx_.pool, [&] {
          return run_stop_scripts(ctx_.executor, loop, config, facts.validation->output, n);
        });
      else
        clean_at_ = sha;  // the worktree is this commit's tree until something writes again
    }
    drop_handed_sweep(loop.worktree);  // a listing no checkpoint took is not kept

    // 7. Decide (iteration_rules), then store it all at once.
    facts.pause_requested = control_->pause_requested();
    IterationVerdict verdict = decide(loop, n, facts, config);
    if (verdict.record.empty()) {
      ctx_.costs.add(loop.plan_id, conv.usage.cost_usd,
                     total_input(conv.usage));  // spent, though no iteration counts
      co_return co_await finish(loop, verdict.move, infrastructure_events(loop, n, *facts.validation));
    }
    co_return co_await record(loop, n, started, verdict, facts, conv, sha);
  }

 private:
  awaitable<Result<Prepared>> prepare(const Loop& loop, const Config& config, int n) {
    Prepared out;
    out.state = co_await run_blocking(ctx_.pool, [&] {
      const TimestampMs t0 = now_ms();
      IterationState read = read_state(loop, config, &ctx_.journal.store(), clean_at_);
      state_ms_ = now_ms() - t0;
      return read;
    });
    clean_from_ = std::move(clean_at_);  // the model's tools and commands write from here on
    clean_at_.clear();
    if (!out.state.error.empty())
      co_return make_error(ErrorCode::io, "its worktree cannot be read: " + out.state.error);
    std::string name = loop.prompt_template.empty() ? to_string(loop.type) : loop.prompt_template;
    auto parts =
        ctx_.prompts.render_parts(name, prompt_vars(loop, config, out.state, n), kStableVariables);
    if (!parts)
      co_return make_error(ErrorCode::invalid_argument,
                           "its prompt template: " + parts.error().message);
    out.system = std::move(parts->fixed);
    out.prompt = std::move(parts->rest);
    // Notes from the plan's other loops and the person's answer (engine/coordination.hpp).
    out.prompt += co_await run_blocking(
        ctx_.pool, [&] { return coordination_sections(ctx_.journal.store(), loop, config); });
    // The whole prompt as the model reads it: the system block, then the opening message.
    co_await run_blocking(ctx_.pool, [&] {
      write_iteration_file(ctx_.paths, loop.id, n, "prompt.md",
                           out.system.empty() ? out.prompt : out.system + "\n" + out.prompt);
    });
    co_return out;
  }

  awaitable<Conversation> talk(const Loop& loop, const Config& config, int n,
                               const Prepared& prompt) {
    tools::ToolLimits limits;
    limits.command_max_timeout =
        std::chrono::duration_cast<std::chrono::seconds>(config.loop(loop.type).iteration_timeout);
    // loops.<type>.iteration_max_runtime: the model turns and tool commands together.
    const Duration max_runtime = config.loop(loop.type).iteration_max_runtime;
    if (max_runtime.count() > 0) limits.deadline = std::chrono::steady_clock::now() + max_runtime;
    tools::ToolPolicy policy = tools::policy_for(
        loop.type, config, loop.output_artifacts.empty() ? std::string() : loop.output_artifacts.front());
    policy.command_env = command_env(loop, n);
    auto router = std::make_shared<tools::ToolRouter>(tools::Sandbox(loop.worktree), ctx_.runners,
                                                      ctx_.executor, std::move(policy), limits);
    // The tree's limits between turns too (iteration_rules: check_turn_limits); the cost ledger
    // holds what the tree's other loops spent meanwhile.
    TurnCheck between_turns = [this, &loop, &config](const Usage& so_far) {
      return check_turn_limits(loop, config, ctx_.costs.total(loop.plan_id), so_far, now_ms(),
                               plan_start_, budget_, ctx_.costs.input_tokens(loop.plan_id));
    };
    Conversation conv =
        co_await converse(ctx_, loop, control_, prompt.prompt, router, to_string(loop.type),
                          config.loop(loop.type).max_turns_per_iteration, std::move(between_turns),
                          {}, prompt.system, limits.deadline);
    tool_writes_ = router->writes();
    co_await run_blocking(ctx_.pool, [&] {
      write_iteration_file(ctx_.paths, loop.id, n, "conversation.jsonl",
                           conversation_jsonl(conv.messages, conv.calls));
    });
    co_return conv;
  }

  IterationFacts facts_of(const Conversation& conv) const {
    IterationFacts f;
    f.end = conv.end;
    f.turns = conv.turns;
    f.reverted = static_cast<int>(conv.reverted.size());
    f.question = conv.question;
    if (conv.end == Conversation::End::refused) f.refusal = refusal_text(conv);
    const std::string& signal_text = ctx_.config->limits.completion_signal;
    re2::RE2 signal(signal_text, re2::RE2::Quiet);
    f.signalled = signal.ok() && !signal_text.empty() && re2::RE2::PartialMatch(conv.assistant_text, signal);
    f.stop_reason = control_->stop_reason();
    f.stop_end = control_->stop_end();
    f.limit = {conv.limit_end, conv.limit_reason};
    return f;
  }

  // The reviewer's say on a passing code iteration (loops.review), with its own cost; a stop
  // during it stops the iteration like a stop during the tests.
  awaitable<void> review(Loop& loop, int n, const std::string& phase, IterationFacts& facts) {
    ReviewResult r = co_await review_code(ctx_, loop, control_, phase, facts.validation->output, n);
    loop.usage += r.usage;
    co_await run_blocking(ctx_.pool, [&] {
      write_iteration_file(ctx_.paths, loop.id, n, "review.md", r.transcript);
    });
    if (r.stopped) facts.validation->stopped = true;  // its tokens still count (record)
    facts.review = std::move(r);
  }

  // The protection rule and the merge policy again on exactly what the checkpoint committed (a
  // test the tests rewrote while they ran): a finding fails the iteration, naming the files.
  awaitable<void> check_committed(const Loop& loop, const Config& config, const std::string& input,
                                  const std::string& sha, IterationFacts& facts) {
    std::vector<Breach> breaches;
    auto found = co_await run_blocking(ctx_.pool, [&] {
      return committed_check(loop, config, input, ctx_.paths.root, sha, breaches);
    });
    if (!found) {
      spdlog::warn("loop {}: its checkpoint cannot be checked: {}", loop.id, found.error().message);
      Validation v = *facts.validation;
      v.passed = false;
      v.summary = "its checkpoint cannot be checked against the protected paths: " +
                  found.error().message;
      facts.validation = std::move(v);
      co_return;
    }
    if (!*found) co_return;
    facts.breaches = std::move(breaches);
    Validation v = std::move(**found);
    v.duration_ms = facts.validation->duration_ms;
    facts.validation = std::move(v);
    co_await run_blocking(ctx_.pool, [&] {
      write_iteration_file(ctx_.paths, loop.id, loop.iteration + 1, "validation.log",
                           facts.validation->output);
    });
  }

  awaitable<Result<git::CommitOutcome>> checkpoint(const Loop& loop, std::string message) {
    co_return co_await run_blocking(ctx_.pool, [&] {
      const TimestampMs t0 = now_ms();
      auto made = commands_ran_ || clean_from_.empty()
                      ? git::Worktree::checkpoint_at(loop.worktree, message, validated_last_)
                      : git::Worktree::checkpoint_written(loop.worktree, message, clean_from_,
                                                          tool_writes_.paths);
      checkpoint_ms_ = now_ms() - t0;
      return made;
    });
  }

  // The review in the iteration record and its event (the feedback is in the record's summary
  // and the loop's feedback; the whole exchange in review.md).
  static nlohmann::json review_json(const ReviewResult& r) {
    return {{"verdict", to_string(r.verdict)}, {"summary", r.summary},   {"model", r.model},
            {"cost_usd", r.usage.cost_usd},    {"attempts", r.attempts}, {"input_tokens", r.usage.input_tokens},
            {"output_tokens", r.usage.output_tokens}};
  }
  static api::ReviewFinished review_event(int n, const ReviewResult& r) {
    return {n,
            std::string(to_string(r.verdict)),
            r.summary,
            cap_head_tail(r.feedback, 4096),
            r.model,
            r.attempts,
            r.usage.cost_usd,
            r.usage.input_tokens,
            r.usage.output_tokens};
  }

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
      events.push_back(api::encode(loop.id, api::ExecutorRetry{n, what, v.jobs}));
    return events;
  }

  // Ends the run without an iteration record (setup problems, a check that never ran).
  awaitable<Result<void>> finish(Loop& loop, const Move& move, std::vector<Event> events) {
    auto stored = co_await ctx_.journal.save_status(loop, move.status, move.end, move.reason,
                                                    std::move(events));
    if (!stored) co_return stored.take_error();
    loop = std::move(*stored);
    co_return ok();
  }

  // Whether a failed write was for want of space (its text, or the disk below the floor now):
  // the move that pauses the loop (`disk_full`), else nullopt.
  awaitable<std::optional<Move>> disk_full(const Loop& loop, const Config& config, std::string what) {
    DiskLook look = co_await run_blocking(ctx_.pool, [&] { return look_at_disk(ctx_.paths, loop); });
    const bool low = look.free && config.limits.min_free_space > 0 && *look.free < config.limits.min_free_space;
    if (!is_no_space(what) && !low) co_return std::nullopt;
    co_return on_disk_full(loop, look.free, look.dir, first_line(what, 200));
  }

  // loopr itself cannot go on with this loop (its worktree, template or checkpoint).
  awaitable<Result<void>> fail(Loop& loop, std::string why) {
    Move move{LoopStatus::failed, EndReason::internal_error, std::move(why)};
    co_return co_await finish(loop, move, {});
  }

  // A model call failed for good (iteration_rules: on_model_error). Its tokens were spent all
  // the same, so they stay in the loop's cost. A retryable one is not an iteration: the same
  // iteration is tried again after a back-off.
  awaitable<Result<void>> model_error(Loop& loop, const Conversation& conv) {
    const llm::LlmError& err = *conv.error;
    Move move = on_model_error(loop, err, *ctx_.config);
    const int errors = loop.run.consecutive_errors;
    std::vector<Event> events = {api::encode(
        loop.id, api::LlmErrorEvent{std::string(llm::to_string(err.kind)), err.retryable,
                                    err.http_status, err.describe(), errors})};
    if (!move.goes_on()) co_return co_await finish(loop, move, std::move(events));
    auto stored = co_await ctx_.journal.save(loop, std::move(events));
    if (!stored) co_return stored.take_error();
    loop = std::move(*stored);
    co_await sleep_unless_stopped(*control_, error_backoff(ctx_.error_backoff, errors));
    co_return ok();
  }

  awaitable<Result<void>> record(Loop& loop, int n, TimestampMs started, const IterationVerdict& verdict,
                                 const IterationFacts& facts, const Conversation& conv, const std::string& sha) {
    const Validation not_run;  // a named value: g++ 12 destroys a `{}` temporary twice across co_await
    const Validation& v = facts.validation ? *facts.validation : not_run;
    const Move& move = verdict.move;
    IterationRecord rec;
    rec.loop_id = loop.id;
    rec.n = n;
    rec.status = verdict.record;
    rec.exit_code = v.exit_code;
    rec.usage = conv.usage;
    rec.usage += v.judge_usage;
    if (facts.review) rec.usage += facts.review->usage;
    rec.started_at = started;
    rec.finished_at = now_ms();
    rec.duration_ms = rec.finished_at - started;
    rec.summary = v.summary.empty() ? move.reason : v.summary;
    if (conv.end == Conversation::End::max_runtime)
      rec.summary += "; the " + runtime_ran_out(loop, *ctx_.config, conv.turns);
    if (facts.review && !facts.review->stopped) rec.summary += "; " + facts.review->summary;
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
                   // Prompt caching's receipt: the same calls without it (judge, review as spent).
                   {"uncached_cost_usd",
                    conv.uncached_cost_usd + rec.usage.cost_usd - conv.usage.cost_usd},
                   {"timed_out", v.timed_out}};
    if (move.end != EndReason::none) rec.details["end_reason"] = to_string(move.end);
    // A subscription login's receipt: what the CLI reported, which nobody is billed per token
    // (counted in cost_usd only under limits.count_subscription_cost).
    if (conv.notional_cost_usd) rec.details["notional_cost_usd"] = *conv.notional_cost_usd;
    if (!facts.breaches.empty()) {
      nlohmann::json files = nlohmann::json::array();
      for (const Breach& b : facts.breaches)
        files.push_back({{"path", b.path}, {"change", to_string(b.kind)},
                         {"role", b.role == Breach::Role::test ? "test" : "harness"}});
      rec.details["protected"] = std::move(files);
    }
    if (facts.review) rec.details["review"] = review_json(*facts.review);

    loop.iteration = n;
    loop.progress = render_feedback(loop.run.feedback, ctx_.config->limits.feedback_bytes);
    if (!v.jobs.empty()) rec.details["jobs"] = v.jobs;
    std::vector<Event> events = infrastructure_events(loop, n, v);
    events.push_back(api::encode(loop.id, api::ValidationFinished{n, rec.status == "passed",
                                                                  v.summary, v.exit_code, v.jobs}));
    if (facts.review && !facts.review->stopped)
      events.push_back(api::encode(loop.id, review_event(n, *facts.review)));
    events.push_back(
        api::encode(loop.id, api::CostEvent{n, rec.usage.cost_usd, rec.usage.input_tokens,
                                            rec.usage.output_tokens, loop.usage.cost_usd,
                                            rec.usage.cache_read_tokens,
                                            rec.usage.cache_write_tokens}));
    events.push_back(
        api::encode(loop.id, api::IterationFinished{n, rec.status, rec.summary, rec.duration_ms}));
    if (move.status == LoopStatus::awaiting_answer)
      events.push_back(api::encode(loop.id, api::QuestionAsked{n, loop.run.question}));
    if (auto capped = limit_event(ctx_, loop, move, *ctx_.config, budget_))
      events.push_back(std::move(*capped));
    if (move.status != loop.status) {
      if (auto t = transition(loop, move.status, move.end, move.reason, events); !t) co_return t.take_error();
    }
    // The loop's new state, its iteration record and the events: ONE atomic write.
    WriteSet set;
    set.updates.push_back(loop);
    set.iterations.push_back(rec);
    set.events = std::move(events);
    auto stored = co_await ctx_.journal.commit(std::move(set));
    if (!stored) co_return stored.take_error();
    ctx_.costs.add(loop.plan_id, rec.usage.cost_usd, total_input(rec.usage));
    loop = std::move(stored->loops.front());
    co_return ok();
  }

  EngineContext& ctx_;
  std::shared_ptr<LoopControl> control_;
  RequestBudget budget_;     ///< the plan's own limits (submit --max-cost …)
  TimestampMs plan_start_;   ///< when the tree's runtime started counting
  std::int64_t state_ms_ = 0;       ///< reading the worktree's state for the prompt
  std::int64_t checkpoint_ms_ = 0;  ///< the checkpoint commit
  /// The checkpoint after which nothing wrote the worktree (no tool, no command: the next state
  /// read needs no walk of it), or empty. Known only within this run: a new run reads it whole.
  std::string clean_at_;
  std::string clean_from_;           ///< clean_at_ as this iteration started
  tools::ToolRouter::Writes tool_writes_;  ///< what this iteration's tools wrote
  bool commands_ran_ = false;        ///< a command ran in the worktree in this iteration
  bool validated_last_ = false;      ///< the validation command is the last that ran there
};

// The run's one Loop is changed in place by these (see IterationRun::run on frame sizes).

// `loop` moved as `move` says and stored; left as it was when that is refused.
awaitable<Result<void>> move_loop(LoopJournal& journal, Loop& loop, const Move& move) {
  auto stored = co_await journal.save_status(loop, move.status, move.end, move.reason);
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

// What a run needs of its plan: when the tree's runtime started and the request's own limits.
struct PlanFacts {
  TimestampMs start = 0;
  RequestBudget budget;
};

awaitable<PlanFacts> plan_facts(LoopJournal& journal, std::string plan_id, TimestampMs fallback) {
  auto plan = co_await journal.load(std::move(plan_id));
  if (!plan) co_return PlanFacts{fallback, {}};
  co_return PlanFacts{runtime_start(*plan), plan->tree.budget};
}

// A store write failed for want of space: RocksDB takes no writes until it recovers. The loop
// is stored paused (`disk_full`) as soon as it takes them again (asked every few seconds), so the
// daemon resumes it with the space; a stop ends the wait (the next start runs it again).
awaitable<void> pause_for_disk(EngineContext& ctx, LoopControl& control, std::string id,
                               std::string what, Loop& loop) {
  for (;;) {
    co_await run_blocking(ctx.pool, [&] { (void)ctx.journal.store().resume_writes(); });
    if (co_await load_loop(ctx.journal, id, loop)) {
      DiskLook look = co_await run_blocking(ctx.pool, [&] { return look_at_disk(ctx.paths, loop); });
      const Move full = on_disk_full(loop, look.free, look.dir, "the store could not write: " +
                                                                    first_line(what, 160));
      if (loop.status != LoopStatus::running || co_await move_loop(ctx.journal, loop, full)) co_return;
    }
    if (!co_await sleep_unless_stopped(control, std::chrono::seconds(3))) co_return;
  }
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
    const Move start{LoopStatus::running, EndReason::none, ""};
    step = co_await move_loop(journal, loop, start);
    if (!step) {
      spdlog::error("cannot start loop {}: {}", loop_id, step.error().message);
      co_return exit;
    }
  }
  // When the tree's runtime started (approval, not submit: the gate's wait is the person's
  // time); it changes only while no loop of the tree runs, so it is read once per run.
  PlanFacts plan{runtime_start(loop), loop.tree.budget};
  if (loop.plan_id != loop.id) plan = co_await plan_facts(journal, loop.plan_id, loop.created_at);
  const TimestampMs plan_start = plan.start;

  IterationRun iteration(ctx_, control, plan.budget, plan_start);
  while (true) {
    std::shared_ptr<const Config> config = tree_config(ctx_.config, plan.budget);
    // Stop, pause, an open question, an attended pass the person resumed (iteration_rules).
    const BoundaryRequests asked{control->stop_requested(), control->stop_reason(),
                                 control->stop_end(), control->pause_requested()};
    if (Move move = at_boundary(loop, asked); !move.goes_on()) {
      step = co_await move_loop(journal, loop, move);
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
        const Move blocked{LoopStatus::blocked, EndReason::sandbox_unavailable,
                           "commands cannot run: " + *problem + "; then `loopr resume " + loop.id + "`"};
        step = co_await move_loop(journal, loop, blocked);
        co_return exit;
      }
    }
    // limits.min_free_space: no iteration starts on a (nearly) full disk; the loop pauses and
    // the daemon resumes it once there is space (manager: watch_disk).
    DiskLook look = co_await run_blocking(ctx_.pool, [&] { return look_at_disk(ctx_.paths, loop); });
    if (Move full = check_disk(loop, look.free, config->limits.min_free_space, look.dir);
        !full.goes_on()) {
      step = co_await move_loop(journal, loop, full);
      co_return exit;
    }
    // Plain arithmetic on the record, the config and the cost ledger: no store read.
    if (Move limit = check_limits(loop, *config, ctx_.costs.total(loop.plan_id), now_ms(),
                                  plan_start, plan.budget, ctx_.costs.input_tokens(loop.plan_id));
        !limit.goes_on()) {
      std::vector<Event> events;
      if (auto capped = limit_event(ctx_, loop, limit, *config, plan.budget))
        events.push_back(std::move(*capped));
      auto stored = co_await journal.save_status(loop, limit.status, limit.end, limit.reason,
                                                 std::move(events));
      if (stored) loop = std::move(*stored);
      co_return exit;
    }

    step = co_await iteration.run(loop);
    if (!step && is_no_space(step.error().message)) {
      // The store could not write the iteration (the disk is full): nothing stored is lost, the
      // iteration that was not recorded runs again once the loop is resumed.
      spdlog::warn("loop {}: {}", loop_id, step.error().message);
      co_await pause_for_disk(ctx_, *control, loop_id, step.error().message, loop);
      co_return exit;
    }
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
