// The escape suite, second round (issue 28): the person's terminal, bytes that are not text,
// files that outlive the sandbox (FIFOs, sockets, setuid bits), /dev/shm. Each test runs a real
// tree with the real binary and checks from outside, and that the trick was really tried.
#include <sys/stat.h>

#include <loopr/core/text.hpp>

#include "e2e/pty.hpp"
#include "escape_fixture.hpp"

using namespace loopr::testing;
namespace fs = std::filesystem;

namespace {

std::string q(const fs::path& p) { return shell_quote(p.string()); }

// The tricks a terminal obeys, in the model's text: a clipboard write (OSC 52), a screen clear,
// a title, concealed text, the C1 CSI (U+009B), a right-to-left override.
const std::string kHostile =
    "CLIP\x1b]52;c;cHduZWQ=\x07 CLEAR\x1b[2J TITLE\x1b]0;pwned-title\x07 "
    "HIDE\x1b[8mconcealed\x1b[0m CSI\xc2\x9b"
    "31mred BIDI\xe2\x80\xae"
    "evil";

// Nothing in `out` a terminal would act on: no ESC, BEL or C1 control, no bidi override, valid
// UTF-8 (a cut sequence would swallow what follows it).
void expect_terminal_safe(const std::string& out, const std::string& what) {
  EXPECT_TRUE(loopr::is_valid_utf8(out)) << what << " is not valid UTF-8:\n" << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << what << " holds an ESC:\n" << out;
  EXPECT_EQ(out.find('\x07'), std::string::npos) << what << " holds a BEL:\n" << out;
  EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos) << what << " holds a C1 CSI:\n" << out;
  EXPECT_EQ(out.find("\xe2\x80\xae"), std::string::npos) << what << " holds a bidi override";
}

}  // namespace

// 29. The model's text reaches the person's terminal with its controls shown, never obeyed:
// its plan in `review` and `show`, its question, its tool input and command output in
// `show --iteration`, the validation output, the event log, `watch`, `list`.
// proves S5.2
TEST_F(EscapeTest, TheModelsTextCannotDriveThePersonsTerminal) {
  plan_after = {{"edit_file",
                 {{"path", "{{first_user.1}}"},
                  {"old_string", "Write a file."},
                  {"new_string", "Write a file. " + kHostile}}}};
  // The runner (the base's, which the model may not change) runs every test file, and the model
  // adds one (new tests are free) that prints controls into the validation output.
  write_file(
      repo / "check.sh",
      "for t in t_*.sh; do if [ -e \"$t\" ]; then sh \"$t\"; fi; done\n"
      "if [ -e fail-once ]; then rm -f fail-once; echo 'failing once'; exit 1; fi\necho ok\n");
  ASSERT_EQ(run_command("git commit -q -am runner", repo.string()).exit_code, 0);
  const std::string test =
      "printf 'CHECK \\033]52;c;cHduZWQ=\\007 \\033[2J \\302\\233 cut\\342\\234\\n'\n";
  code_tricks = {
      cmd("printf 'OUT \\033]0;pwned-title\\007 \\033[8mhidden \\302\\233 split\\342\\234 "
          "bad\\377\\376\\n'; touch fail-once; echo printed"),
      {"write_file", {{"path", "t_term.sh"}, {"content", test}}},
      {"ask_user", {{"question", "Which one? " + kHostile}}}};
  prepare();
  ASSERT_EQ((loopr("submit 'Show me'"), submit_exit), 0);
  auto status_of = [&](const std::string& id) {
    auto j = nlohmann::json::parse(loopr("--json show " + id), nullptr, false);
    return j.is_object() ? j.value("status", "") : std::string();
  };
  ASSERT_TRUE(wait_until([&] { return status_of("001") == "awaiting_approval"; },
                         std::chrono::seconds(90)));

  std::string review = loopr("review 001 </dev/null");
  expect_terminal_safe(review, "review of the plan");
  for (const char* shown : {"CLIP^[]52;c;cHduZWQ=^G", "CLEAR^[[2J", "TITLE^[]0;pwned-title^G",
                            "HIDE^[[8mconcealed^[[0m", "CSI<U+009B>31mred", "BIDI<U+202E>evil"})
    EXPECT_NE(review.find(shown), std::string::npos) << shown << " not in\n" << review;
  {
    // On a terminal (colours on): only loopr's own styles are escape sequences.
    Pty pty("exec " + env() + shell_quote(LOOPR_BIN) + " -C " + q(repo) + " review 001");
    ASSERT_TRUE(pty.wait_for("[a]pprove [r]eject [i]terate [s]kip")) << pty.output();
    pty.type("s");
    pty.wait_exit();
    std::string out = pty.output();
    EXPECT_NE(out.find("CLIP^[]52;c;cHduZWQ=^G"), std::string::npos) << out;
    for (std::size_t i = out.find('\x1b'); i != std::string::npos; i = out.find('\x1b', i + 1)) {
      if (out.compare(i, 6, "\x1b[?25l") == 0 || out.compare(i, 6, "\x1b[?25h") == 0) continue;
      std::size_t end = out.find_first_not_of("0123456789;", i + 2);
      bool sgr = out.compare(i, 2, "\x1b[") == 0 && end != std::string::npos && out[end] == 'm';
      std::string seq = out.substr(i, end == std::string::npos ? 4 : end + 1 - i);
      EXPECT_TRUE(sgr) << "an escape sequence that is not loopr's: " << seq.substr(1);
      EXPECT_NE(seq, "\x1b[8m");
    }
  }
  expect_terminal_safe(loopr("show 001"), "show of the plan");

  ASSERT_EQ((loopr("approve 001"), submit_exit), 0);
  ASSERT_TRUE(wait_until([&] { return status_of("code-001-001-001") == "awaiting_answer"; },
                         std::chrono::seconds(120)))
      << loopr("list");
  std::string asked = loopr("show code-001-001-001");
  expect_terminal_safe(asked, "show of the asking loop");
  EXPECT_NE(asked.find("Which one? CLIP^[]52;c;cHduZWQ=^G"), std::string::npos) << asked;
  std::string question = loopr("review code-001-001-001 </dev/null");
  expect_terminal_safe(question, "review of the question");
  EXPECT_NE(question.find("CLIP^[]52;"), std::string::npos) << question;
  expect_terminal_safe(loopr("watch", 4), "watch");
  expect_terminal_safe(loopr("list"), "list");

  ASSERT_EQ((loopr("answer code-001-001-001 'go on'"), submit_exit), 0);
  ASSERT_TRUE(wait_until(
      [&] {
        return run_command("git cat-file -e main:code/code-001-001-001.txt", repo.string())
                   .exit_code == 0;
      },
      std::chrono::seconds(120)))
      << loopr("list");

  std::string iteration = loopr("show code-001-001-001 --iteration 1");
  expect_terminal_safe(iteration, "show --iteration");
  EXPECT_NE(
      iteration.find("OUT ^[]0;pwned-title^G ^[[8mhidden <U+009B> split\uFFFD bad\uFFFD\uFFFD"),
      std::string::npos)
      << iteration;
  std::string shown = loopr("show code-001-001-001");
  expect_terminal_safe(shown, "show with the validation output");
  EXPECT_NE(shown.find("CHECK ^[]52;c;cHduZWQ=^G ^[[2J <U+009B> cut\uFFFD"), std::string::npos)
      << shown;
  std::string logs = loopr("logs");
  expect_terminal_safe(logs, "logs");
  EXPECT_NE(logs.find("^[]52;c;cHduZWQ=^G"), std::string::npos) << logs;
  // --json: valid JSON of valid UTF-8, the text as it was (JSON escapes the controls).
  for (const std::string& args :
       {std::string("--json show code-001-001-001"), std::string("--json logs"),
        std::string("--json show code-001-001-001 --iteration 1")}) {
    std::string doc = loopr(args);
    EXPECT_TRUE(loopr::is_valid_utf8(doc)) << args;
    auto parsed = nlohmann::json::parse(doc, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << args << ":\n" << doc.substr(0, 2000);
    EXPECT_EQ(doc.find('\x1b'), std::string::npos) << args;
  }
  expect_no_secret_anywhere();
}

// 30. A command printing bytes that are not UTF-8 (and a file and a file name holding them):
// the next request is still sent, the loop completes, and so it does after a restart.
TEST_F(EscapeTest, BytesThatAreNotTextDoNotStopTheLoopOrTheDaemon) {
  code_tricks = {cmd("printf 'bad \\377\\376 end\\n'; printf 'x\\377\\n' > bin.txt; mkdir names; "
                     "touch names/\"$(printf 'n\\377')\"; echo bytes-done"),
                 {"read_file", {{"path", "bin.txt"}}},
                 {"list_dir", {{"path", "names"}}},
                 {"search", {{"pattern", "x"}, {"path", "bin.txt"}}}};
  run_tree();
  expect_tree_merged();
  std::string conv = conversation("code-001-001-001");
  EXPECT_NE(conv.find("bytes-done"), std::string::npos) << conv.substr(0, 3000);
  EXPECT_NE(conv.find("bad \uFFFD\uFFFD end"), std::string::npos) << conv.substr(0, 3000);
  EXPECT_TRUE(loopr::is_valid_utf8(conv));
  // A restart: everything is read back, nothing is left running without a run.
  ASSERT_EQ((loopr("daemon stop"), submit_exit), 0);
  ASSERT_EQ((loopr("daemon"), submit_exit), 0);
  auto list = nlohmann::json::parse(loopr("--json list --all"), nullptr, false);
  ASSERT_TRUE(list.is_object() || list.is_array()) << loopr("--json list --all");
  const auto& loops = list.is_object() ? list["loops"] : list;
  ASSERT_FALSE(loops.empty());
  for (const auto& l : loops) EXPECT_EQ(l.value("status", ""), "complete") << l.dump();
  std::string shown = loopr("--json show code-001-001-001 --iteration 1");
  EXPECT_FALSE(nlohmann::json::parse(shown, nullptr, false).is_discarded()) << shown;
  expect_no_secret_anywhere();
}

// 31. FIFOs (one named .gitignore, which libgit2 reads) and a socket left in the worktree:
// removed after the command, so the checkpoint cannot hang a thread, and the model is told.
// proves S1.8
TEST_F(EscapeTest, FifosAndSocketsDoNotOutliveTheCommand) {
  code_tricks = {
      cmd("mkdir -p sub && mkfifo sub/.gitignore && mkfifo pipe && python3 -c \"import socket; "
          "socket.socket(socket.AF_UNIX).bind('sock')\"; ls -la sub; echo fifo-done")};
  run_tree();
  expect_tree_merged();
  std::string conv = conversation("code-001-001-001");
  EXPECT_NE(conv.find("fifo-done"), std::string::npos) << conv.substr(0, 3000);
  EXPECT_NE(conv.find("[loopr: removed from the worktree"), std::string::npos)
      << conv.substr(0, 3000);
  EXPECT_NE(conv.find("sub/.gitignore (a FIFO)"), std::string::npos) << conv.substr(0, 3000);
  EXPECT_NE(conv.find("sock (a socket)"), std::string::npos) << conv.substr(0, 3000);
  auto left = run_command("find " + q(repo / ".loopr") +
                          " -path '*/.loopr/run' -prune -o \\( -type p -o -type s \\) -print");
  EXPECT_EQ(left.output, "") << "special files left on the host";
  expect_no_secret_anywhere();
}

// 31b. A symlinked .gitignore (and .gitattributes) in a folder, leading to a FIFO on the host,
// which the sandbox cannot reach but the daemon's git would open: removed after the command, so the
// checkpoint does not block a pool thread for good, and the model is told.
TEST_F(EscapeTest, ASymlinkedGitignoreToAFifoOnTheHostDoesNotHangTheCheckpoint) {
  const fs::path fifo = fs::canonical(base.path()) / "host-fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  code_tricks = {cmd("mkdir -p sub && ln -s " + q(fifo) + " sub/.gitignore && ln -s " + q(fifo) +
                     " sub/.gitattributes && ls -la sub; echo link-done")};
  run_tree();
  expect_tree_merged();
  std::string conv = conversation("code-001-001-001");
  EXPECT_NE(conv.find("link-done"), std::string::npos) << conv.substr(0, 3000);
  EXPECT_NE(conv.find("sub/.gitignore (a symlink to something outside the worktree"),
            std::string::npos)
      << conv.substr(0, 3000);
  EXPECT_NE(conv.find("sub/.gitattributes (a symlink"), std::string::npos) << conv.substr(0, 3000);
  EXPECT_NE(run_command("git cat-file -e main:sub/.gitignore", repo.string()).exit_code, 0);
  struct stat st {};
  EXPECT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "nothing outside the worktree is touched";
  expect_no_secret_anywhere();
}

// 32. `cp /usr/bin/id x; chmod 6755 x` and every other way to make a setuid or setgid file:
// refused inside the sandbox, and no such file is ever left in a worktree on the host.
// proves S1.9
TEST_F(EscapeTest, NoSetuidOrSetgidFileIsLeftOnTheHost) {
  code_tricks = {cmd(
      "cp /usr/bin/id x; chmod 6755 x; echo chmod=$?; chmod u+s x; echo chmod2=$?; "
      "install -m 4755 /usr/bin/id y 2>&1; echo install=$?; "
      "python3 -c \"import os; os.close(os.open('z', os.O_CREAT | os.O_WRONLY, 0o6755))\" 2>&1; "
      "echo open=$?; mkdir -m 2755 d; echo mkdir=$?; ls -l x; echo suid-done")};
  run_tree();
  expect_tree_merged();
  std::string conv = conversation("code-001-001-001");
  EXPECT_NE(conv.find("suid-done"), std::string::npos) << conv.substr(0, 3000);
  for (const char* refused : {"chmod=1", "chmod2=1", "install=1", "open=1", "mkdir=1"})
    EXPECT_NE(conv.find(refused), std::string::npos) << refused << "\n" << conv.substr(0, 3000);
  auto found = run_command("find " + q(repo / ".loopr") + " " + q(repo) +
                           " -type f \\( -perm -4000 -o -perm -2000 \\) -print");
  EXPECT_EQ(found.output, "") << "setuid/setgid files on the host";
  expect_no_secret_anywhere();
}

// 33. /dev/shm (and /dev itself): as bounded as /tmp, not half the machine's memory.
// proves S1.8
TEST_F(EscapeTest, DevShmIsBoundedLikeTmp) {
  code_tricks = {
      cmd("head -c 100000000 /dev/zero > /dev/shm/big; echo shm=$?; rm -f /dev/shm/big; "
          "head -c 100000000 /dev/zero > /dev/big; echo dev=$?; df -k /dev/shm; echo shm-done",
          60)};
  run_tree();
  expect_tree_merged();
  std::string conv = conversation("code-001-001-001");
  EXPECT_NE(conv.find("shm-done"), std::string::npos) << conv.substr(0, 3000);
  EXPECT_EQ(conv.find("shm=0"), std::string::npos) << conv.substr(0, 3000);
  EXPECT_EQ(conv.find("dev=0"), std::string::npos) << conv.substr(0, 3000);
  expect_no_secret_anywhere();
}
