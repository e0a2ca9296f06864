#include "cli/baseline_view.hpp"

#include <cstdio>
#include <sstream>
#include <vector>

#include <loopr/core/text.hpp>

#include "cli/format.hpp"

namespace loopr::cli {

namespace {

std::string seconds(std::int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000);
  return buf;
}

}  // namespace

std::string render_baseline(const api::LoopRow& plan, const Style& style) {
  if (!plan.baseline) return "";
  const api::BaselineView& b = *plan.baseline;
  const std::string& result = b.result;
  const std::string sha = b.sha.substr(0, 10);
  const std::int64_t ms = b.duration_ms;
  const std::int64_t setup_ms = b.setup_ms;
  std::ostringstream out;
  if (result == api::kBaselineChecking) {
    out << style.bold("baseline: ") << "checking the tests on " << sha
        << " in a fresh worktree (code loops wait for it)\n";
  } else if (result == api::kBaselinePassed) {
    out << style.bold("baseline: ") << style.green("passed") << " in " << seconds(ms);
    if (setup_ms > 0) out << " (setup " << seconds(setup_ms) << ")";
    out << " on " << sha << "\n";
  } else if (result == api::kBaselineUnavailable) {
    out << style.bold("baseline: ") << "could not run (" << terminal_text(b.summary)
        << "); the code loops go on\n";
  } else {
    out << style.bold("baseline: ") << style.red("failed") << " on " << sha << " in " << seconds(ms)
        << ": " << terminal_text(b.summary) << "\n";
    std::vector<std::string> lines;
    std::istringstream in(terminal_text(b.output));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    const std::size_t from = lines.size() > 12 ? lines.size() - 12 : 0;
    if (!lines.empty()) out << style.dim("  the tests' output (the end):") << "\n";
    for (std::size_t i = from; i < lines.size(); ++i) out << "    " << lines[i] << "\n";
    if (const std::string& log = b.log; !log.empty())
      out << style.dim("  the whole output: " + log) << "\n";
  }
  // What the tests left behind in the worktree (coverage reports, caches): recorded so that no
  // loop ever commits it; the person may want a .gitignore line.
  if (!b.outputs.empty()) {
    std::string list;
    for (const auto& p : b.outputs) list += (list.empty() ? "" : ", ") + terminal_text(p);
    out << style.dim("  the tests leave behind (never committed; add to .gitignore?): " + list)
        << "\n";
  }
  return out.str();
}

}  // namespace loopr::cli
