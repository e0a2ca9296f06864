// The configuration of one repository: `.loopr/config.yml` (INTERFACE.md "Config") with every
// default, environment overrides, and errors that name the key and its line.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/loop.hpp>
#include <loopr/core/result.hpp>

namespace loopr {

using Duration = std::chrono::milliseconds;

/// Parses `500ms`, `30s`, `10m`, `4h`, `1d`, `1h30m` (and a bare `0`). nullopt if malformed.
std::optional<Duration> parse_duration(std::string_view text);
/// The shortest exact spelling of a duration (`90s` → `90s`, `3600000ms` → `1h`).
std::string format_duration(Duration d);

/// Parses a byte size: `4096`, `512K`, `64M`, `1G`, `2T` (also `KiB`…, `KB`…: powers of 1024).
std::optional<std::uint64_t> parse_size(std::string_view text);
/// The shortest exact spelling (`1073741824` → `1G`).
std::string format_size(std::uint64_t bytes);

/// The tools a model may call, in the order the design lists them (the last two are the
/// coordination tools: a note to the other loops of the plan, a question to the person).
inline constexpr const char* kToolNames[] = {"read_file", "write_file",  "edit_file", "list_dir",
                                             "search",    "run_command", "share_note", "ask_user"};

/// The events a `notify` command can be run on.
inline constexpr const char* kNotifyEvents[] = {
    "awaiting_approval", "awaiting_answer", "blocked",   "tree_complete",
    "tree_failed",       "cost_threshold",  "cost_limit"};

/// One `notify:` entry: a command the daemon runs as the user (not sandboxed: the user wrote it)
/// when one of `events` happens, with the event as JSON on stdin.
struct NotifyCommand {
  std::string command;
  std::vector<std::string> events;  ///< empty: every event of kNotifyEvents
  Duration timeout = std::chrono::seconds(10);
};

struct LoopTypeConfig {
  int max_iterations = 5;
  std::string validation;  ///< code loops: shell command; plan/spec/phase: empty = format check
  Duration iteration_timeout = std::chrono::minutes(10);
  int max_turns_per_iteration = 50;
  /// One iteration's wall-clock limit over its model turns and tool commands together (the
  /// validation after them has its own, iteration_timeout); zero: none.
  Duration iteration_max_runtime = Duration::zero();
  /// The tools this loop type may use (`loops.<type>.tools`); can only narrow the type's
  /// built-in set (plan/spec/phase: no run_command, writes only to their own artifact).
  std::vector<std::string> tools;
  std::string model;     ///< `loops.<type>.model`; empty: llm.model (Config::model_for)
  std::string provider;  ///< `loops.<type>.provider`; empty: llm.provider (Config::provider_for)
};

/// Confinement of every command loopr runs for a loop (DESIGN.md "Trust boundary").
struct SandboxLimits {
  std::uint64_t processes = 1024;                 ///< tasks at once (cgroup pids.max / RLIMIT_NPROC)
  std::uint64_t open_files = 4096;                ///< RLIMIT_NOFILE
  std::uint64_t file_size = 1ULL << 30;           ///< largest file a command may write (RLIMIT_FSIZE)
  std::uint64_t memory = 8ULL << 30;              ///< cgroup memory limit, else RLIMIT_DATA
  std::uint64_t tmp_size = 1ULL << 30;            ///< the private /tmp and $HOME (tmpfs, in RAM)
};

struct SandboxConfig {
  std::string mode = "bubblewrap";                ///< bubblewrap | none (unconfined, explicit only)
  std::vector<std::string> network;               ///< runner classes whose commands get the network
  std::vector<std::string> env;                   ///< extra variable names passed to commands
  /// `env` entries written `NAME=value` (or `{NAME: value}`): set to that value, where `$WORKTREE`
  /// is the command's worktree and `$NAME` a variable of the command's environment.
  std::map<std::string, std::string> env_values;
  /// Extra paths visible read-only: absolute (`~/` = $HOME) at their own place; relative ones
  /// are the checkout's (`node_modules`, `.venv`), visible at their own place and at the same
  /// relative place in every loop's worktree (checkout_paths()).
  std::vector<std::string> read_only;
  std::vector<std::string> hide;                  ///< extra paths hidden
  SandboxLimits limits;

  bool confined() const { return mode != "none"; }
  /// The relative `read_only` entries: the checkout's paths every worktree sees read-only.
  std::vector<std::string> checkout_paths() const;
};

/// `setup:` commands run once in every new worktree (a code loop's, a fix loop's, the
/// integration gate's, the baseline check's) before its first command, in the sandbox, e.g.
/// to build or generate what the tests need and git does not hold.
struct SetupConfig {
  std::vector<std::string> commands;
  bool network = false;  ///< the setup commands get the network (e.g. `npm ci`)
  Duration timeout = std::chrono::minutes(10);  ///< per command
};

/// Slurm settings for one runner class (`executor.slurm.classes.<class>`): unset fields take
/// the `executor.slurm` value.
struct SlurmClassConfig {
  std::string partition;
  int cpus = 0;              ///< --cpus-per-task; 0: the executor's
  std::uint64_t memory = 0;  ///< --mem; 0: the executor's
};

/// `executor.slurm`: every command of a loop as a job step (`srun`) on a cluster node.
struct SlurmConfig {
  std::string partition;  ///< empty: the cluster's default partition
  std::string account;
  std::string qos;
  int cpus = 1;              ///< --cpus-per-task
  std::uint64_t memory = 0;  ///< --mem; 0: the partition's default
  std::map<std::string, SlurmClassConfig> classes;  ///< per runner class (e.g. heavy)
  std::vector<std::string> srun_args;               ///< appended to every srun line
  /// The job's limit when the command has no timeout of its own (the validation's is
  /// loops.code.iteration_timeout, run_command's its own); else that timeout plus a minute.
  Duration time_limit = std::chrono::hours(1);
  /// How long a job may wait for resources before it counts as not started (srun --immediate).
  Duration queue_timeout = std::chrono::minutes(10);
  int max_attempts = 3;  ///< tries of a job that never ran before the loop is paused
  Duration retry_backoff = std::chrono::seconds(10);  ///< doubled after each failed try
  /// How long a cancelled job may stay listed by squeue (COMPLETING: the node still ends its
  /// processes) before the command returns anyway; the job is then reported as still cleaning
  /// up (`daemon status`), never as gone. Slurm's own KillWait + UnkillableStepTimeout is 90 s.
  Duration cancel_timeout = std::chrono::minutes(3);
  std::string bin_dir;   ///< where srun, scancel, squeue are; empty: PATH
};

/// `executor:` where commands run. `local`: this machine's sandbox; `slurm`: a cluster's nodes,
/// in the same sandbox there.
enum class ExecutorKind { local, slurm };
/// The config file's spelling: `local` | `slurm`.
const char* to_string(ExecutorKind kind);

struct ExecutorConfig {
  ExecutorKind kind = ExecutorKind::local;
  /// Where loop worktrees are made (a folder the nodes see at the same path); empty:
  /// `.loopr/worktrees` in the repository.
  std::string worktree_root;
  SlurmConfig slurm;
};

/// The `claude` CLI provider's settings (WIRE.md §3).
struct ClaudeCodeConfig {
  std::string command = "claude";
  std::string permission_mode = "acceptEdits";
  bool skip_permissions = false;  ///< passes --dangerously-skip-permissions; only when asked
  int max_turns = 50;
  /// `host[:port]` (443 when none) the CLI may reach besides the API host of `llm.base_url`
  /// (its only way out is loopr's allowlisting proxy), e.g. the login host of a subscription.
  std::vector<std::string> allowed_hosts;
};

/// The `codex` CLI provider's settings (`codex exec --json`, issue 46).
struct CodexConfig {
  std::string command = "codex";
  std::string model;             ///< --model; empty: llm.model unless that names a Claude model
  std::string reasoning_effort;  ///< -c model_reasoning_effort=… (empty: the CLI's default)
  /// `host[:port]` the CLI may reach besides the API host of `llm.base_url`.
  std::vector<std::string> allowed_hosts;
};

/// The `gemini` CLI provider's settings (`gemini -p … --output-format stream-json`, issue 46).
struct GeminiConfig {
  std::string command = "gemini";
  std::string model;  ///< --model; empty: llm.model unless that names a Claude model
  std::vector<std::string> allowed_hosts;  ///< as CodexConfig::allowed_hosts
};

struct LlmConfig {
  /// anthropic | openai | openai-responses | claude-code | codex | gemini
  std::string provider = "anthropic";
  std::string model = "claude-sonnet-5-5";
  int max_tokens = 16000;
  std::string api_version = "2026-10-21";
  bool judge = false;
  std::string base_url;         ///< empty: the provider's default (or ANTHROPIC_/OPENAI_BASE_URL)
  std::string auth_header = "bearer";  ///< bearer | x-api-key (Anthropic)
  std::string ca_file;          ///< extra CA bundle for private gateways
  bool stream = true;
  std::string max_tokens_field = "max_completion_tokens";  ///< OpenAI; local servers: max_tokens
  Duration connect_timeout = std::chrono::seconds(10);
  Duration first_byte_timeout = std::chrono::minutes(5);
  Duration idle_timeout = std::chrono::minutes(2);
  int max_retries = 8;          ///< per request, before the iteration counts an error
  /// Prompt caching (`auto`: Anthropic cache breakpoints, OpenAI `prompt_cache_key`; `off`:
  /// neither, for servers that refuse unknown fields).
  bool cache = true;
  bool cache_ttl_1h = false;  ///< `llm.cache_ttl: 1h` (else 5m)
  ClaudeCodeConfig claude_code;
  CodexConfig codex;
  GeminiConfig gemini;
};

struct ConcurrencyConfig {
  int max_loops = 100;
  int llm_slots = 4;
  int requests_per_minute = 50;
  std::map<std::string, int> runners = {{"default", 8}, {"net", 2}, {"heavy", 1}};
  /// Which runner class a command (run_command, validation) uses: the first class whose RE2
  /// pattern matches the command line; `default` otherwise.
  std::map<std::string, std::vector<std::string>> runner_patterns = {
      {"net", {R"(\b(curl|wget|npm (install|ci)|pip3? install|apt-get|git (fetch|pull|push|clone))\b)"}},
      {"heavy", {R"(\b(make|cmake|ninja|ctest|cargo (build|test)|g\+\+|gcc|clang\+\+)\b)"}},
  };
  /// Scheduler base priority per loop type (higher first; work in flight finishes first).
  std::map<std::string, int> priority = {{"plan", 40}, {"spec", 60}, {"phase", 80}, {"code", 100}};
};

struct LimitsConfig {
  double max_cost_usd = 25;          ///< per plan tree
  double max_loop_cost_usd = 0;      ///< per loop; 0 = no per-loop limit
  Duration max_runtime = std::chrono::hours(4);
  int circuit_breaker = 5;
  int no_progress_iterations = 5;
  /// A loop fails after this many failing validations in a row with the same failing tests
  /// (engine/test_output.hpp: failing_tests); 0: off.
  int max_same_failures = 0;
  std::vector<std::string> stop_on_patterns;
  std::vector<std::string> stop_scripts;
  Duration cooldown = Duration::zero();
  std::string completion_signal = "<promise>COMPLETE</promise>";
  std::size_t feedback_bytes = 16 * 1024;  ///< `## Previous Iteration Feedback` budget
  std::size_t notes_bytes = 4096;          ///< `## Notes from other loops` budget
  /// `cost_threshold` is notified once per plan when its tree's cost passes this fraction of
  /// max_cost_usd.
  double notify_cost_fraction = 0.8;
  /// No iteration starts while the repository's file system has less free than this (the loop
  /// pauses, `disk_full`, and resumes by itself once there is); 0: no floor.
  std::uint64_t min_free_space = 256ull * 1024 * 1024;
  /// `at_cost_limit: pause` (the default): at the tree's cost, runtime or token cap its loops
  /// pause after their current model turn and wait for `loopr resume ID --max-cost …`;
  /// `fail`: they fail (cost_limit / runtime_limit), as before.
  bool pause_at_limit = true;
  std::int64_t max_input_tokens = 0;  ///< per tree, cached input included; 0 = no limit
  /// An agent CLI on a subscription login reports a notional cost (nobody is billed per
  /// token): it counts against max_cost_usd / max_loop_cost_usd only when this is true.
  bool count_subscription_cost = false;
};

struct ArtifactsConfig {
  int max_items = 12;                       ///< specs per plan, phases per spec
  std::size_t max_bytes = 1024 * 1024;      ///< an artifact larger than this is refused
};

/// `integration:` the gate between a finished tree and the base branch: the code validation
/// command runs on the integration tip; a failing tip gets one fix loop with this budget.
struct IntegrationConfig {
  int max_fix_iterations = 5;
  std::string model;     ///< the fix loop's model; empty: loops.code.model, then llm.model
  std::string provider;  ///< the fix loop's provider; empty: loops.code.provider, llm.provider
};

/// `forge:` where `merge: pr` pushes a finished tree's integration branch and opens its pull
/// request, and how the forge's CI is awaited (docs/guide.md "Pull requests and CI").
struct ForgeCiConfig {
  bool wait = true;                              ///< poll the head commit's checks
  Duration timeout = std::chrono::hours(2);      ///< no verdict by then: the plan is held
  int fix_iterations = 5;                        ///< CI fix loops before the plan is held
  Duration poll_max = std::chrono::seconds(60);  ///< the longest wait between two polls
};
/// `forge.kind:` the forge's API a pull request is opened through.
enum class ForgeKind { github, gitlab };
/// The config file's spelling: `github` | `gitlab`.
const char* to_string(ForgeKind kind);

struct ForgeConfig {
  ForgeKind kind = ForgeKind::github;
  std::string api_url = "https://api.github.com";  ///< gitlab's default: https://gitlab.com/api/v4
  std::string repo;                                ///< OWNER/NAME; empty: from the remote's URL
  std::string remote = "origin";                   ///< the git remote the branch is pushed to
  std::string token_env = "GITHUB_TOKEN";          ///< gitlab's default: GITLAB_TOKEN
  ForgeCiConfig ci;
};

/// `gc:` what `loopr gc` removes of trees that ended (their worktrees and loop branches), and
/// when the daemon runs it by itself.
struct GcConfig {
  Duration older_than = std::chrono::hours(24 * 7);      ///< trees that ended this long ago
  Duration keep_archived = std::chrono::hours(24 * 30);  ///< archived attempts kept this long
  Duration every = Duration::zero();  ///< the daemon runs gc this often; 0: never by itself
};

/// `daemon:` the service's own behaviour.
struct DaemonConfig {
  /// SIGTERM drains for at most this long (iterations in flight finish, none starts) before it
  /// stops as `loopr daemon stop` does; 0: SIGTERM stops at once (what a drain's timeout does).
  Duration sigterm_drain = Duration::zero();
};

struct GitConfig {
  std::size_t diff_max_bytes = 64 * 1024;   ///< `{{git-diff}}` is cut past this
  int log_entries = 10;
};

/// `protect:` what a loop may not change on its own (core/protected_paths.hpp; docs/confinement.md "Security
/// model"). Patterns in a subset of .gitignore's syntax; `file#key` names a key of a JSON file.
struct ProtectConfig {
  /// The test harness: what decides whether tests pass. A code loop changes it only where its
  /// phase lists it (`- Files:`), and a tree that changes it waits for `loopr merge`. Unset:
  /// inferred from loops.code.validation (`default_harness`).
  std::optional<std::vector<std::string>> harness;
  /// Existing tests: a code loop modifies or deletes them only where its phase lists them.
  std::vector<std::string> tests = default_tests();
  /// Other tools' auto-run files: a tree that changes them waits for `loopr merge`.
  std::vector<std::string> hold = default_hold();
  /// The largest file (apparent size, as a checkout writes it) and the most bytes of added or
  /// changed files a loop's work or a tree brings; past them it is refused (core/merge_policy).
  std::uint64_t max_file_size = 50ULL << 20;
  std::uint64_t max_tree_size = 500ULL << 20;

  static std::vector<std::string> default_tests();
  static std::vector<std::string> default_hold();
};

/// `loops.review`: after a code loop passes validation, a reviewer model call reads its phase,
/// its whole diff and the test output, and passes it or sends it back with feedback.
struct ReviewConfig {
  bool enabled = false;
  std::string model;   ///< empty: llm.model
  std::string provider;  ///< empty: llm.provider
  int max_rounds = 2;  ///< failed reviews of one loop before the person decides
  int max_attempts = 3;  ///< tries of one review (a failed call, a reply without a verdict)
};

/// Model prices in USD per million tokens.
struct Price {
  double input = 0, output = 0, cache_write = 0, cache_read = 0;
};

/// `merge:` what happens when every loop of a plan's tree is complete: `auto` merges the
/// integration branch into the base branch at once, `manual` waits for `loopr merge`, `pr`
/// pushes it to `forge.remote` and opens a pull request (the base branch is not touched).
enum class MergeMode { automatic, manual, pr };
/// `on_failure:` when a loop fails for good, the other loops of its tree `finish_siblings` (run
/// to their end) or `stop_siblings` (are stopped).
enum class FailurePolicy { finish_siblings, stop_siblings };
/// The config file's spelling: `auto` | `manual`, `finish_siblings` | `stop_siblings`.
const char* to_string(MergeMode mode);
const char* to_string(FailurePolicy policy);

/// `baseline:` the check of the base before any code loop of a tree runs (setup and
/// loops.code.validation in a fresh worktree of the plan's integration branch, at submit):
/// `block` (a failure blocks the plan before its code loops), `warn` (shown, never blocks; a code
/// loop whose failure equals the base's is not retried fresh), `off` (not run).
enum class BaselineMode { block, warn, off };
const char* to_string(BaselineMode mode);

struct Config {
  std::string base_branch = "main";
  BaselineMode baseline = BaselineMode::block;
  MergeMode merge = MergeMode::automatic;
  LlmConfig llm;
  ConcurrencyConfig concurrency;
  LimitsConfig limits;
  bool attended = false;
  std::map<LoopType, LoopTypeConfig> loops = default_loops();
  std::map<std::string, Price> pricing = default_pricing();
  ArtifactsConfig artifacts;
  GitConfig git;
  IntegrationConfig integration;
  ForgeConfig forge;
  GcConfig gc;
  DaemonConfig daemon;
  FailurePolicy on_failure = FailurePolicy::finish_siblings;
  SandboxConfig sandbox;
  SetupConfig setup;
  ExecutorConfig executor;
  std::vector<NotifyCommand> notify;
  ProtectConfig protect;
  ReviewConfig review;  ///< `loops.review`

  const LoopTypeConfig& loop(LoopType t) const { return loops.at(t); }

  /// The model of a loop role (`plan`, `spec`, `phase`, `code`, `integration-fix`, `review`;
  /// `judge` uses its loop's): `loops.<type>.model` (`integration.model`, `loops.review.model`),
  /// else the next one up, else `llm.model`.
  std::string model_for(std::string_view role) const;
  /// The provider of a loop role, the same way: `loops.<type>.provider`, else `llm.provider`.
  std::string provider_for(std::string_view role) const;

  static std::map<LoopType, LoopTypeConfig> default_loops();
  static std::map<std::string, Price> default_pricing();
};

/// Reads an environment variable; replaceable in tests.
using EnvLookup = std::function<std::optional<std::string>(const char*)>;
EnvLookup process_env();

/// Parses YAML text; `source` names the file in error messages (`source:LINE: key: problem`).
Result<Config> parse_config(std::string_view yaml_text, std::string_view source);

/// Loads `path` (defaults if the file does not exist), then applies the environment.
Result<Config> load_config(const std::string& path, const EnvLookup& env = process_env());

/// LOOPR_PROVIDER, LOOPR_MODEL, ANTHROPIC_BASE_URL / OPENAI_BASE_URL (for the chosen provider).
Result<void> apply_env(Config& config, const EnvLookup& env);

/// The environment variable holding a provider's base URL: OPENAI_BASE_URL (openai,
/// openai-responses, codex), GOOGLE_GEMINI_BASE_URL (gemini), ANTHROPIC_BASE_URL (the others).
const char* base_url_variable(std::string_view provider);

/// `loops.<type>.tools` on a type whose provider is an agent CLI (claude-code, codex, gemini),
/// which runs its own tools: refused rather than silently ignored.
Result<void> check_cli_tools(const Config& config, std::string_view source);

/// The model an agent CLI other than Claude Code is asked for: its own key (`llm.codex.model`,
/// `llm.gemini.model`), else llm.model unless that names a Claude model (the default, which the
/// CLI would refuse); empty: the CLI's default.
std::string cli_model(const std::string& own, const std::string& llm_model);

/// The settings a running daemon cannot take on a SIGHUP (they shape what exists already: the
/// integration branches' base, the provider of conversations in flight, the sandbox of commands
/// that run), as config keys.
inline constexpr const char* kRestartKeys[] = {"base_branch", "llm.provider", "sandbox", "executor"};

/// Which of kRestartKeys differ between two configs (for the daemon's log on SIGHUP).
std::vector<std::string> restart_keys_changed(const Config& before, const Config& after);

/// The commented default `.loopr/config.yml` that `loopr init` writes; `code_validation` (the
/// test command `loopr init` found) is loops.code.validation, with `validation_comment`'s lines
/// as comments above it.
std::string default_config_yaml(std::string_view base_branch = "main",
                                std::string_view code_validation = "make test",
                                const std::vector<std::string>& validation_comment = {});

}  // namespace loopr
