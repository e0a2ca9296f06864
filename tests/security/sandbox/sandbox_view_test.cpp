// What the sandbox sees (docs/security.md, B1), from a hostile command's side, through the real
// executor and bubblewrap: the allowlist, how a person widens it, the keyring, abstract sockets
// of the host for a runner class that shares the host's network, and the marker daemons refuse.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include <loopr/exec/executor.hpp>
#include <loopr/exec/sandbox_view.hpp>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"
#include "worktree_fixture.hpp"

using namespace loopr;
using namespace loopr::exec;
using namespace loopr::testing;
using namespace std::chrono_literals;

namespace {

constexpr const char* kKeyMarker = "SECRET-KEYRING-PAYLOAD-91d3";

class SandboxViewTest : public loopr::testing::LoopWorktreeTest {
 protected:
  SandboxViewTest() : LoopWorktreeTest("loopr-sandbox-view") {}

  ProcessResult sh(const std::string& command, const std::string& runner_class = "default") {
    auto e = make_executor(config, ExecutorOptions{RepoPaths(repo)});
    if (auto problem = e->unavailable()) ADD_FAILURE() << *problem;
    Command c = Command::shell(command, worktree);
    c.runner_class = runner_class;
    c.timeout = 60s;
    return e->run(c);
  }
};

// A small C program the hostile command builds and runs: the keyring by every call.
const char* kKeyringProbe = R"(#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char** argv) {
  char buf[256];
  long id = argc > 1 ? atol(argv[1]) : 0;
  long n = syscall(SYS_keyctl, 11 /* READ */, id, buf, sizeof buf);
  printf("read=%ld errno=%d payload=%.*s\n", n, n < 0 ? errno : 0, n > 0 ? (int)n : 0, buf);
  long s = syscall(SYS_keyctl, 10 /* SEARCH */, -3 /* session */, "user", "loopr-escape", 0);
  printf("search=%ld errno=%d\n", s, s < 0 ? errno : 0);
  long r = syscall(SYS_request_key, "user", "loopr-escape", 0, 0);
  printf("request_key=%ld errno=%d\n", r, r < 0 ? errno : 0);
  long a = syscall(SYS_add_key, "user", "x", "y", 1, -3);
  printf("add_key=%ld errno=%d\n", a, a < 0 ? errno : 0);
  return 0;
}
)";

}  // namespace

// proves S1.1
// (An empty folder shows nothing of the host's: the private home is one, at $HOME, /root for a
// root daemon; so are the folders bubblewrap made on the way to the worktree.)
TEST_F(SandboxViewTest, OnlyTheAllowedFoldersExist) {
  fs::path other = dir.path() / "other-repo";
  write_file(other / "SECRET.txt", "another repository\n");
  auto r =
      sh("ls -A /; for d in /var /srv /opt /home /run /mnt /media /sys " +
         shell_quote(other.string()) + " " + shell_quote(repo.string() + "/README") +
         "; do [ -n \"$(ls -A $d 2>/dev/null)\" ] && echo \"SEEN $d\" || echo \"gone $d\"; done; "
         "touch /x 2>/dev/null && echo root-writable; "
         // The home is the sandbox's own: empty but for the repository's build caches.
         "find \"$HOME\" /root -mindepth 1 2>/dev/null | grep -v -e '/.cache$' -e '/.cache/loopr' "
         "| sed 's/^/SEEN /'; echo view-done");
  ASSERT_NE(r.output.find("view-done"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("SEEN"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("root-writable"), std::string::npos) << r.output;
  // The root holds the system's folders, the sandbox's own and the paths to its worktree.
  for (const char* seen : {"usr\n", "etc\n", "tmp\n", "dev\n", "proc\n"})
    EXPECT_NE(r.output.find(seen), std::string::npos) << seen << r.output;
  EXPECT_NE(sh("git log --oneline | wc -l").output.find("1"), std::string::npos)
      << "git works in the worktree";
}

// proves S1.2
TEST_F(SandboxViewTest, APersonWidensTheViewWithAnAbsoluteReadOnlyPath) {
  fs::path shared = fs::canonical(dir.path()) / "shared";
  write_file(shared / "data.txt", "shared data\n");
  const std::string probe = "cat " + shell_quote((shared / "data.txt").string()) +
                            " 2>&1; echo x > " + shell_quote((shared / "new").string()) +
                            " 2>&1; echo probe-done";
  auto before = sh(probe);
  EXPECT_EQ(before.output.find("shared data"), std::string::npos) << before.output;
  config.read_only = {shared.string()};
  auto after = sh(probe);
  EXPECT_NE(after.output.find("shared data"), std::string::npos) << after.output;
  EXPECT_FALSE(fs::exists(shared / "new")) << "a shown path is read-only";
}

// proves S1.3
TEST_F(SandboxViewTest, TheKernelKeyringIsFreshAndItsCallsAreRefused) {
  long id = ::syscall(SYS_add_key, "user", "loopr-escape", kKeyMarker, std::strlen(kKeyMarker),
                      -3 /* this process's session keyring, which the executor's children get */);
  if (id < 0) GTEST_SKIP() << "no kernel keyring here: " << std::strerror(errno);
  write_file(worktree / "probe.c", kKeyringProbe);
  auto r = sh("cc -o probe probe.c && ./probe " + std::to_string(id) +
              "; cat /proc/keys; echo keys-done");
  ::syscall(SYS_keyctl, 3 /* REVOKE */, id);
  ASSERT_NE(r.output.find("keys-done"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(kKeyMarker), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("loopr-escape"), std::string::npos) << "the key is listed: " << r.output;
  for (const char* refused :
       {"read=-1 errno=38", "search=-1 errno=38", "request_key=-1 errno=38", "add_key=-1 errno=38"})
    EXPECT_NE(r.output.find(refused), std::string::npos) << refused << "\n" << r.output;
}

// proves S1.4
TEST_F(SandboxViewTest, NoAbstractSocketOfTheHostIsReachableEvenWithTheHostsNetwork) {
  std::string name = "loopr-escape-abstract-" + std::to_string(::getpid());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path + 1, name.data(), name.size());
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), len), 0) << std::strerror(errno);
  ASSERT_EQ(::listen(fd, 8), 0);
  const std::string probe =
      "/usr/bin/python3 -c \"import socket\ns=socket.socket(socket.AF_UNIX)\ntry:\n"
      " s.connect('\\0" +
      name + "'); print('CONNECTED')\nexcept OSError as e: print('refused', e.errno)\"";
  config.network = {"net"};  // this class shares the host's network namespace
  auto r = sh(probe, "net");
  int accepted = 0;
  for (int c; (c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC)) >= 0; ++accepted) ::close(c);
  ::close(fd);
  EXPECT_NE(r.output.find("refused"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("CONNECTED"), std::string::npos) << r.output;
  EXPECT_EQ(accepted, 0);
}

// The marker a daemon tells a sandbox by cannot be removed from inside.
// proves S2.1
TEST_F(SandboxViewTest, EverySandboxHasTheMarkerAndCannotRemoveIt) {
  auto r =
      sh(std::string("ls -d ") + kSandboxMarker + " && rmdir " + kSandboxMarker + " 2>&1; umount " +
         kSandboxMarker + " 2>&1; ls -d " + kSandboxMarker + " && echo still-marked");
  EXPECT_NE(r.output.find("still-marked"), std::string::npos) << r.output;
}

// `loopr doctor` prints the view the bwrap command line is made from.
TEST_F(SandboxViewTest, TheViewListsWhatIsShownAndWhy) {
  fs::path shared = fs::canonical(dir.path()) / "shared";
  fs::create_directories(shared);
  config.read_only = {shared.string()};
  auto view = describe_sandbox_view(config, ExecutorOptions{RepoPaths(repo)}, worktree);
  std::string text = format_view(view);
  EXPECT_NE(text.find("ro    /usr"), std::string::npos) << text;
  EXPECT_NE(text.find("rw    " + worktree.string()), std::string::npos) << text;
  EXPECT_NE(text.find("ro    " + shared.string() + "  — sandbox.read_only"), std::string::npos)
      << text;
  // None of these folders is an entry (a line `ro    /var  — …`).
  for (const char* absent : {" /var", " /opt", " /home", " /srv", " /run", " /mnt", " /sys"})
    EXPECT_EQ(text.find(std::string(absent) + "  — "), std::string::npos) << absent << "\n" << text;
}
