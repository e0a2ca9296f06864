// A loop's files as a real daemon serves them (`GET /v1/loops/{id}/artifact`, `/file`, `/diff`,
// `/iterations/{n}`, src/daemon/API.md): through the one readers, the web page's too; a symlink
// to a secret or a FIFO the model leaves in its worktree or its iteration folder is never read
// nor waited on (docs/security.md S1.12, S5.33).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "daemon/daemon_fixture.hpp"

using namespace loopr;
using namespace loopr::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* const kSecret = "TOP-SECRET-7f3a kept outside every worktree";

bool holds(const json& v, const std::string& what) {
  return v.is_string() && v.get<std::string>().find(what) != std::string::npos;
}

}  // namespace

class DaemonFilesTest : public DaemonFixture {};

TEST_F(DaemonFilesTest, ThePlansArtifactFileDiffAndIterationAreServedThroughTheOneReaders) {
  make_repo();
  start_mock(TreeScript{});
  start_daemon();
  ASSERT_EQ(submit("Write the alpha and beta files"), "001");
  ASSERT_TRUE(wait_status("001", "awaiting_approval")) << dump_loops();
  auto plan = api("GET", "/v1/loops/001");
  ASSERT_EQ(plan.status, 200);
  const std::string rel = plan.body["artifacts"][0].get<std::string>();
  const fs::path worktree = plan.body["worktree"].get<std::string>();

  auto artifact = api("GET", "/v1/loops/001/artifact");
  ASSERT_EQ(artifact.status, 200) << artifact.body.dump();
  EXPECT_EQ(artifact.body["path"], rel);
  EXPECT_TRUE(holds(artifact.body["text"], "## Specs to Create")) << artifact.body.dump();
  EXPECT_EQ(artifact.body["source"], "");  // the worktree's regular file
  EXPECT_EQ(artifact.body["truncated"], false);
  EXPECT_EQ(api("GET", "/v1/loops/001/artifact?path=" + rel).body["text"], artifact.body["text"]);
  // Only the loop's own artifacts: not any file of its worktree.
  EXPECT_EQ(api("GET", "/v1/loops/001/artifact?path=check.sh").status, 404);

  auto file = api("GET", "/v1/loops/001/file?path=" + rel);
  ASSERT_EQ(file.status, 200) << file.body.dump();
  EXPECT_EQ(file.body["text"], artifact.body["text"]);
  EXPECT_NE(file.body["source"], "");  // committed on a branch
  EXPECT_EQ(api("GET", "/v1/loops/001/file").status, 400);
  EXPECT_TRUE(api("GET", "/v1/loops/001/file?path=../outside").body["text"].is_null());

  auto diff = api("GET", "/v1/loops/001/diff");
  ASSERT_EQ(diff.status, 200) << diff.body.dump();
  EXPECT_EQ(diff.body["label"].get<std::string>().rfind("git diff ", 0), 0u) << diff.body.dump();
  EXPECT_TRUE(holds(diff.body["text"], rel)) << diff.body.dump();

  auto iteration = api("GET", "/v1/loops/001/iterations/1");
  ASSERT_EQ(iteration.status, 200) << iteration.body.dump();
  EXPECT_EQ(iteration.body["id"], "001");
  EXPECT_EQ(iteration.body["n"], 1);
  ASSERT_EQ(iteration.body["files"].size(), 4u);
  EXPECT_EQ(iteration.body["files"][0]["name"], "prompt.md");
  EXPECT_TRUE(iteration.body["files"][0]["text"].is_string());
  EXPECT_EQ(iteration.body["files"][1]["name"], "conversation.jsonl");
  EXPECT_EQ(api("GET", "/v1/loops/001/iterations/1?whole=true").body["files"][0]["text"],
            iteration.body["files"][0]["text"]);
  // Iteration 2 is the one a plan would run next: not begun, nothing in it.
  for (const char* target :
       {"/v1/loops/001/iterations/3", "/v1/loops/001/iterations/0", "/v1/loops/001/iterations/x",
        "/v1/loops/999/iterations/1", "/v1/loops/999/artifact", "/v1/loops/999/diff"})
    EXPECT_EQ(api("GET", target).status, 404) << target;
  EXPECT_EQ(api("GET", "/v1/loops/001/iterations/1?whole=yes").status, 400);

  // The model's worktree: the plan's file swapped for a symlink to a secret, then for a FIFO.
  TempDir outside;
  const fs::path secret = outside.path() / "secret.txt";
  std::ofstream(secret) << kSecret << "\n";
  fs::remove(worktree / rel);
  fs::create_symlink(secret, worktree / rel);
  auto linked = api("GET", "/v1/loops/001/artifact");
  ASSERT_EQ(linked.status, 200);
  EXPECT_FALSE(holds(linked.body["text"], "TOP-SECRET")) << linked.body.dump();
  EXPECT_TRUE(holds(linked.body["text"], "## Specs to Create")) << linked.body.dump();
  EXPECT_NE(linked.body["source"], "");  // as committed, not through the link
  EXPECT_FALSE(holds(api("GET", "/v1/loops/001/diff").body["text"], "TOP-SECRET"));
  fs::remove(worktree / rel);
  ASSERT_EQ(::mkfifo((worktree / rel).c_str(), 0600), 0);
  auto fifo = api("GET", "/v1/loops/001/artifact");  // answers: the FIFO holds no thread
  ASSERT_EQ(fifo.status, 200);
  EXPECT_TRUE(holds(fifo.body["text"], "## Specs to Create")) << fifo.body.dump();

  // The iteration folder: its prompt a symlink to the secret, its validation log a FIFO.
  const fs::path folder = paths().iteration_dir("001", 1);
  fs::remove(folder / "prompt.md");
  fs::create_symlink(secret, folder / "prompt.md");
  fs::remove(folder / "validation.log");
  ASSERT_EQ(::mkfifo((folder / "validation.log").c_str(), 0600), 0);
  auto hostile = api("GET", "/v1/loops/001/iterations/1");
  ASSERT_EQ(hostile.status, 200);
  EXPECT_EQ(hostile.body.dump().find("TOP-SECRET"), std::string::npos) << hostile.body.dump();
  EXPECT_TRUE(hostile.body["files"][0]["text"].is_null()) << hostile.body.dump();
  EXPECT_TRUE(hostile.body["files"][2]["text"].is_null()) << hostile.body.dump();
  EXPECT_TRUE(hostile.body["files"][1]["text"].is_string());
  // The daemon serves on.
  EXPECT_EQ(api("GET", "/v1/health").status, 200);
}
