// `loopr gc --caches` (issue 41): the repository's build caches (.loopr/cache/<tool>, what every
// sandboxed command of its loops gets at ~/.cache/loopr/<tool>) are cleared on request, a dry
// run only counts them, a link inside is removed and never followed, and the JSON report says
// what went.
#include <filesystem>

#include "e2e/cli_fixture.hpp"

using namespace loopr::testing;

TEST_F(CliE2E, GcCachesClearsTheRepositorysBuildCachesAndNothingElse) {
  make_repo();
  const std::filesystem::path cache = dir / ".loopr/cache";
  write_file(cache / "go-build/00/a-d", std::string(4096, 'x'));
  write_file(cache / "npm/_cacache/index", "entry\n");
  // A link a command left in a cache, to a file of the person's: removed, never followed.
  const std::filesystem::path outside = dir.path().parent_path() / (dir.path().filename().string() + "-outside.txt");
  write_file(outside, "the person's file\n");
  std::filesystem::create_symlink(outside, cache / "go-build/link");

  CliRun dry = loopr("--json gc --caches --dry-run");
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_GE(dry.json()["caches"]["bytes"].get<std::uintmax_t>(), 4096u) << dry.out;
  EXPECT_TRUE(dry.json()["caches"]["dry_run"].get<bool>()) << dry.out;
  EXPECT_TRUE(std::filesystem::exists(cache / "go-build/00/a-d")) << "a dry run removed a file";

  CliRun r = loopr("--json gc --caches");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_GE(r.json()["caches"]["bytes"].get<std::uintmax_t>(), 4096u) << r.out;
  EXPECT_TRUE(r.json()["errors"].empty()) << r.out;
  EXPECT_FALSE(std::filesystem::exists(cache / "go-build")) << r.out;
  EXPECT_FALSE(std::filesystem::exists(cache / "npm")) << r.out;
  EXPECT_EQ(read_file(outside), "the person's file\n");
  // Without --caches, gc leaves them alone.
  write_file(cache / "go-build/01/b-d", "y");
  CliRun plain = loopr("--json gc");
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  EXPECT_FALSE(plain.json().contains("caches")) << plain.out;
  EXPECT_TRUE(std::filesystem::exists(cache / "go-build/01/b-d"));
  std::filesystem::remove(outside);
}
