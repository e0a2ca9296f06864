// The tree page, the gate page, the forms and one iteration's transcript (pages.hpp).
#include "web/pages.hpp"

#include <loopr/core/loop.hpp>
#include <loopr/markdown/html.hpp>

#include "web/html.hpp"

namespace loopr::web {

using nlohmann::json;

namespace {

int depth_of(LoopType type) {
  switch (type) {
    case LoopType::spec:
      return 1;
    case LoopType::phase:
      return 2;
    case LoopType::code:
      return 3;
    default:
      return 0;
  }
}

std::string loop_link(const std::string& id, const std::string& token) {
  return "<a class=\"id\" href=\"" + href("/loop/" + url_encode(id), token) + "\">" + esc(id) +
         "</a>";
}

std::string hidden_token(const std::string& token, const std::string& back) {
  return "<input type=\"hidden\" name=\"token\" value=\"" + esc(token) +
         "\"><input type=\"hidden\" name=\"back\" value=\"" + esc(back) + "\">";
}

std::string action_path(const std::string& id, const char* action) {
  return "/loop/" + url_encode(id) + "/" + action;
}

/// `forecast $x ($lo–$hi), N loops · actual $y, M loops`, or the cost spent so far.
std::string forecast_line(const api::LoopRow& plan_row, const api::LoopDetail* detail) {
  std::string out;
  if (detail != nullptr && detail->forecast) {
    const api::ForecastView& f = *detail->forecast;
    out += "forecast " + format_cost(f.cost_usd) + " (" + format_cost(f.low) + "–" +
           format_cost(f.high) + "), " + std::to_string(f.loops) + " loops";
    // A warning for the decision at the gate only: after it, the forecast is history.
    if (f.over_limit && plan_row.status == LoopStatus::awaiting_approval)
      out += " <strong class=\"warn\">over the cost limit</strong>";
  }
  if (detail != nullptr && detail->actual) {
    const api::ActualView& a = *detail->actual;
    if (!out.empty()) out += " · ";
    out += "actual " + format_cost(a.cost_usd) + ", " + std::to_string(a.loops) + " loops, " +
           format_duration(a.duration_ms);
  } else {
    if (!out.empty()) out += " · ";
    out += "spent " + format_cost(plan_row.tree_cost_usd.value_or(0.0));
  }
  return out;
}

std::string note_of(const api::LoopRow& row) {
  if (row.question && !row.question->empty() && row.status == LoopStatus::awaiting_answer)
    return "asks: " + *row.question;
  return row.status_reason;
}

std::string loop_row(const api::LoopRow& row, const std::string& token, std::int64_t now) {
  const std::string type = to_string(row.type);
  std::string out = "<tr class=\"d" + std::to_string(depth_of(row.type)) + "\" data-id=\"" +
                    esc(row.id) + "\"><td class=\"idcell\">" + loop_link(row.id, token) + "</td>";
  out +=
      "<td>" + esc(type) + "</td><td class=\"st\">" + status_badge(to_string(row.status)) + "</td>";
  out += "<td class=\"num iter\">" + std::to_string(row.iteration) + "/" +
         std::to_string(row.max_iterations) + "</td>";
  out += "<td class=\"num\">" + format_cost(row.cost_usd) + "</td>";
  out += "<td class=\"num\">" +
         (row.created_at ? format_age(now - row.created_at) : std::string("-")) + "</td>";
  out += "<td class=\"note\">" + esc(note_of(row)) + "</td></tr>";
  return out;
}

std::string verdict_of(const api::LoopRow& row) {
  return row.tree_verdict ? to_string(*row.tree_verdict) : "";
}

}  // namespace

int waiting_count(const std::vector<api::LoopRow>& loops) {
  int n = 0;
  for (const auto& row : loops)
    if ((row.status == LoopStatus::awaiting_approval && row.is_plan()) ||
        row.status == LoopStatus::awaiting_answer)
      ++n;
  return n;
}

std::string tree_section(const TreeView& view, const std::string& token) {
  std::string out = "<section id=\"tree\" data-live=\"tree\">";
  if (view.loops.empty()) {
    out +=
        "<p class=\"empty\">No loops yet. Start one with <code>loopr submit \"what to "
        "build\"</code>.</p></section>";
    return out;
  }
  // Rows come in tree order; a plan's rows follow it.
  std::string current;
  bool open = false;
  auto close = [&] {
    if (open) out += "</tbody></table></article>";
    open = false;
  };
  for (const auto& row : view.loops) {
    const std::string plan = row.plan_id.empty() ? row.id : row.plan_id;
    if (plan != current) {
      close();
      current = plan;
      open = true;
      out += "<article class=\"plan\" data-plan=\"" + esc(plan) + "\">";
      if (row.is_plan()) {
        auto detail = view.plans.find(plan);
        const std::string verdict = verdict_of(row);
        out += "<h2>" + loop_link(plan, token) + " <span class=\"task\">" + esc(row.task) +
               "</span></h2><p class=\"meta\">tree: <span class=\"verdict v-" + esc(verdict) +
               "\">" + esc(verdict) + "</span> · " +
               forecast_line(row, detail == view.plans.end() ? nullptr : &detail->second) + "</p>";
      }
      out +=
          "<table class=\"loops\"><thead><tr><th>id</th><th>type</th><th>status</th>"
          "<th>iter</th><th>cost</th><th>age</th><th>note</th></tr></thead><tbody>";
    }
    out += loop_row(row, token, view.now_ms);
  }
  close();
  out += "</section>";
  return out;
}

std::string gate_forms(const std::string& id, const std::string& token, const std::string& back) {
  std::string out = "<div class=\"actions\">";
  out += "<form method=\"post\" action=\"" + esc(action_path(id, "approve")) + "\">" +
         hidden_token(token, back) +
         "<button type=\"submit\" class=\"approve\">Approve</button></form>";
  out += "<form method=\"post\" action=\"" + esc(action_path(id, "reject")) + "\">" +
         hidden_token(token, back) +
         "<input type=\"text\" name=\"reason\" placeholder=\"reason (optional)\" "
         "aria-label=\"reason\"><button type=\"submit\" class=\"reject\">Reject</button></form>";
  out += "<form method=\"post\" class=\"wide\" action=\"" + esc(action_path(id, "iterate")) +
         "\">" + hidden_token(token, back) +
         "<textarea name=\"feedback\" required rows=\"3\" placeholder=\"what to change\" "
         "aria-label=\"feedback\"></textarea><button type=\"submit\" "
         "class=\"iterate\">Iterate with this feedback</button></form>";
  out += "</div>";
  return out;
}

std::string answer_form(const std::string& id, const std::string& token, const std::string& back) {
  return "<div class=\"actions\"><form method=\"post\" class=\"wide\" action=\"" +
         esc(action_path(id, "answer")) + "\">" + hidden_token(token, back) +
         "<textarea name=\"text\" required rows=\"3\" placeholder=\"your answer\" "
         "aria-label=\"answer\"></textarea><button type=\"submit\" "
         "class=\"answer\">Answer</button></form></div>";
}

std::string error_body(const std::string& message, const std::string& back_href) {
  return "<section class=\"error\"><h1>Not done</h1><p class=\"message\">" + esc(message) +
         "</p><p><a href=\"" + back_href + "\">Back</a></p></section>";
}

std::string gate_body(const GateView& view, const std::string& token) {
  std::string out = "<h1>The gate</h1>";
  if (view.plans.empty() && view.questions.empty())
    out += "<p class=\"empty\">Nothing waits for you.</p>";
  for (const auto& p : view.plans) {
    const api::LoopRow& plan = p.detail.loop;
    const std::string& id = plan.id;
    out += "<article class=\"gate-plan\" data-plan=\"" + esc(id) + "\"><h2>Plan " +
           loop_link(id, token) + " <span class=\"task\">" + esc(plan.task) + "</span></h2>";
    out += "<p class=\"meta\">iteration " + std::to_string(plan.iteration) + "/" +
           std::to_string(plan.max_iterations) + " · " + forecast_line(plan, &p.detail) + "</p>";
    out += "<div class=\"artifact\" data-path=\"" + esc(p.plan.path) + "\">";
    if (p.plan.text)
      out += markdown::render_safe_html(*p.plan.text);
    else
      out += "<p class=\"problem\">" + esc(p.plan.problem) + "</p>";
    out += "</div>" + gate_forms(id, token, "gate") + "</article>";
  }
  if (!view.questions.empty()) out += "<h2>Questions</h2>";
  for (const auto& q : view.questions) {
    out += "<article class=\"question\" data-loop=\"" + esc(q.id) + "\"><h3>" +
           loop_link(q.id, token) + " <span class=\"task\">" + esc(q.task) +
           "</span></h3><pre class=\"asked\">" + esc(q.question.value_or("")) + "</pre>" +
           answer_form(q.id, token, "gate") + "</article>";
  }
  return out;
}

namespace {

std::string pre(const IterationFileText& f, const char* cls) {
  if (!f.text) return "<p class=\"problem\">" + esc(f.problem) + "</p>";
  std::string out = std::string("<pre class=\"") + cls + "\">" + esc(*f.text) + "</pre>";
  if (f.truncated) out += "<p class=\"problem\">(cut: the file is longer)</p>";
  return out;
}

std::string dump(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); }

std::string block_html(const TranscriptBlock& b) {
  using Kind = TranscriptBlock::Kind;
  switch (b.kind) {
    case Kind::text:
      return "<pre class=\"text\">" + esc(b.text) + "</pre>";
    case Kind::thinking:
      return "<pre class=\"thinking\">" + esc(b.text) + "</pre>";
    case Kind::tool_use:
      return "<div class=\"tool-call\"><span class=\"tool\">→ " + esc(b.name) + "</span><pre>" +
             esc(dump(b.input)) + "</pre></div>";
    case Kind::tool_result:
      return std::string("<div class=\"tool-result") + (b.is_error ? " error" : "") +
             "\"><span class=\"tool\">" + (b.is_error ? "← error" : "←") + "</span><pre>" +
             esc(tool_result_text(b.content, 2)) + "</pre></div>";
    default:  // redacted thinking and what the page does not know: its JSON
      return "<pre class=\"raw\">" + esc(dump(b.raw)) + "</pre>";
  }
}

std::string entry_html(const TranscriptEntry& e) {
  switch (e.kind) {
    case TranscriptEntry::Kind::receipt:
      return "<p class=\"receipt\">model call: " +
             esc(e.receipt.dump(-1, ' ', false, json::error_handler_t::replace)) + "</p>";
    case TranscriptEntry::Kind::raw:
      return "<pre class=\"raw\">" + esc(e.line) + "</pre>";
    case TranscriptEntry::Kind::message:
      break;
  }
  std::string out = "<div class=\"message role-" + esc(e.role == "user" ? "user" : "assistant") +
                    "\"><span class=\"role\">" + esc(e.role) + "</span>";
  if (e.text) out += "<pre class=\"text\">" + esc(*e.text) + "</pre>";
  for (const auto& b : e.blocks) out += block_html(b);
  return out + "</div>";
}

std::string conversation_html(const IterationFileText& f) {
  if (!f.text) return "<p class=\"problem\">" + esc(f.problem) + "</p>";
  std::string out = "<div class=\"conversation\">";
  for (const auto& e : parse_conversation(*f.text)) out += entry_html(e);
  if (f.truncated) out += "<p class=\"problem\">(cut: the file is longer)</p>";
  out += "</div>";
  return out;
}

}  // namespace

std::string iteration_body(const IterationFiles& files) {
  using F = IterationFile;
  std::string out = "<div class=\"transcript\" data-iteration=\"" + std::to_string(files.n) + "\">";
  out += "<details class=\"prompt\"><summary>Prompt</summary>" + pre(files[F::prompt], "prompt") +
         "</details>";
  out += "<h4>Conversation</h4>" + conversation_html(files[F::conversation]);
  out += "<h4>Validation</h4>" + pre(files[F::validation], "validation");
  if (files[F::review].text) out += "<h4>Review</h4>" + pre(files[F::review], "review");
  out += "</div>";
  return out;
}

}  // namespace loopr::web
