// The escape suite for boundaries B1, B2 and B6 of docs/security.md, through a whole tree with
// the real binary and a scripted hostile model: what the sandbox sees (the allowlist, the
// keyring), who may talk to a daemon (a second repository's daemon, the web UI from a runner
// class with the host's network), and that no copy of the person's login outlives its use.
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <functional>

#include "escape_fixture.hpp"

using namespace loopr::testing;
namespace fs = std::filesystem;

namespace {

std::string q(const fs::path& p) { return shell_quote(p.string()); }

constexpr const char* kKeyringMarker = "SECRET-KEYRING-PAYLOAD-2b7f";

const char* kKeyringProbe = R"(#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char** argv) {
  char buf[256];
  long n = syscall(SYS_keyctl, 11 /* READ */, atol(argv[1]), buf, sizeof buf);
  printf("read=%ld errno=%d payload=%.*s\n", n, n < 0 ? errno : 0, n > 0 ? (int)n : 0, buf);
  long s = syscall(SYS_keyctl, 10 /* SEARCH */, -3, "user", "loopr-escape", 0);
  printf("search=%ld errno=%d\n", s, s < 0 ? errno : 0);
  return 0;
}
)";

// The daemon-wide events of the daemon of `repo` (stored ones), as its API gives them.
std::string events_of(const fs::path& repo) {
  return run_command("curl -s -m 10 --unix-socket " + q(repo / ".loopr/run/loopr.sock") +
                     " 'http://loopr/v1/events?since=0&follow=false'")
      .output;
}

}  // namespace

// The model lists the places outside the allowlist, another repository beside this one, and
// reads the person's kernel keyring with keyctl from a C program it wrote.
// proves S1.1
// proves S1.3
TEST_F(EscapeTest, TheModelSeesOnlyTheAllowlistAndNoKeyOfThePersons) {
  long key = ::syscall(SYS_add_key, "user", "loopr-escape", kKeyringMarker,
                       std::strlen(kKeyringMarker), -3 /* the session keyring loopr inherits */);
  fs::path other = fs::canonical(base.path()) / "other-repo";
  write_file(other / "SECRET.txt", "another repository's file\n");
  std::string listing = "for d in /var /srv /opt /home /root /run /mnt /media " + q(other) + " " +
                        q(repo / "check.sh") +
                        "; do if [ -n \"$(ls -A $d 2>/dev/null)\" ]; then echo \"SEEN $d\"; else echo "
                        "\"gone $d\"; fi; done; echo listing-done";
  code_tricks = {cmd(listing),
                 {"write_file", {{"path", "probe.c"}, {"content", kKeyringProbe}}},
                 cmd("cc -o probe probe.c && ./probe " + std::to_string(key) +
                     "; cat /proc/keys; rm -f probe probe.c; echo keys-done")};
  run_tree();
  if (key > 0) ::syscall(SYS_keyctl, 3 /* REVOKE */, key);
  expect_tree_merged();
  std::string conv = conversation("code-001-001-001");
  // What the commands printed (each line after an escaped newline in the transcript's JSON),
  // not the command texts, which hold the same words.
  EXPECT_NE(conv.find("\\nlisting-done"), std::string::npos) << conv.substr(0, 3000);
  EXPECT_EQ(conv.find("\\nSEEN "), std::string::npos) << conv.substr(0, 3000);
  EXPECT_NE(conv.find("\\ngone /var"), std::string::npos) << conv.substr(0, 3000);
  EXPECT_NE(conv.find("\\nkeys-done"), std::string::npos) << conv.substr(0, 3000);
  EXPECT_EQ(conv.find(kKeyringMarker), std::string::npos) << "the key's payload was read";
  if (key > 0) {
    EXPECT_NE(conv.find("read=-1 errno=38"), std::string::npos) << conv.substr(0, 3000);
  }
  EXPECT_EQ(
      run_command("grep -rc " + std::string(kKeyringMarker) + " " + q(mock->log_path())).output,
      "0\n")
      << "the key reached the model";
  expect_no_secret_anywhere();
}

// A second repository's daemon, its socket shown in this repository's sandbox (a person widened
// the view to it): the model posts `approve` for that repository's waiting plan, and submits.
// proves S2.1
TEST_F(EscapeTest, ASecondRepositorysDaemonRefusesACommandOfThisOnesSandbox) {
  fs::path other = fs::canonical(base.path()) / "other";
  fs::path other_sock = other / ".loopr/run/loopr.sock";
  std::string post = "curl -s -m 5 --unix-socket " + q(other_sock);
  code_tricks = {cmd(post + " -X POST http://loopr/v1/loops/001/approve; echo approve=$?; " + post +
                     " -X POST -d '{\"request\":\"pwned\"}' http://loopr/v1/plans; echo "
                     "submit=$?")};
  extra_config = "  read_only: [" + (other / ".loopr/run").string() + "]\n";
  prepare();
  // The other repository: the same config, its own daemon, a plan waiting for its person.
  fs::copy(repo, other, fs::copy_options::recursive);
  fs::remove_all(other / ".loopr/run");
  auto other_loopr = [&](const std::string& args) {
    return run_command("timeout 120 " + env() + shell_quote(LOOPR_BIN) + " -C " + q(other) + " " +
                       args + " 2>&1");
  };
  struct StopOther {
    std::function<void()> stop;
    ~StopOther() { stop(); }
  } stop_other{[&] { other_loopr("daemon stop"); }};
  auto victim = other_loopr("submit 'the other repository plan'");
  ASSERT_EQ(victim.exit_code, 0) << victim.output;
  ASSERT_TRUE(wait_until(
      [&] {
        return other_loopr("--json show 001").output.find("\"awaiting_approval\"") !=
               std::string::npos;
      },
      std::chrono::seconds(60)));
  // The view is made when this repository's daemon starts: the other's run folder is there now.
  submit();
  expect_tree_merged();
  // The commands ran (curl's 403 answer reaches it unless the daemon's close of the refused
  // connection wins the race with curl's request: then curl fails to talk, exit 7 or 56); the
  // other daemon's own event below is what proves that it refused.
  std::string conv = conversation("code-001-001-001");
  EXPECT_NE(conv.find("approve="), std::string::npos) << conv.substr(0, 3000);
  EXPECT_NE(other_loopr("--json show 001").output.find("\"awaiting_approval\""), std::string::npos)
      << "the other repository's plan was approved from this one's sandbox";
  EXPECT_EQ(other_loopr("--json show 002").output.find("\"id\""), std::string::npos)
      << "a plan was submitted to the other repository from a sandbox";
  std::string events = events_of(other);
  EXPECT_NE(events.find("peer_refused"), std::string::npos) << events.substr(0, 3000);
  EXPECT_NE(events.find("control socket"), std::string::npos);
  expect_no_secret_anywhere();
}

// A runner class with the host's network reaches the web UI's port on 127.0.0.1, and the model
// even has its address with the token (read from a folder a person shared): refused, while the
// person's own browser (this test) is served.
// proves S2.2
TEST_F(EscapeTest, TheWebUiRefusesACommandWithTheHostsNetwork) {
  fs::path shared = fs::canonical(base.path()) / "shared";
  write_file(shared / "web.txt", "\n");
  code_tricks = {cmd("url=$(cat " + q(shared / "web.txt") +
                     "); curl -s -m 5 -o /dev/null -w 'web=%{http_code}\\n' \"$url\"; echo "
                     "curl=$?")};
  extra_config = "  network: [default, net]\n  read_only: [" + shared.string() + "]\n";
  prepare();
  std::string web = loopr("web");
  ASSERT_EQ(submit_exit, 0) << web;
  auto at = web.find("http://127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << web;
  std::string url = web.substr(at, web.find_first_of(" \n", at) - at);
  write_file(shared / "web.txt", url + "\n");
  auto person = run_command("curl -s -m 10 -o /dev/null -w '%{http_code}' " + shell_quote(url));
  EXPECT_EQ(person.output, "200") << "the person's browser is served";
  submit();
  expect_tree_merged();
  std::string conv = conversation("code-001-001-001");
  EXPECT_NE(conv.find("curl="), std::string::npos) << conv.substr(0, 3000);
  EXPECT_EQ(conv.find("web=200"), std::string::npos) << conv.substr(0, 3000);
  std::string events = events_of(repo);
  EXPECT_NE(events.find("peer_refused"), std::string::npos) << events.substr(0, 3000);
  EXPECT_NE(events.find("web UI"), std::string::npos);
  expect_no_secret_anywhere();
}

// The claude-code provider's private folders (each with a copy of the person's login) are gone
// after a tree, and after a daemon killed with SIGKILL while a CLI ran, at the next start; none
// is ever in the shared temp folder.
// proves S6.1
TEST_F(EscapeTest, NoCopyOfThePersonsLoginOutlivesItsCommand) {
  // A subscription login (no key) valid for a day: loopr gives each command a copy of it.
  provider_keys = false;
  write_file(home / ".claude/.credentials.json",
             "{\"claudeAiOauth\":{\"accessToken\":\"LOGIN-COPY-7e1a\",\"refreshToken\":\"r\","
             "\"expiresAt\":" +
                 std::to_string((::time(nullptr) + 86400) * 1000LL) + "}}\n");
  fs::path bin = base.path() / "claude-bin";
  // What the CLI sees of the host is its worktree and its own folder (the rest is not in its
  // sandbox): it says it runs in the worktree, and waits for `go` beside its program.
  const fs::path go = bin / "go";
  const fs::path running_file = repo / ".loopr/worktrees/code-002-001-001/.cli-running";
  // A claude that writes each loop's artifact or code; in a code loop it first waits for `go`.
  const std::string plan =
      "# Plan\n\n## Overview\nWrite a file.\n\n## Phases\n1. Write it.\n\n## Success "
      "Criteria\n- check.sh passes.\n\n## Specs to Create\n- spec-files: Write the file.\n";
  const std::string spec =
      "# Spec\n\n## Parent Plan\nThe plan.\n\n## Overview\nA file.\n\n## Phases\n1. **Part "
      "one**\n   Write it.\n   - Files: code/x.txt\n";
  const std::string phase =
      "# Phase\n\n## Parent Spec\nThe spec.\n\n## Task\nWrite the file.\n\n## Specific "
      "Work\n- Write it.\n\n## Success Criteria\n- check.sh passes.\n";
  write_file(
      bin / "claude",
      "#!/bin/sh\nprompt=\nwhile [ $# -gt 0 ]; do case \"$1\" in -p) prompt=$2; shift 2;; *) "
      "shift;; esac; done\n"
      "type=$(printf '%s\\n' \"$ANTHROPIC_CUSTOM_HEADERS\" | sed -n 's/^x-loopr-loop-type: //p')\n"
      "id=$(printf '%s\\n' \"$ANTHROPIC_CUSTOM_HEADERS\" | sed -n 's/^x-loopr-loop-id: //p')\n"
      "artifact=$(printf '%s' \"$prompt\" | grep -o \"\\`\\.loopr/${type}s/[^\\`]*\\`\" | head -n1 "
      "| tr -d '\\`')\n"
      "case \"$type\" in\n"
      "  plan) mkdir -p \"$(dirname \"$artifact\")\"; cat > \"$artifact\" <<'EOF'\n" +
          plan +
          "EOF\n;;\n  spec) mkdir -p \"$(dirname \"$artifact\")\"; cat > \"$artifact\" <<'EOF'\n" +
          spec +
          "EOF\n;;\n  phase) mkdir -p \"$(dirname \"$artifact\")\"; cat > \"$artifact\" <<'EOF'\n" +
          phase + "EOF\n;;\n  code) touch .cli-running; while [ ! -e " + q(go) +
          " ]; do sleep 0.1; done; rm -f .cli-running; mkdir -p code; printf 'made by %s\\n' \"$id\" > "
          "\"code/$id.txt\";;\nesac\n"
          "printf '%s\\n' '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\","
          "\"model\":\"claude-opus-5-5\",\"tools\":[\"Bash\"]}'\n"
          "printf '%s\\n' '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
          "\"result\":\"done\",\"num_turns\":1,\"total_cost_usd\":0.01,\"usage\":{\"input_tokens\":"
          "10,\"output_tokens\":5},\"stop_reason\":\"end_turn\",\"session_id\":\"s1\"}'\n");
  ::chmod((bin / "claude").c_str(), 0755);
  fs::create_directories(bin);
  write_file(go, "");  // the first tree runs through
  llm_config = "  provider: claude-code\n  model: claude-opus-5-5\n  claude_code: {command: " +
               (bin / "claude").string() + ", skip_permissions: true}\n";
  // Copies under the repository, and any this test's daemons made in the shared temp folder
  // (newer than `since`: other runs on the machine may have left their own).
  const fs::path since = base.path() / "since";
  write_file(since, "");
  auto copies = [&] {
    return run_command("grep -rl -D skip LOGIN-COPY-7e1a " + q(repo / ".loopr") +
                       " 2>/dev/null; find " + q(fs::temp_directory_path()) +
                       " -maxdepth 3 -path '*loopr-claude*' -name .credentials.json -newer " +
                       q(since) + " 2>/dev/null")
        .output;
  };
  prepare();
  submit();
  expect_tree_merged();
  EXPECT_EQ(copies(), "") << "after a tree";
  // A second tree, and the daemon killed while its code loop's CLI runs.
  fs::remove(go);
  auto started = loopr("submit 'again'");
  ASSERT_EQ(submit_exit, 0) << started;
  ASSERT_TRUE(wait_until(
      [&] { return loopr("--json show 002").find("\"awaiting_approval\"") != std::string::npos; },
      std::chrono::seconds(120)));
  loopr("approve 002");
  ASSERT_EQ(submit_exit, 0);
  ASSERT_TRUE(wait_until([&] { return fs::exists(running_file); }, std::chrono::seconds(120)))
      << "the code loop's CLI never started";
  EXPECT_NE(copies(), "") << "the CLI runs with its copy (the check below would prove nothing)";
  long pid = daemon_pid();
  ASSERT_GT(pid, 0);
  ::kill(static_cast<pid_t>(pid), SIGKILL);
  ASSERT_TRUE(wait_until([&] { return ::kill(static_cast<pid_t>(pid), 0) != 0; },
                         std::chrono::seconds(30)));
  write_file(go, "");
  auto restarted = loopr("daemon");
  EXPECT_EQ(submit_exit, 0) << restarted;
  EXPECT_TRUE(wait_until([&] { return copies().empty(); }, std::chrono::seconds(60)))
      << "after a kill -9 and the next start: " << copies();
}
