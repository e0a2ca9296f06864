#include "cli/format.hpp"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <sstream>

#include <loopr/core/text.hpp>

#include "cli/baseline_view.hpp"
#include "cli/coordination.hpp"

namespace loopr::cli {

using nlohmann::json;

namespace {

const char* const kIterationFields[] = {"n",        "status",      "exit_code",
                                        "cost_usd", "duration_ms", "summary"};

std::string iteration_of(const api::LoopRow& loop) {
  return std::to_string(loop.iteration) + "/" + std::to_string(loop.max_iterations);
}

}  // namespace

std::string shown(std::string_view text) { return terminal_text(text); }

std::string one_line(std::string s, std::size_t max) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (s.size() > max) s = std::string(utf8_prefix(s, max)) + "…";
  return s;
}

json interface_loop_json(const api::LoopRow& row) {
  const json all = api::to_json(row);
  json out = json::object();
  for (const char* key : kApiLoopFields) {
    auto it = all.find(key);
    out[key] = it != all.end() ? *it : json(nullptr);
  }
  return out;
}

json interface_action_json(const api::LoopRow& row) {
  json out = interface_loop_json(row);
  if (row.question) {
    out["question"] = *row.question;
    out["answer"] = row.answer ? json(*row.answer) : json(nullptr);
  }
  return out;
}

json interface_show_json(const api::LoopDetail& d) {
  json out = interface_action_json(d.loop);
  json iterations = json::array();
  for (const auto& rec : d.iterations) {
    const json all = api::to_json(rec);
    json r = json::object();
    for (const char* key : kIterationFields) r[key] = all.at(key);
    // A subscription login's receipt (docs/differences.md): only where there is one.
    if (rec.notional_cost_usd) r["notional_cost_usd"] = *rec.notional_cost_usd;
    iterations.push_back(std::move(r));
  }
  out["iterations"] = std::move(iterations);
  if (d.forecast) out["forecast"] = api::to_json(*d.forecast);
  if (d.actual) out["actual"] = api::to_json(*d.actual);
  if (d.budget) out["budget"] = api::to_json(*d.budget);
  // A plan's pull request (merge: pr), once one was opened or a push failed.
  if (d.loop.is_plan() && d.loop.pr) out["pr"] = api::to_json(*d.loop.pr);
  return out;
}

std::vector<TreeRow> tree_rows(const std::vector<api::LoopRow>& loops, bool unicode) {
  std::vector<TreeRow> rows;
  std::map<std::string, std::vector<std::size_t>> kids;
  std::map<std::string, bool> present;
  for (const auto& l : loops) present[l.id] = true;
  std::vector<std::size_t> roots;
  for (std::size_t i = 0; i < loops.size(); ++i) {
    const std::string& parent = loops[i].parent_id;
    if (parent.empty() || !present.count(parent))
      roots.push_back(i);
    else
      kids[parent].push_back(i);
  }
  const std::string tee = unicode ? "├─ " : "|- ", elbow = unicode ? "└─ " : "`- ",
                    bar = unicode ? "│  " : "|  ", gap = "   ";
  std::function<void(std::size_t, const std::string&, const std::string&)> walk =
      [&](std::size_t i, const std::string& prefix, const std::string& child_prefix) {
        rows.push_back({prefix, &loops[i]});
        const auto& mine = kids[loops[i].id];
        for (std::size_t k = 0; k < mine.size(); ++k) {
          bool last = k + 1 == mine.size();
          walk(mine[k], child_prefix + (last ? elbow : tee), child_prefix + (last ? gap : bar));
        }
      };
  for (std::size_t r : roots) walk(r, "", "");
  return rows;
}

std::string render_tree_table(const std::vector<api::LoopRow>& loops, const Style& style,
                              TimestampMs now,
                              const std::function<std::string(const api::LoopRow&)>& marker) {
  auto rows = tree_rows(loops, style.color);
  std::vector<std::array<std::string, 6>> cells;
  cells.push_back({"ID", "TYPE", "STATUS", "ITER", "COST", "AGE"});
  for (const auto& row : rows) {
    const api::LoopRow& l = *row.loop;
    std::string status = style.status(l.status);
    if (marker) status = marker(l) + status;
    if (l.pr && l.pr->number > 0)  // merge: pr: the plan's pull request and its checks
      status +=
          " PR #" + std::to_string(l.pr->number) +
          (l.pr->checks == PrChecks::none ? "" : " (" + name_text(to_string(l.pr->checks)) + ")");
    cells.push_back({row.prefix + shown(l.id), to_string(l.type), status, iteration_of(l),
                     format_cost(l.cost_usd), l.created_at ? format_age(now - l.created_at) : "-"});
  }
  std::array<std::size_t, 6> widths{};
  for (const auto& c : cells)
    for (std::size_t i = 0; i < c.size(); ++i) widths[i] = std::max(widths[i], visible_width(c[i]));
  std::string out;
  for (std::size_t r = 0; r < cells.size(); ++r) {
    std::string line;
    for (std::size_t i = 0; i < cells[r].size(); ++i) {
      const std::string& cell = r == 0 ? style.dim(cells[r][i]) : cells[r][i];
      bool right = i >= 3;  // numbers line up on the right
      std::size_t w = visible_width(cell);
      std::string pad(widths[i] > w ? widths[i] - w : 0, ' ');
      if (i + 1 == cells[r].size() && !right) {
        line += cell;
      } else {
        line += right ? pad + cell : cell + pad;
      }
      if (i + 1 < cells[r].size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

namespace {

// The tree's state as the daemon knows it (plans only).
std::string tree_line(const api::LoopRow& d) {
  const std::string& base = d.base_branch;
  switch (*d.tree_verdict) {
    case TreeVerdict::merged:
      return "merged into " + base + " at " + d.merged_into_base.substr(0, 10);
    case TreeVerdict::merge_failed:
      return "not merged into " + name_text(base) + ": " + name_text(d.merge_error);
    case TreeVerdict::complete:
      if (d.pr && d.pr->number > 0) {
        const std::string pr = "complete; pull request #" + std::to_string(d.pr->number);
        if (d.pr->state == PullRequestState::merged) return pr + " merged on the forge";
        if (d.pr->state == PullRequestState::closed)
          return pr + " closed on the forge (`loopr merge " + d.id + "` opens a new one)";
        return pr + " (merging it is yours)";
      }
      return "complete; `loopr merge " + d.id + "` merges it into " + base;
    case TreeVerdict::validating:
      if (d.pr && d.pr->checks == PrChecks::pending)
        return "every loop complete; waiting for the checks of pull request #" +
               std::to_string(d.pr->number);
      return "every loop complete; checking the integration branch";
    case TreeVerdict::integration_failed:
      if (d.end_reason == EndReason::ci_failed && d.pr && d.pr->number > 0)
        return "blocked: the forge's CI fails on pull request #" + std::to_string(d.pr->number) +
               " (see checks below)";
      return "blocked: the integration branch fails its tests (see below)";
    default:
      return to_string(*d.tree_verdict);
  }
}

std::string iteration_result(const Style& style, IterationOutcome outcome) {
  const std::string result = to_string(outcome);
  switch (outcome) {
    case IterationOutcome::passed:
      return style.green(result);
    case IterationOutcome::failed:
    case IterationOutcome::error:
      return style.red(result);
    default:
      return style.yellow(result);
  }
}

// `name:` and its value, the values aligned; an empty value is no line.
struct Fields {
  std::ostream& out;
  const Style& style;
  void operator()(const std::string& name, const std::string& value) const {
    if (value.empty()) return;
    out << style.dim(name + ":") << std::string(name.size() < 11 ? 11 - name.size() : 1, ' ')
        << value << "\n";
  }
  // `title:` and `text` below it, indented.
  void block(const std::string& title, const std::string& text) const {
    out << style.dim(title + ":") << "\n";
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out << "  " << line << "\n";
  }
};

// The integration gate: its last check, and the output when it failed.
void integration_fields(const Fields& field, const api::IntegrationView& g) {
  const bool failed = g.result == api::kGateFailed;
  std::string line = g.result + " at " + g.sha.substr(0, 10);
  if (!g.summary.empty()) line += ": " + one_line(shown(g.summary), 200);
  field("integration", failed ? field.style.red(line) : line);
  if (!g.log.empty()) field("check log", g.log);
  if (failed && !g.output.empty()) field.block("check output (the end)", shown(g.output));
}

// merge: pr: the pull request, its checks, and what failed at the forge. The address and the
// state are the forge's words: shown, never run, on one line.
void pr_fields(const Fields& field, const api::PrView& p) {
  if (p.number > 0)
    field("pr", "#" + std::to_string(p.number) + " " + name_text(p.url) + " (" +
                    name_text(to_string(p.state)) + ")");
  if (p.checks != PrChecks::none) {
    std::string line = name_text(to_string(p.checks)) +
                       (p.failing.empty() ? "" : ": " + one_line(shown(p.failing), 200));
    if (p.ci_fix_loops > 0) line += " (" + std::to_string(p.ci_fix_loops) + " CI fix loop(s))";
    field("checks", p.checks == PrChecks::failed ? field.style.red(line) : line);
  }
  if (!p.error.empty()) field("pr error", field.style.red(one_line(shown(p.error), 400)));
}

// The iterations table; the token and cache columns only when some iteration has them.
std::vector<std::vector<std::string>> iteration_rows(const std::vector<api::IterationRow>& its,
                                                     const Style& style) {
  bool tokens = false, cached = false;
  for (const auto& r : its) {
    tokens = tokens || r.input_tokens || r.output_tokens;
    cached = cached || r.cache_read_tokens || r.cache_write_tokens;
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"N", "RESULT", "EXIT"};
  if (tokens) {
    head.push_back("TOKENS IN");
    head.push_back("OUT");
  }
  if (cached) head.push_back("CACHE READ / WRITE");
  for (const char* h : {"COST", "DURATION", "SUMMARY"}) head.push_back(h);
  rows.push_back(head);
  for (const auto& r : its) {
    std::vector<std::string> row = {std::to_string(r.n), iteration_result(style, r.status),
                                    r.exit_code ? std::to_string(*r.exit_code) : "-"};
    if (tokens) {
      row.push_back(format_count(r.input_tokens));
      row.push_back(format_count(r.output_tokens));
    }
    if (cached)
      row.push_back(format_count(r.cache_read_tokens) + " / " + format_count(r.cache_write_tokens));
    row.push_back(format_cost(r.cost_usd));
    row.push_back(format_elapsed(r.duration_ms));
    row.push_back(one_line(shown(r.summary), 100));
    rows.push_back(std::move(row));
  }
  return rows;
}

void iterations_table(std::ostream& out, const std::vector<api::IterationRow>& its,
                      const Style& style) {
  const std::vector<std::vector<std::string>> rows = iteration_rows(its, style);
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) widths[i] = std::max(widths[i], visible_width(r[i]));
  out << style.dim("iterations:") << "\n";
  for (std::size_t k = 0; k < rows.size(); ++k) {
    std::string line = "  ";
    for (std::size_t i = 0; i < rows[k].size(); ++i) {
      std::string cell = k == 0 ? style.dim(rows[k][i]) : rows[k][i];
      line += i + 1 < rows[k].size() ? pad_visible(cell, widths[i]) + "  " : cell;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

}  // namespace

std::string render_loop_details(const api::LoopDetail& detail, const Style& style,
                                TimestampMs now) {
  const api::LoopRow& d = detail.loop;
  std::ostringstream out;
  const Fields field{out, style};
  out << style.bold(shown(d.id)) << "  " << to_string(d.type) << "  " << style.status(d.status)
      << "\n";
  field("task", one_line(shown(d.task), 400));
  field("reason", one_line(shown(d.status_reason), 400));
  // The same words as scripts get (docs/architecture.md "End reasons").
  if (d.end_reason != EndReason::none) field("ended", to_string(d.end_reason));
  field("parent", d.parent_id);
  field("iteration", iteration_of(d));
  std::string cost = format_cost(d.cost_usd) + " (" + format_count(d.input_tokens) +
                     " tokens in, " + format_count(d.output_tokens) + " out)";
  if (d.tree_cost_usd && d.is_plan()) cost += ", whole tree " + format_cost(*d.tree_cost_usd);
  field("cost", cost);
  field("cache", api::cache_summary(d));
  if (d.tree_verdict) field("tree", tree_line(d));
  if (d.integration) integration_fields(field, *d.integration);
  if (d.pr) pr_fields(field, *d.pr);
  out << render_baseline(d, style);
  out << render_forecast(detail, style);
  if (d.question) {
    field("question", shown(*d.question));
    if (d.answer) field("answer", shown(*d.answer));
  }
  field("branch", name_text(d.branch));
  field("worktree", name_text(d.worktree));
  if (d.created_at)
    field("created",
          format_timestamp(d.created_at) + " (" + format_age(now - d.created_at) + " ago)");
  if (d.updated_at)
    field("updated",
          format_timestamp(d.updated_at) + " (" + format_age(now - d.updated_at) + " ago)");
  if (!d.artifacts.empty()) {
    out << style.dim("artifacts:") << "\n";
    for (const auto& p : d.artifacts) out << "  " << shown(p) << "\n";
  }
  if (!detail.validation_output.empty())
    field.block("last validation output", shown(detail.validation_output));
  if (!detail.iterations.empty()) iterations_table(out, detail.iterations, style);
  return out.str();
}

std::string render_health(const api::Health& h, const Style& style) {
  std::ostringstream out;
  out << "loopr daemon " << style.green("running") << ": pid " << h.pid << ", up "
      << format_elapsed(h.uptime_s * 1000);
  if (!h.repo.empty()) out << ", repository " << h.repo;
  out << "\n";
  if (h.web) out << "web UI: " << h.web->url << "\n";
  if (h.draining)
    out << style.yellow("draining") << ": the iterations in flight finish, no new one starts; "
        << "then it stops\n";
  else if (h.stopping)
    out << style.yellow("stopping") << "\n";
  const api::SandboxView& sb = h.sandbox;
  if (sb.present) {
    if (!sb.confined) {
      out << style.red(style.bold("sandbox: none"))
          << " — the model's commands run UNCONFINED (sandbox: none in .loopr/config.yml)\n";
    } else if (!sb.available) {
      out << "sandbox: " << style.red("not working") << ": " << sb.problem << "\n";
    } else {
      out << "sandbox: " << style.green(sb.kind) << " (" << sb.description << ")\n";
    }
    if (sb.executor && sb.executor->slurm()) {
      const api::ExecutorView& ex = *sb.executor;
      out << "executor: slurm, " << ex.jobs_queued << " jobs queued, " << ex.jobs_running
          << " running";
      // Cancelled jobs the cluster still lists (COMPLETING): not gone until squeue says so.
      if (ex.jobs_cleaning > 0)
        out << ", " << ex.jobs_cleaning << " cancelled and still cleaning up";
      out << "\n";
    }
  }
  if (h.disk) {
    // limits.min_free_space: below it no iteration starts; paused loops resume by themselves.
    const api::DiskView& d = *h.disk;
    if (d.full)
      out << style.red("disk full") << ": " << d.free_mib << " MiB free in " << d.dir
          << " (limits.min_free_space " << d.min_free_mib << " MiB): no iteration starts\n";
    if (d.paused_loops > 0)
      out << style.yellow("waiting for disk space") << ": " << d.paused_loops
          << (d.paused_loops == 1 ? " loop paused" : " loops paused")
          << "; they resume by themselves once there is space\n";
  }
  if (!h.loops.empty()) {
    auto total = h.loops.find(api::kTotal);
    out << "loops: " << (total == h.loops.end() ? 0 : total->second);
    std::string parts;
    for (LoopStatus s : kAllLoopStatuses) {
      auto it = h.loops.find(to_string(s));
      if (it == h.loops.end() || it->second == 0) continue;
      parts += (parts.empty() ? "" : ", ") + std::to_string(it->second) + " " + style.status(s);
    }
    if (!parts.empty()) out << " (" << parts << ")";
    out << "\n";
  }
  return out.str();
}

double tree_cost_of(const std::vector<api::LoopRow>& loops) {
  double sum = 0;
  for (const auto& l : loops) {
    if (l.is_plan() && l.tree_cost_usd) return *l.tree_cost_usd;
    sum += l.cost_usd;
  }
  return sum;
}

}  // namespace loopr::cli
