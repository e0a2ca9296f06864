#include "engine/review.hpp"

#include <loopr/engine/feedback.hpp>
#include <loopr/engine/prompt_vars.hpp>
#include <loopr/git/worktree.hpp>

#include "engine/conversation.hpp"
#include "engine/validation.hpp"

namespace loopr::engine {

const char* to_string(ReviewResult::Verdict verdict) {
  switch (verdict) {
    case ReviewResult::Verdict::pass:
      return "pass";
    case ReviewResult::Verdict::fail:
      return "fail";
    default:
      return "error";
  }
}

bool wants_review(const Loop& loop, const Config& config) {
  return config.review.enabled && loop.type == LoopType::code &&
         loop.prompt_template != "integration-fix";
}

awaitable<ReviewResult> review_code(EngineContext& ctx, const Loop& loop,
                                    std::shared_ptr<LoopControl> control, const std::string& phase,
                                    const std::string& test_output, int n) {
  std::shared_ptr<const Config> config = ctx.config;
  ReviewResult out;
  out.model = config->review.model.empty() ? config->llm.model : config->review.model;
  auto diff = co_await run_blocking(ctx.pool, [&]() -> Result<std::string> {
    git::DiffLimits limits;
    limits.max_bytes = config->git.diff_max_bytes;
    limits.max_lines = 4000;
    LOOPR_ASSIGN(git::Worktree wt, git::Worktree::open(loop.worktree));
    return wt.diff_since(work_start(loop), limits);
  });
  if (!diff) {
    out.summary = "the reviewer could not be shown the change: " + diff.error().message;
    out.feedback = out.summary;
    co_return out;
  }
  auto prompt =
      ctx.prompts.render("review", review_vars(loop, *config, phase, *diff, test_output, n));
  if (!prompt) {
    out.summary = "the review prompt could not be rendered: " + first_line(prompt.error().message);
    out.feedback = prompt.error().message;
    co_return out;
  }
  out.transcript = *prompt;
  for (int attempt = 1; attempt <= config->review.max_attempts; ++attempt) {
    out.attempts = attempt;
    Conversation c = co_await converse(ctx, loop, control, *prompt, nullptr, CallKind::review, 1,
                                       {}, config->review.model);
    out.usage += c.usage;
    if (c.end == Conversation::End::stopped) {
      out.stopped = true;
      co_return out;
    }
    std::string reply = c.end == Conversation::End::error
                            ? "(the call failed: " + c.error->describe() + ")"
                            : c.assistant_text;
    out.transcript += "\n\n## Reply " + std::to_string(attempt) + "\n\n" + reply;
    if (c.end == Conversation::End::error) {
      out.summary = "the reviewer could not be asked: " + first_line(c.error->describe(), 200);
      out.feedback = c.error->describe();
      if (!c.error->retryable) co_return out;  // a 401 or a bad model name: asking again won't help
      continue;
    }
    if (auto verdict = parse_verdict(c.assistant_text)) {
      out.verdict = verdict->first ? ReviewResult::Verdict::pass : ReviewResult::Verdict::fail;
      out.summary =
          verdict->first ? "review passed" : "review: " + first_line(verdict->second, 100);
      out.feedback = verdict->second;
      co_return out;
    }
    out.summary = "the reviewer gave no PASS/FAIL verdict";
    out.feedback = first_line(c.assistant_text, 200);
  }
  out.summary +=
      " (" + std::to_string(out.attempts) + " attempt" + (out.attempts == 1 ? "" : "s") + ")";
  co_return out;
}

}  // namespace loopr::engine
