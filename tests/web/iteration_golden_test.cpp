// The web page of an iteration stays byte for byte what it showed before the iteration files got
// one reader and one parser (core/iteration_files.hpp): a real transcript the engine wrote
// (tests/core/fixtures/iteration/real) and a hostile one. The golden files were made by the
// readers before that change (LOOPR_WRITE_GOLDEN=1 writes them again).
#include <gtest/gtest.h>

#include <cstdlib>

#include <loopr/daemon/loop_files.hpp>

#include "support/temp_dir.hpp"
#include "web/pages.hpp"

using namespace loopr;
using namespace loopr::web;
using loopr::daemon::read_iteration;
using namespace loopr::testing;

namespace {

const std::filesystem::path kSource = LOOPR_SOURCE_DIR;

void expect_golden(const std::string& name, const std::string& got) {
  const auto golden = kSource / "tests/web/fixtures" / name;
  if (std::getenv("LOOPR_WRITE_GOLDEN")) {
    write_file(golden, got);
    return;
  }
  EXPECT_EQ(read_file(golden), got) << name << " differs from what the page showed before";
}

}  // namespace

TEST(IterationGoldenTest, ARealTranscriptIsShownAsBefore) {
  for (const char* which : {"real", "hostile"}) {
    TempDir dir;
    RepoPaths paths(dir.path());
    const auto to = paths.iteration_dir("code-001-001-001", 2);
    std::filesystem::create_directories(to);
    std::filesystem::copy(kSource / "tests/core/fixtures/iteration" / which, to);
    expect_golden(std::string("iteration_") + which + ".html",
                  iteration_body(read_iteration(paths, "code-001-001-001", 2)) + "\n");
  }
}
