// The loop page (pages.hpp): fields, decisions, artifacts, the branch's diff, iterations.
#include <loopr/core/loop.hpp>
#include <loopr/core/text.hpp>
#include <loopr/markdown/html.hpp>

#include "web/html.hpp"
#include "web/pages.hpp"

namespace loopr::web {

namespace {

std::string link(const std::string& id, const std::string& token) {
  return "<a href=\"" + href("/loop/" + url_encode(id), token) + "\">" + esc(id) + "</a>";
}

/// One `<tr>` of the fields table; `value_html` is already HTML. Empty values are left out.
std::string field(const char* name, const std::string& value_html) {
  if (value_html.empty()) return {};
  return std::string("<tr><th>") + name + "</th><td>" + value_html + "</td></tr>";
}

std::string when(TimestampMs t, std::int64_t now) {
  if (!t) return {};
  return esc(format_timestamp(t)) + " <span class=\"dim\">(" + format_age(now - t) + " ago)</span>";
}

std::string gate_status(const api::LoopRow& d) {
  if (!d.integration) return {};
  const api::IntegrationView& g = *d.integration;
  return esc(g.result) + " " + esc(g.summary) + " <span class=\"dim\">" + esc(g.sha.substr(0, 12)) +
         "</span>";
}

std::string forecast_html(const api::LoopDetail& d) {
  if (!d.forecast) return {};
  const api::ForecastView& f = *d.forecast;
  std::string out = format_cost(f.cost_usd) + " (" + format_cost(f.low) + "–" +
                    format_cost(f.high) + "), " + std::to_string(f.loops) + " loops, " +
                    std::to_string(f.model_calls) + " model calls";
  // The warning is for the decision at the gate; once decided, the forecast is history.
  if (f.over_limit && d.loop.status == LoopStatus::awaiting_approval)
    out += " <strong class=\"warn\">over the cost limit</strong>";
  return out;
}

std::string actual_html(const api::LoopDetail& d) {
  if (!d.actual) return {};
  const api::ActualView& a = *d.actual;
  return format_cost(a.cost_usd) + ", " + std::to_string(a.loops) + " loops, " +
         std::to_string(a.model_calls) + " model calls, " + format_duration(a.duration_ms);
}

std::string end_reason_of(const api::LoopRow& d) {
  return d.end_reason == EndReason::none ? std::string() : to_string(d.end_reason);
}

}  // namespace

std::string loop_summary_section(const LoopView& v, const std::string& token) {
  const api::LoopRow& d = v.detail.loop;
  const std::string& id = d.id;
  std::string out = "<section id=\"summary\" data-live=\"summary\"><table class=\"fields\">";
  std::string status = status_badge(to_string(d.status));
  if (!d.status_reason.empty())
    status += " <span class=\"reason\">" + esc(d.status_reason) + "</span>";
  out += field("status", status);
  out += field("end reason", esc(end_reason_of(d)));
  out += field("iteration", std::to_string(d.iteration) + "/" + std::to_string(d.max_iterations));
  std::string cost = format_cost(d.cost_usd) + " <span class=\"dim\">(" +
                     std::to_string(d.input_tokens) + " in, " + std::to_string(d.output_tokens) +
                     " out tokens)</span>";
  if (d.is_plan() || d.tree_cost_usd)
    cost += " · whole tree " + format_cost(d.tree_cost_usd.value_or(0.0));
  out += field("cost", cost);
  out += field("cache", esc(api::cache_summary(d)));
  if (d.is_plan()) {
    const std::string verdict = d.tree_verdict ? to_string(*d.tree_verdict) : "";
    out +=
        field("tree", "<span class=\"verdict v-" + esc(verdict) + "\">" + esc(verdict) + "</span>");
    out += field("forecast", forecast_html(v.detail));
    out += field("actual", actual_html(v.detail));
    out += field("integration", gate_status(d));
    out += field("merge error", esc(d.merge_error));
    if (d.pr) {  // merge: pr: the pull request (its address is the forge's: only http(s) links)
      const api::PrView& p = *d.pr;
      std::string pr = p.number > 0 ? "#" + std::to_string(p.number) + " " + outside_link(p.url) +
                                          " (" + esc(name_text(to_string(p.state))) + ")"
                                    : "";
      out += field("pull request", pr);
      out +=
          field("checks",
                esc(name_text(to_string(p.checks) + (p.failing.empty() ? "" : ": " + p.failing))));
      out += field("pr error", esc(p.error));
    }
  }
  if (!d.parent_id.empty()) out += field("parent", link(d.parent_id, token));
  if (!d.plan_id.empty() && d.plan_id != id) out += field("plan", link(d.plan_id, token));
  out += field("question", esc(d.question.value_or("")));
  out += field("answer", esc(d.answer.value_or("")));
  out += field("input", esc(v.detail.input_artifact));
  out += field("branch", esc(d.branch));
  out += field("worktree", esc(d.worktree));
  std::string paths;
  for (const auto& p : v.detail.conflicts) paths += (paths.empty() ? "" : ", ") + esc(name_text(p));
  out += field("conflicts", paths);
  out += field("created", when(d.created_at, v.now_ms));
  out += field("updated", when(d.updated_at, v.now_ms));
  out += "</table>";
  if (!v.children.empty()) {
    out += "<p class=\"children\">children: ";
    for (const auto& c : v.children)
      out += link(c.id, token) + " " + status_badge(to_string(c.status)) + " ";
    out += "</p>";
  }
  out += "</section>";
  return out;
}

namespace {

// What the person decides on this page: the plan's gate, the loop's question, the actions.
std::string decide_sections(const LoopView& v, const std::string& token) {
  const api::LoopRow& d = v.detail.loop;
  std::string out;
  if (d.status == LoopStatus::awaiting_approval && d.is_plan())
    out += "<section class=\"decide\"><h2>Your decision</h2>" + gate_forms(d.id, token, "loop") +
           "</section>";
  if (d.status == LoopStatus::awaiting_answer)
    out += "<section class=\"decide\"><h2>The loop asks</h2><pre class=\"asked\">" +
           esc(d.question.value_or("")) + "</pre>" + answer_form(d.id, token, "loop") +
           "</section>";
  return out + action_forms(v, token);
}

std::string artifact_sections(const LoopView& v) {
  std::string out;
  for (const auto& a : v.artifacts) {
    out += "<section class=\"artifact-section\"><h2>Artifact <code>" + esc(a.path) +
           "</code></h2><div class=\"artifact\" data-path=\"" + esc(a.path) + "\">";
    if (a.text)
      out += markdown::render_safe_html(*a.text);
    else
      out += "<p class=\"problem\">" + esc(a.problem) + "</p>";
    if (a.truncated) out += "<p class=\"problem\">(cut: the file is longer)</p>";
    out += "</div></section>";
  }
  return out;
}

std::string diff_section(const LoopView& v, const std::string& token) {
  std::string out = "<section class=\"diff-section\"><details open><summary>Diff <code>" +
                    esc(v.diff_label) + "</code></summary>";
  if (!v.diff.text)
    out += "<p class=\"problem\">" + esc(v.diff.problem) + "</p>";
  else if (v.diff.text->empty())
    out += "<p class=\"empty\">No changes.</p>";
  else
    out += diff_html(*v.diff.text, DiffContext{v.detail.loop.id, token, v.comments, true});
  return out + "</details></section>";
}

std::string iterations_section(const LoopView& v, const std::string& token) {
  const std::string& id = v.detail.loop.id;
  std::string out = "<section class=\"iterations\"><h2>Iterations</h2>";
  const auto& its = v.detail.iterations;
  if (its.empty()) out += "<p class=\"empty\">None yet.</p>";
  for (auto it = its.rbegin(); it != its.rend(); ++it) {
    const api::IterationRow& r = *it;
    const std::string n = std::to_string(r.n);
    const std::string path = "/loop/" + url_encode(id) + "/iterations/" + n;
    out += "<details class=\"iteration\" data-n=\"" + n + "\" data-src=\"" +
           href(path, token, "part=body") + "\"><summary><span class=\"n\">#" + n + "</span> " +
           status_badge(to_string(r.status)) + " <span class=\"dim\">exit " +
           (r.exit_code ? std::to_string(*r.exit_code) : std::string("-")) + " · " +
           format_cost(r.cost_usd) + " · " + format_duration(r.duration_ms) +
           "</span> <span class=\"summary\">" + esc(r.summary) + "</span></summary>" +
           "<div class=\"body\"><a href=\"" + href(path, token) +
           "\">open the transcript</a></div></details>";
  }
  return out + "</section>";
}

}  // namespace

std::string loop_body(const LoopView& v, const std::string& token) {
  const api::LoopRow& d = v.detail.loop;
  std::string out = "<h1><span class=\"type\">" + esc(to_string(d.type)) + "</span> " + esc(d.id) +
                    "</h1><p class=\"task\">" + esc(d.task) + "</p>";
  out += loop_summary_section(v, token);
  out += decide_sections(v, token);
  out += pr_comments_section(v, token);
  out += artifact_sections(v);
  out += diff_section(v, token);
  out += comments_section(v, token);
  if (!v.detail.validation_output.empty())
    out += "<section><h2>Last validation output</h2><pre class=\"validation\">" +
           esc(v.detail.validation_output) + "</pre></section>";
  if (!v.detail.progress.empty())
    out += "<section><details><summary>Feedback carried to the next iteration</summary><pre>" +
           esc(v.detail.progress) + "</pre></details></section>";
  out += iterations_section(v, token);
  return out;
}

}  // namespace loopr::web
