// A real HttpServer on a temp Unix socket with routes made for the transport tests, its
// io_context run by one thread (as in the daemon).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include <loopr/daemon/http.hpp>

#include "support/temp_dir.hpp"

namespace loopr::testing {
// Internal linkage on purpose: with these coroutines inline and shared by two test translation
// units, g++ 12 put a co_spawn frame's destroy function into the COMDAT group of a route
// lambda, the linker kept the other unit's group, and the link failed ("defined in discarded
// section"). Each test unit gets its own copy instead.
namespace {

struct RouteLog {
  std::atomic<int> streams_started{0};
  std::atomic<int> streams_ended{0};
  std::atomic<int> slow_started{0};
  std::atomic<int> slow_answered{0};
  daemon::HttpServer* server = nullptr;  ///< for /shutdown; used on the io thread only
};

// Routes are plain lambdas that call free coroutine functions with their state by value
// (g++ 12 miscompiles capturing coroutine lambdas).
inline awaitable<daemon::Response> test_handle(std::shared_ptr<RouteLog> log, daemon::Request req) {
  using daemon::Response;
  if (req.path == "/echo" || req.path.rfind("/echo/", 0) == 0) {
    Response r;
    r.body = {{"method", req.method}, {"path", req.path}, {"query", req.query}};
    auto parsed = nlohmann::json::parse(req.body, nullptr, false);
    r.body["body"] = parsed.is_discarded() ? nlohmann::json(req.body) : parsed;
    r.body["body_size"] = req.body.size();
    co_return r;
  }
  if (req.path == "/missing") co_return daemon::error_response(404, "no loop 999 (see loopr list)");
  if (req.path == "/created") {
    Response r;
    r.status = 201;
    r.body = {{"id", "001"}};
    co_return r;
  }
  if (req.path == "/throw") throw std::runtime_error("boom");
  if (req.path == "/slow") {
    ++log->slow_started;
    net::steady_timer t(co_await net::this_coro::executor);
    t.expires_after(std::chrono::milliseconds(std::stoi(req.query["ms"])));
    co_await t.async_wait(net::use_awaitable);
    ++log->slow_answered;
    Response r;
    r.body = {{"slept", true}};
    co_return r;
  }
  if (req.path == "/shutdown") {
    log->server->stop();
    Response r;
    r.body = {{"ok", true}};
    co_return r;
  }
  co_return daemon::error_response(404, "no such route " + req.path);
}

/// One of /events/burst's concurrent senders: 40 messages of ~16 KB, event "s<sender>".
inline awaitable<void> burst_sender(std::shared_ptr<daemon::EventStream> out, int sender,
                                    std::shared_ptr<int> running) {
  for (int i = 0; i < 40; ++i) {
    std::string id = std::to_string(i);
    std::string event = "s" + std::to_string(sender);
    std::string data =
        std::to_string(i) + ":" + std::string(16 << 10, static_cast<char>('a' + sender));
    bool sent = co_await out->send(id, event, data);
    if (!sent) break;
  }
  --*running;
}

/// /events?n=N sends N messages (message 2 has two data lines) and returns; /events/forever
/// sends every 10 ms until send() fails; /events/idle sends nothing until closed().
inline awaitable<void> test_stream(std::shared_ptr<RouteLog> log, daemon::Request req,
                                   std::shared_ptr<daemon::EventStream> out) {
  ++log->streams_started;
  net::steady_timer timer(co_await net::this_coro::executor);
  if (req.path == "/events") {
    int n = std::stoi(req.query["n"]);
    for (int i = 1; i <= n; ++i) {
      std::string id = std::to_string(i);
      std::string event = "tick";
      std::string data = i == 2 ? "first line\nsecond line" : "{\"n\":" + id + "}";
      bool sent = co_await out->send(id, event, data);
      if (!sent) break;
      if (i == 1) {
        std::string ping = "ping";
        co_await out->comment(ping);
      }
    }
  } else if (req.path == "/events/burst") {
    // Three coroutines send at once: the writer must keep each message whole and in order.
    auto running = std::make_shared<int>(3);
    auto ex = co_await net::this_coro::executor;
    for (int k = 0; k < 3; ++k) net::co_spawn(ex, burst_sender(out, k, running), net::detached);
    while (*running > 0) {
      timer.expires_after(std::chrono::milliseconds(5));
      co_await timer.async_wait(net::use_awaitable);
    }
  } else if (req.path == "/events/forever") {
    for (int i = 1;; ++i) {
      std::string id = std::to_string(i);
      std::string event = "tick";
      std::string data = "{}";
      bool sent = co_await out->send(id, event, data);
      if (!sent) break;
      timer.expires_after(std::chrono::milliseconds(10));
      co_await timer.async_wait(net::use_awaitable);
    }
  } else {
    while (!out->closed()) {
      timer.expires_after(std::chrono::milliseconds(10));
      co_await timer.async_wait(net::use_awaitable);
    }
  }
  ++log->streams_ended;
}

inline daemon::Routes test_routes(std::shared_ptr<RouteLog> log) {
  daemon::Routes r;
  r.handle = [log](daemon::Request req) { return test_handle(log, std::move(req)); };
  r.is_stream = [](const daemon::Request& req) { return req.path.rfind("/events", 0) == 0; };
  r.stream = [log](daemon::Request req, std::shared_ptr<daemon::EventStream> out) {
    return test_stream(log, std::move(req), std::move(out));
  };
  return r;
}

class TestServer {
 public:
  explicit TestServer(daemon::ServerOptions options = {}, std::string socket_name = "loopr.sock")
      : socket_(dir_.path() / socket_name) {
    server_ = std::make_unique<daemon::HttpServer>(io_, test_routes(log_), options);
    log_->server = server_.get();
    auto r = server_->listen(socket_);
    if (!r.ok()) {
      error_ = r.error().message;
      return;
    }
    thread_ = std::thread([this] {
      io_.run();
      finished_ = true;
    });
  }
  ~TestServer() {
    stop();
    if (thread_.joinable()) thread_.join();
  }

  bool listening() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  const std::filesystem::path& socket() const { return socket_; }
  const std::filesystem::path& dir() const { return dir_.path(); }
  RouteLog& log() { return *log_; }

  /// Posts stop() to the io thread.
  void stop() {
    if (thread_.joinable()) net::post(io_, [this] { server_->stop(); });
  }
  /// True once io_context::run() has returned (every connection and coroutine ended).
  bool finished() const { return finished_; }

  std::size_t connections() {
    std::promise<std::size_t> p;
    auto f = p.get_future();
    net::post(io_, [&] { p.set_value(server_->connections()); });
    return f.get();
  }

 private:
  TempDir dir_{"loopr-http"};
  std::filesystem::path socket_;
  net::io_context io_;
  std::shared_ptr<RouteLog> log_ = std::make_shared<RouteLog>();
  std::unique_ptr<daemon::HttpServer> server_;
  std::string error_;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

/// A transport suite's fixture: the test server up (`server`), its listen checked first.
class WithTestServer : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server.listening()) << server.error(); }
  TestServer server;
};

}  // namespace
}  // namespace loopr::testing
