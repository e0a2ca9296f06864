// What `loopr show ID --iteration N` prints stays byte for byte what it printed before the
// iteration files got one reader and one parser (core/iteration_files.hpp): a real transcript the
// engine wrote (tests/core/fixtures/iteration/real) and a hostile one. The golden files were made
// by the readers before that change (LOOPR_WRITE_GOLDEN=1 writes them again).
#include <gtest/gtest.h>

#include <cstdlib>

#include "cli/iteration_log.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::cli;
using namespace loopr::testing;

namespace {

const std::filesystem::path kSource = LOOPR_SOURCE_DIR;

void expect_golden(const std::string& name, const std::string& got) {
  const auto golden = kSource / "tests/cli/fixtures" / name;
  if (std::getenv("LOOPR_WRITE_GOLDEN")) {
    write_file(golden, got);
    return;
  }
  EXPECT_EQ(read_file(golden), got) << name << " differs from what the CLI printed before";
}

/// An iteration folder holding the fixture `which` as iteration 2 of code-001-001-001.
IterationLog read_fixture(const TempDir& dir, const std::string& which) {
  RepoPaths paths(dir.path());
  const auto to = paths.iteration_dir("code-001-001-001", 2);
  std::filesystem::create_directories(to);
  std::filesystem::copy(kSource / "tests/core/fixtures/iteration" / which, to);
  return read_iteration_log(paths, "code-001-001-001", 2);
}

/// The folder's path in the text is the temp folder's: the golden has `DIR` there.
std::string without_dir(std::string text, const TempDir& dir) {
  const std::string d = dir.path().string();
  for (auto at = text.find(d); at != std::string::npos; at = text.find(d, at))
    text.replace(at, d.size(), "DIR");
  return text;
}

}  // namespace

TEST(IterationGoldenTest, ARealTranscriptPrintsAsBefore) {
  for (const char* which : {"real", "hostile"}) {
    TempDir dir;
    IterationLog log = read_fixture(dir, which);
    const std::string stem = std::string("iteration_") + which;
    expect_golden(stem + ".txt", without_dir(render_iteration_log(log, Style{false}), dir));
    expect_golden(stem + ".color.txt", without_dir(render_iteration_log(log, Style{true}), dir));
    expect_golden(stem + ".json", iteration_log_json(log).dump(
                                      -1, ' ', false, nlohmann::json::error_handler_t::replace) +
                                      "\n");
  }
}
