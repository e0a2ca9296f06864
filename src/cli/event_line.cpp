// One line of `loopr logs` per event: a typed event (include/loopr/api/events.hpp) in words.
#include <ctime>

#include <loopr/core/text.hpp>

#include "cli/format.hpp"

namespace loopr::cli {

using nlohmann::json;

namespace {


// Compact JSON of a value, cut to `max` characters.
std::string compact(const json& j, std::size_t max = 200) {
  std::string s =
      j.is_string() ? j.get<std::string>() : j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > max) s = std::string(utf8_prefix(s, max)) + "…";
  return shown(s);
}

std::string n_of(int n) { return std::to_string(n); }

// The words after the type: one overload per event type that says more than its data.
struct Words {
  const Style& style;

  std::string operator()(const api::StatusChanged& e) const {
    std::string text = std::string(to_string(e.from)) + " → " + style.status(e.to);
    if (!e.reason.empty()) text += ": " + one_line(shown(e.reason));
    return text;
  }
  std::string operator()(const api::IterationStarted& e) const {
    return "iteration " + n_of(e.n) + " started";
  }
  std::string operator()(const api::IterationFinished& e) const {
    const std::string status = to_string(e.status);
    std::string text = "iteration " + n_of(e.n) + " " +
                       (e.status == IterationOutcome::passed   ? style.green(status)
                        : e.status == IterationOutcome::failed ? style.red(status)
                                                               : status);
    if (e.duration_ms > 0) text += " in " + format_elapsed(e.duration_ms);
    if (!e.summary.empty()) text += ": " + one_line(shown(e.summary));
    return text;
  }
  std::string operator()(const api::ValidationFinished& e) const {
    std::string text = "validation " + n_of(e.n) + " " +
                       (e.passed ? style.green("passed") : style.red("failed"));
    if (e.exit_code) text += " (exit " + std::to_string(*e.exit_code) + ")";
    if (!e.summary.empty()) text += ": " + one_line(shown(e.summary));
    if (!e.jobs.empty()) text += " [Slurm job " + e.jobs.back() + "]";
    return text;
  }
  std::string operator()(const api::ExecutorRetry& e) const {
    return style.red("the cluster lost a try") + " of validation " + n_of(e.n) + ": " +
           one_line(shown(e.reason));
  }
  std::string operator()(const api::CostEvent& e) const {
    std::string text = "iteration " + n_of(e.n) + " cost " + format_cost(e.cost_usd);
    if (e.input_tokens || e.output_tokens)
      text += " (" + format_count(e.input_tokens) + " tokens in, " +
              format_count(e.output_tokens) + " out)";
    if (e.cache_read_tokens || e.cache_write_tokens)
      text += ", cache " + format_count(e.cache_read_tokens) + " read / " +
              format_count(e.cache_write_tokens) + " written";
    return text;
  }
  std::string operator()(const api::CostLimitEvent& e) const {
    return style.yellow("paused at the tree's " + std::string(api::to_string(e.limit)) + " limit") +
           ": " + one_line(shown(e.reason), 300);
  }
  std::string operator()(const api::ToolCalled& e) const {
    std::string text = shown(e.tool);
    // The argument that says what the call did (a path, a command, a pattern) rather than the
    // whole input, which for write_file is the file.
    std::string what;
    if (e.input.is_object())
      for (const char* k : {"path", "command", "pattern"})
        if (auto it = e.input.find(k); it != e.input.end() && it->is_string()) {
          what = it->get<std::string>();
          break;
        }
    if (!what.empty())
      text += " " + one_line(shown(what), 120);
    else if (!e.input.is_null())
      text += " " + one_line(compact(e.input, 120), 120);
    return text;
  }
  std::string operator()(const api::Merged& e) const {
    return "merged into " + e.into + (e.sha.empty() ? "" : " at " + e.sha.substr(0, 10));
  }
  std::string operator()(const api::MergeFailed& e) const {
    return style.red("merge into " + e.into + " failed") + ": " + one_line(shown(e.message));
  }
  std::string operator()(const api::RetryEvent& e) const {
    std::string text = "fresh attempt " + n_of(e.attempt);
    if (!e.archived_branch.empty())
      text += " (the first attempt's commits are on " + e.archived_branch + ")";
    return text;
  }
  std::string operator()(const api::IntegrationCheckStarted& e) const {
    return "checking the integration branch at " + e.sha.substr(0, 10) + ": " + shown(e.command);
  }
  std::string operator()(const api::IntegrationCheck& e) const {
    std::string what = "integration branch at " + e.sha.substr(0, 10) + ": " +
                       one_line(shown(e.summary), 200);
    return e.passed ? style.green(what) : style.red(what);
  }
  std::string operator()(const api::IntegrationFix& e) const {
    return "fix loop " + e.loop_id + " repairs the integration branch";
  }
  std::string operator()(const api::TreeComplete&) const {
    return style.green("every loop of the tree is complete");
  }
  std::string operator()(const api::Rebased& e) const { return "rebased onto " + e.onto; }
  std::string operator()(const api::RebaseConflict& e) const {
    std::string text = style.red("rebase conflict");
    if (!e.paths.empty()) {
      std::string paths;
      for (const auto& p : e.paths) paths += (paths.empty() ? "" : ", ") + name_text(p);
      text += " in " + paths;
    }
    return text;
  }
  std::string operator()(const api::ApprovalEvent& e) const {
    std::string text = e.decision;
    if (!e.text.empty()) text += ": " + one_line(shown(e.text));
    return text;
  }
  std::string operator()(const api::LoopCreated& e) const {
    std::string text = to_string(e.type);
    if (!e.task.empty()) text += ": " + one_line(shown(e.task), 120);
    return text;
  }
  std::string operator()(const api::LlmErrorEvent& e) const {
    return style.red(e.message.empty() ? compact(api::encode_body(e)) : one_line(shown(e.message)));
  }
  // The rest: their data, compact.
  template <typename Other>
  std::string operator()(const Other& e) const {
    json data = api::encode_body(e);
    return data.is_object() && !data.empty() ? compact(data) : std::string();
  }
};

}  // namespace

std::string format_event_line(const api::TypedEvent& e, const Style& style) {
  std::string clock = "--:--:--";
  if (e.time > 0) {
    std::time_t secs = static_cast<std::time_t>(e.time / 1000);
    std::tm tm{};
    localtime_r(&secs, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
    clock = buf;
  }
  std::string text = std::visit(Words{style}, e.body);
  std::string line = style.dim(clock) + "  " + (e.loop_id.empty() ? std::string("daemon") : e.loop_id) +
                     "  " + style.bold(shown(api::type_name(e.body)));
  if (!text.empty()) line += "  " + text;
  return line;
}

}  // namespace loopr::cli
