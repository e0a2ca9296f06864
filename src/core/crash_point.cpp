#include <loopr/core/crash_point.hpp>

#include <csignal>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include <algorithm>
#include <atomic>

namespace loopr {
namespace {

struct Target {
  std::string name;  // empty: no crash point is armed
  int pass = 1;
};

const Target& target() {
  static const Target t = [] {
    Target out;
    const char* v = std::getenv("LOOPR_CRASH_AT");
    if (v == nullptr || *v == '\0') return out;
    std::string s = v;
    if (auto hash = s.find('#'); hash != std::string::npos) {
      out.pass = std::max(1, std::atoi(s.c_str() + hash + 1));
      s.resize(hash);
    }
    out.name = s;
    return out;
  }();
  return t;
}

}  // namespace

void crash_point(std::string_view name) {
  const Target& t = target();
  if (t.name.empty() || name != t.name) return;
  static std::atomic<int> passes{0};
  if (passes.fetch_add(1) + 1 != t.pass) return;
  std::string line = "loopr: crash point " + t.name + " reached: SIGKILL\n";
  [[maybe_unused]] auto n = ::write(2, line.data(), line.size());
  ::raise(SIGKILL);
}

}  // namespace loopr
