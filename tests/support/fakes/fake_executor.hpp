// The command executor, faked: commands are recorded and answered by rules the test sets (a
// rule may look at or change the worktree: a validation that passes once a file is there), so
// engine and manager tests run without a sandbox or a child process.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <loopr/exec/executor.hpp>

namespace loopr::testing {

class FakeExecutor final : public exec::Executor {
 public:
  using Handler = std::function<ProcessResult(const exec::Command&)>;

  /// Commands whose text contains `text` get `handler`'s result (the first rule that matches;
  /// later rules are tried first when `text` is the same, so a test can override a default).
  void on(std::string text, Handler handler);
  /// The same with a fixed answer.
  void answer(std::string text, int exit_code, std::string output = {});
  /// Commands containing `text` really run, unconfined (`sh -c` in their workdir): for a test
  /// project's own test script.
  void run_for_real(std::string text);
  /// What `run_for_real` does with one command (for a rule that runs it after a wait).
  static ProcessResult run_unconfined(const exec::Command& command);

  /// Every command run so far (their shell text), oldest first.
  std::vector<std::string> commands() const;
  /// How many commands contained `text`.
  int count(const std::string& text) const;

  /// What `unavailable()` says (nullopt: commands can run).
  void set_unavailable(std::optional<std::string> why);

  ProcessResult run(const exec::Command& command) override;
  const exec::ExecutorInfo& info() const override { return info_; }
  std::optional<std::string> unavailable() override;

  /// A result with `exit_code` and `output`.
  static ProcessResult result(int exit_code, std::string output = {});
  /// The shell text of a command (`/bin/sh -c TEXT`), else its argv joined.
  static std::string text_of(const exec::Command& command);

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, Handler>> rules_;
  std::vector<std::string> ran_;
  std::optional<std::string> unavailable_;
  exec::ExecutorInfo info_{"fake", true, "a test's fake executor (nothing runs)"};
};

}  // namespace loopr::testing
