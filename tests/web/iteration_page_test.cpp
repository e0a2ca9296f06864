// The web page of an iteration reads through the one reader of core/iteration_files.hpp: every
// file the engine writes is shown, and a hostile folder shows no secret and never throws.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <loopr/daemon/loop_files.hpp>

#include "support/iteration_folders.hpp"
#include "support/temp_dir.hpp"
#include "web/pages.hpp"

using namespace loopr;
using namespace loopr::web;
using loopr::daemon::read_iteration;
using namespace loopr::testing;

// The engine's ReviewTest checks a reviewed iteration writes exactly the files of the table.
TEST(WebIterationTest, EveryFileTheEngineWritesIsShown) {
  TempDir dir;
  RepoPaths paths(dir.path());
  write_every_iteration_file(paths, "001", 1);
  const std::string html = iteration_body(read_iteration(paths, "001", 1));
  for (const auto& spec : kIterationFiles)
    EXPECT_NE(html.find(std::string("marker of ") + spec.name), std::string::npos) << html;
}

// proves S5.33
TEST(WebIterationTest, AHostileIterationFolderShowsNoSecretAndNeverThrows) {
  TempDir dir;
  RepoPaths paths(dir.path());
  const std::string secret = kIterationSecret;
  write_hostile_iteration(dir.path(), kIterationFilePageBytes);
  std::string html;
  ASSERT_NO_THROW(html = iteration_body(read_iteration(paths, "code-001-001-001", 1)));
  EXPECT_EQ(html.find(secret), std::string::npos);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_NE(html.find("(prompt.md is not a regular file: not shown)"), std::string::npos);
  EXPECT_NE(html.find("(validation.log is not a regular file: not shown)"), std::string::npos);
  EXPECT_NE(html.find("(cut: the file is longer)"), std::string::npos);
  EXPECT_EQ(html.find("<h4>Review</h4>"), std::string::npos);
}
