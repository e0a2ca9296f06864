// The man page and the shell completions the build makes (`loopr --generate-docs`, see
// cmake/install.cmake) agree with `loopr --help`: every command, and every option of every
// command, is in the man page and in both completions; the man page renders without warnings,
// bash really completes (commands, options, plan|spec|phase, loop ids from a running daemon),
// and zsh loads its function.
#include <sstream>

#include "e2e/cli_fixture.hpp"

using namespace loopr::testing;

namespace {

const std::string kDocs = LOOPR_DOCS_DIR;

// The subcommands `loopr --help` (or `loopr daemon --help`) lists.
std::vector<std::string> help_subcommands(const std::string& args) {
  auto r = run_command(std::string(LOOPR_BIN) + " " + args + " --help");
  EXPECT_EQ(r.exit_code, 0);
  std::vector<std::string> out;
  auto p = r.output.find("\nSubcommands:\n");
  EXPECT_NE(p, std::string::npos) << r.output;
  std::istringstream in(r.output.substr(p + 14));
  for (std::string line; std::getline(in, line) && !line.empty();) {
    if (line.size() < 3 || line[0] != ' ' || line[2] == ' ') continue;  // a wrapped description
    std::istringstream words(line);
    std::string name;
    words >> name;
    out.push_back(name);
  }
  return out;
}

// The long options (`--name`) a command's help shows.
std::vector<std::string> help_options(const std::string& command) {
  auto r = run_command(std::string(LOOPR_BIN) + " " + command + " --help");
  std::vector<std::string> out;
  std::istringstream in(r.output);
  for (std::string word; in >> word;) {
    auto p = word.find("--");
    if (p != 0 && !(p != std::string::npos && word[p - 1] == ',')) continue;
    std::string name = word.substr(p);
    auto end = name.find_first_not_of("abcdefghijklmnopqrstuvwxyz-", 2);
    name = name.substr(0, end);
    if (name.size() > 2 && name != "--help") out.push_back(name);
  }
  return out;
}

std::string man_escaped(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

std::string bash_complete(const std::string& words, const std::string& path_dir) {
  std::string script = "source " + shell_quote(kDocs + "/loopr.bash") + "\nCOMP_WORDS=(" + words +
                       ")\nCOMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
                       "_loopr\necho \"${COMPREPLY[*]}\"\n";
  auto r = run_command("PATH=" + shell_quote(path_dir) + ":$PATH bash -c " + shell_quote(script));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

std::string bin_dir() { return std::filesystem::path(LOOPR_BIN).parent_path().string(); }

}  // namespace

TEST(DocsTest, EveryCommandAndOptionOfTheHelpIsInTheManPageAndBothCompletions) {
  std::string man = read_file(kDocs + "/loopr.1");
  std::string bash = read_file(kDocs + "/loopr.bash");
  std::string zsh = read_file(kDocs + "/_loopr");
  ASSERT_FALSE(man.empty());
  auto commands = help_subcommands("");
  ASSERT_GE(commands.size(), 19u);
  for (const auto& c : commands) {
    EXPECT_NE(man.find(".SS \"loopr " + c + "\""), std::string::npos) << c;
    EXPECT_NE(bash.find(" " + c + " "), std::string::npos) << c;
    EXPECT_NE(zsh.find("'" + c + ":"), std::string::npos) << c;
    EXPECT_NE(zsh.find("_loopr_cmd_" + c + "()"), std::string::npos) << c;
    for (const auto& opt : help_options(c)) {
      EXPECT_NE(man.find("\\fB" + man_escaped(opt) + "\\fR"), std::string::npos) << c << " " << opt;
      EXPECT_NE(bash.find(" " + opt), std::string::npos) << c << " " << opt;
      EXPECT_NE(zsh.find(opt), std::string::npos) << c << " " << opt;
    }
  }
  for (const auto& c : help_subcommands("daemon")) {
    EXPECT_NE(man.find(".SS \"loopr daemon " + c + "\""), std::string::npos) << c;
    EXPECT_NE(bash.find("\"loopr daemon " + c + "\""), std::string::npos) << c;
    EXPECT_NE(zsh.find("_loopr_cmd_daemon_" + c + "()"), std::string::npos) << c;
  }
  // What the build made is what the binary prints now (not a stale file).
  for (const auto& [kind, file] : std::vector<std::pair<std::string, std::string>>{
           {"man", "loopr.1"}, {"bash", "loopr.bash"}, {"zsh", "_loopr"}}) {
    auto r = run_command(std::string(LOOPR_BIN) + " --generate-docs " + kind);
    EXPECT_EQ(r.output, read_file(kDocs + "/" + file)) << kind;
  }
}

TEST(DocsTest, ManPageRendersWithoutWarnings) {
  auto r = run_command("MANWIDTH=100 man --warnings -l " + shell_quote(kDocs + "/loopr.1") +
                       " 2>&1 >/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "") << "groff warnings";
  auto text = run_command("MANWIDTH=100 man -l " + shell_quote(kDocs + "/loopr.1.gz"));
  EXPECT_NE(text.output.find("EXIT STATUS"), std::string::npos) << text.output;
  // submit's synopsis as man lays it out (wrapped where the page needs it, never inside an
  // option or between an option and its value): every option `submit --help` shows, INTERFACE.md's
  // `--wait` and `--yes` first (README's "Where loopr differs" lists the others).
  const std::string heading = "\n   loopr submit\n";
  auto start = text.output.find(heading);
  ASSERT_NE(start, std::string::npos) << text.output;
  start += heading.size();
  std::istringstream words(text.output.substr(start, text.output.find("\n\n", start) - start));
  std::string synopsis;
  for (std::string w; words >> w;) synopsis += (synopsis.empty() ? "" : " ") + w;
  EXPECT_EQ(synopsis,
            "loopr submit [--wait] [--yes] [--dry-run] [--max-cost USD] [--max-runtime D] "
            "[--max-iterations N] [--force] REQUEST...");
  auto help = run_command(std::string(LOOPR_BIN) + " submit --help").output;
  const std::string globals = help.substr(help.find("\nGlobal options"));
  for (const auto& opt : help_options("submit"))
    if (globals.find(opt) == std::string::npos) {
      EXPECT_NE(synopsis.find("[" + opt), std::string::npos) << opt;
    }
}

TEST(DocsTest, ZshLoadsTheCompletionFunction) {
  auto syntax = run_command("zsh -n " + shell_quote(kDocs + "/_loopr") + " 2>&1");
  EXPECT_EQ(syntax.exit_code, 0) << syntax.output;
  TempDir home{"loopr-zsh"};
  auto load = run_command(
      "HOME=" + home.str() + " zsh -f -c 'fpath=(" + kDocs +
      " $fpath); autoload -Uz compinit && compinit -u -d " + home.str() +
      "/zcompdump && echo ${_comps[loopr]} && autoload -Uz +X _loopr && whence -w _loopr' 2>&1");
  EXPECT_EQ(load.exit_code, 0) << load.output;
  EXPECT_NE(load.output.find("_loopr\n"), std::string::npos)
      << "compinit binds loopr to _loopr: " << load.output;
  EXPECT_NE(load.output.find("_loopr: function"), std::string::npos) << load.output;
}

TEST_F(CliE2E, BashCompletesCommandsOptionsKindsAndLoopIds) {
  make_repo();
  std::string path = bin_dir();
  EXPECT_EQ(bash_complete("loopr d", path), "daemon doctor demo\n");
  EXPECT_EQ(bash_complete("loopr daemon ''", path), "status stop\n");
  EXPECT_EQ(bash_complete("loopr submit --f", path), "--force\n");
  EXPECT_EQ(bash_complete("loopr doctor --o", path), "--offline\n");
  EXPECT_EQ(bash_complete("loopr validate ''", path), "plan spec phase\n");
  EXPECT_EQ(bash_complete("loopr -C " + shell_quote(dir.str()) + " init --base ''", path),
            "main\n");
  // Loop ids come from the daemon: none without one, the plan's once it exists.
  std::string show = "loopr -C " + shell_quote(dir.str()) + " show ''";
  EXPECT_EQ(bash_complete(show, path), "\n");
  CliRun submit = loopr("submit 'Add a flag'");
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_EQ(bash_complete(show, path), "001\n");
}
