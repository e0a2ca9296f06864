// The `.loopr/config.yml` that `loopr init` writes: every key with its default and a comment.
#include <loopr/core/config.hpp>
#include <loopr/core/protected_paths.hpp>

namespace loopr {

namespace {

// A YAML double-quoted scalar.
std::string yaml_quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A YAML flow list of double-quoted scalars (patterns start with `*` or hold `#`).
std::string yaml_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + yaml_quoted(items[i]);
  return out + "]";
}

// The template's sections, in the file's order; each ends with a newline.

std::string top_section(std::string_view base_branch) {
  return R"(# loopr configuration. Every key is optional; the values below are the defaults.
# Environment overrides: LOOPR_PROVIDER, LOOPR_MODEL, ANTHROPIC_BASE_URL, OPENAI_BASE_URL.
base_branch: )" +
         std::string(base_branch) + R"(
merge: auto                      # auto | manual (then `loopr merge PLAN_ID`) | pr (see forge:)
llm:
  provider: anthropic            # anthropic | openai | openai-responses | claude-code | codex | gemini
  model: claude-sonnet-5-5
  max_tokens: 16000
  api_version: "2026-10-21"      # anthropic-version header
  judge: false                   # LLM-as-judge after the format check for plan/spec/phase
  cache: auto                    # auto | off: prompt caching (Anthropic breakpoints, OpenAI prompt_cache_key)
  cache_ttl: 5m                  # 5m | 1h (1h: for loops whose iterations are far apart; writes cost 2x)
concurrency:
  max_loops: 100                 # loops iterating at once; the rest wait as pending
  llm_slots: 4                   # LLM calls in flight
  requests_per_minute: 50
  runners: {default: 8, net: 2, heavy: 1}
)";
}

std::string limits_and_sandbox_section() {
  return R"(limits:                          # per plan tree unless noted
  max_cost_usd: 25
  max_runtime: 4h                # counted from the plan's approval
  circuit_breaker: 5             # consecutive errors in one loop
  no_progress_iterations: 5
  stop_on_patterns: []           # RE2 patterns; a match in validation output stops the loop
  stop_scripts: []               # commands; exit 0 stops the loop, output is the reason
  cooldown: 0s                   # pause between iterations
  min_free_space: 256M           # no iteration starts below it (loops pause, resume by themselves)
  at_cost_limit: pause           # pause | fail: at the cost/runtime/token cap the tree's loops pause
                                 # (`loopr resume ID --max-cost USD` raises the cap) or fail
  max_input_tokens: 0            # per tree, cached input included; 0: no limit
  count_subscription_cost: false # true: an agent CLI's notional cost under a subscription login
                                 # counts against max_cost_usd (it is never billed per token)
attended: false                  # true: loops pause after every iteration (passing too) until `resume`
baseline: block                  # the tests on the base, checked at submit: block | warn | off
sandbox:                         # every command run for a loop (run_command, validation, stop_scripts)
  mode: bubblewrap               # bubblewrap | none (`none` runs the model's commands UNCONFINED)
  network: []                    # runner classes whose commands may use the network, e.g. [net]
  env: []                        # variables for commands: NAME (the daemon's value) or NAME=value,
                                 # e.g. [CARGO_HOME, PYTHONPATH=src]
  read_only: []                  # paths visible read-only: absolute ones where they are, e.g.
                                 # ~/.rustup; relative ones from your checkout, also at the same
                                 # place in every worktree, e.g. [node_modules, .venv]
  hide: []                       # extra paths hidden from commands
  limits: {processes: 1024, open_files: 4096, file_size: 1G, memory: 8G, tmp_size: 1G}
setup:                           # run once in every new worktree, in the sandbox, before its tests
  commands: []                   # e.g. ["make generate"]; a failure blocks the loop with its output
  network: false                 # true: these commands may use the network (e.g. npm ci)
  timeout: 10m                   # per command
)";
}

std::string loops_section(std::string_view code_validation,
                          const std::vector<std::string>& validation_comment) {
  std::string code_comment;
  for (const auto& line : validation_comment) code_comment += "  # " + line + "\n";
  return R"(loops:
  # Each type may set `model:` and `provider:` of its own (else llm.model / llm.provider),
  # e.g. plan: {max_iterations: 5, model: claude-opus-5-5}
  plan:  {max_iterations: 5}
  spec:  {max_iterations: 5}
  phase: {max_iterations: 5}
)" + code_comment +
         R"(  code:  {max_iterations: 20, validation: )" + yaml_quoted(code_validation) +
         R"(, iteration_timeout: 10m, max_turns_per_iteration: 50}
  review: {enabled: false, model: "", max_rounds: 2, max_attempts: 3}  # a reviewer model call after a code loop passes
)";
}

std::string protect_section(std::string_view code_validation) {
  const ProtectConfig protect;
  return R"(protect:                         # what a loop may not change on its own (docs/confinement.md "Security model")
  # The test harness (inferred from the test command): a code loop changes it only where its phase
  # lists it under `- Files:`, and a tree that changes it waits for `loopr merge`.
  harness: )" +
         yaml_list(default_harness(code_validation)) + R"(
  # Existing tests: a code loop modifies or deletes them only where its phase lists them.
  tests: )" +
         yaml_list(protect.tests) + R"(
  # Other tools' auto-run files: a tree that changes them waits for `loopr merge`.
  hold: )" +
         yaml_list(protect.hold) + R"(
  # The largest file and the most bytes of added or changed files (as a checkout writes them)
  # a loop's work or a tree may bring; past them it is refused.
  max_file_size: 50M
  max_tree_size: 500M
)";
}

std::string forge_and_pricing_section() {
  return R"(integration:                     # the finished tree's integration branch runs loops.code.validation
  max_fix_iterations: 5          # before it is merged; a failure gets a fix loop with this budget
forge:                           # merge: pr pushes loopr/<plan> here and opens a pull request
  kind: github                   # github | gitlab
  api_url: https://api.github.com  # gitlab: https://gitlab.com/api/v4
  repo: ""                       # OWNER/NAME; empty: parsed from the remote's URL
  remote: origin                 # the git remote the branch is pushed to
  token_env: GITHUB_TOKEN        # the variable holding the token (gitlab: GITLAB_TOKEN)
  ci: {wait: true, timeout: 2h, fix_iterations: 5, poll_max: 60s}
pricing:                         # USD per million tokens
  claude-opus-5-5:   {input: 4.0, output: 20.0, cache_write: 5.0, cache_read: 0.20}
  claude-sonnet-5-5: {input: 2.0, output: 10.0, cache_write: 2.5, cache_read: 0.20}
  claude-haiku-5-5:  {input: 0.10, output: 0.50, cache_write: 0.125, cache_read: 0.01}
)";
}

}  // namespace

std::string default_config_yaml(std::string_view base_branch, std::string_view code_validation,
                                const std::vector<std::string>& validation_comment) {
  return top_section(base_branch) + limits_and_sandbox_section() +
         loops_section(code_validation, validation_comment) + protect_section(code_validation) +
         forge_and_pricing_section();
}

}  // namespace loopr
