// Test helpers: a temp directory removed at scope exit, polling with a deadline, and running
// a command to capture its output (for cross-checks against the `git` CLI and friends).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

namespace loopr::testing {

/// The loopr checkout these tests were built from (its `.loopr-example`, `prompts/`, …).
std::filesystem::path source_tree();

/// A fresh directory under $TMPDIR, removed (recursively) on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "loopr-test");
  /// Under `base` instead of $TMPDIR (e.g. memory_temp_base()).
  TempDir(const std::string& prefix, const std::filesystem::path& base);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::filesystem::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  std::filesystem::path path_;
};

/// $TMPDIR (or /tmp): where a TempDir is made by default.
std::filesystem::path disk_temp_base();

/// /dev/shm when this user may write there (files in memory: fast tests of many small files),
/// else $TMPDIR (or /tmp).
std::filesystem::path memory_temp_base();

/// Writes `content` to `path`, creating parent folders.
void write_file(const std::filesystem::path& path, const std::string& content);
std::string read_file(const std::filesystem::path& path);

/// Polls `cond` every few ms until true or `timeout` passes; returns the last value.
bool wait_until(const std::function<bool()>& cond,
                std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace loopr::testing
