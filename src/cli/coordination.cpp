#include "cli/coordination.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <sstream>

#include <loopr/core/text.hpp>

#include "cli/command.hpp"
#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "cli/wire.hpp"

namespace loopr::cli {

using nlohmann::json;

namespace {

std::string quoted_first_line(const std::string& text, std::size_t max) {
  return terminal_text(std::string_view(text).substr(0, text.find('\n')), max);
}

std::string duration_text(std::int64_t ms) { return format_elapsed(ms); }

}  // namespace

std::vector<std::string> question_lines(const std::vector<api::LoopRow>& loops,
                                        const Style& style) {
  std::vector<std::string> out;
  for (const auto& l : loops) {
    if (l.status != LoopStatus::awaiting_answer) continue;
    std::string q = l.question ? *l.question : l.status_reason;
    out.push_back(style.bold("? " + l.id + " asks: ") + quoted_first_line(q, 200));
    out.push_back(style.dim("  answer: loopr answer " + l.id + " \"…\"  (or `loopr review`)"));
  }
  return out;
}

std::string render_forecast(const api::LoopDetail& d, const Style& style) {
  if (!d.forecast) return "";
  const api::ForecastView& f = *d.forecast;
  std::ostringstream out;
  out << style.dim("forecast:") << "   ~" << format_cost(f.cost_usd) << " (" << format_cost(f.low)
      << "–" << format_cost(f.high) << "), " << f.loops << " loops, ~" << f.model_calls
      << " model calls, ~" << duration_text(f.duration_ms) << " after approval\n";
  out << style.dim("basis:") << "      " << shown(f.basis) << "\n";
  if (d.budget) {
    // The request's own limits (submit --max-cost/--max-runtime/--max-iterations).
    std::string own;
    auto add = [&own](const std::string& part) { own += (own.empty() ? "" : ", ") + part; };
    if (d.budget->max_cost_usd) add(format_cost(*d.budget->max_cost_usd));
    if (d.budget->max_runtime) add(*d.budget->max_runtime + " after approval");
    if (d.budget->max_iterations)
      add(std::to_string(*d.budget->max_iterations) + " iterations per loop");
    out << style.dim("limits:") << "     " << own << " (this request's own)\n";
  }
  if (f.over_limit) {
    out << style.red("warning:") << "    the high estimate " << format_cost(f.high) << " is above "
        << (f.max_cost_source.empty() ? std::string("limits.max_cost_usd") : f.max_cost_source)
        << " " << format_cost(f.max_cost_usd) << ": the tree may stop at the limit\n";
  }
  if (d.actual) {
    const api::ActualView& a = *d.actual;
    double fc = f.cost_usd, ac = a.cost_usd;
    char pct[32] = "";
    if (fc > 0) std::snprintf(pct, sizeof pct, " (%+.0f%%)", (ac - fc) / fc * 100.0);
    out << style.dim("actual:") << "     " << format_cost(ac) << " against ~" << format_cost(fc)
        << pct << "; " << a.loops << " loops against " << f.loops << "; " << a.model_calls
        << " model calls against ~" << f.model_calls << "; " << duration_text(a.duration_ms)
        << " against ~" << duration_text(f.duration_ms) << "\n";
  }
  return out.str();
}

ReviewDecision review_question(const DaemonClient& api, const api::LoopRow& loop,
                               Prompter& prompter, std::ostream& ui, const Style& style) {
  const std::string& id = loop.id;
  ReviewDecision d{id, Choice::skip, {}, false};
  std::string question = loop.question ? *loop.question : loop.status_reason;
  ui << "\n"
     << style.bold("Loop " + id) << " (" << to_string(loop.type)
     << ") asks: " << shown(utf8_prefix(loop.task, 80)) << "\n\n";
  std::istringstream lines(shown(question));
  for (std::string line; std::getline(lines, line);) ui << "  > " << line << "\n";
  ui << "\n";
  while (true) {
    auto key = prompter.choose(style.bold("[a]nswer [s]kip") + " " + id + "? ", "as");
    if (!key) {
      d.end_of_input = true;
      ui << "no answer: " << id << " still waits (`loopr answer " << id << " \"…\"`)\n";
      return d;
    }
    if (*key == 's') {
      ui << "skipped " << id << "; it still waits for an answer\n";
      return d;
    }
    std::string text = prompter.read_text("your answer (end with an empty line or Ctrl-D):\n");
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
      ui << "no answer given; choose again\n";
      continue;
    }
    act_on(api, id, "answer", api::to_json(api::AnswerRequest{text}));
    d.decision = Choice::answer;
    d.text = text;
    ui << style.green("answered") << " " << id << ": it runs again with your answer\n";
    return d;
  }
}

int run_answer(Session& s, const std::string& id, const std::string& text) {
  const GlobalOptions& opts = s.opts;
  DaemonClient& api = s.api();
  api::LoopRow loop = act_on(api, id, "answer", api::to_json(api::AnswerRequest{text}));
  if (opts.json) {
    std::cout << interface_action_json(loop).dump() << "\n";
  } else if (!opts.quiet) {
    std::cout << "answered " << id << " (now " << to_string(loop.status) << ")\n";
  }
  return kOk;
}

namespace {

CommandRun define_answer(CLI::App& answer) {
  struct Values {
    std::string id;
    std::vector<std::string> words;
  };
  auto v = std::make_shared<Values>();
  answer.add_option("id", v->id, "The loop's id")->required();
  answer.add_option("text", v->words, "The answer (quote it)")->required();
  return CommandRun([v](Session& s) { return run_answer(s, v->id, join_words(v->words)); })
      .checked_by([v] {
        if (join_words(v->words).find_first_not_of(" \t\r\n") == std::string::npos)
          throw CommandError{kUsage, "the answer is empty",
                             "write `loopr answer " + v->id + " \"your answer\"`"};
      });
}

}  // namespace

const Command kAnswerCommand{
    "answer",
    "Answer a loop's question (status awaiting_answer); it runs again with the answer in its "
    "next prompt (exit 4 unknown id, 5 no question waiting)",
    false, Needs::daemon, define_answer};

}  // namespace loopr::cli
