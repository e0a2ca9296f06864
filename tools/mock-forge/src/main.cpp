// loopr-mock-forge: a scripted GitHub REST API double on 127.0.0.1 for loopr's tests
// (tools/mock-forge/README.md). HTTP/1.1 keep-alive, one thread per connection, the state in
// state.cpp behind one mutex. The only Beast translation unit of the tool.
#include <signal.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "state.hpp"

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using loopr::mock_forge::Forge;
using nlohmann::json;

namespace {

std::mutex log_mu;
std::ofstream log_file;

void log_request(const loopr::mock_forge::Request& r, int status, const std::string& token) {
  if (!log_file.is_open()) return;
  json headers = json::object();
  for (const auto& [k, v] : r.headers) {
    if (k == "authorization")
      headers[k] = token.empty() ? "[present]"
                   : (v == "Bearer " + token || v == "token " + token) ? "[token]" : "[other]";
    else
      headers[k] = v;
  }
  json body = json::parse(r.body, nullptr, false);
  // time_ms: when it was answered (ms since the epoch), for tests of the polls' spacing.
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  json line = {{"method", r.method}, {"path", r.target}, {"headers", headers}, {"status", status},
               {"body", body.is_discarded() ? json(r.body) : body},
               {"time_ms", std::chrono::duration_cast<std::chrono::milliseconds>(now).count()}};
  std::lock_guard lock(log_mu);
  log_file << line.dump() << "\n" << std::flush;
}

void serve(tcp::socket socket, Forge& forge, std::string token) {
  beast::flat_buffer buffer;
  beast::error_code ec;
  while (true) {
    http::request<http::string_body> req;
    http::read(socket, buffer, req, ec);
    if (ec) break;
    loopr::mock_forge::Request r;
    r.method = std::string(req.method_string());
    r.target = std::string(req.target());
    for (const auto& f : req) {
      std::string name(f.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.headers[name] = std::string(f.value());
    }
    r.body = req.body();
    loopr::mock_forge::Reply reply = forge.handle(r);
    log_request(r, reply.status, token);
    http::response<http::string_body> res{static_cast<http::status>(reply.status), req.version()};
    res.set(http::field::server, "mock-forge");
    res.set(http::field::content_type,
            reply.text.empty() ? "application/json; charset=utf-8" : "text/plain; charset=utf-8");
    for (const auto& [k, v] : reply.headers) res.set(k, v);
    res.keep_alive(req.keep_alive());
    res.body() = reply.text.empty() ? reply.body.dump() : reply.text;
    res.prepare_payload();
    http::write(socket, res, ec);
    if (ec || !req.keep_alive()) break;
  }
  socket.shutdown(tcp::socket::shutdown_send, ec);
}

int usage(const char* why) {
  std::cerr << "loopr-mock-forge: " << why
            << "\nusage: loopr-mock-forge --script FILE.json [--port 0] [--port-file F] [--log F]"
               " [--token T] [--git-dir BARE_REPO]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string script_path, port_file, log_path;
  loopr::mock_forge::Options options;
  unsigned short port = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--script") script_path = next();
    else if (a == "--port") port = static_cast<unsigned short>(std::stoi(next()));
    else if (a == "--port-file") port_file = next();
    else if (a == "--log") log_path = next();
    else if (a == "--token") options.token = next();
    else if (a == "--git-dir") options.git_dir = next();
    else return usage(("unknown flag " + a).c_str());
  }
  if (script_path.empty()) return usage("--script is required");
  std::ifstream in(script_path);
  json script = json::parse(in, nullptr, false);
  if (script.is_discarded()) return usage("the script is not JSON");
  std::unique_ptr<Forge> forge;
  try {
    forge = std::make_unique<Forge>(script, options);
  } catch (const std::exception& e) {
    return usage(e.what());
  }
  if (!log_path.empty()) log_file.open(log_path, std::ios::app);
  asio::io_context io;
  tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), port});
  const unsigned short bound = acceptor.local_endpoint().port();
  ::signal(SIGPIPE, SIG_IGN);
  if (!port_file.empty()) {
    std::string tmp = port_file + ".tmp";
    std::ofstream(tmp) << bound << "\n";
    std::filesystem::rename(tmp, port_file);
  } else {
    std::cout << bound << std::endl;
  }
  // SIGTERM ends the process (the default action): connections are threads, nothing to flush.
  while (true) {
    tcp::socket socket(io);
    beast::error_code ec;
    acceptor.accept(socket, ec);
    if (ec) continue;
    std::thread(serve, std::move(socket), std::ref(*forge), options.token).detach();
  }
}
