#include "support/temp_dir.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

namespace loopr::testing {

// LOOPR_SOURCE_DIR is defined for this file only (tests/CMakeLists.txt, loopr_file_define).
std::filesystem::path source_tree() { return LOOPR_SOURCE_DIR; }

std::filesystem::path disk_temp_base() {
  const char* base = std::getenv("TMPDIR");
  return base && *base ? base : "/tmp";
}

TempDir::TempDir(const std::string& prefix) : TempDir(prefix, disk_temp_base()) {}

TempDir::TempDir(const std::string& prefix, const std::filesystem::path& base) {
  std::string tmpl = (base / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
  path_ = std::filesystem::canonical(tmpl);
}

std::filesystem::path memory_temp_base() {
  if (access("/dev/shm", W_OK | X_OK) == 0) return "/dev/shm";
  return disk_temp_base();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path.string());
  out << content;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return cond();
}

}  // namespace loopr::testing
