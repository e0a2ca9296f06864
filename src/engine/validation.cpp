#include "engine/validation.hpp"

#include <fstream>
#include <regex>
#include <sstream>

#include <loopr/core/process.hpp>
#include <loopr/engine/code_check.hpp>
#include <loopr/engine/feedback.hpp>
#include <loopr/engine/prompt_vars.hpp>
#include <loopr/git/artifact.hpp>
#include <loopr/markdown/artifacts.hpp>

#include "engine/conversation.hpp"
#include "engine/until_stopped.hpp"

namespace loopr::engine {
namespace {

constexpr std::size_t kValidationOutputCap = 64 * 1024;

markdown::ArtifactKind kind_of(LoopType t) {
  switch (t) {
    case LoopType::spec:
      return markdown::ArtifactKind::spec;
    case LoopType::phase:
      return markdown::ArtifactKind::phase;
    default:
      return markdown::ArtifactKind::plan;
  }
}

// The check of an artifact that was not read: not written, or something loopr does not read (a
// symlink, a FIFO) is at its path.
Validation not_read(const std::string& rel, const git::ArtifactText& text) {
  Validation v;
  if (text.worktree_problem.empty()) {
    v.summary = "the artifact " + rel + " was not written";
    v.feedback = "You did not write the artifact. Write it with write_file to exactly `" + rel +
                 "` (relative to the working tree root), in the format the instructions give.";
  } else {
    v.summary = "the artifact " + rel + " is not a regular file";
    v.feedback = "loopr does not read `" + rel + "`: " + text.worktree_problem +
                 ". Write the artifact as a regular file with write_file to exactly `" + rel +
                 "` (relative to the working tree root), in the format the instructions give.";
  }
  v.output = v.feedback + "\n";
  return v;
}

awaitable<Validation> validate_document(EngineContext& ctx, const Loop& loop,
                                        std::shared_ptr<LoopControl> control,
                                        const std::string& input_text) {
  Validation v;
  const Config& config = *ctx.config;
  std::string rel = loop.output_artifacts.empty() ? std::string() : loop.output_artifacts.front();
  // The one artifact reader, the worktree only (the check judges what the model wrote now): a
  // symlink out of the worktree, a FIFO or a device at the artifact's path is never read.
  auto text = co_await run_blocking(ctx.pool, [&]() -> git::ArtifactText {
    if (rel.empty()) return {};
    return git::read_loop_artifact({{}, loop.worktree, rel, {}},
                                   git::format_check_bytes(config.artifacts.max_bytes));
  });
  if (!text.bytes) co_return not_read(rel, text);
  auto problems = markdown::validate_artifact(kind_of(loop.type), *text.bytes, config.artifacts);
  if (!problems.empty()) {
    v.output = markdown::format_problems(rel, problems);
    v.summary = std::to_string(problems.size()) + " format problem" +
                (problems.size() == 1 ? "" : "s") + ": " +
                first_line(problems.front().message, 100);
    v.feedback =
        "The format check of `" + rel + "` found these problems; fix every one:\n\n" + v.output;
    co_return v;
  }
  v.output = rel + ": format check passed\n";
  if (!config.llm.judge) {
    v.passed = true;
    v.summary = "format check passed";
    co_return v;
  }

  // The judge: one more model call, no tools, that answers PASS or FAIL: reason.
  std::map<std::string, std::string> vars = judge_vars(loop, config, input_text, *text.bytes, rel);
  auto prompt = ctx.prompts.render("judge", vars);
  if (!prompt) {
    v.summary = "the judge prompt could not be rendered";
    v.feedback = prompt.error().message;
    v.output += v.feedback + "\n";
    co_return v;
  }
  for (int attempt = 0; attempt < 3; ++attempt) {
    Conversation c = co_await converse(ctx, loop, control, *prompt, nullptr, CallKind::judge, 1);
    v.judge_usage += c.usage;
    if (c.end == Conversation::End::stopped) {
      v.stopped = true;
      co_return v;
    }
    if (c.end == Conversation::End::error) {
      v.summary = "the judge could not be asked: " + first_line(c.error->describe());
      v.feedback = v.summary;
      v.output += v.summary + "\n";
      co_return v;
    }
    if (auto verdict = parse_verdict(c.assistant_text)) {
      v.output += "judge: " + c.assistant_text + "\n";
      v.passed = verdict->first;
      v.summary =
          v.passed ? "format check and judge passed" : "judge: " + first_line(verdict->second, 100);
      if (!v.passed)
        v.feedback = "A reviewer read `" + rel + "` and rejected it:\n\n" + verdict->second;
      co_return v;
    }
    // A reply without a verdict is a malformed reply: ask again (fresh context).
  }
  v.summary = "the judge gave no PASS/FAIL verdict in 3 tries";
  v.feedback = v.summary;
  v.output += v.summary + "\n";
  co_return v;
}

awaitable<Validation> validate_code(EngineContext& ctx, const Loop& loop,
                                    std::shared_ptr<LoopControl> control) {
  const LoopTypeConfig& lc = ctx.config->loop(LoopType::code);
  CodeCheckRequest request;
  request.command = loop.validation_command.empty() ? lc.validation : loop.validation_command;
  request.workdir = loop.worktree;
  request.env = {{"LOOPR_LOOP_ID", loop.id},
                 {"LOOPR_ITERATION", std::to_string(loop.iteration + 1)},
                 {"LOOPR_LOOP_TYPE", to_string(loop.type)},
                 {"LOOPR_PLAN_ID", loop.plan_id}};
  request.cancel = control->cancel_flag();
  request.hand_over_sweep = true;  // the iteration's checkpoint comes next (loop_runner.cpp)
  CodeCheck c = co_await run_code_check(ctx, std::move(request));
  Validation v;
  v.passed = c.passed;
  v.has_check = c.has_check;
  v.exit_code = c.exit_code;
  v.timed_out = c.timed_out;
  v.stopped = c.stopped;
  v.command = std::move(c.command);
  v.output = std::move(c.output);
  v.feedback = std::move(c.feedback);
  v.could_not_start = c.could_not_start;
  v.jobs = std::move(c.jobs);
  v.infrastructure_failures = std::move(c.infrastructure_failures);
  v.summary = std::move(c.summary);
  co_return v;
}

}  // namespace

awaitable<CodeCheck> run_code_check(EngineContext& ctx, CodeCheckRequest request) {
  auto started = std::chrono::steady_clock::now();
  CodeCheck v;
  const LoopTypeConfig& lc = ctx.config->loop(LoopType::code);
  v.command = request.command;
  if (v.command.empty()) {
    v.has_check = false;
    v.passed = true;
    v.summary = "no validation command configured";
    v.output = v.summary + "\n";
    co_return v;
  }
  exec::Command cmd = exec::Command::shell(v.command, request.workdir);
  cmd.timeout = lc.iteration_timeout;
  cmd.output_cap = kValidationOutputCap;
  cmd.env = std::move(request.env);
  cmd.cancel = request.cancel;
  cmd.hand_over_sweep = request.hand_over_sweep;
  cmd.runner_class = ctx.runners.classify(v.command);
  auto run = [&ctx, &cmd] {
    auto lease = ctx.runners.acquire(cmd.runner_class);
    return ctx.executor.run(cmd);
  };
  ProcessResult r = co_await run_blocking(ctx.pool, run);
  v.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
  v.output = r.output;
  v.timed_out = r.timed_out;
  v.jobs = r.jobs;
  v.infrastructure_failures = r.infrastructure_failures;
  if (r.cancelled) {
    v.stopped = true;
    v.summary = "validation was interrupted by a stop";
    co_return v;
  }
  if (r.spawn_failed) {
    v.could_not_start = true;
    v.summary = "the validation command could not start";
    v.feedback = v.summary + ": " + r.output;
    co_return v;
  }
  if (!r.timed_out) v.exit_code = r.exit_code;
  v.passed = r.succeeded();
  if (v.passed) {
    v.summary = "`" + v.command + "` passed";
    co_return v;
  }
  if (r.timed_out) {
    v.summary = "`" + v.command + "` timed out after " + format_duration(lc.iteration_timeout);
  } else if (r.term_signal) {
    v.summary = "`" + v.command + "` was killed by signal " + std::to_string(r.term_signal);
  } else {
    v.summary = "`" + v.command + "` failed with exit code " + std::to_string(r.exit_code);
  }
  v.feedback = "The validation command `" + v.command + "` failed" +
               (r.timed_out ? " (timed out after " + format_duration(lc.iteration_timeout) + ")"
                            : " with exit code " + std::to_string(r.exit_code)) +
               ". Its output (the end is what matters most):\n\n```\n" +
               cap_head_tail(r.output, 12 * 1024) + "\n```\n";
  co_return v;
}

std::optional<std::pair<bool, std::string>> parse_verdict(const std::string& reply) {
  static const std::regex verdict(R"(^\s*[*_#>\s]*(PASS|FAIL)\b[*_]*\s*[:\-–—]?\s*(.*)$)",
                                  std::regex::icase);
  std::istringstream lines(reply);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, verdict)) {
      bool pass = (m[1].str()[0] | 0x20) == 'p';
      std::string reason = m[2].str();
      // The reason may continue on the following lines.
      for (std::string more; std::getline(lines, more);) reason += "\n" + more;
      while (!reason.empty() && std::isspace(static_cast<unsigned char>(reason.back())))
        reason.pop_back();
      if (!pass && reason.empty()) reason = "(the reviewer gave no reason)";
      return std::make_pair(pass, reason);
    }
  }
  return std::nullopt;
}

awaitable<Validation> validate(EngineContext& ctx, const Loop& loop,
                               std::shared_ptr<LoopControl> control,
                               const std::string& input_text) {
  auto started = std::chrono::steady_clock::now();
  Validation v;  // co_await kept at statement level (never inside ?:), see API-NOTES.md
  if (loop.type == LoopType::code) {
    v = co_await validate_code(ctx, loop, control);
  } else {
    v = co_await validate_document(ctx, loop, control, input_text);
  }
  v.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
  co_return v;
}

}  // namespace loopr::engine
