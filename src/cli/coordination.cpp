#include "cli/coordination.hpp"

#include <cstdio>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/format.hpp"

namespace loopr::cli {

using nlohmann::json;

namespace {

std::string quoted_first_line(const std::string& text, std::size_t max) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > max) line = line.substr(0, max) + "…";
  return line;
}

double num(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string duration_text(std::int64_t ms) { return format_elapsed(ms); }

}  // namespace

std::vector<std::string> question_lines(const json& loops, const Style& style) {
  std::vector<std::string> out;
  for (const auto& l : loops) {
    if (str_field(l, "status") != "awaiting_answer") continue;
    std::string id = str_field(l, "id");
    std::string q = str_field(l, "question");
    if (q.empty()) q = str_field(l, "status_reason");
    out.push_back(style.bold("? " + id + " asks: ") + quoted_first_line(q, 200));
    out.push_back(style.dim("  answer: loopr answer " + id + " \"…\"  (or `loopr review`)"));
  }
  return out;
}

std::string render_forecast(const json& d, const Style& style) {
  auto f = d.find("forecast");
  if (f == d.end() || !f->is_object()) return "";
  std::ostringstream out;
  out << style.dim("forecast:") << "   ~" << format_cost(num(*f, "cost_usd")) << " ("
      << format_cost(num(*f, "low")) << "–" << format_cost(num(*f, "high")) << "), "
      << f->value("loops", 0) << " loops, ~" << f->value("model_calls", 0) << " model calls, ~"
      << duration_text(f->value("duration_ms", std::int64_t{0})) << " after approval\n";
  out << style.dim("basis:") << "      " << str_field(*f, "basis") << "\n";
  if (auto b = d.find("budget"); b != d.end() && b->is_object()) {
    // The request's own limits (submit --max-cost/--max-runtime/--max-iterations).
    std::string own;
    auto add = [&own](const std::string& part) { own += (own.empty() ? "" : ", ") + part; };
    if ((*b)["max_cost_usd"].is_number()) add(format_cost(num(*b, "max_cost_usd")));
    if ((*b)["max_runtime"].is_string()) add(str_field(*b, "max_runtime") + " after approval");
    if ((*b)["max_iterations"].is_number())
      add(std::to_string((*b)["max_iterations"].get<int>()) + " iterations per loop");
    out << style.dim("limits:") << "     " << own << " (this request's own)\n";
  }
  if (f->value("over_limit", false)) {
    out << style.red("warning:") << "    the high estimate " << format_cost(num(*f, "high"))
        << " is above " << f->value("max_cost_source", std::string("limits.max_cost_usd")) << " "
        << format_cost(num(*f, "max_cost_usd"))
        << ": the tree may stop at the limit\n";
  }
  auto a = d.find("actual");
  if (a != d.end() && a->is_object()) {
    double fc = num(*f, "cost_usd"), ac = num(*a, "cost_usd");
    char pct[32] = "";
    if (fc > 0) std::snprintf(pct, sizeof pct, " (%+.0f%%)", (ac - fc) / fc * 100.0);
    out << style.dim("actual:") << "     " << format_cost(ac) << " against ~" << format_cost(fc)
        << pct << "; " << a->value("loops", 0) << " loops against " << f->value("loops", 0) << "; "
        << a->value("model_calls", 0) << " model calls against ~" << f->value("model_calls", 0)
        << "; " << duration_text(a->value("duration_ms", std::int64_t{0})) << " against ~"
        << duration_text(f->value("duration_ms", std::int64_t{0})) << "\n";
  }
  return out.str();
}

ReviewDecision review_question(const Api& api, const json& loop, Prompter& prompter,
                               std::ostream& ui, const Style& style) {
  std::string id = str_field(loop, "id");
  ReviewDecision d{id, "skip", {}, false};
  std::string question = str_field(loop, "question");
  if (question.empty()) question = str_field(loop, "status_reason");
  ui << "\n"
     << style.bold("Loop " + id) << " (" << str_field(loop, "type")
     << ") asks: " << str_field(loop, "task").substr(0, 80) << "\n\n";
  std::istringstream lines(question);
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
    api.post("/v1/loops/" + url_encode(id) + "/answer", json{{"text", text}});
    d.decision = "answer";
    d.text = text;
    ui << style.green("answered") << " " << id << ": it runs again with your answer\n";
    return d;
  }
}

void add_coordination_json(json& out, const json& api) {
  for (const char* key : {"question", "answer", "forecast", "actual", "budget"})
    if (auto it = api.find(key); it != api.end()) out[key] = *it;
}

int run_answer(const GlobalOptions& opts, const std::string& id, const std::string& text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw CommandError{kUsage, "the answer is empty",
                       "write `loopr answer " + id + " \"your answer\"`"};
  RepoPaths paths(require_repo(opts));
  Api api = connect(paths);
  json loop = api.post("/v1/loops/" + url_encode(id) + "/answer", json{{"text", text}});
  if (opts.json) {
    json out = interface_loop_json(loop);
    add_coordination_json(out, loop);
    std::cout << out.dump() << "\n";
  } else if (!opts.quiet) {
    std::cout << "answered " << id << " (now " << str_field(loop, "status") << ")\n";
  }
  return kOk;
}

}  // namespace loopr::cli
