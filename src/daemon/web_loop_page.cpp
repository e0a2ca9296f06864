// The loop page (web_pages.hpp): fields, decisions, artifacts, the branch's diff, iterations.
#include <loopr/core/loop.hpp>
#include <loopr/markdown/html.hpp>

#include "daemon/web_html.hpp"
#include "daemon/web_pages.hpp"

namespace loopr::daemon::web {

using nlohmann::json;

namespace {

double num(const json& j, const char* key) {
  auto it = j.is_object() ? j.find(key) : j.end();
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string link(const std::string& id, const std::string& token) {
  return "<a href=\"" + href("/loop/" + url_encode(id), token) + "\">" + esc(id) + "</a>";
}

/// One `<tr>` of the fields table; `value_html` is already HTML. Empty values are left out.
std::string field(const char* name, const std::string& value_html) {
  if (value_html.empty()) return {};
  return std::string("<tr><th>") + name + "</th><td>" + value_html + "</td></tr>";
}

std::string when(const json& d, const char* key, std::int64_t now) {
  const std::string text = str(d, key);
  auto t = parse_timestamp(text);
  if (!t) return esc(text);
  return esc(text) + " <span class=\"dim\">(" + format_age(now - *t) + " ago)</span>";
}

std::string diff_html(const std::string& text) {
  std::string out = "<pre class=\"diff\">";
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    const char* cls = "ctx";
    if (line.rfind("diff --git", 0) == 0 || line.rfind("+++", 0) == 0 ||
        line.rfind("---", 0) == 0 || line.rfind("index ", 0) == 0)
      cls = "file";
    else if (line.rfind("@@", 0) == 0)
      cls = "hunk";
    else if (!line.empty() && line[0] == '+')
      cls = "add";
    else if (!line.empty() && line[0] == '-')
      cls = "del";
    out += std::string("<span class=\"") + cls + "\">" + esc(line) + "</span>\n";
  }
  out += "</pre>";
  return out;
}

std::string gate_status(const json& d) {
  if (!d.contains("integration") || !d["integration"].is_object()) return {};
  const json& g = d["integration"];
  return esc(str(g, "result")) + " " + esc(str(g, "summary")) + " <span class=\"dim\">" +
         esc(str(g, "sha").substr(0, 12)) + "</span>";
}

std::string forecast_html(const json& d) {
  std::string out;
  if (d.contains("forecast") && d["forecast"].is_object()) {
    const json& f = d["forecast"];
    out += format_cost(num(f, "cost_usd")) + " (" + format_cost(num(f, "low")) + "–" +
           format_cost(num(f, "high")) + "), " + esc(str(f, "loops")) + " loops, " +
           esc(str(f, "model_calls")) + " model calls";
    if (f.value("over_limit", false)) out += " <strong class=\"warn\">over the cost limit</strong>";
  }
  return out;
}

std::string actual_html(const json& d) {
  if (!d.contains("actual") || !d["actual"].is_object()) return {};
  const json& a = d["actual"];
  return format_cost(num(a, "cost_usd")) + ", " + esc(str(a, "loops")) + " loops, " +
         esc(str(a, "model_calls")) + " model calls, " +
         format_duration(static_cast<std::int64_t>(num(a, "duration_ms")));
}

}  // namespace

std::string loop_summary_section(const LoopView& v, const std::string& token) {
  const json& d = v.detail;
  const std::string id = str(d, "id");
  std::string out = "<section id=\"summary\" data-live=\"summary\"><table class=\"fields\">";
  std::string status = status_badge(str(d, "status"));
  if (!str(d, "status_reason").empty())
    status += " <span class=\"reason\">" + esc(str(d, "status_reason")) + "</span>";
  out += field("status", status);
  out += field("end reason", esc(str(d, "end_reason")));
  out += field("iteration", esc(str(d, "iteration")) + "/" + esc(str(d, "max_iterations")));
  std::string cost = format_cost(num(d, "cost_usd")) + " <span class=\"dim\">(" +
                     esc(str(d, "input_tokens")) + " in, " + esc(str(d, "output_tokens")) +
                     " out tokens)</span>";
  if (str(d, "type") == "plan" || d.contains("tree_cost_usd"))
    cost += " · whole tree " + format_cost(num(d, "tree_cost_usd"));
  out += field("cost", cost);
  if (str(d, "type") == "plan") {
    out += field("tree", "<span class=\"verdict v-" + esc(str(d, "tree_verdict")) + "\">" +
                             esc(str(d, "tree_verdict")) + "</span>");
    out += field("forecast", forecast_html(d));
    out += field("actual", actual_html(d));
    out += field("integration", gate_status(d));
    out += field("merge error", esc(str(d, "merge_error")));
  }
  if (!str(d, "parent_id").empty()) out += field("parent", link(str(d, "parent_id"), token));
  if (!str(d, "plan_id").empty() && str(d, "plan_id") != id)
    out += field("plan", link(str(d, "plan_id"), token));
  out += field("question", esc(str(d, "question")));
  out += field("answer", esc(str(d, "answer")));
  out += field("input", esc(str(d, "input_artifact")));
  out += field("branch", esc(str(d, "branch")));
  out += field("worktree", esc(str(d, "worktree")));
  if (d.contains("conflicts") && d["conflicts"].is_array()) {
    std::string paths;
    for (const auto& p : d["conflicts"])
      paths += (paths.empty() ? "" : ", ") + esc(p.is_string() ? p.get<std::string>() : p.dump());
    out += field("conflicts", paths);
  }
  out += field("created", when(d, "created_at", v.now_ms));
  out += field("updated", when(d, "updated_at", v.now_ms));
  out += "</table>";
  if (!v.children.empty()) {
    out += "<p class=\"children\">children: ";
    for (const auto& c : v.children)
      out += link(str(c, "id"), token) + " " + status_badge(str(c, "status")) + " ";
    out += "</p>";
  }
  out += "</section>";
  return out;
}

std::string loop_body(const LoopView& v, const std::string& token) {
  const json& d = v.detail;
  const std::string id = str(d, "id");
  const std::string status = str(d, "status");
  std::string out = "<h1><span class=\"type\">" + esc(str(d, "type")) + "</span> " + esc(id) +
                    "</h1><p class=\"task\">" + esc(str(d, "task")) + "</p>";
  out += loop_summary_section(v, token);
  if (status == "awaiting_approval" && str(d, "type") == "plan")
    out += "<section class=\"decide\"><h2>Your decision</h2>" + gate_forms(id, token, "loop") +
           "</section>";
  if (status == "awaiting_answer")
    out += "<section class=\"decide\"><h2>The loop asks</h2><pre class=\"asked\">" +
           esc(str(d, "question")) + "</pre>" + answer_form(id, token, "loop") + "</section>";

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

  out += "<section class=\"diff-section\"><details open><summary>Diff <code>" + esc(v.diff_label) +
         "</code></summary>";
  if (!v.diff.text)
    out += "<p class=\"problem\">" + esc(v.diff.problem) + "</p>";
  else if (v.diff.text->empty())
    out += "<p class=\"empty\">No changes.</p>";
  else
    out += diff_html(*v.diff.text);
  out += "</details></section>";

  const std::string validation = str(d, "validation_output");
  if (!validation.empty())
    out += "<section><h2>Last validation output</h2><pre class=\"validation\">" + esc(validation) +
           "</pre></section>";
  if (d.contains("progress") && d["progress"].is_string() &&
      !d["progress"].get<std::string>().empty())
    out += "<section><details><summary>Feedback carried to the next iteration</summary><pre>" +
           esc(d["progress"].get<std::string>()) + "</pre></details></section>";

  out += "<section class=\"iterations\"><h2>Iterations</h2>";
  const json& its = d.contains("iterations") ? d["iterations"] : json::array();
  if (!its.is_array() || its.empty()) out += "<p class=\"empty\">None yet.</p>";
  if (its.is_array()) {
    for (auto it = its.rbegin(); it != its.rend(); ++it) {
      const json& r = *it;
      const std::string n = str(r, "n");
      const std::string path = "/loop/" + url_encode(id) + "/iterations/" + url_encode(n);
      out += "<details class=\"iteration\" data-n=\"" + esc(n) + "\" data-src=\"" +
             href(path, token, "part=body") + "\"><summary><span class=\"n\">#" + esc(n) +
             "</span> " + status_badge(str(r, "status")) + " <span class=\"dim\">exit " +
             esc(str(r, "exit_code").empty() ? "-" : str(r, "exit_code")) + " · " +
             format_cost(num(r, "cost_usd")) + " · " +
             format_duration(static_cast<std::int64_t>(num(r, "duration_ms"))) +
             "</span> <span class=\"summary\">" + esc(str(r, "summary")) + "</span></summary>" +
             "<div class=\"body\"><a href=\"" + href(path, token) +
             "\">open the transcript</a></div></details>";
    }
  }
  out += "</section>";
  return out;
}

}  // namespace loopr::daemon::web
