#include "cli/baseline_view.hpp"

#include <cstdio>
#include <sstream>
#include <vector>

#include "cli/format.hpp"

namespace loopr::cli {

namespace {

std::string seconds(std::int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000);
  return buf;
}

}  // namespace

std::string render_baseline(const nlohmann::json& plan, const Style& style) {
  auto b = plan.find("baseline");
  if (b == plan.end() || !b->is_object()) return "";
  const std::string result = str_field(*b, "result");
  const std::string sha = str_field(*b, "sha").substr(0, 10);
  const std::int64_t ms = b->value("duration_ms", std::int64_t{0});
  const std::int64_t setup_ms = b->value("setup_ms", std::int64_t{0});
  std::ostringstream out;
  if (result == "checking") {
    out << style.bold("baseline: ") << "checking the tests on " << sha
        << " in a fresh worktree (code loops wait for it)\n";
  } else if (result == "passed") {
    out << style.bold("baseline: ") << style.green("passed") << " in " << seconds(ms);
    if (setup_ms > 0) out << " (setup " << seconds(setup_ms) << ")";
    out << " on " << sha << "\n";
  } else if (result == "unavailable") {
    out << style.bold("baseline: ") << "could not run (" << str_field(*b, "summary")
        << "); the code loops go on\n";
  } else {
    out << style.bold("baseline: ") << style.red("failed") << " on " << sha << " in " << seconds(ms)
        << ": " << str_field(*b, "summary") << "\n";
    std::vector<std::string> lines;
    std::istringstream in(str_field(*b, "output"));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    const std::size_t from = lines.size() > 12 ? lines.size() - 12 : 0;
    if (!lines.empty()) out << style.dim("  the tests' output (the end):") << "\n";
    for (std::size_t i = from; i < lines.size(); ++i) out << "    " << lines[i] << "\n";
    if (std::string log = str_field(*b, "log"); !log.empty())
      out << style.dim("  the whole output: " + log) << "\n";
  }
  return out.str();
}

}  // namespace loopr::cli
