// `loopr web`: the real binary starts the daemon if needed, asks it for the web UI and prints the
// address once; `daemon status` shows it again; `--stop` ends it.
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "cli_fixture.hpp"

namespace loopr::testing {
namespace {

using nlohmann::json;

class WebCommandE2E : public CliE2E {};

TEST_F(WebCommandE2E, PrintsTheAddressStatusShowsItAndStopEndsIt) {
  make_repo();
  CliRun web = loopr("web");
  ASSERT_EQ(web.exit_code, 0) << web.err;
  std::smatch m;
  std::string url = web.out.substr(0, web.out.find('\n'));
  ASSERT_TRUE(
      std::regex_match(url, m, std::regex(R"(http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{64})")))
      << web.out;
  EXPECT_NE(web.err.find("127.0.0.1 only"), std::string::npos) << web.err;

  CliRun again = loopr("--json web");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.json()["url"], url);
  EXPECT_EQ(again.json()["started"], false);

  CliRun status = loopr("daemon status");
  EXPECT_NE(status.out.find("web UI: " + url), std::string::npos) << status.out;
  CliRun jstatus = loopr("--json daemon status");
  EXPECT_EQ(jstatus.json()["web"]["url"], url);

  CliRun quiet = loopr("-q web");
  EXPECT_EQ(quiet.out, url + "\n");
  EXPECT_EQ(quiet.err, "");

  CliRun bad = loopr("web --port 70000");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;

  CliRun stop = loopr("web --stop");
  ASSERT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_NE(stop.out.find("stopped"), std::string::npos);
  EXPECT_TRUE(loopr("--json daemon status").json()["web"].is_null());
  CliRun fresh = loopr("-q web");
  EXPECT_NE(fresh.out, url + "\n");  // a new token
}

TEST_F(WebCommandE2E, OpenHandsTheAddressToXdgOpenElseSensibleBrowser) {
  make_repo();
  CliRun web = loopr("-q web");
  ASSERT_EQ(web.exit_code, 0) << web.err;
  const std::string url = web.out.substr(0, web.out.find('\n'));
  // Stand-in browsers that write down how they were called; PATH holds only them.
  const std::filesystem::path bin = io / "bin";
  std::filesystem::create_directories(bin);
  const std::filesystem::path opened = io / "opened";
  for (const char* name : {"xdg-open", "sensible-browser"}) {
    write_file(bin / name, std::string("#!/bin/sh\necho \"") + name + " $*\" > " +
                               shell_quote((io / "opening").string()) + " && /bin/mv " +
                               shell_quote((io / "opening").string()) + " " +
                               shell_quote(opened.string()) + "\n");
    std::filesystem::permissions(bin / name, std::filesystem::perms::owner_all);
  }
  auto open_with_path = [&] {
    std::string command = loopr_command("web --open");
    const std::string key = "ANTHROPIC_API_KEY=test ";
    command.insert(command.find(key) + key.size(), "PATH=" + shell_quote(bin.string()) + " ");
    return run_command(command + " 2>&1");
  };
  auto opened_with = [&] {
    std::string text;
    wait_until([&] { return std::filesystem::exists(opened); }, std::chrono::seconds(30));
    text = read_file(opened);
    std::filesystem::remove(opened);
    return text;
  };

  auto r = open_with_path();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(opened_with(), "xdg-open " + url + "\n");

  std::filesystem::remove(bin / "xdg-open");  // Debian's own: $BROWSER, x-www-browser …
  r = open_with_path();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(opened_with(), "sensible-browser " + url + "\n");

  std::filesystem::remove(bin / "sensible-browser");
  r = open_with_path();
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(url), std::string::npos) << r.output;  // printed before it says so
  EXPECT_NE(r.output.find("no program to open a browser with"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(opened));
}

// The listening sockets on `port` in /proc/net/<table>, as their local addresses (hex, as the
// kernel writes them: 0100007F is 127.0.0.1, 00000000 is every address).
std::vector<std::string> listeners_on(const std::string& table, int port) {
  std::ifstream in("/proc/net/" + table);
  std::vector<std::string> out;
  std::string line;
  std::getline(in, line);  // the header
  char want[8];
  std::snprintf(want, sizeof want, "%04X", port);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    auto colon = local.rfind(':');
    if (state == "0A" && colon != std::string::npos && local.substr(colon + 1) == want)
      out.push_back(local.substr(0, colon));  // 0A: LISTEN
  }
  return out;
}

TEST_F(WebCommandE2E, ListensOnLoopbackOnly) {
  make_repo();
  CliRun web = loopr("-q web");
  ASSERT_EQ(web.exit_code, 0) << web.err;
  std::smatch m;
  const std::string url = web.out.substr(0, web.out.find('\n'));
  ASSERT_TRUE(std::regex_search(url, m, std::regex(R"(:(\d+)/)"))) << url;
  const int port = std::stoi(m[1]);
  // The kernel's own table of listening sockets: the UI's port is bound to 127.0.0.1 and to
  // nothing else (no 0.0.0.0, no IPv6 socket).
  EXPECT_EQ(listeners_on("tcp", port), std::vector<std::string>{"0100007F"});
  EXPECT_TRUE(listeners_on("tcp6", port).empty());
}

}  // namespace
}  // namespace loopr::testing
