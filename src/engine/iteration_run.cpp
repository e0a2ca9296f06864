// One iteration of a loop (engine/iteration_run.hpp): the I/O around iteration_rules'
// decisions. The model never decides anything about the loop; every branch below is plain code.
#include "engine/iteration_run.hpp"

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

#include "engine/coordination.hpp"
#include "engine/protection.hpp"
#include "engine/transcript.hpp"
#include "engine/until_stopped.hpp"

namespace loopr::engine {
namespace {

// The variables every command run for a loop gets (run_command, validation, stop scripts).
std::map<std::string, std::string> command_env(const Loop& loop, int n) {
  return {{"LOOPR_LOOP_ID", loop.id},
          {"LOOPR_ITERATION", std::to_string(n)},
          {"LOOPR_LOOP_TYPE", to_string(loop.type)},
          {"LOOPR_PLAN_ID", loop.plan_id}};
}

// Stop scripts (`limits.stop_scripts`): exit 0 stops the loop, their output is the reason. They
// run in the sandbox like every command: they read the worktree the model changed.
std::optional<std::string> run_stop_scripts(exec::Executor& executor, const Loop& loop,
                                            const Config& config, const std::string& validation_log,
                                            int n) {
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

// Template variables whose values are the same for every loop of a type and every iteration:
// a section that uses only these goes to the system block, which prompt caching shares.
const std::vector<std::string> kStableVariables = {"completion-signal", "validation-command",
                                                   "max-items", "loop-type"};

// Whether something but loopr's file tools may have written the worktree in the conversation (a
// command, a half-done write, or a provider whose CLI runs its own tools).
bool writes_unknown(EngineContext& ctx, const Loop& loop, const Config& config,
                    const tools::ToolRouter::Writes& writes) {
  return writes.unknown ||
         ctx.llm.for_provider(config.provider_for(call_role(loop, CallKind::loop)))
             .runs_own_tools();
}

}  // namespace

// Whether a loop runs commands at all (then it cannot go on without a working sandbox).
bool needs_commands(const Loop& loop, const Config& config) {
  return loop.type == LoopType::code || !config.limits.stop_scripts.empty();
}

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
  e.limit = move.end == EndReason::runtime_limit ? api::CapKind::runtime
            : tokens                              ? api::CapKind::input_tokens
                                                  : api::CapKind::cost;
  e.reason = move.reason;
  return api::encode(loop.id, e);
}

awaitable<Result<void>> IterationRun::run(Loop& loop) {
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

  // 5. Validate, unless the conversation ended the iteration (stopped, refused, a limit).
  if (facts.end != Conversation::End::stopped && facts.end != Conversation::End::refused &&
      facts.end != Conversation::End::limit) {
    if (auto checked = co_await check(loop, config, n, *prepared, facts); !checked)
      co_return co_await fail(loop, checked.error().message);
  }

  // 6. Checkpoint commit (git is the audit trail of every iteration), then the stop scripts.
  auto sha = co_await commit_and_stop_scripts(loop, config, n, prepared->state.input, facts);
  if (!sha) {
    // A full disk is not the loop's failure: it pauses, and the iteration runs again.
    if (auto full = co_await disk_full(loop, config, sha.error().message))
      co_return co_await finish(loop, *full, {});
    co_return co_await fail(loop, sha.error().message);
  }
  drop_handed_sweep(loop.worktree);  // a listing no checkpoint took is not kept

  // 7. Decide (iteration_rules), then store it all at once.
  facts.pause_requested = control_->pause_requested();
  IterationVerdict verdict = decide(loop, n, facts, config);
  if (!verdict.record) {
    ctx_.costs.add(loop.plan_id, conv.usage.cost_usd,
                   total_input(conv.usage));  // spent, though no iteration counts
    co_return co_await finish(loop, verdict.move,
                              infrastructure_events(loop, n, *facts.validation));
  }
  co_return co_await record(loop, n, started, verdict, facts, conv, *sha);
}

awaitable<Result<void>> IterationRun::check(Loop& loop, const Config& config, int n,
                                            const Prepared& prepared, IterationFacts& facts) {
  // First the protected files (a changed harness must not decide), then the check, then the
  // review.
  if (checks_protection(loop)) {
    // Only the file tools wrote since the last checkpoint (the rule checkpoint() follows): the
    // protected paths may then be read from git and those paths instead of the whole worktree.
    std::optional<git::WrittenSince> written;
    if (!commands_ran_ && !writes_unknown(ctx_, loop, config, tool_writes_) && !clean_from_.empty())
      written = git::WrittenSince{clean_from_, tool_writes_.paths};
    auto breaches = co_await run_blocking(ctx_.pool, [&] {
      return protection_breaches(loop, config, prepared.state.input, written ? &*written : nullptr);
    });
    if (!breaches)
      co_return make_error(
          ErrorCode::io,
          "its changes cannot be checked against the protected paths: " + breaches.error().message);
    facts.breaches = std::move(*breaches);
  }
  if (!facts.breaches.empty()) {
    facts.validation = breach_validation(loop, config, facts.breaches);
  } else {
    commands_ran_ = commands_ran_ || loop.type == LoopType::code;  // the validation command
    facts.validation = co_await validate(ctx_, loop, control_, prepared.state.input);
    // Nothing writes the worktree between it and the checkpoint (the review only reads).
    validated_last_ = loop.type == LoopType::code;
  }
  loop.usage += facts.validation->judge_usage;
  co_await run_blocking(ctx_.pool, [&] {
    write_iteration_file(ctx_.paths, loop.id, n, IterationFile::validation,
                         facts.validation->output + executor_note(*facts.validation));
  });
  if (checks_passed(facts) && wants_review(loop, config))
    co_await review(loop, n, prepared.state.input, facts);
  co_return ok();
}

awaitable<Result<std::string>> IterationRun::commit_and_stop_scripts(Loop& loop,
                                                                     const Config& config, int n,
                                                                     const std::string& input,
                                                                     IterationFacts& facts) {
  std::string sha;
  // Whether anything but loopr's file tools may have written the worktree since the last
  // checkpoint: then the checkpoint walks it whole, else it stages what the tools wrote.
  commands_ran_ = commands_ran_ || writes_unknown(ctx_, loop, config, tool_writes_);
  if (!checkpointed(facts)) co_return sha;
  auto commit = co_await checkpoint(loop, checkpoint_message(loop, n, facts));
  if (!commit)
    co_return make_error(ErrorCode::io, "its checkpoint commit failed: " + commit.error().message);
  facts.changed = commit->kind == git::CommitOutcome::Kind::committed;
  sha = loop.run.head = commit->sha;
  if (checks_protection(loop) && checks_passed(facts))
    co_await check_committed(loop, config, input, sha, facts);
  if (wants_stop_scripts(facts, config))
    facts.stop_script = co_await run_blocking(ctx_.pool, [&] {
      return run_stop_scripts(ctx_.executor, loop, config, facts.validation->output, n);
    });
  else
    clean_at_ = sha;  // the worktree is this commit's tree until something writes again
  co_return sha;
}

awaitable<Result<Prepared>> IterationRun::prepare(const Loop& loop, const Config& config, int n) {
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
    write_iteration_file(ctx_.paths, loop.id, n, IterationFile::prompt,
                         out.system.empty() ? out.prompt : out.system + "\n" + out.prompt);
  });
  co_return out;
}

awaitable<Conversation> IterationRun::talk(const Loop& loop, const Config& config, int n,
                                           const Prepared& prompt) {
  tools::ToolLimits limits;
  limits.command_max_timeout =
      std::chrono::duration_cast<std::chrono::seconds>(config.loop(loop.type).iteration_timeout);
  // loops.<type>.iteration_max_runtime: the model turns and tool commands together.
  const Duration max_runtime = config.loop(loop.type).iteration_max_runtime;
  if (max_runtime.count() > 0) limits.deadline = std::chrono::steady_clock::now() + max_runtime;
  tools::ToolPolicy policy = tools::policy_for(
      loop.type, config,
      loop.output_artifacts.empty() ? std::string() : loop.output_artifacts.front());
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
      co_await converse(ctx_, loop, control_, prompt.prompt, router, CallKind::loop,
                        config.loop(loop.type).max_turns_per_iteration, std::move(between_turns),
                        {}, prompt.system, limits.deadline);
  tool_writes_ = router->writes();
  co_await run_blocking(ctx_.pool, [&] {
    write_iteration_file(ctx_.paths, loop.id, n, IterationFile::conversation,
                         conversation_jsonl(conv.messages, conv.calls));
  });
  co_return conv;
}

IterationFacts IterationRun::facts_of(const Conversation& conv) const {
  IterationFacts f;
  f.end = conv.end;
  f.turns = conv.turns;
  f.reverted = static_cast<int>(conv.reverted.size());
  f.question = conv.question;
  if (conv.end == Conversation::End::refused) f.refusal = refusal_text(conv);
  const std::string& signal_text = ctx_.config->limits.completion_signal;
  re2::RE2 signal(signal_text, re2::RE2::Quiet);
  f.signalled =
      signal.ok() && !signal_text.empty() && re2::RE2::PartialMatch(conv.assistant_text, signal);
  f.stop_reason = control_->stop_reason();
  f.stop_end = control_->stop_end();
  f.limit = {conv.limit_end, conv.limit_reason};
  return f;
}

awaitable<void> IterationRun::review(Loop& loop, int n, const std::string& phase,
                                     IterationFacts& facts) {
  ReviewResult r = co_await review_code(ctx_, loop, control_, phase, facts.validation->output, n);
  loop.usage += r.usage;
  co_await run_blocking(ctx_.pool, [&] {
    write_iteration_file(ctx_.paths, loop.id, n, IterationFile::review, r.transcript);
  });
  if (r.stopped) facts.validation->stopped = true;  // its tokens still count (record)
  facts.review = std::move(r);
}

awaitable<void> IterationRun::check_committed(const Loop& loop, const Config& config,
                                              const std::string& input, const std::string& sha,
                                              IterationFacts& facts) {
  std::vector<Breach> breaches;
  auto found = co_await run_blocking(ctx_.pool, [&] {
    return committed_check(loop, config, input, ctx_.paths.root, sha, breaches);
  });
  if (!found) {
    spdlog::warn("loop {}: its checkpoint cannot be checked: {}", loop.id, found.error().message);
    Validation v = *facts.validation;
    v.passed = false;
    v.summary =
        "its checkpoint cannot be checked against the protected paths: " + found.error().message;
    facts.validation = std::move(v);
    co_return;
  }
  if (!*found) co_return;
  facts.breaches = std::move(breaches);
  Validation v = std::move(**found);
  v.duration_ms = facts.validation->duration_ms;
  facts.validation = std::move(v);
  co_await run_blocking(ctx_.pool, [&] {
    write_iteration_file(ctx_.paths, loop.id, loop.iteration + 1, IterationFile::validation,
                         facts.validation->output);
  });
}

awaitable<Result<git::CommitOutcome>> IterationRun::checkpoint(const Loop& loop,
                                                               std::string message) {
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

ReviewReceipt IterationRun::review_receipt(const ReviewResult& r) {
  return {to_string(r.verdict), r.summary,  r.model,
          r.usage.cost_usd,     r.attempts, r.usage.input_tokens,
          r.usage.output_tokens};
}

api::ReviewFinished IterationRun::review_event(int n, const ReviewResult& r) {
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

std::string IterationRun::executor_note(const Validation& v) {
  if (v.jobs.empty() && v.infrastructure_failures.empty()) return {};
  std::string note = "\n[loopr: Slurm job";
  note += v.jobs.size() == 1 ? " " : "s ";
  for (std::size_t i = 0; i < v.jobs.size(); ++i) note += (i ? ", " : "") + v.jobs[i];
  note += "]\n";
  for (const auto& f : v.infrastructure_failures) note += "[loopr: retried: " + f + "]\n";
  return note;
}

std::vector<Event> IterationRun::infrastructure_events(const Loop& loop, int n,
                                                       const Validation& v) {
  std::vector<Event> events;
  for (const auto& what : v.infrastructure_failures)
    events.push_back(api::encode(loop.id, api::ExecutorRetry{n, what, v.jobs}));
  return events;
}

awaitable<Result<void>> IterationRun::finish(Loop& loop, const Move& move,
                                             std::vector<Event> events) {
  auto stored = co_await ctx_.journal.save_status(loop, move.status, move.end, move.reason,
                                                  std::move(events));
  if (!stored) co_return stored.take_error();
  loop = std::move(*stored);
  co_return ok();
}

awaitable<std::optional<Move>> IterationRun::disk_full(const Loop& loop, const Config& config,
                                                       std::string what) {
  DiskLook look = co_await run_blocking(ctx_.pool, [&] { return look_at_disk(ctx_.paths, loop); });
  const bool low =
      look.free && config.limits.min_free_space > 0 && *look.free < config.limits.min_free_space;
  if (!is_no_space(what) && !low) co_return std::nullopt;
  co_return on_disk_full(loop, look.free, look.dir, first_line(what, 200));
}

awaitable<Result<void>> IterationRun::fail(Loop& loop, std::string why) {
  Move move{LoopStatus::failed, EndReason::internal_error, std::move(why)};
  co_return co_await finish(loop, move, {});
}

awaitable<Result<void>> IterationRun::model_error(Loop& loop, const Conversation& conv) {
  const llm::LlmError& err = *conv.error;
  Move move = on_model_error(loop, err, *ctx_.config);
  const int errors = loop.run.consecutive_errors;
  std::vector<Event> events = {
      api::encode(loop.id, api::LlmErrorEvent{std::string(llm::to_string(err.kind)), err.retryable,
                                              err.http_status, err.describe(), errors})};
  if (!move.goes_on()) co_return co_await finish(loop, move, std::move(events));
  auto stored = co_await ctx_.journal.save(loop, std::move(events));
  if (!stored) co_return stored.take_error();
  loop = std::move(*stored);
  co_await sleep_unless_stopped(*control_, error_backoff(ctx_.error_backoff, errors));
  co_return ok();
}

IterationRecord IterationRun::make_record(const Loop& loop, int n, TimestampMs started,
                                          const IterationVerdict& verdict,
                                          const IterationFacts& facts, const Conversation& conv,
                                          const std::string& sha) const {
  const Validation not_run;
  const Validation& v = facts.validation ? *facts.validation : not_run;
  const Move& move = verdict.move;
  IterationRecord rec;
  rec.loop_id = loop.id;
  rec.n = n;
  rec.status = *verdict.record;
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
  IterationDetails& d = rec.details;
  d.turns = conv.turns;
  d.tool_calls = conv.tool_calls;
  d.end = static_cast<int>(conv.end);
  d.commit = sha;
  d.validation_command = v.command;
  d.model_ms = conv.model_ms;
  d.validation_ms = v.duration_ms;
  // Where the rest of the iteration's time went (tools/bench/engine_bench).
  d.state_ms = state_ms_;
  d.checkpoint_ms = checkpoint_ms_;
  // Prompt caching's receipt: the same calls without it (judge, review as spent).
  d.uncached_cost_usd = conv.uncached_cost_usd + rec.usage.cost_usd - conv.usage.cost_usd;
  d.timed_out = v.timed_out;
  if (move.end != EndReason::none) d.end_reason = to_string(move.end);
  // A subscription login's receipt: what the CLI reported, which nobody is billed per token
  // (counted in cost_usd only under limits.count_subscription_cost).
  d.notional_cost_usd = conv.notional_cost_usd;
  for (const Breach& b : facts.breaches)
    d.protected_files.push_back(
        {b.path, to_string(b.kind), b.role == Breach::Role::test ? "test" : "harness"});
  if (facts.review) d.review = review_receipt(*facts.review);
  d.jobs = v.jobs;
  return rec;
}

std::vector<Event> IterationRun::record_events(const Loop& loop, const IterationRecord& rec,
                                               const IterationFacts& facts,
                                               const Move& move) const {
  const Validation not_run;
  const Validation& v = facts.validation ? *facts.validation : not_run;
  const int n = rec.n;
  std::vector<Event> events = infrastructure_events(loop, n, v);
  events.push_back(
      api::encode(loop.id, api::ValidationFinished{n, rec.status == IterationOutcome::passed,
                                                   v.summary, v.exit_code, v.jobs}));
  if (facts.review && !facts.review->stopped)
    events.push_back(api::encode(loop.id, review_event(n, *facts.review)));
  events.push_back(api::encode(
      loop.id, api::CostEvent{n, rec.usage.cost_usd, rec.usage.input_tokens,
                              rec.usage.output_tokens, loop.usage.cost_usd,
                              rec.usage.cache_read_tokens, rec.usage.cache_write_tokens}));
  events.push_back(
      api::encode(loop.id, api::IterationFinished{n, rec.status, rec.summary, rec.duration_ms}));
  if (move.status == LoopStatus::awaiting_answer)
    events.push_back(api::encode(loop.id, api::QuestionAsked{n, loop.run.question}));
  if (auto capped = limit_event(ctx_, loop, move, *ctx_.config, budget_))
    events.push_back(std::move(*capped));
  return events;
}

awaitable<Result<void>> IterationRun::record(Loop& loop, int n, TimestampMs started,
                                             const IterationVerdict& verdict,
                                             const IterationFacts& facts, const Conversation& conv,
                                             const std::string& sha) {
  const Move& move = verdict.move;
  IterationRecord rec = make_record(loop, n, started, verdict, facts, conv, sha);
  loop.iteration = n;
  loop.progress = render_feedback(loop.run.feedback, ctx_.config->limits.feedback_bytes);
  std::vector<Event> events = record_events(loop, rec, facts, move);
  if (move.status != loop.status) {
    if (auto t = transition(loop, move.status, move.end, move.reason, events); !t)
      co_return t.take_error();
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

}  // namespace loopr::engine
