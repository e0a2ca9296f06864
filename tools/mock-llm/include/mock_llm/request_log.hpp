// The `--log` file: one JSON line per request received, flushed at once, so a test can read
// what loopr sent while the server is still running.
#pragma once

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace loopr::mock_llm {

class RequestLog {
 public:
  /// Opens `path` for appending; throws std::runtime_error if it cannot (a start-up error).
  explicit RequestLog(const std::string& path);

  /// Writes `line` as one line of JSON and flushes it.
  void append(const nlohmann::json& line);

 private:
  struct Close {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Close> file_;
};

}  // namespace loopr::mock_llm
