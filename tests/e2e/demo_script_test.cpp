// The demo's scripted model (.loopr-example/mock-model.yml) played without the daemon: a small
// agent here renders the shipped prompts the way the engine does, talks to the real
// loopr-mock-llm, runs the tool calls on a copy of the demo project, and checks the story the
// script tells: every artifact passes `loopr validate` (2 specs, 1 + 2 phases, each naming its
// parent's path), every code loop leaves `sh tests/run.sh` passing, and exactly one of them
// needs a second iteration, which it gets from the first one's failing test output.
// A broken script fails here in a second, without a daemon.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "mock_llm/test_http.hpp"
#include "support/mock_llm.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace loopr::testing;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

const fs::path kExample = fs::path(LOOPR_SOURCE_DIR) / ".loopr-example";
const std::string kRequest = "Add a --shout flag to greet";
const std::string kPlanPath = ".loopr/plans/001-add-a-shout-flag-to-greet.plan.md";
const std::string kValidation = "sh tests/run.sh";
const std::string kFirstIteration = "None yet: this is the first iteration.";

std::string q(const fs::path& p) { return shell_quote(p.string()); }

// The engine's file-name slug (include/loopr/core/ids.hpp slugify), for artifact names.
std::string slug(const std::string& text) {
  std::string out;
  bool dash = false;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) && c < 128) {
      if (dash && !out.empty()) out += '-';
      dash = false;
      out += static_cast<char>(std::tolower(c));
    } else {
      dash = true;
    }
  }
  return out;
}

// prompts/<type>.md with `{{name}}` replaced (the engine's template syntax; `\{{` is a literal).
std::string render_prompt(const std::string& type, std::map<std::string, std::string> vars) {
  vars.emplace("completion-signal", "<promise>COMPLETE</promise>");
  vars.emplace("progress", kFirstIteration);
  vars.emplace("git-log", "1a2b3c4 greet: first version");
  vars.emplace("git-status", "");
  vars.emplace("git-diff", "");
  vars.emplace("purpose", "(nothing beyond the input above)");
  vars.emplace("iteration", "1");
  vars.emplace("max-iterations", "4");
  vars.emplace("validation-command", kValidation);
  vars.emplace("max-items", "12");
  vars.emplace("loop-type", type);
  std::string text = read_file(fs::path(LOOPR_SOURCE_DIR) / "prompts" / (type + ".md"));
  static const std::regex var(R"(\\\{\{|\{\{\s*([a-z-]+)\s*\}\})");
  std::string out;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), var), end; it != end; ++it) {
    out.append(last, (*it)[0].first);
    if ((*it)[0] == "\\{{") {
      out += "{{";
    } else {
      auto v = vars.find((*it)[1].str());
      EXPECT_NE(v, vars.end()) << "prompts/" << type << ".md uses {{" << (*it)[1] << "}}";
      if (v != vars.end()) out += v->second;
    }
    last = (*it)[0].second;
  }
  out.append(last, text.cend());
  return out;
}

// One iteration: a fresh conversation of one user message, tool calls run in `worktree`, until
// the model answers without tool_use. Tool failures (an edit_file that does not apply) and
// refused requests are test failures: they mean the script no longer fits the project.
struct Iteration {
  std::vector<std::string> written;  // paths given to write_file
  std::string final_text;
  int turns = 0;
};

Json run_tool(const Json& call, const fs::path& worktree) {
  const Json& in = call["input"];
  Json result = {{"type", "tool_result"}, {"tool_use_id", call["id"]}};
  auto fail = [&](const std::string& why) {
    ADD_FAILURE() << call["name"] << " " << in.dump() << ": " << why;
    result["is_error"] = true;
    result["content"] = why;
    return result;
  };
  std::string name = call["name"];
  fs::path path = worktree / in.value("path", ".");
  if (name == "write_file") {
    write_file(path, in["content"].get<std::string>());
    result["content"] = "wrote " + path.filename().string();
  } else if (name == "edit_file") {
    if (!fs::exists(path)) return fail("no such file");
    std::string text = read_file(path);
    std::string old_s = in["old_string"], new_s = in["new_string"];
    std::size_t at = text.find(old_s);
    if (at == std::string::npos) return fail("old_string does not occur");
    if (text.find(old_s, at + 1) != std::string::npos)
      return fail("old_string occurs more than once");
    text.replace(at, old_s.size(), new_s);
    write_file(path, text);
    result["content"] = "edited " + path.filename().string();
  } else if (name == "read_file") {
    if (!fs::exists(path)) return fail("no such file");
    result["content"] = read_file(path);
  } else if (name == "list_dir") {
    std::string listing;
    for (const auto& e : fs::directory_iterator(path))
      listing += e.path().filename().string() + "\n";
    result["content"] = listing;
  } else if (name == "search") {
    result["content"] =
        run_command("grep -rn -e " + shell_quote(in["pattern"]) + " . || true", worktree).output;
  } else if (name == "run_command") {
    auto r = run_command(in["command"].get<std::string>(), worktree.string());
    result["content"] = r.output + "\nexit code " + std::to_string(r.exit_code);
  } else {
    return fail("unknown tool");
  }
  return result;
}

Iteration play(int port, const std::string& type, const std::string& loop_id,
               const std::string& prompt, const fs::path& worktree) {
  Iteration it;
  Json messages = Json::array(
      {{{"role", "user"}, {"content", Json::array({{{"type", "text"}, {"text", prompt}}})}}});
  for (it.turns = 1; it.turns <= 20; ++it.turns) {
    Json body = {{"model", "claude-sonnet-5-5"}, {"max_tokens", 16000}, {"messages", messages}};
    auto headers =
        loopr::mock_llm::testing::anthropic_headers(type == "code" ? "code" : type, loop_id);
    auto r = loopr::mock_llm::testing::post(static_cast<std::uint16_t>(port), "/v1/messages",
                                            headers, body);
    if (r.status != 200) {
      ADD_FAILURE() << loop_id << " turn " << it.turns << ": HTTP " << r.status << " " << r.body;
      return it;
    }
    Json answer = r.json();
    messages.push_back({{"role", "assistant"}, {"content", answer["content"]}});
    Json results = Json::array();
    for (const auto& block : answer["content"]) {
      if (block["type"] == "text") it.final_text = block["text"];
      if (block["type"] != "tool_use") continue;
      if (block["name"] == "write_file") it.written.push_back(block["input"]["path"]);
      results.push_back(run_tool(block, worktree));
    }
    if (answer["stop_reason"] != "tool_use") return it;
    messages.push_back({{"role", "user"}, {"content", results}});
  }
  ADD_FAILURE() << loop_id << ": no end of the iteration after 20 turns";
  return it;
}

// `loopr validate --json KIND FILE` → its items; a problem is a test failure.
Json validate(const std::string& kind, const fs::path& file) {
  auto r = run_command(std::string(LOOPR_BIN) + " validate --json " + kind + " " + q(file));
  EXPECT_EQ(r.exit_code, 0) << file << "\n" << r.output;
  Json doc = Json::parse(r.output, nullptr, false);
  if (doc.is_discarded() || !doc.contains("items")) return Json::array();
  return doc["items"];
}

struct Phase {
  std::string id, path, text;
};

class DemoScript : public ::testing::Test {
 protected:
  void SetUp() override {
    if (mock_llm_binary().empty()) GTEST_SKIP() << "loopr-mock-llm is not built";
    mock_ = std::make_unique<MockLlm>(read_file(kExample / "mock-model.yml"),
                                      std::vector<std::string>{"--latency", "0ms"});
    fs::copy(kExample / "project", repo(), fs::copy_options::recursive);
  }
  fs::path repo() const { return tmp_ / "repo"; }

  // Plays the plan, spec and phase loops as the loop tree would spawn them.
  std::vector<Phase> play_documents() {
    std::vector<Phase> phases;
    Iteration plan = play(mock_->port(), "plan", "001",
                          render_prompt("plan", {{"task", kRequest},
                                                 {"artifact-path", kPlanPath},
                                                 {"loop-id", "001"},
                                                 {"plan-id", "001"},
                                                 {"parent-id", ""},
                                                 {"input", ""},
                                                 {"input-path", ""}}),
                          repo());
    EXPECT_EQ(plan.written, std::vector<std::string>{kPlanPath});
    EXPECT_NE(plan.final_text.find("<promise>COMPLETE</promise>"), std::string::npos);
    Json specs = validate("plan", repo() / kPlanPath);
    EXPECT_EQ(specs.size(), 2u) << specs.dump();
    std::string plan_text = read_file(repo() / kPlanPath);

    for (const auto& item : specs) {
      std::string id = "001-00" + std::to_string(item["index"].get<int>());
      std::string path = ".loopr/specs/" + id + "-" + item["name"].get<std::string>() + ".spec.md";
      Iteration spec = play(mock_->port(), "spec", id,
                            render_prompt("spec", {{"task", item["description"]},
                                                   {"artifact-path", path},
                                                   {"loop-id", id},
                                                   {"plan-id", "001"},
                                                   {"parent-id", "001"},
                                                   {"input", plan_text},
                                                   {"input-path", kPlanPath}}),
                            repo());
      EXPECT_EQ(spec.written, std::vector<std::string>{path});
      Json items = validate("spec", repo() / path);
      std::string spec_text = read_file(repo() / path);
      EXPECT_NE(spec_text.find("`" + kPlanPath + "`"), std::string::npos)
          << "Parent Plan of " << path;

      for (const auto& ph : items) {
        std::string pid = id + "-00" + std::to_string(ph["number"].get<int>());
        std::string ppath = ".loopr/phases/" + pid + "-" + slug(ph["name"]) + ".phase.md";
        std::string task =
            ph["name"].get<std::string>() + ": " + ph["description"].get<std::string>();
        Iteration phase = play(mock_->port(), "phase", pid,
                               render_prompt("phase", {{"task", task},
                                                       {"artifact-path", ppath},
                                                       {"loop-id", pid},
                                                       {"plan-id", "001"},
                                                       {"parent-id", id},
                                                       {"input", spec_text},
                                                       {"input-path", path}}),
                               repo());
        EXPECT_EQ(phase.written, std::vector<std::string>{ppath});
        validate("phase", repo() / ppath);
        std::string phase_text = read_file(repo() / ppath);
        EXPECT_NE(phase_text.find("`" + path + "`"), std::string::npos)
            << "Parent Spec of " << ppath;
        phases.push_back({pid, ppath, phase_text});
      }
    }
    return phases;
  }

  TempDir tmp_{"loopr-demo-script"};
  std::unique_ptr<MockLlm> mock_;
};

TEST_F(DemoScript, EveryArtifactItWritesPassesTheFormatCheck) {
  std::vector<Phase> phases = play_documents();
  std::vector<std::string> ids;
  for (const auto& p : phases) ids.push_back(p.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"001-001-001", "001-002-001", "001-002-002"}));
  for (const auto& r : mock_->requests()) EXPECT_EQ(r["status"], 200) << r.dump();
}

// Each code loop starts from the project as it was (its own worktree) and must leave the tests
// passing; code-001-001-001 gets there only in its second iteration, from the fed-back failure.
TEST_F(DemoScript, CodeLoopsPassTheProjectTestsOneOfThemOnTheSecondIteration) {
  std::vector<Phase> phases = play_documents();
  ASSERT_EQ(phases.size(), 3u);
  std::map<std::string, int> iterations;
  for (const auto& phase : phases) {
    std::string id = "code-" + phase.id;
    fs::path worktree = tmp_ / id;
    fs::copy(kExample / "project", worktree, fs::copy_options::recursive);
    std::string progress = kFirstIteration;
    for (int n = 1; n <= 3; ++n) {
      std::map<std::string, std::string> vars = {
          {"task", phase.text},  {"input", phase.text},  {"input-path", phase.path},
          {"loop-id", id},       {"plan-id", "001"},     {"parent-id", phase.id},
          {"artifact-path", ""}, {"progress", progress}, {"iteration", std::to_string(n)}};
      Iteration it = play(mock_->port(), "code", id, render_prompt("code", vars), worktree);
      auto tests = run_command(kValidation, worktree.string());
      iterations[id] = n;
      if (tests.exit_code == 0) break;
      // As the engine feeds it back (src/engine/feedback.cpp, validation.cpp).
      progress = "### Iteration " + std::to_string(n) +
                 " (validation)\n\nThe validation command `" + kValidation +
                 "` failed with exit code " + std::to_string(tests.exit_code) +
                 ". Its output (the end is what matters most):\n\n```\n" + tests.output + "\n```\n";
    }
    EXPECT_EQ(run_command(kValidation, worktree.string()).exit_code, 0) << id;
  }
  EXPECT_EQ(iterations,
            (std::map<std::string, int>{
                {"code-001-001-001", 2}, {"code-001-002-001", 1}, {"code-001-002-002", 1}}));
  EXPECT_EQ(run_command("./greet --shout Ada", (tmp_ / "code-001-001-001").string()).output,
            "HELLO, ADA!\n");
  EXPECT_NE(
      run_command("./greet --help", (tmp_ / "code-001-002-001").string()).output.find("--shout"),
      std::string::npos);
  for (const auto& r : mock_->requests()) EXPECT_EQ(r["status"], 200) << r.dump();
}

// The config shipped for the demo passes loopr's own check.
TEST(DemoConfig, IsValid) {
  TempDir dir("loopr-demo-config");
  ASSERT_EQ(run_command("git init -q", dir.str()).exit_code, 0);
  fs::create_directories(dir / ".loopr");
  fs::copy_file(kExample / "config.yml", dir / ".loopr" / "config.yml");
  auto r = run_command(std::string(LOOPR_BIN) + " config", dir.str());
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
