// .loopr-example/artifacts: the valid plan, specs and phases of the "--shout" demo validate and
// hang together; each invalid example produces exactly the messages in its `.expected` file.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include <loopr/markdown/artifacts.hpp>

#include "markdown/problem_matchers.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::markdown;
using loopr::markdown::test::dump;
using loopr::testing::read_file;
namespace fs = std::filesystem;

namespace {

const fs::path kArtifacts = fs::path(LOOPR_SOURCE_DIR) / ".loopr-example" / "artifacts";

// `x.plan.md` → plan.
ArtifactKind kind_of(const fs::path& file) {
  std::string name = file.filename().string();
  for (ArtifactKind k : {ArtifactKind::plan, ArtifactKind::spec, ArtifactKind::phase})
    if (name.ends_with(std::string(".") + to_string(k) + ".md")) return k;
  ADD_FAILURE() << "no kind in the name " << name;
  return ArtifactKind::plan;
}

std::vector<fs::path> files_in(const fs::path& dir, const std::string& suffix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().string().ends_with(suffix)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(ExamplesTest, ThePlanItsSpecsAndTheirPhasesAllValidateAndMatchUp) {
  auto plans = files_in(kArtifacts / "plans", ".plan.md");
  ASSERT_EQ(plans.size(), 1u);
  auto plan = read_plan(read_file(plans[0]), plans[0].string());
  ASSERT_TRUE(plan.ok()) << plan.error().message;

  // One spec file per plan item, named `001-<index>-<name>.spec.md` (the manager's naming).
  auto specs = files_in(kArtifacts / "specs", ".spec.md");
  ASSERT_EQ(specs.size(), plan->specs.size());
  ASSERT_EQ(plan->specs.size(), 2u);
  std::size_t phase_files = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const SpecItem& item = plan->specs[i];
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "001-%03d-", item.index);
    EXPECT_EQ(specs[i].filename().string(), prefix + item.name + ".spec.md");
    auto spec = read_spec(read_file(specs[i]), specs[i].string());
    ASSERT_TRUE(spec.ok()) << spec.error().message;
    EXPECT_EQ(spec->parent_plan.text, ".loopr/plans/" + plans[0].filename().string());
    EXPECT_GE(spec->phases.size(), 1u);
    EXPECT_LE(spec->phases.size(), 2u);
    for (const PhaseItem& phase : spec->phases) {
      ++phase_files;
      EXPECT_FALSE(phase.files.empty()) << phase.name;
      std::string name = std::string(prefix) + "00" + std::to_string(phase.number) + "-";
      bool found = false;
      for (const auto& f : files_in(kArtifacts / "phases", ".phase.md")) {
        if (f.filename().string().rfind(name, 0) != 0) continue;
        found = true;
        auto doc = read_phase(read_file(f), f.string());
        ASSERT_TRUE(doc.ok()) << doc.error().message;
        EXPECT_EQ(doc->title.text, phase.name);
        EXPECT_EQ(doc->parent_spec.text, ".loopr/specs/" + specs[i].filename().string());
      }
      EXPECT_TRUE(found) << "no phase file " << name << "*";
    }
  }
  EXPECT_EQ(files_in(kArtifacts / "phases", ".phase.md").size(), phase_files);
}

TEST(ExamplesTest, EachInvalidExampleGivesExactlyItsExpectedMessages) {
  auto examples = files_in(kArtifacts / "invalid", ".md");
  ASSERT_GE(examples.size(), 5u);
  std::set<Rule> rules_seen;
  for (const fs::path& file : examples) {
    fs::path expected = file;
    expected.replace_extension(".expected");
    ASSERT_TRUE(fs::exists(expected)) << expected;
    auto problems = validate_artifact(kind_of(file), read_file(file));
    EXPECT_FALSE(problems.empty()) << file;
    EXPECT_EQ(format_problems(file.filename().string(), problems), read_file(expected)) << file;
    for (const auto& p : problems) rules_seen.insert(p.rule);
  }
  // Between them the examples show every structural rule (the size rule needs a 1 MiB file and
  // has its own test).
  for (Rule r :
       {Rule::not_utf8, Rule::missing_section, Rule::misplaced_section, Rule::duplicate_section,
        Rule::empty_section, Rule::no_items, Rule::malformed_item, Rule::bad_name,
        Rule::missing_description, Rule::duplicate_name, Rule::bad_number, Rule::too_many_items})
    EXPECT_TRUE(rules_seen.count(r)) << to_string(r);
}
