#include "cli/maintenance_view.hpp"

#include <cstdio>
#include <map>
#include <vector>

#include "cli/format.hpp"

namespace loopr::cli {

using nlohmann::json;

namespace {

// `3 complete, 1 failed` from {"complete":3,"failed":1,"total":4}.
std::string outcomes(const std::map<std::string, int>& loops, const Style& style) {
  std::string out;
  for (const auto& [name, n] : loops) {
    if (name == api::kTotal || n == 0) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + style.status_named(name);
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

// The prompt cache's part: reads / writes, the share of input read, what it saved.
std::string cache_cell(const api::SpendView& s) {
  if (s.cache_read_tokens == 0 && s.cache_write_tokens == 0) return "-";
  char share[16];
  std::snprintf(share, sizeof share, "%.0f%%", 100 * s.cache_hit_share);
  return format_count(s.cache_read_tokens) + " / " + format_count(s.cache_write_tokens) + " (" +
         share + ", " + format_cost(s.uncached_cost_usd) + " without)";
}

std::vector<std::string> spend_row(const std::string& id, const std::string& verdict,
                                   const api::SpendView& s, const Style& style) {
  return {id,
          verdict,
          format_cost(s.cost_usd),
          format_count(s.input_tokens) + " / " + format_count(s.output_tokens),
          cache_cell(s),
          format_count(s.model_calls),
          format_count(s.iterations),
          format_age(s.wall_ms),
          outcomes(s.loops, style)};
}

std::string verdict_of(const std::string& name, const Style& style) {
  auto v = parse_tree_verdict(name);
  return v ? style.verdict(*v) : name;
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

std::string render_stats(const api::StatsView& stats, const Style& style) {
  std::string out;
  const std::string& since = stats.since;
  if (stats.plans.empty())
    return since.empty() ? "nothing spent yet: no plan in this repository\n"
                         : "nothing spent since " + since + "\n";
  if (!since.empty()) out += "since " + since + "\n";
  std::vector<std::vector<std::string>> rows = {{"PLAN", "TREE", "COST", "TOKENS IN / OUT",
                                                 "CACHE READ / WRITE", "CALLS", "ITER", "WALL",
                                                 "LOOPS"}};
  for (const auto& p : stats.plans)
    rows.push_back(spend_row(p.id, verdict_of(p.tree_verdict, style), p, style));
  const std::size_t n = stats.plans.size();
  rows.push_back(
      spend_row("total", std::to_string(n) + (n == 1 ? " plan" : " plans"), stats.total, style));
  out += table(rows, {false, false, true, true, true, true, true, true, false}, style);
  return out;
}

std::string render_gc(const api::GcView& report, const Style& style) {
  std::string out;
  const bool dry = report.dry_run;
  for (const auto& it : report.removed) {
    std::string line = std::string(dry ? api::would(it.action) : api::to_string(it.action)) + " " +
                       api::to_string(it.kind) + " " + it.name;
    if (it.bytes > 0) line += " (" + human_bytes(static_cast<std::int64_t>(it.bytes)) + ")";
    if (!it.kept_on.empty()) line += ": its commits are kept on " + it.kept_on;
    if (!it.reason.empty()) line += style.dim(" — " + it.reason);
    out += line + "\n";
  }
  for (const auto& e : report.errors) out += style.red("not done: ") + e + "\n";
  const std::size_t n = report.removed.size();
  if (n == 0) {
    out += "gc: nothing to remove\n";
  } else {
    out += std::string(dry ? "gc (dry run): would remove " : "gc: removed ") + std::to_string(n) +
           (n == 1 ? " thing, " : " things, ") +
           human_bytes(static_cast<std::int64_t>(report.bytes_freed)) +
           (dry ? " to free" : " freed") +
           (report.branches_deleted > 0
                ? " (git keeps deleted branches' objects until its own `git gc`)"
                : "") +
           "\n";
  }
  return out;
}

}  // namespace loopr::cli
