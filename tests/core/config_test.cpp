#include <gtest/gtest.h>

#include <map>

#include <loopr/core/config.hpp>

#include "support/command_env.hpp"
#include "support/config_errors.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using namespace std::chrono_literals;

using loopr::testing::fake_env;

namespace {

std::string error_of(const std::string& yaml) { return loopr::testing::config_error_of(yaml); }

}  // namespace

TEST(ConfigTest, DefaultsMatchInterface) {
  Config c;
  EXPECT_EQ(c.base_branch, "main");
  EXPECT_EQ(c.merge, MergeMode::automatic);
  EXPECT_EQ(c.llm.provider, "anthropic");
  EXPECT_EQ(c.llm.model, "claude-sonnet-5-5");
  EXPECT_EQ(c.llm.max_tokens, 16000);
  EXPECT_EQ(c.llm.api_version, "2026-10-21");
  EXPECT_FALSE(c.llm.judge);
  EXPECT_EQ(c.concurrency.max_loops, 100);
  EXPECT_EQ(c.concurrency.llm_slots, 4);
  EXPECT_EQ(c.concurrency.requests_per_minute, 50);
  EXPECT_EQ(c.concurrency.runners.at("default"), 8);
  EXPECT_EQ(c.concurrency.runners.at("net"), 2);
  EXPECT_EQ(c.concurrency.runners.at("heavy"), 1);
  EXPECT_DOUBLE_EQ(c.limits.max_cost_usd, 25);
  EXPECT_EQ(c.limits.max_runtime, 4h);
  EXPECT_EQ(c.limits.circuit_breaker, 5);
  EXPECT_EQ(c.limits.no_progress_iterations, 5);
  EXPECT_TRUE(c.limits.stop_on_patterns.empty());
  EXPECT_TRUE(c.limits.stop_scripts.empty());
  EXPECT_EQ(c.limits.cooldown, 0s);
  EXPECT_FALSE(c.attended);
  EXPECT_EQ(c.loop(LoopType::plan).max_iterations, 5);
  EXPECT_EQ(c.loop(LoopType::spec).max_iterations, 5);
  EXPECT_EQ(c.loop(LoopType::phase).max_iterations, 5);
  EXPECT_EQ(c.loop(LoopType::code).max_iterations, 20);
  EXPECT_EQ(c.loop(LoopType::code).validation, "make test");
  EXPECT_EQ(c.loop(LoopType::code).iteration_timeout, 10min);
  EXPECT_EQ(c.loop(LoopType::code).max_turns_per_iteration, 50);
  EXPECT_DOUBLE_EQ(c.pricing.at("claude-opus-5-5").output, 20.0);
  EXPECT_DOUBLE_EQ(c.pricing.at("claude-sonnet-5-5").cache_write, 2.5);
  EXPECT_DOUBLE_EQ(c.pricing.at("claude-haiku-5-5").cache_read, 0.01);
}

TEST(ConfigTest, TheWrittenDefaultFileParsesToTheDefaults) {
  auto r = parse_config(default_config_yaml("trunk"), "default");
  ASSERT_TRUE(r.ok()) << r.error().message;
  Config d;
  EXPECT_EQ(r->base_branch, "trunk");
  EXPECT_EQ(r->llm.model, d.llm.model);
  EXPECT_EQ(r->loop(LoopType::code).validation, "make test");
  EXPECT_EQ(r->loop(LoopType::code).iteration_timeout, 10min);
  EXPECT_EQ(r->concurrency.runners, d.concurrency.runners);
  EXPECT_EQ(r->pricing.size(), d.pricing.size());
  EXPECT_EQ(r->integration.max_fix_iterations, 5);
}

TEST(ConfigTest, IntegrationFixIterationsAreReadAndBounded) {
  auto r = parse_config("integration: {max_fix_iterations: 2}\n", "c.yml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->integration.max_fix_iterations, 2);
  auto zero = parse_config("integration:\n  max_fix_iterations: 0\n", "c.yml");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message.find("c.yml:2"), std::string::npos) << zero.error().message;
  EXPECT_NE(zero.error().message.find("max_fix_iterations"), std::string::npos);
  EXPECT_FALSE(parse_config("integration: {fixes: 2}\n", "c.yml").ok()) << "unknown key";
}

// Issue 47 item 5: an iteration's time limit and the same-failures limit, both off by default.
TEST(ConfigTest, IterationMaxRuntimeAndMaxSameFailuresAreReadAndOffByDefault) {
  Config d;
  EXPECT_EQ(d.loop(LoopType::code).iteration_max_runtime, Duration::zero());
  EXPECT_EQ(d.limits.max_same_failures, 0);
  auto r = parse_config(
      "limits: {max_same_failures: 3}\nloops:\n  code: {iteration_max_runtime: 20m}\n"
      "  plan: {iteration_max_runtime: none}\n",
      "c.yml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->limits.max_same_failures, 3);
  EXPECT_EQ(r->loop(LoopType::code).iteration_max_runtime, 20min);
  EXPECT_EQ(r->loop(LoopType::plan).iteration_max_runtime, Duration::zero());
  auto bad = parse_config("loops:\n  code: {iteration_max_runtime: soon}\n", "c.yml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("iteration_max_runtime"), std::string::npos)
      << bad.error().message;
  EXPECT_FALSE(parse_config("limits: {max_same_failures: -1}\n", "c.yml").ok());
}

TEST(ConfigTest, ReadsEveryKindOfValue) {
  auto r = parse_config(R"(
base_branch: trunk
merge: manual
attended: true
llm:
  provider: openai
  model: qwen
  judge: yes
  max_tokens_field: max_tokens
  claude_code: {permission_mode: plan, max_turns: 7}
concurrency:
  llm_slots: 16
  runners: {heavy: 3}
limits:
  max_cost_usd: 2.5
  max_runtime: 1h30m
  cooldown: 500ms
  stop_on_patterns: ["LICENSE VIOLATION", "secret"]
loops:
  code: {validation: "ctest", iteration_timeout: 45s}
pricing:
  qwen: {input: 0, output: 0.5}
)",
                        "x.yml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->merge, MergeMode::manual);
  EXPECT_TRUE(r->attended);
  EXPECT_EQ(r->llm.provider, "openai");
  EXPECT_TRUE(r->llm.judge);
  EXPECT_EQ(r->llm.max_tokens_field, "max_tokens");
  EXPECT_EQ(r->llm.claude_code.permission_mode, "plan");
  EXPECT_EQ(r->llm.claude_code.max_turns, 7);
  EXPECT_EQ(r->concurrency.llm_slots, 16);
  EXPECT_EQ(r->concurrency.runners.at("heavy"), 3);
  EXPECT_EQ(r->concurrency.runners.at("default"), 8);  // untouched keys keep their defaults
  EXPECT_EQ(r->limits.max_runtime, 90min);
  EXPECT_EQ(r->limits.cooldown, 500ms);
  EXPECT_EQ(r->limits.stop_on_patterns.size(), 2u);
  EXPECT_EQ(r->loop(LoopType::code).validation, "ctest");
  EXPECT_EQ(r->loop(LoopType::code).iteration_timeout, 45s);
  EXPECT_EQ(r->loop(LoopType::code).max_iterations, 20);
  EXPECT_DOUBLE_EQ(r->pricing.at("qwen").output, 0.5);
  EXPECT_EQ(r->pricing.count("claude-opus-5-5"), 1u);
}

TEST(ConfigTest, UnknownKeyNamesKeyAndLine) {
  std::string e = error_of("merge: auto\nllm:\n  modle: x\n");
  EXPECT_EQ(e.substr(0, e.find(" (")), ".loopr/config.yml:3: llm.modle: unknown key");
  EXPECT_NE(e.find("model"), std::string::npos);  // lists what is known
}

TEST(ConfigTest, UnknownTopLevelKey) {
  EXPECT_EQ(error_of("\n\nmax_loops: 5\n").rfind(".loopr/config.yml:3: max_loops: unknown key", 0),
            0u);
}

TEST(ConfigTest, WrongTypeNamesKeyAndLine) {
  EXPECT_EQ(error_of("llm:\n  max_tokens: lots\n"),
            ".loopr/config.yml:2: llm.max_tokens: expected a whole number, got \"lots\"");
  EXPECT_EQ(error_of("attended: maybe\n"),
            ".loopr/config.yml:1: attended: expected true or false, got \"maybe\"");
  EXPECT_EQ(error_of("llm: 5\n"), ".loopr/config.yml:1: llm: expected a mapping of keys");
  EXPECT_EQ(
      error_of("limits:\n  stop_scripts: run.sh\n"),
      ".loopr/config.yml:2: limits.stop_scripts: expected a list of strings, e.g. [\"a\", \"b\"]");
  EXPECT_EQ(error_of("limits:\n  max_cost_usd: [1]\n"),
            ".loopr/config.yml:2: limits.max_cost_usd: expected a number");
}

TEST(ConfigTest, BadValueNamesKeyAndLine) {
  EXPECT_EQ(error_of("merge: sometimes\n"),
            ".loopr/config.yml:1: merge: must be one of auto | manual | pr, got \"sometimes\"");
  EXPECT_EQ(error_of("concurrency:\n  llm_slots: 0\n"),
            ".loopr/config.yml:2: concurrency.llm_slots: must be between 1 and 10000, got 0");
  EXPECT_EQ(error_of("llm:\n  provider: cursor\n"),
            ".loopr/config.yml:2: llm.provider: must be one of anthropic | openai | "
            "openai-responses | claude-code | codex | gemini, got \"cursor\"");
  EXPECT_EQ(error_of("limits:\n  max_cost_usd: -3\n"),
            ".loopr/config.yml:2: limits.max_cost_usd: must be at least 0, got -3");
}

TEST(ConfigTest, BadDurationNamesKeyAndLine) {
  EXPECT_EQ(error_of("loops:\n  code:\n    iteration_timeout: 10 minutes\n"),
            ".loopr/config.yml:3: loops.code.iteration_timeout: bad duration \"10 minutes\" (write "
            "e.g. 500ms, 30s, 10m, 4h or 1h30m)");
  EXPECT_NE(error_of("limits: {max_runtime: 4}\n").find("limits.max_runtime: bad duration"),
            std::string::npos);
}

TEST(ConfigTest, UnknownLoopTypeAndPricingField) {
  EXPECT_EQ(error_of("loops:\n  epic: {max_iterations: 1}\n")
                .rfind(".loopr/config.yml:2: loops.epic: unknown key", 0),
            0u);
  EXPECT_EQ(error_of("pricing:\n  m: {inptu: 1}\n")
                .rfind(".loopr/config.yml:2: pricing.m.inptu: unknown key", 0),
            0u);
}

TEST(ConfigTest, DuplicateKeyIsAnError) {
  EXPECT_EQ(error_of("merge: auto\nmerge: manual\n"),
            ".loopr/config.yml:2: merge: key given twice");
}

TEST(ConfigTest, BrokenYamlNamesTheLine) {
  std::string e = error_of("llm:\n  model: [unclosed\n");
  EXPECT_EQ(e.rfind(".loopr/config.yml:", 0), 0u);
  EXPECT_NE(e.find("not valid YAML"), std::string::npos);
}

TEST(ConfigTest, EmptyFileIsDefaults) {
  auto r = parse_config("", "x");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->llm.provider, "anthropic");
}

TEST(ConfigTest, EnvironmentOverridesTheFile) {
  loopr::testing::TempDir dir;
  loopr::testing::write_file(dir / "config.yml",
                             "llm:\n  provider: anthropic\n  model: claude-opus-5-5\n");
  auto r = load_config((dir / "config.yml").string(),
                       fake_env({{"LOOPR_PROVIDER", "openai"},
                                 {"LOOPR_MODEL", "llama"},
                                 {"OPENAI_BASE_URL", "http://127.0.0.1:8080"},
                                 {"ANTHROPIC_BASE_URL", "http://x"}}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->llm.provider, "openai");
  EXPECT_EQ(r->llm.model, "llama");
  EXPECT_EQ(r->llm.base_url, "http://127.0.0.1:8080");
}

TEST(ConfigTest, BadProviderInEnvironmentIsAnError) {
  auto r = load_config("/nonexistent/config.yml", fake_env({{"LOOPR_PROVIDER", "bard"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("LOOPR_PROVIDER"), std::string::npos);
}

TEST(ConfigTest, MissingFileMeansDefaults) {
  auto r = load_config("/nonexistent/config.yml", fake_env({}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->base_branch, "main");
}

TEST(DurationTest, ParsesAndFormats) {
  EXPECT_EQ(parse_duration("30s"), 30s);
  EXPECT_EQ(parse_duration("10m"), 10min);
  EXPECT_EQ(parse_duration("4h"), 4h);
  EXPECT_EQ(parse_duration("1d"), 24h);
  EXPECT_EQ(parse_duration("250ms"), 250ms);
  EXPECT_EQ(parse_duration("1h30m"), 90min);
  EXPECT_EQ(parse_duration("0"), 0s);
  EXPECT_FALSE(parse_duration("").has_value());
  EXPECT_FALSE(parse_duration("10").has_value());
  EXPECT_FALSE(parse_duration("m").has_value());
  EXPECT_FALSE(parse_duration("5x").has_value());
  EXPECT_FALSE(parse_duration("-5s").has_value());
  EXPECT_EQ(format_duration(90min), "90m");
  EXPECT_EQ(format_duration(2h), "2h");
  EXPECT_EQ(format_duration(1500ms), "1500ms");
}

TEST(ConfigTest, SandboxIsOnByDefaultAndNoneOnlyWhenSaid) {
  Config c;
  EXPECT_EQ(c.sandbox.mode, "bubblewrap");
  EXPECT_TRUE(c.sandbox.confined());
  EXPECT_TRUE(c.sandbox.network.empty());
  auto off = parse_config("sandbox: none\n", "c.yml");
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_FALSE(off->sandbox.confined());
  auto full = parse_config(
      "sandbox:\n  mode: bubblewrap\n  network: [net]\n  env: [CARGO_HOME]\n  read_only: [~/.cargo, /opt/sdk]\n"
      "  hide: [/srv/secrets]\n  limits: {processes: 256, open_files: 512, file_size: 64M, memory: 2G, tmp_size: 512M}\n",
      "c.yml");
  ASSERT_TRUE(full) << full.error().message;
  EXPECT_EQ(full->sandbox.network, std::vector<std::string>{"net"});
  EXPECT_EQ(full->sandbox.env, std::vector<std::string>{"CARGO_HOME"});
  EXPECT_EQ(full->sandbox.read_only, (std::vector<std::string>{"~/.cargo", "/opt/sdk"}));
  EXPECT_EQ(full->sandbox.limits.processes, 256u);
  EXPECT_EQ(full->sandbox.limits.file_size, 64u << 20);
  EXPECT_EQ(full->sandbox.limits.memory, 2ULL << 30);
  EXPECT_EQ(full->sandbox.limits.tmp_size, 512u << 20);
}

TEST(ConfigTest, BadSandboxSettingsNameTheKeyAndLine) {
  EXPECT_NE(error_of("sandbox: off\n").find(".loopr/config.yml:1: sandbox: must be one of bubblewrap | none"), std::string::npos);
  EXPECT_NE(error_of("sandbox:\n  limits: {file_size: huge}\n").find("sandbox.limits.file_size: bad size \"huge\""),
            std::string::npos);
  EXPECT_NE(error_of("sandbox:\n  env: [\"A B\"]\n").find("is not a variable name"), std::string::npos);
  EXPECT_NE(error_of("sandbox:\n  hide: [relative/path]\n").find("must be an absolute path"), std::string::npos);
  EXPECT_NE(error_of("sandbox:\n  networks: [net]\n").find("unknown key"), std::string::npos);
}

TEST(ConfigTest, LoopToolsCanOnlyNarrow) {
  auto ok = parse_config("loops:\n  code: {tools: [read_file, run_command]}\n  plan: {tools: [read_file, write_file]}\n", "c.yml");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->loop(LoopType::code).tools, (std::vector<std::string>{"read_file", "run_command"}));
  EXPECT_NE(error_of("loops:\n  plan: {tools: [run_command]}\n").find("run_command is not available to plan loops"),
            std::string::npos);
  EXPECT_NE(error_of("loops:\n  code: {tools: [rm_rf]}\n").find("unknown tool \"rm_rf\""), std::string::npos);
  EXPECT_NE(error_of("loops:\n  code: {tools: [search, search]}\n").find("listed twice"), std::string::npos);
}

TEST(ConfigTest, SizesParseAndFormat) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("512K"), 512u << 10);
  EXPECT_EQ(parse_size("64MiB"), 64u << 20);
  EXPECT_EQ(parse_size("1g"), 1ULL << 30);
  EXPECT_EQ(parse_size("2TB"), 2ULL << 40);
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("G"));
  EXPECT_FALSE(parse_size("1.5G"));
  EXPECT_FALSE(parse_size("12 parsecs"));
  EXPECT_EQ(format_size(1ULL << 30), "1G");
  EXPECT_EQ(format_size(1536), "1536");
  EXPECT_EQ(format_size(3 << 20), "3M");
}

TEST(ConfigTest, TheDefaultFileSaysHowCommandsAreConfined) {
  auto text = default_config_yaml("main");
  EXPECT_NE(text.find("sandbox:"), std::string::npos);
  auto parsed = parse_config(text, "default");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->sandbox.mode, "bubblewrap");
}

TEST(ConfigTest, EveryRe2PatternIsCheckedAtLoadWithRe2sMessage) {
  std::string e = error_of("limits:\n  stop_on_patterns: [\"ok\", \"(unclosed\"]\n");
  EXPECT_NE(e.find(".loopr/config.yml:2: limits.stop_on_patterns[1]: bad RE2 pattern \"(unclosed\": missing )"),
            std::string::npos)
      << e;
  e = error_of("limits:\n  completion_signal: \"<promise>[COMPLETE\"\n");
  EXPECT_NE(e.find(".loopr/config.yml:2: limits.completion_signal: bad RE2 pattern"), std::string::npos) << e;
  EXPECT_NE(e.find("missing ]"), std::string::npos) << e;
  e = error_of("concurrency:\n  runner_patterns:\n    heavy: [\"make\", \"*cargo\"]\n");
  EXPECT_NE(e.find(".loopr/config.yml:3: concurrency.runner_patterns.heavy[1]: bad RE2 pattern \"*cargo\""),
            std::string::npos)
      << e;
  // Valid ones load.
  auto ok = parse_config("limits:\n  stop_on_patterns: [\"FATAL: .*\"]\n  completion_signal: \"DONE\"\n", "c.yml");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->limits.completion_signal, "DONE");
}

TEST(ConfigTest, AValidationCommandForADocumentLoopIsRefusedNotIgnored) {
  std::string e = error_of("loops:\n  spec: {validation: \"make lint\"}\n");
  EXPECT_NE(e.find("loops.spec.validation: a spec loop is checked by the built-in format check"), std::string::npos)
      << e;
  EXPECT_TRUE(parse_config("loops:\n  code: {validation: \"make check\"}\n", "c.yml"));
}
