#include "cli/maintenance_view.hpp"

#include <vector>

#include "cli/format.hpp"

namespace loopr::cli {

using nlohmann::json;

namespace {

std::int64_t int_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<std::int64_t>() : 0;
}

double num_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

// `3 complete, 1 failed` from {"complete":3,"failed":1,"total":4}.
std::string outcomes(const json& loops, const Style& style) {
  std::string out;
  if (!loops.is_object()) return out;
  for (auto it = loops.begin(); it != loops.end(); ++it) {
    if (it.key() == "total" || !it->is_number() || it->get<std::int64_t>() == 0) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(it->get<std::int64_t>()) + " " +
           style.status(it.key());
  }
  return out.empty() ? "-" : out;
}

// Columns separated by two spaces; those flagged `right` are aligned right; trailing blanks cut.
std::string table(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right,
                  const Style& style) {
  std::vector<std::size_t> widths(right.size(), 0);
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) widths[i] = std::max(widths[i], visible_width(r[i]));
  std::string out;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (std::size_t i = 0; i < rows[k].size(); ++i) {
      std::string cell = k == 0 ? style.dim(rows[k][i]) : rows[k][i];
      std::size_t w = visible_width(cell);
      std::string pad(widths[i] > w ? widths[i] - w : 0, ' ');
      line += right[i] ? pad + cell : cell + pad;
      if (i + 1 < rows[k].size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::vector<std::string> spend_row(const std::string& id, const std::string& verdict, const json& s,
                                   const Style& style) {
  return {
      id,
      verdict,
      format_cost(num_of(s, "cost_usd")),
      format_count(int_of(s, "input_tokens")) + " / " + format_count(int_of(s, "output_tokens")),
      format_count(int_of(s, "model_calls")),
      format_count(int_of(s, "iterations")),
      format_age(int_of(s, "wall_ms")),
      outcomes(s.value("loops", json::object()), style)};
}

std::string human_bytes(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

}  // namespace

std::string render_stats(const json& stats, const Style& style) {
  std::string out;
  const json& plans = stats.contains("plans") ? stats["plans"] : json::array();
  std::string since = str_field(stats, "since");
  if (plans.empty())
    return since.empty() ? "nothing spent yet: no plan in this repository\n"
                         : "nothing spent since " + since + "\n";
  if (!since.empty()) out += "since " + since + "\n";
  std::vector<std::vector<std::string>> rows = {
      {"PLAN", "TREE", "COST", "TOKENS IN / OUT", "CALLS", "ITER", "WALL", "LOOPS"}};
  for (const auto& p : plans)
    rows.push_back(
        spend_row(str_field(p, "id"), style.status(str_field(p, "tree_verdict")), p, style));
  const json& total = stats.contains("total") ? stats["total"] : json::object();
  rows.push_back(spend_row("total",
                           std::to_string(plans.size()) + (plans.size() == 1 ? " plan" : " plans"),
                           total, style));
  out += table(rows, {false, false, true, true, true, true, true, false}, style);
  return out;
}

std::string render_gc(const json& report, const Style& style) {
  std::string out;
  const bool dry = report.value("dry_run", false);
  const json& items = report.contains("removed") ? report["removed"] : json::array();
  for (const auto& it : items) {
    std::string action = str_field(it, "action");
    // archived, deleted, removed, pruned → would archive, delete, remove, prune
    if (dry && action.size() > 1 && action.back() == 'd')
      action = "would " + action.substr(0, action.size() - 1);
    std::string line = action + " " + str_field(it, "kind") + " " + str_field(it, "name");
    if (std::int64_t b = int_of(it, "bytes"); b > 0) line += " (" + human_bytes(b) + ")";
    if (std::string kept = str_field(it, "kept_on"); !kept.empty())
      line += ": its commits are kept on " + kept;
    if (std::string why = str_field(it, "reason"); !why.empty()) line += style.dim(" — " + why);
    out += line + "\n";
  }
  for (const auto& e : report.value("errors", json::array()))
    if (e.is_string()) out += style.red("not done: ") + e.get<std::string>() + "\n";
  std::int64_t freed = int_of(report, "bytes_freed");
  if (items.empty()) {
    out += "gc: nothing to remove\n";
  } else {
    out += std::string(dry ? "gc (dry run): would remove " : "gc: removed ") +
           std::to_string(items.size()) + (items.size() == 1 ? " thing, " : " things, ") +
           human_bytes(freed) + (dry ? " to free" : " freed") +
           (int_of(report, "branches_deleted") > 0
                ? " (git keeps deleted branches' objects until its own `git gc`)"
                : "") +
           "\n";
  }
  return out;
}

}  // namespace loopr::cli
