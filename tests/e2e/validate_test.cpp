// `loopr validate plan|spec|phase FILE [--json]` through the real binary: exit 0 valid,
// 1 invalid, 2 usage; `FILE:LINE: message` lines; the JSON document field by field; the limits
// of the repository's config, or the defaults outside a repository.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace loopr::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kArtifacts = fs::path(LOOPR_SOURCE_DIR) / ".loopr-example" / "artifacts";
const fs::path kPlan = kArtifacts / "plans" / "001-add-a-shout-flag-to-greet.plan.md";
const fs::path kSpec = kArtifacts / "specs" / "001-001-shout-flag.spec.md";

std::string loopr_cmd(const std::string& args) { return std::string(LOOPR_BIN) + " " + args; }
std::string q(const fs::path& p) { return shell_quote(p.string()); }

// Runs the binary with stdout only (stderr to a file), so stdout can be compared exactly.
struct Split {
  int exit_code;
  std::string out;
  std::string err;
};
Split run_split(const std::string& args, const std::string& cwd = {}) {
  TempDir tmp;
  auto r = run_command(loopr_cmd(args) + " 2>" + q(tmp / "err"), cwd);
  return {r.exit_code, r.output, read_file(tmp / "err")};
}

int count_lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

TEST(ValidateTest, EveryValidExampleExitsZero) {
  int checked = 0;
  for (const char* kind : {"plan", "spec", "phase"}) {
    for (const auto& e : fs::directory_iterator(kArtifacts / (std::string(kind) + "s"))) {
      auto r = run_split(std::string("validate ") + kind + " " + q(e.path()));
      EXPECT_EQ(r.exit_code, 0) << e.path() << "\n" << r.out << r.err;
      EXPECT_EQ(r.out, e.path().string() + ": valid " + kind + "\n");
      EXPECT_EQ(r.err, "");
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6);
}

TEST(ValidateTest, InvalidExamplesPrintTheirExpectedLinesAndExitOne) {
  fs::path dir = kArtifacts / "invalid";
  int checked = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (!name.ends_with(".md")) continue;
    std::string kind = name.substr(0, name.size() - 3);
    kind = kind.substr(kind.rfind('.') + 1);
    auto r = run_split("validate " + kind + " " + shell_quote(name), dir.string());
    EXPECT_EQ(r.exit_code, 1) << name;
    fs::path expected = e.path();
    expected.replace_extension(".expected");
    EXPECT_EQ(r.out, read_file(expected)) << name;
    // One summary line on stderr in the `loopr: what (what to do)` form.
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("loopr: " + name + " is not a valid " + kind + ": " +
                              std::to_string(count_lines(r.out)) + " problem",
                          0),
              0u)
        << r.err;
    EXPECT_NE(r.err.find("(fix them and run `loopr validate` again)"), std::string::npos);
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

TEST(ValidateTest, JsonOfAValidPlanFieldByField) {
  auto r = run_split("validate plan " + q(kPlan) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(count_lines(r.out), 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["file"], kPlan.string());
  EXPECT_EQ(j["kind"], "plan");
  EXPECT_EQ(j["valid"], true);
  EXPECT_TRUE(j["problems"].is_array());
  EXPECT_TRUE(j["problems"].empty());
  ASSERT_EQ(j["items"].size(), 2u);
  EXPECT_EQ(j["items"][0]["index"], 1);
  EXPECT_EQ(j["items"][0]["name"], "shout-flag");
  EXPECT_EQ(j["items"][0]["line"], 20);
  EXPECT_EQ(j["items"][0]["description"],
            "Parse --shout in greet (before or after the name) and print the greeting in upper "
            "case when it is given.");
  EXPECT_EQ(j["items"][1]["index"], 2);
  EXPECT_EQ(j["items"][1]["name"], "shout-tests");
}

TEST(ValidateTest, JsonOfAValidSpecListsPhasesWithFiles) {
  auto r = run_split("--json validate spec " + q(kSpec));  // the global flag before the command
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "spec");
  ASSERT_EQ(j["items"].size(), 2u);
  EXPECT_EQ(j["items"][0]["number"], 1);
  EXPECT_EQ(j["items"][0]["name"], "Parse the flag");
  EXPECT_EQ(j["items"][0]["files"], nlohmann::json::array({"greet"}));
  EXPECT_EQ(j["items"][1]["number"], 2);
  EXPECT_EQ(j["items"][1]["name"], "Shout the greeting");
}

TEST(ValidateTest, JsonOfAnInvalidSpecFieldByField) {
  fs::path dir = kArtifacts / "invalid";
  auto r = run_split("validate spec bad-phases.spec.md --json", dir.string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.err, "");  // --json: the document says it all
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["file"], "bad-phases.spec.md");
  EXPECT_EQ(j["kind"], "spec");
  EXPECT_EQ(j["valid"], false);
  EXPECT_TRUE(j["items"].empty());
  const auto& p = j["problems"];
  ASSERT_EQ(p.size(), 5u) << r.out;
  const std::pair<int, const char*> expected[] = {{3, "empty_section"},
                                                  {12, "bad_number"},
                                                  {14, "malformed_item"},
                                                  {15, "duplicate_name"},
                                                  {17, "missing_description"}};
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(p[i]["line"], expected[i].first) << i;
    EXPECT_EQ(p[i]["rule"], expected[i].second) << i;
  }
  EXPECT_EQ(p[1]["message"],
            "phase number 3 should be 2: number the phases 1, 2, 3, … in order, without gaps or "
            "repeats");
  // The same messages as the text output, line for line.
  std::string text = read_file(dir / "bad-phases.spec.expected");
  for (const auto& problem : p)
    EXPECT_NE(text.find("bad-phases.spec.md:" + std::to_string(problem["line"].get<int>()) + ": " +
                        problem["message"].get<std::string>() + "\n"),
              std::string::npos)
        << problem.dump();
}

TEST(ValidateTest, UsageErrorsExitTwoWithOneLine) {
  auto kind = run_split("validate recipe " + q(kPlan));
  EXPECT_EQ(kind.exit_code, 2);
  EXPECT_EQ(kind.out, "");
  EXPECT_EQ(kind.err,
            "loopr: unknown artifact kind: recipe (write `loopr validate plan|spec|phase FILE`)\n");

  auto missing = run_split("validate plan /nonexistent/plan.md");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err,
            "loopr: no such file: /nonexistent/plan.md (check the path of the artifact)\n");

  auto folder = run_split("validate plan " + q(kArtifacts));
  EXPECT_EQ(folder.exit_code, 2) << folder.err;

  auto no_file = run_split("validate plan");
  EXPECT_EQ(no_file.exit_code, 2);
  EXPECT_EQ(no_file.err.rfind("loopr: ", 0), 0u) << no_file.err;
}

TEST(ValidateTest, QuietPrintsNothingForAValidFileButStillTheProblems) {
  auto ok = run_split("-q validate plan " + q(kPlan));
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.out, "");
  auto bad = run_split("-q validate spec bullets.spec.md", (kArtifacts / "invalid").string());
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.out, read_file(kArtifacts / "invalid" / "bullets.spec.expected"));
}

TEST(ValidateTest, WorksOutsideARepositoryWithTheDefaults) {
  TempDir dir;  // no .git anywhere above a temp dir
  ASSERT_FALSE(fs::exists(dir / ".git"));
  write_file(dir / "p.md", read_file(kPlan));
  auto r = run_split("-C " + q(dir.path()) + " validate plan p.md");  // FILE relative to -C
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "p.md: valid plan\n");
}

TEST(ValidateTest, InsideARepositoryTheConfiguredLimitsApply) {
  TempDir repo;
  auto init = run_command("git init -q .", repo.str());
  ASSERT_EQ(init.exit_code, 0) << init.output;
  // An extra section makes the plan surely larger than the smallest allowed limit (1024 bytes).
  std::string text = read_file(kPlan) + "\n## Notes\n" + std::string(1100, 'x') + "\n";
  write_file(repo / "p.md", text);
  write_file(repo / ".loopr/config.yml", "artifacts:\n  max_items: 1\n  max_bytes: 1024\n");
  auto r = run_split("validate plan p.md", repo.str());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  std::size_t size = text.size();
  EXPECT_EQ(r.out,
            "p.md:1: the file is " + std::to_string(size) +
                " bytes, more than the limit of 1024 bytes: shorten it to the essentials and "
                "leave the details to the child artifacts\n"
                "p.md:22: more than 1 specs: merge related specs so there are at most 1\n");

  // A broken config is a usage error, as for every command.
  write_file(repo / ".loopr/config.yml", "artifacts:\n  max_items: many\n");
  auto bad = run_split("validate plan p.md", repo.str());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("artifacts.max_items"), std::string::npos) << bad.err;
}

TEST(ValidateTest, HelpListsTheCommand) {
  auto r = run_command(loopr_cmd("validate --help"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("plan | spec | phase"), std::string::npos) << r.output;
}
