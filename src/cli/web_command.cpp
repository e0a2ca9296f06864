// `loopr web [--port N] [--open] [--stop]`: asks the daemon (started if needed) to serve the web
// UI on 127.0.0.1 and prints its address with the token, once. The UI is the daemon's
// (src/web/, served by the daemon); this only asks for it.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/commands.hpp"
#include "cli/daemon_client.hpp"
#include "cli/format.hpp"
#include "cli/wire.hpp"

namespace loopr::cli {

using nlohmann::json;

namespace {

// xdg-open: the desktop's choice; sensible-browser: Debian's ($BROWSER, x-www-browser,
// www-browser). `open` only on macOS: on Debian it may be kbd's openvt.
#ifdef __APPLE__
constexpr const char* kOpeners[] = {"open"};
#else
constexpr const char* kOpeners[] = {"xdg-open", "sensible-browser"};
#endif

/// The program that opens a URL in the person's browser, or empty.
std::string find_opener() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  for (const char* name : kOpeners) {
    std::string dirs = path;
    std::size_t start = 0;
    while (start <= dirs.size()) {
      std::size_t colon = dirs.find(':', start);
      std::string dir =
          dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / name;
      std::error_code ec;
      if (std::filesystem::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
        return candidate.string();
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  return {};
}

}  // namespace

int run_web(Session& s, int port, bool open, bool stop) {
  const GlobalOptions& opts = s.opts;
  const RepoPaths& paths = s.paths();
  if (stop) {
    DaemonClient& api = s.api();
    const bool stopped = stop_web(api);
    if (opts.json)
      std::cout << api::to_json(api::WebStopped{stopped}).dump() << "\n";
    else if (!opts.quiet)
      std::cout << (stopped ? "the web UI stopped; its address no longer works\n"
                            : "the web UI was not running\n");
    return kOk;
  }
  if (port < 0 || port > 65535)
    throw CommandError{kUsage, "--port must be from 0 to 65535", "leave it out for a free port"};
  require_existing_config(paths);
  DaemonClient api = connect_or_start(paths, opts);
  const api::WebStarted r = start_web(api, port);
  const std::string& url = r.url;
  if (url.empty())
    throw CommandError{kFailed, "the daemon answered without an address",
                       "see " + daemon_out_file(paths).string()};
  if (opts.json) {
    std::cout << api::to_json(r).dump() << "\n";
  } else {
    // The address is the command's result: printed even with -q.
    std::cout << url << "\n";
    if (!opts.quiet)
      std::cerr << "the web UI listens on 127.0.0.1 only; the token in the address is its key "
                   "(`loopr daemon status` shows it again, `loopr web --stop` ends it)\n";
  }
  if (open) {
    std::string opener = find_opener();
    if (opener.empty())
      throw CommandError{kFailed, "no program to open a browser with (xdg-open, sensible-browser)",
                         "open the address above yourself"};
    // Detached, quiet: the browser outlives this command.
    pid_t pid = ::fork();
    if (pid < 0)
      throw CommandError{kFailed, "could not start " + opener, "open the address above yourself"};
    if (pid == 0) {
      ::setsid();
      int null = ::open("/dev/null", O_RDWR);
      if (null >= 0) {
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(null, 2);
      }
      ::execl(opener.c_str(), opener.c_str(), url.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  return kOk;
}

namespace {

CommandRun define_web(CLI::App& web) {
  struct Values {
    int port = 0;
    bool open = false, stop = false;
  };
  auto v = std::make_shared<Values>();
  web.add_option("--port", v->port, "Listen on this port (default: a free one)")->option_text("N");
  web.add_flag("--open", v->open,
               "Open the address in the browser (xdg-open, else sensible-browser)");
  web.add_flag("--stop", v->stop, "Stop serving it (the address stops working)");
  return CommandRun([v](Session& s) { return run_web(s, v->port, v->open, v->stop); });
}

}  // namespace

const Command kWebCommand{
    "web",
    "Serve the browser view (tree, loops, diffs, transcripts, the gate) on 127.0.0.1 behind a "
    "random token and print its address; starts the daemon if needed",
    false, Needs::repo, define_web};

}  // namespace loopr::cli
