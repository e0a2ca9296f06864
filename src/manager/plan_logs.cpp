// A check's whole output next to the plan's loop logs (driver.hpp): the baseline check and the
// integration gate write theirs the same way.
#include <spdlog/spdlog.h>

#include <fstream>

#include "manager/driver.hpp"

namespace loopr::manager {

std::string write_plan_log(const RepoPaths& paths, const std::string& plan, const std::string& kind,
                           const std::string& sha, const std::string& text) {
  std::error_code ec;
  auto dir = paths.loop_log_dir(plan);
  std::filesystem::create_directories(dir, ec);
  auto file = dir / (kind + "-" + sha.substr(0, 12) + ".log");
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out || ec) spdlog::warn("plan {}: cannot write {}", plan, file.string());
  return std::filesystem::relative(file, paths.root, ec).string();
}

}  // namespace loopr::manager
