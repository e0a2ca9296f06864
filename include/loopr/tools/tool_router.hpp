// The tools the model may call (DESIGN.md: read_file, write_file, edit_file, list_dir, search,
// run_command), their JSON schemas (schemas/tools/, sent verbatim), and the router that runs a
// call inside one worktree. A failing tool is a result the model can read, never an exception.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/exec/executor.hpp>
#include <loopr/tools/runner_slots.hpp>
#include <loopr/tools/sandbox.hpp>

namespace loopr::tools {

/// One tool as the model sees it.
struct ToolDefinition {
  std::string name;
  std::string description;
  nlohmann::json input_schema;
};

/// All six tools, parsed from the embedded schemas/tools/*.json (ordered by name).
const std::vector<ToolDefinition>& tool_definitions();

/// What one loop may do with its tools (DESIGN.md "least privilege per loop type").
struct ToolPolicy {
  std::string loop_type = "code";  ///< for messages
  std::set<std::string> allowed;   ///< the tools it may call (and is shown)
  /// The loop's own artifact (repo-relative): the one path under `.loopr/` it may write.
  std::string own_artifact;
  /// Plan, spec and phase loops: write_file/edit_file may change only their own artifact.
  bool writes_only_artifact = false;
  /// Added to run_command's environment (LOOPR_LOOP_ID, …).
  std::map<std::string, std::string> command_env;
};

/// The policy for a loop type: code loops get every tool; plan, spec and phase loops read,
/// list, search and write only their artifact. Coordination: `ask_user` for every type,
/// `share_note` for spec, phase and code loops (a plan has no siblings). `loops.<type>.tools`
/// narrows either set.
ToolPolicy policy_for(LoopType type, const Config& config, const std::string& own_artifact);

struct ToolCall {
  std::string id;
  std::string name;
  nlohmann::json input;
};

struct ToolResult {
  std::string content;
  bool is_error = false;
};

struct ToolLimits {
  std::size_t read_max_bytes = 256 * 1024;  ///< read_file returns at most this much
  int read_default_lines = 2000;
  std::size_t write_max_bytes = 8 * 1024 * 1024;
  int list_max_entries = 1000;
  int search_max_results = 200;
  std::size_t search_max_file_bytes = 1024 * 1024;
  std::size_t command_output_cap = 32 * 1024;  ///< head and tail kept
  std::chrono::seconds command_default_timeout{120};
  std::chrono::seconds command_max_timeout{3600};
  /// loops.<type>.iteration_max_runtime: a command is killed at this moment at the latest.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

class ToolRouter {
 public:
  /// Commands (run_command) go through `executor`; file tools act in the daemon, confined to
  /// the worktree by `sandbox` and to what `policy` allows.
  ToolRouter(Sandbox sandbox, RunnerSlots& slots, exec::Executor& executor, ToolPolicy policy,
             ToolLimits limits = {});

  /// Runs one call (blocking; run it on a worker thread). `cancel` kills a running command.
  /// The result is valid UTF-8 whatever the files or the command held (U+FFFD for the rest).
  ToolResult call(const ToolCall& call, const std::atomic<bool>* cancel = nullptr);

  const Sandbox& sandbox() const { return sandbox_; }
  const ToolPolicy& policy() const { return policy_; }
  /// The definitions of the tools this router allows (what the model is shown).
  std::vector<ToolDefinition> definitions() const;

  /// What the calls so far may have changed in the worktree: the paths write_file and edit_file
  /// wrote (root-relative, as resolved through symlinks), and whether anything else may have
  /// written there (a command ran, or a write failed half way): then the paths are not all.
  struct Writes {
    std::vector<std::string> paths;
    bool unknown = false;
  };
  Writes writes() const;

 private:
  ToolResult route(const ToolCall& call, const std::atomic<bool>* cancel);
  ToolResult read_file(const nlohmann::json& input);
  ToolResult write_file(const nlohmann::json& input);
  ToolResult edit_file(const nlohmann::json& input);
  ToolResult list_dir(const nlohmann::json& input);
  ToolResult search(const nlohmann::json& input);
  ToolResult run_command(const nlohmann::json& input, const std::atomic<bool>* cancel);
  /// Why the policy refuses writing `resolved` (empty when it may be written).
  std::string write_refusal(const std::string& given, const std::filesystem::path& resolved) const;

  void note_write(const std::string& rel, bool done);

  Sandbox sandbox_;
  mutable std::mutex writes_mutex_;
  std::set<std::string> written_;
  bool writes_unknown_ = false;
  RunnerSlots& slots_;
  exec::Executor& executor_;
  ToolPolicy policy_;
  ToolLimits limits_;
};

}  // namespace loopr::tools
