// Prompt templates (prompts/<type>.md): markdown text with `{{name}}` variables that the engine
// fills in every iteration. Unknown variables are refused when a template is loaded, so a typo
// in a user's `.loopr/prompts/<type>.md` is reported before any model call.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/result.hpp>

namespace loopr::markdown {

/// The variables a template may use, with what the engine puts in them:
///   task               the user's request (plan) or the parent item's text (spec, phase, code)
///   input              the input artifact's content (the user's request for a plan)
///   input-path         the input artifact's repo-relative path (empty for a plan)
///   artifact-path      where this loop writes its artifact (repo-relative; empty for code)
///   artifact           the artifact's current content (the judge reads it)
///   progress           feedback of earlier iterations; the engine passes a sentence such as
///                      "None yet: this is the first iteration." when there is none
///   git-status         the loop's work since it started (`X path` lines: its commits and
///                      uncommitted edits against the integration tip it is based on, a plan's
///                      against its base branch), then the files its last iteration changed
///   git-diff           the same work as a unified diff, cut to `git.diff_max_bytes`
///   git-log            the last `git.log_entries` commits, one line each
///   purpose            what the work serves: the plan's title and success criteria (phase and
///                      code loops) and the overview of the phase's spec (code loops)
///   loop-id, parent-id, plan-id, loop-type
///   iteration          this iteration's number (1-based), max-iterations its limit
///   completion-signal  what the model prints when done (`limits.completion_signal`)
///   validation-command the code loop's check (`loops.code.validation`)
///   max-items          `artifacts.max_items`: the most specs per plan / phases per spec
///   validation-output  what the code loop's test command printed (the reviewer reads it)
std::span<const std::string_view> prompt_variable_names();
bool is_prompt_variable(std::string_view name);

/// Values by variable name; `render` needs one for every variable the template uses.
using PromptValues = std::map<std::string, std::string, std::less<>>;

/// A parsed template. Syntax: `{{name}}` (spaces inside the braces allowed) is replaced by the
/// value; `\{{` stands for a literal `{{`; anything else is literal text. Values are inserted
/// verbatim and never expanded again.
class PromptTemplate {
 public:
  /// Parses `text`. `source` names the template in errors (`plan.md:12: unknown variable
  /// `{{foo}}` …`); every bad reference is listed, each with its line.
  static Result<PromptTemplate> parse(std::string_view text, std::string_view source);

  /// The text with every variable replaced; an error naming the first variable without a value.
  Result<std::string> render(const PromptValues& values) const;

  /// The rendered text in two parts, for prompt caching: `fixed` holds the template's `## `
  /// sections (and its preamble) whose variables are all in `stable` (values that are the same
  /// for every loop of a type: the completion signal, the validation command), in order; `rest`
  /// the other sections, in order. A section starts at a line of the template's own text that
  /// begins with `## ` outside a ``` block: a value (an artifact with headings of its own) never
  /// starts one, nor does an example in a fence. The
  /// two parts hold exactly what `render` gives, only reordered.
  struct Split {
    std::string fixed;
    std::string rest;
  };
  Result<Split> render_split(const PromptValues& values,
                             const std::vector<std::string>& stable) const;

  /// The variables the template uses, each once, in order of first use.
  std::vector<std::string> variables() const;

  const std::string& source() const { return source_; }

 private:
  struct Piece {
    bool variable = false;
    std::string text;  ///< literal text, or the variable's name
    int line = 0;
  };
  std::vector<Piece> pieces_;
  std::string source_;
};

}  // namespace loopr::markdown
