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

#include "cli/coordination.hpp"
#include "cli/baseline_view.hpp"  // issue 27

namespace loopr::cli {

using nlohmann::json;

namespace {

const char* const kIterationFields[] = {"n",        "status",      "exit_code",
                                        "cost_usd", "duration_ms", "summary"};

double num_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::int64_t int_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<std::int64_t>() : 0;
}

// Compact JSON of a value, cut to `max` characters.
std::string compact(const json& j, std::size_t max = 200) {
  std::string s =
      j.is_string() ? j.get<std::string>() : j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > max) s = std::string(utf8_prefix(s, max)) + "…";
  return s;
}

std::string one_line(std::string s, std::size_t max = 160) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (s.size() > max) s = std::string(utf8_prefix(s, max)) + "…";
  return s;
}

std::string iteration_of(const json& loop) {
  return std::to_string(int_field(loop, "iteration")) + "/" +
         std::to_string(int_field(loop, "max_iterations"));
}

}  // namespace

json interface_loop_json(const json& api) {
  json out = json::object();
  for (const char* key : kApiLoopFields) {
    auto it = api.find(key);
    out[key] = it != api.end() ? *it : json(nullptr);
  }
  if (!out["artifacts"].is_array()) out["artifacts"] = json::array();
  return out;
}

json interface_show_json(const json& detail) {
  json out = interface_loop_json(detail);
  json iterations = json::array();
  if (auto it = detail.find("iterations"); it != detail.end() && it->is_array()) {
    for (const auto& rec : *it) {
      json r = json::object();
      for (const char* key : kIterationFields) {
        auto f = rec.find(key);
        r[key] = f != rec.end() ? *f : json(nullptr);
      }
      iterations.push_back(std::move(r));
    }
  }
  out["iterations"] = std::move(iterations);
  return out;
}

std::string format_cost(double usd) {
  if (usd == 0) return "$0";
  char buf[32];
  if (std::fabs(usd) < 0.01)
    std::snprintf(buf, sizeof buf, "$%.3f", usd);
  else
    std::snprintf(buf, sizeof buf, "$%.2f", usd);
  return buf;
}

std::string format_age(std::int64_t ms) {
  if (ms < 0) ms = 0;
  std::int64_t s = ms / 1000;
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m";
  if (s < 86400) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

std::string format_elapsed(std::int64_t ms) {
  if (ms < 0) ms = 0;
  std::int64_t s = ms / 1000;
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%" PRId64 "s", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%" PRId64 "h%02" PRId64 "m", s / 3600, (s % 3600) / 60);
  return buf;
}

std::string format_count(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string str_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

TimestampMs time_field(const json& j, const char* key) {
  auto t = parse_timestamp(str_field(j, key));
  return t ? *t : 0;
}

std::vector<TreeRow> tree_rows(const json& loops, bool unicode) {
  std::vector<TreeRow> rows;
  if (!loops.is_array()) return rows;
  std::map<std::string, std::vector<std::size_t>> kids;
  std::map<std::string, bool> present;
  for (const auto& l : loops) present[str_field(l, "id")] = true;
  std::vector<std::size_t> roots;
  for (std::size_t i = 0; i < loops.size(); ++i) {
    std::string parent = str_field(loops[i], "parent_id");
    if (parent.empty() || !present.count(parent))
      roots.push_back(i);
    else
      kids[parent].push_back(i);
  }
  const std::string tee = unicode ? "├─ " : "|- ", elbow = unicode ? "└─ " : "`- ",
                    bar = unicode ? "│  " : "|  ", gap = "   ";
  std::function<void(std::size_t, const std::string&, const std::string&)> walk =
      [&](std::size_t i, const std::string& prefix, const std::string& child_prefix) {
        rows.push_back({prefix, loops[i]});
        const auto& mine = kids[str_field(loops[i], "id")];
        for (std::size_t k = 0; k < mine.size(); ++k) {
          bool last = k + 1 == mine.size();
          walk(mine[k], child_prefix + (last ? elbow : tee), child_prefix + (last ? gap : bar));
        }
      };
  for (std::size_t r : roots) walk(r, "", "");
  return rows;
}

std::string render_tree_table(const json& loops, const Style& style, TimestampMs now,
                              const std::function<std::string(const json&)>& marker) {
  // Ids, types and statuses are the daemon's own words; the one free text, an id the model
  // cannot choose, is still shown safely.
  auto rows = tree_rows(loops, style.color);
  std::vector<std::array<std::string, 6>> cells;
  cells.push_back({"ID", "TYPE", "STATUS", "ITER", "COST", "AGE"});
  for (const auto& row : rows) {
    const json& l = row.loop;
    std::string status = str_field(l, "status");
    std::string shown = style.status(terminal_text(status));
    if (marker) shown = marker(l) + shown;
    std::int64_t created = time_field(l, "created_at");
    cells.push_back({row.prefix + terminal_text(str_field(l, "id")), terminal_text(str_field(l, "type")),
                     shown, iteration_of(l),
                     format_cost(num_field(l, "cost_usd")),
                     created ? format_age(now - created) : "-"});
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

std::string render_loop_details(const json& detail, const Style& style, TimestampMs now) {
  const json d = terminal_json(detail);  // the model's text, shown with its controls visible
  std::ostringstream out;
  auto field = [&](const std::string& name, const std::string& value) {
    if (value.empty()) return;
    out << style.dim(name + ":") << std::string(name.size() < 11 ? 11 - name.size() : 1, ' ')
        << value << "\n";
  };
  out << style.bold(str_field(d, "id")) << "  " << str_field(d, "type") << "  "
      << style.status(str_field(d, "status")) << "\n";
  field("task", one_line(str_field(d, "task"), 400));
  field("reason", one_line(str_field(d, "status_reason"), 400));
  field("ended", str_field(d, "end_reason"));  // the same for scripts (README "End reasons")
  field("parent", str_field(d, "parent_id"));
  field("iteration", iteration_of(d));
  std::string cost = format_cost(num_field(d, "cost_usd")) + " (" +
                     format_count(int_field(d, "input_tokens")) + " tokens in, " +
                     format_count(int_field(d, "output_tokens")) + " out)";
  if (d.contains("tree_cost_usd") && str_field(d, "type") == "plan")
    cost += ", whole tree " + format_cost(num_field(d, "tree_cost_usd"));
  field("cost", cost);
  if (std::string verdict = str_field(d, "tree_verdict"); !verdict.empty()) {
    // The tree's state as the daemon knows it (plans only).
    std::string tree = verdict, base = str_field(d, "base_branch");
    if (verdict == "merged")
      tree = "merged into " + base + " at " + str_field(d, "merged_into_base").substr(0, 10);
    else if (verdict == "merge_failed")
      tree = "not merged into " + base + ": " + one_line(str_field(d, "merge_error"));
    else if (verdict == "complete")
      tree = "complete; `loopr merge " + str_field(d, "id") + "` merges it into " + base;
    else if (verdict == "validating")
      tree = "every loop complete; checking the integration branch";
    else if (verdict == "integration_failed")
      tree = "blocked: the integration branch fails its tests (see below)";
    field("tree", tree);
  }
  if (auto g = d.find("integration"); g != d.end() && g->is_object()) {
    // The integration gate: its last check, and the output when it failed.
    const std::string result = str_field(*g, "result");
    std::string line = result + " at " + str_field(*g, "sha").substr(0, 10);
    if (std::string summary = str_field(*g, "summary"); !summary.empty())
      line += ": " + one_line(summary, 200);
    field("integration", result == "failed" ? style.red(line) : line);
    if (std::string log = str_field(*g, "log"); !log.empty()) field("check log", log);
    if (result == "failed") {
      std::string output = str_field(*g, "output");
      if (!output.empty()) {
        out << style.dim("check output (the end):") << "\n";
        std::istringstream lines(output);
        for (std::string line_text; std::getline(lines, line_text);) out << "  " << line_text << "\n";
      }
    }
  }
  out << render_baseline(d, style);
  out << render_forecast(d, style);
  field("question", str_field(d, "question"));
  field("answer", str_field(d, "answer"));
  field("branch", str_field(d, "branch"));
  field("worktree", str_field(d, "worktree"));
  std::int64_t created = time_field(d, "created_at"), updated = time_field(d, "updated_at");
  if (created)
    field("created", str_field(d, "created_at") + " (" + format_age(now - created) + " ago)");
  if (updated)
    field("updated", str_field(d, "updated_at") + " (" + format_age(now - updated) + " ago)");
  if (auto a = d.find("artifacts"); a != d.end() && a->is_array() && !a->empty()) {
    out << style.dim("artifacts:") << "\n";
    for (const auto& p : *a)
      if (p.is_string()) out << "  " << p.get<std::string>() << "\n";
  }
  std::string validation = str_field(d, "validation_output");
  if (!validation.empty()) {
    out << style.dim("last validation output:") << "\n";
    std::istringstream in(validation);
    for (std::string line; std::getline(in, line);) out << "  " << line << "\n";
  }
  auto its = d.find("iterations");
  if (its != d.end() && its->is_array() && !its->empty()) {
    bool tokens = false;
    for (const auto& r : *its) tokens = tokens || r.contains("input_tokens");
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> head = {"N", "RESULT", "EXIT"};
    if (tokens) {
      head.push_back("TOKENS IN");
      head.push_back("OUT");
    }
    for (const char* h : {"COST", "DURATION", "SUMMARY"}) head.push_back(h);
    rows.push_back(head);
    for (const auto& r : *its) {
      std::vector<std::string> row = {std::to_string(int_field(r, "n")), str_field(r, "status")};
      auto ec = r.find("exit_code");
      row.push_back(ec != r.end() && ec->is_number() ? std::to_string(ec->get<int>()) : "-");
      if (tokens) {
        row.push_back(format_count(int_field(r, "input_tokens")));
        row.push_back(format_count(int_field(r, "output_tokens")));
      }
      row.push_back(format_cost(num_field(r, "cost_usd")));
      row.push_back(format_elapsed(int_field(r, "duration_ms")));
      row.push_back(one_line(str_field(r, "summary"), 100));
      rows.push_back(std::move(row));
    }
    std::vector<std::size_t> widths(head.size(), 0);
    for (const auto& r : rows)
      for (std::size_t i = 0; i < r.size(); ++i)
        widths[i] = std::max(widths[i], visible_width(r[i]));
    out << style.dim("iterations:") << "\n";
    for (std::size_t k = 0; k < rows.size(); ++k) {
      std::string line = "  ";
      for (std::size_t i = 0; i < rows[k].size(); ++i) {
        std::string cell = rows[k][i];
        if (k > 0 && i == 1) {
          std::string s = cell;
          cell = s == "passed"                     ? style.green(s)
                 : (s == "failed" || s == "error") ? style.red(s)
                                                   : style.yellow(s);
        }
        if (k == 0) cell = style.dim(cell);
        line += i + 1 < rows[k].size() ? pad_visible(cell, widths[i]) + "  " : cell;
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out << line << "\n";
    }
  }
  return out.str();
}

std::string format_event_line(const json& event, const Style& style) {
  const json e = terminal_json(event);
  std::string time = str_field(e, "time");
  std::string clock = "--:--:--";
  if (auto t = parse_timestamp(time)) {
    std::time_t secs = static_cast<std::time_t>(*t / 1000);
    std::tm tm{};
    localtime_r(&secs, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
    clock = buf;
  }
  std::string loop = str_field(e, "loop_id");
  std::string type = str_field(e, "type");
  const json empty = json::object();
  const json& d = e.contains("data") && e["data"].is_object() ? e["data"] : empty;
  std::string text;
  if (type == "status_changed") {
    text = str_field(d, "from") + " → " + style.status(str_field(d, "to"));
    std::string reason = str_field(d, "reason");
    if (!reason.empty()) text += ": " + one_line(reason);
  } else if (type == "iteration_started") {
    text = "iteration " + std::to_string(int_field(d, "n")) + " started";
  } else if (type == "iteration_finished") {
    std::string st = str_field(d, "status");
    text = "iteration " + std::to_string(int_field(d, "n")) + " " +
           (st == "passed"   ? style.green(st)
            : st == "failed" ? style.red(st)
                             : st);
    if (d.contains("duration_ms")) text += " in " + format_elapsed(int_field(d, "duration_ms"));
    std::string summary = str_field(d, "summary");
    if (!summary.empty()) text += ": " + one_line(summary);
  } else if (type == "validation_finished") {
    bool passed = d.value("passed", false);
    text = "validation " + std::to_string(int_field(d, "n")) + " " +
           (passed ? style.green("passed") : style.red("failed"));
    if (d.contains("exit_code") && d["exit_code"].is_number())
      text += " (exit " + std::to_string(d["exit_code"].get<int>()) + ")";
    std::string summary = str_field(d, "summary");
    if (!summary.empty()) text += ": " + one_line(summary);
    if (auto jobs = d.find("jobs"); jobs != d.end() && jobs->is_array() && !jobs->empty())
      text += " [Slurm job " + (jobs->back().is_string() ? jobs->back().get<std::string>() : compact(jobs->back())) + "]";
  } else if (type == "executor_retry") {
    text = style.red("the cluster lost a try") + " of validation " + std::to_string(int_field(d, "n")) + ": " +
           one_line(str_field(d, "reason"));
  } else if (type == "cost") {
    text = "iteration " + std::to_string(int_field(d, "n")) + " cost " +
           format_cost(num_field(d, "cost_usd"));
    if (d.contains("input_tokens"))
      text += " (" + format_count(int_field(d, "input_tokens")) + " tokens in, " +
              format_count(int_field(d, "output_tokens")) + " out)";
  } else if (type == "tool_called") {
    std::string name = str_field(d, "name");
    if (name.empty()) name = str_field(d, "tool");
    text = name.empty() ? compact(d) : name;
    // The argument that says what the call did (a path, a command, a pattern) rather than the
    // whole input, which for write_file is the file.
    const json& in = d.contains("input") && d["input"].is_object() ? d["input"] : empty;
    std::string what;
    for (const char* k : {"path", "command", "pattern"})
      if (in.contains(k) && in[k].is_string()) {
        what = in[k].get<std::string>();
        break;
      }
    if (!what.empty())
      text += " " + one_line(what, 120);
    else if (d.contains("input"))
      text += " " + one_line(compact(d["input"], 120), 120);
    if (d.value("is_error", false)) text += " " + style.red("(error)");
  } else if (type == "merged") {
    std::string sha = str_field(d, "sha");
    text = "merged into " + str_field(d, "into") + (sha.empty() ? "" : " at " + sha.substr(0, 10));
  } else if (type == "merge_failed") {
    text = style.red("merge into " + str_field(d, "into") + " failed") + ": " +
           one_line(str_field(d, "message"));
  } else if (type == "retry") {
    text = "fresh attempt " + std::to_string(int_field(d, "attempt"));
    std::string kept = str_field(d, "archived_branch");
    if (!kept.empty()) text += " (the first attempt's commits are on " + kept + ")";
  } else if (type == "integration_check_started") {
    text = "checking the integration branch at " + str_field(d, "sha").substr(0, 10) + ": " +
           str_field(d, "command");
  } else if (type == "integration_check") {
    std::string what = "integration branch at " + str_field(d, "sha").substr(0, 10) + ": " +
                       one_line(str_field(d, "summary"), 200);
    text = d.value("passed", false) ? style.green(what) : style.red(what);
  } else if (type == "integration_fix") {
    text = "fix loop " + str_field(d, "loop_id") + " repairs the integration branch";
  } else if (type == "tree_complete") {
    text = style.green("every loop of the tree is complete");
  } else if (type == "rebased") {
    text = "rebased onto " + str_field(d, "onto");
  } else if (type == "rebase_conflict") {
    text = style.red("rebase conflict");
    if (d.contains("paths") && d["paths"].is_array()) {
      std::string paths;
      for (const auto& p : d["paths"])
        if (p.is_string()) paths += (paths.empty() ? "" : ", ") + p.get<std::string>();
      text += " in " + paths;
    }
  } else if (type == "approval") {
    text = str_field(d, "decision");
    std::string t = str_field(d, "text");
    if (!t.empty()) text += ": " + one_line(t);
  } else if (type == "loop_created") {
    text = str_field(d, "type");
    std::string task = str_field(d, "task");
    if (!task.empty()) text += (text.empty() ? "" : ": ") + one_line(task, 120);
  } else if (type == "llm_error") {
    std::string msg = str_field(d, "message");
    text = style.red(msg.empty() ? compact(d) : one_line(msg));
  } else if (!d.empty()) {
    text = compact(d);
  }
  std::string line = style.dim(clock) + "  " + (loop.empty() ? std::string("daemon") : loop) +
                     "  " + style.bold(type);
  if (!text.empty()) line += "  " + text;
  return line;
}

std::string render_health(const json& health, const Style& style) {
  const json h = terminal_json(health);
  std::ostringstream out;
  out << "loopr daemon " << style.green("running") << ": pid " << int_field(h, "pid") << ", up "
      << format_elapsed(int_field(h, "uptime_s") * 1000);
  std::string repo = str_field(h, "repo");
  if (!repo.empty()) out << ", repository " << repo;
  out << "\n";
  if (h.value("draining", false))
    out << style.yellow("draining") << ": the iterations in flight finish, no new one starts; "
        << "then it stops\n";
  else if (h.value("stopping", false))
    out << style.yellow("stopping") << "\n";
  if (auto sb = h.find("sandbox"); sb != h.end() && sb->is_object()) {
    if (!sb->value("confined", true)) {
      out << style.red(style.bold("sandbox: none")) << " — the model's commands run UNCONFINED (sandbox: none in "
          << ".loopr/config.yml)\n";
    } else if (!sb->value("available", true)) {
      out << "sandbox: " << style.red("not working") << ": " << str_field(*sb, "problem") << "\n";
    } else {
      out << "sandbox: " << style.green(str_field(*sb, "kind")) << " (" << str_field(*sb, "description") << ")\n";
    }
    if (auto ex = sb->find("executor"); ex != sb->end() && ex->is_object() && str_field(*ex, "kind") == "slurm") {
      out << "executor: slurm, " << int_field(*ex, "jobs_queued") << " jobs queued, "
          << int_field(*ex, "jobs_running") << " running";
      // Cancelled jobs the cluster still lists (COMPLETING): not gone until squeue says so.
      if (int_field(*ex, "jobs_cleaning") > 0)
        out << ", " << int_field(*ex, "jobs_cleaning") << " cancelled and still cleaning up";
      out << "\n";
    }
  }
  if (auto w = h.find("web"); w != h.end() && w->is_object())
    out << "web UI: " << str_field(*w, "url") << "\n";
  if (auto d = h.find("disk"); d != h.end() && d->is_object()) {
    // limits.min_free_space: below it no iteration starts; paused loops resume by themselves.
    const int paused = int_field(*d, "paused_loops");
    if (d->value("full", false))
      out << style.red("disk full") << ": " << int_field(*d, "free_mib") << " MiB free in "
          << str_field(*d, "dir") << " (limits.min_free_space " << int_field(*d, "min_free_mib")
          << " MiB): no iteration starts\n";
    if (paused > 0)
      out << style.yellow("waiting for disk space") << ": " << paused
          << (paused == 1 ? " loop paused" : " loops paused")
          << "; they resume by themselves once there is space\n";
  }
  if (auto l = h.find("loops"); l != h.end() && l->is_object()) {
    out << "loops: " << int_field(*l, "total");
    std::string parts;
    for (auto it = l->begin(); it != l->end(); ++it) {
      if (it.key() == "total" || !it->is_number() || it->get<std::int64_t>() == 0) continue;
      parts += (parts.empty() ? "" : ", ") + std::to_string(it->get<std::int64_t>()) + " " +
               style.status(it.key());
    }
    if (!parts.empty()) out << " (" << parts << ")";
    out << "\n";
  }
  return out.str();
}

}  // namespace loopr::cli
