// The control API transport over a real Unix socket: HttpServer with test routes, reached by
// the real Client and by raw sockets that misbehave on purpose.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <loopr/daemon/http.hpp>

#include "daemon/http_test_server.hpp"
#include "daemon/unix_peer.hpp"
#include "support/http_fixture.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::daemon;
using namespace loopr::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

std::string get(const std::string& target, bool keep_alive = true) {
  return "GET " + target + " HTTP/1.1\r\nHost: x\r\n" +
         (keep_alive ? "" : "Connection: close\r\n") + "\r\n";
}

std::string post(const std::string& target, const std::string& body) {
  return "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

/// The JSON body of the first response in `text` (Content-Length framed, or up to the end).
nlohmann::json body_of(const std::string& text) {
  auto head_end = text.find("\r\n\r\n");
  if (head_end == std::string::npos) return nullptr;
  auto length = std::string::npos;
  if (auto cl = text.find("Content-Length: "); cl != std::string::npos && cl < head_end)
    length = std::stoul(text.substr(cl + 16));
  auto body = nlohmann::json::parse(text.substr(head_end + 4, length), nullptr, false);
  return body.is_discarded() ? nlohmann::json() : body;
}

}  // namespace

TEST(HttpServerTest, JsonRoundTripThroughTheClient) {
  TestServer server;
  ASSERT_TRUE(server.listening()) << server.error();
  Client client(server.socket());
  nlohmann::json body = {{"request", "Add OAuth ✓"}, {"n", {1, 2, 3}}};
  auto r = client.call("POST", "/echo/a%20b?all=true&loop=001-002&q=x+y", body);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body["method"], "POST");
  EXPECT_EQ(r->body["path"], "/echo/a b");
  EXPECT_EQ(r->body["query"], (nlohmann::json{{"all", "true"}, {"loop", "001-002"}, {"q", "x y"}}));
  EXPECT_EQ(r->body["body"], body);

  auto created = client.call("POST", "/created");
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_EQ(created->status, 201);
  EXPECT_EQ(created->body["id"], "001");

  auto empty = client.call("GET", "/echo");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->body["body_size"], 0);
}

TEST(HttpServerTest, AnswersAreJsonWithContentType) {
  TestServer server;
  ASSERT_TRUE(server.listening());
  UnixPeer peer(server.socket());
  ASSERT_TRUE(peer.ok());
  peer.send(get("/echo", false));
  auto text = peer.read_to_eof();
  EXPECT_EQ(text.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << text;
  EXPECT_NE(text.find("Content-Type: application/json\r\n"), std::string::npos) << text;
  EXPECT_TRUE(body_of(text).is_object());
  EXPECT_TRUE(peer.saw_eof());  // Connection: close honoured
}

TEST(HttpServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  TestServer server;
  ASSERT_TRUE(server.listening());
  UnixPeer peer(server.socket());
  ASSERT_TRUE(peer.ok());
  peer.send(get("/echo?n=1"));
  auto first = peer.read_until(has_full_response);
  EXPECT_EQ(body_of(first)["query"]["n"], "1");
  EXPECT_FALSE(peer.saw_eof());
  EXPECT_EQ(server.connections(), 1u);

  peer.send(post("/echo?n=2", "{\"x\":2}"));
  auto second = peer.read_until(has_full_response);
  EXPECT_EQ(body_of(second)["body"]["x"], 2);
  EXPECT_EQ(server.connections(), 1u);

  // Pipelined: two requests in one write, two answers in order.
  peer.send(get("/echo?n=3") + get("/echo?n=4"));
  auto both = peer.read_until([](const std::string& t) { return count_responses(t) == 2; });
  ASSERT_EQ(count_responses(both), 2) << both;
  EXPECT_EQ(body_of(both)["query"]["n"], "3");
  EXPECT_EQ(body_of(both.substr(both.find("HTTP/1.1", 10)))["query"]["n"], "4");
}

TEST(HttpServerTest, Http10WithoutKeepAliveIsClosedAfterTheAnswer) {
  TestServer server;
  ASSERT_TRUE(server.listening());
  UnixPeer peer(server.socket());
  peer.send("GET /echo HTTP/1.0\r\n\r\n");
  auto text = peer.read_to_eof();
  EXPECT_EQ(text.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << text;
  EXPECT_TRUE(peer.saw_eof());
}

TEST(HttpServerTest, ExpectContinueGetsAnInterimAnswer) {
  TestServer server;
  ASSERT_TRUE(server.listening());
  UnixPeer peer(server.socket());
  peer.send("POST /echo HTTP/1.1\r\nContent-Length: 7\r\nExpect: 100-continue\r\n\r\n");
  auto interim = peer.read_until(
      [](const std::string& t) { return t.find("\r\n\r\n") != std::string::npos; }, 2s);
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  peer.send("{\"a\":1}");
  auto text = peer.read_until(has_full_response);
  EXPECT_EQ(body_of(text)["body"]["a"], 1) << text;
}

TEST(HttpServerTest, RouteStatusesPassThrough) {
  TestServer server;
  ASSERT_TRUE(server.listening());
  Client client(server.socket());
  auto r = client.call("GET", "/missing");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->body, (nlohmann::json{{"error", "no loop 999 (see loopr list)"}}));
}

TEST(HttpServerTest, ThrowingHandlerGives500AndTheConnectionGoesOn) {
  TestServer server;
  ASSERT_TRUE(server.listening());
  UnixPeer peer(server.socket());
  peer.send(get("/throw"));
  auto text = peer.read_until(has_full_response);
  EXPECT_EQ(text.rfind("HTTP/1.1 500", 0), 0u) << text;
  auto body = body_of(text);
  ASSERT_TRUE(body.contains("error")) << text;
  EXPECT_NE(body["error"].get<std::string>().find("boom"), std::string::npos);

  peer.send(get("/echo?after=throw"));
  auto next = peer.read_until(has_full_response);
  EXPECT_EQ(body_of(next)["query"]["after"], "throw");
  EXPECT_TRUE(answers_200(server.socket(), "/echo"));  // and to a new connection
}

TEST(HttpServerTest, GarbageGets400AndCloseWhileOthersAreServed) {
  TestServer server;
  ASSERT_TRUE(server.listening());
  for (std::string garbage :
       {std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 random\r\n\r\n", 20),
        std::string("GET / HTTP/9.9\r\n\r\n"), std::string("GET /x HTTP/1.1\r\nbad header\r\n\r\n"),
        std::string("POST /echo HTTP/1.1\r\nContent-Length: abc\r\n\r\n"),
        std::string("POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")}) {
    UnixPeer peer(server.socket());
    ASSERT_TRUE(peer.ok());
    peer.send(garbage);
    auto text = peer.read_to_eof();
    EXPECT_EQ(text.rfind("HTTP/1.1 400", 0), 0u) << garbage << " → " << text;
    EXPECT_TRUE(body_of(text).contains("error")) << text;
    EXPECT_TRUE(peer.saw_eof()) << garbage;
  }
  EXPECT_TRUE(answers_200(server.socket(), "/echo"));
}

TEST(HttpServerTest, BadTargetGets400ButKeepsTheConnection) {
  TestServer server;
  ASSERT_TRUE(server.listening());
  UnixPeer peer(server.socket());
  peer.send(get("/echo%zz"));
  auto text = peer.read_until(has_full_response);
  EXPECT_EQ(text.rfind("HTTP/1.1 400", 0), 0u) << text;
  peer.send(get("/echo?ok=1"));
  auto next = peer.read_until(has_full_response);
  EXPECT_EQ(body_of(next)["query"]["ok"], "1");
}

TEST(HttpServerTest, HugeBodyGets413QuicklyWithoutBeingRead) {
  TestServer server;
  ASSERT_TRUE(server.listening());
  const std::size_t huge = 100u << 20;
  UnixPeer peer(server.socket());
  ASSERT_TRUE(peer.ok());
  auto start = Clock::now();
  peer.send("POST /echo HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: " +
            std::to_string(huge) + "\r\n\r\n");
  // Keep sending until the server hangs up: it must not read (or buffer) the 100 MB.
  const std::string block(1 << 20, 'x');
  std::size_t sent = 0;
  while (sent < huge && !peer.send_failed()) {
    std::size_t n = peer.send(block, 2s);
    sent += n;
    if (n < block.size() && !peer.send_failed()) break;  // stuck: the server stopped reading
  }
  auto text = peer.read_to_eof();
  auto elapsed = Clock::now() - start;
  EXPECT_EQ(text.rfind("HTTP/1.1 413", 0), 0u) << text.substr(0, 200);
  EXPECT_NE(body_of(text).value("error", "").find("larger than"), std::string::npos) << text;
  EXPECT_LT(sent, 16u << 20) << "the server read far more than its limit";
  EXPECT_LT(elapsed, 5s);
  EXPECT_TRUE(wait_until([&] { return server.connections() == 0; }, 5s));

  EXPECT_TRUE(answers_200(server.socket(), "/echo"));
}

TEST(HttpServerTest, ChunkedBodyOverTheLimitGets413) {
  ServerOptions options;
  options.max_body_bytes = 1000;
  TestServer server(options);
  ASSERT_TRUE(server.listening());
  UnixPeer peer(server.socket());
  std::string chunk = "1f4\r\n" + std::string(500, 'a') + "\r\n";
  peer.send("POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk + chunk + chunk);
  auto text = peer.read_to_eof();
  EXPECT_EQ(text.rfind("HTTP/1.1 413", 0), 0u) << text;
}

TEST(HttpServerTest, ClientSeesThe413ForABodyTooLarge) {
  TestServer server;
  ASSERT_TRUE(server.listening());
  nlohmann::json big = {{"feedback", std::string(3u << 20, 'f')}};
  auto r = Client(server.socket()).call("POST", "/echo", big);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 413);
  EXPECT_TRUE(r->body.contains("error"));
}

TEST(HttpServerTest, HeaderTooLargeGets431) {
  ServerOptions options;
  options.max_header_bytes = 1024;
  TestServer server(options);
  ASSERT_TRUE(server.listening());
  UnixPeer peer(server.socket());
  peer.send("GET /echo HTTP/1.1\r\nX-Big: " + std::string(4000, 'b') + "\r\n\r\n");
  auto text = peer.read_to_eof();
  EXPECT_EQ(text.rfind("HTTP/1.1 431", 0), 0u) << text.substr(0, 100);
  EXPECT_TRUE(peer.saw_eof());
}

TEST(HttpServerTest, StalledHalfRequestIsDropped) {
  ServerOptions options;
  options.read_timeout = 200ms;
  TestServer server(options);
  ASSERT_TRUE(server.listening());
  UnixPeer peer(server.socket());
  peer.send("POST /echo HTTP/1.1\r\nContent-Length: 100\r\n\r\n{\"half\":");
  auto start = Clock::now();
  peer.read_to_eof(5s);
  EXPECT_TRUE(peer.saw_eof());
  EXPECT_LT(Clock::now() - start, 3s);
  EXPECT_TRUE(wait_until([&] { return server.connections() == 0; }, 5s));
}

TEST(HttpServerTest, IdleKeepAliveConnectionIsClosed) {
  ServerOptions options;
  options.idle_timeout = 200ms;
  TestServer server(options);
  ASSERT_TRUE(server.listening());
  UnixPeer silent(server.socket());
  UnixPeer served(server.socket());
  served.send(get("/echo"));
  EXPECT_TRUE(has_full_response(served.read_until(has_full_response)));
  auto start = Clock::now();
  silent.read_to_eof(5s);
  served.read_to_eof(5s);
  EXPECT_TRUE(silent.saw_eof());
  EXPECT_TRUE(served.saw_eof());
  EXPECT_LT(Clock::now() - start, 3s);
}

TEST(HttpServerTest, ThousandIdleConnectionsDoNotStopOthers) {
  // Each connection costs two descriptors here (both ends live in this process).
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  const rlim_t want = 2 * 1000 + 256;
  if (lim.rlim_cur < want) {
    if (lim.rlim_max < want) GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << lim.rlim_max;
    lim.rlim_cur = want;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
  }
  TestServer server;
  ASSERT_TRUE(server.listening());
  std::vector<UnixPeer> idle;
  idle.reserve(1000);
  for (int i = 0; i < 1000; ++i) {
    idle.emplace_back(server.socket());
    ASSERT_TRUE(idle.back().ok()) << i;
  }
  ASSERT_TRUE(wait_until([&] { return server.connections() == 1000; }, 10s))
      << server.connections();
  auto start = Clock::now();
  auto r = Client(server.socket()).call("POST", "/echo", {{"x", 1}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->body["body"]["x"], 1);
  EXPECT_LT(Clock::now() - start, 1s);
  idle.clear();
  EXPECT_TRUE(wait_until([&] { return server.connections() == 0; }, 10s));
}

TEST(HttpServerTest, ConnectionsOverTheCapAreClosedAtOnce) {
  ServerOptions options;
  options.max_connections = 3;
  TestServer server(options);
  ASSERT_TRUE(server.listening());
  std::vector<UnixPeer> held;
  for (int i = 0; i < 3; ++i) held.emplace_back(server.socket());
  ASSERT_TRUE(wait_until([&] { return server.connections() == 3; }));
  UnixPeer extra(server.socket());
  extra.read_to_eof(5s);
  EXPECT_TRUE(extra.saw_eof());
  held.pop_back();
  ASSERT_TRUE(wait_until([&] { return server.connections() == 2; }));
  EXPECT_TRUE(answers_200(server.socket(), "/echo"));
}

TEST(HttpServerTest, SocketIsOwnerOnly) {
  TestServer server;
  ASSERT_TRUE(server.listening());
  struct stat st {};
  ASSERT_EQ(::stat(server.socket().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST(HttpServerTest, ListenReplacesAStaleFile) {
  loopr::testing::TempDir dir("loopr-http");
  auto path = dir / "loopr.sock";
  loopr::testing::write_file(path, "stale");
  net::io_context io;
  HttpServer server(io, Routes{});
  auto r = server.listen(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  server.stop();
  EXPECT_FALSE(std::filesystem::exists(path));  // stop() removes its own socket file
}

TEST(HttpServerTest, ListenFailureIsAnIoError) {
  net::io_context io;
  HttpServer server(io, Routes{});
  auto r = server.listen("/nonexistent-loopr-dir/sub/loopr.sock");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::io);
  EXPECT_NE(r.error().message.find("/nonexistent-loopr-dir/sub/loopr.sock"), std::string::npos)
      << r.error().message;
}

TEST(HttpServerTest, LongSocketPathsWork) {
  // Longer than sockaddr_un's 108 bytes: bound and reached through /proc/self/fd.
  std::string deep = "d" + std::string(60, 'e') + "/" + std::string(60, 'p');
  loopr::testing::TempDir dir("loopr-http");
  std::filesystem::create_directories(dir / deep);
  net::io_context io;
  auto log = std::make_shared<loopr::testing::RouteLog>();
  HttpServer server(io, loopr::testing::test_routes(log));
  auto path = dir / deep / "loopr.sock";
  ASSERT_GT(path.native().size(), 108u);
  auto r = server.listen(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::thread t([&] { io.run(); });
  auto answer = Client(path).call("GET", "/echo?long=1");
  net::post(io, [&] { server.stop(); });
  t.join();
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->body["query"]["long"], "1");
}

TEST(HttpServerTest, StopEndsEverythingPromptly) {
  TestServer server;
  ASSERT_TRUE(server.listening());
  UnixPeer idle(server.socket());
  UnixPeer half(server.socket());
  half.send("GET /echo HTTP/1.1\r\n");
  StreamOnThread watcher(server.socket(), "/events/idle");
  bool streaming = wait_until([&] { return server.log().streams_started == 1; });
  bool all_connected = wait_until([&] { return server.connections() == 3; });

  auto start = Clock::now();
  server.stop();
  bool finished = wait_until([&] { return server.finished(); }, 2s);
  bool stream_ended = wait_until([&] { return watcher.returned(); }, 2s);
  auto elapsed = Clock::now() - start;
  watcher.cancel();  // only matters if stop() failed to end the stream
  watcher.join();
  ASSERT_TRUE(streaming);
  ASSERT_TRUE(all_connected);
  ASSERT_TRUE(finished) << "io_context still busy";
  ASSERT_TRUE(stream_ended);
  EXPECT_LT(elapsed, 1s);
  EXPECT_EQ(server.log().streams_ended, 1);
  ASSERT_FALSE(watcher.result().ok());
  EXPECT_EQ(watcher.result().error().code, ErrorCode::io);
  idle.read_to_eof(1s);
  EXPECT_TRUE(idle.saw_eof());
  half.read_to_eof(1s);
  EXPECT_TRUE(half.saw_eof());
  EXPECT_FALSE(std::filesystem::exists(server.socket()));
  auto after = Client(server.socket()).call("GET", "/echo");
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error().code, ErrorCode::not_found);
}

TEST(HttpServerTest, StopFromARouteStillAnswersThatRequest) {
  TestServer server;
  ASSERT_TRUE(server.listening());
  UnixPeer bystander(server.socket());
  ASSERT_TRUE(wait_until([&] { return server.connections() == 1; }));
  UnixPeer peer(server.socket());
  peer.send(get("/shutdown"));
  auto text = peer.read_to_eof();
  EXPECT_EQ(text.rfind("HTTP/1.1 200", 0), 0u) << text;
  EXPECT_NE(text.find("Connection: close"), std::string::npos) << text;
  EXPECT_EQ(body_of(text)["ok"], true);
  EXPECT_TRUE(peer.saw_eof());
  bystander.read_to_eof(1s);
  EXPECT_TRUE(bystander.saw_eof());
  EXPECT_TRUE(wait_until([&] { return server.finished(); }, 2s));
}

TEST(HttpServerTest, StopLetsARunningHandlerAnswer) {
  TestServer server;
  ASSERT_TRUE(server.listening());
  Result<ClientResponse> slow = make_error(ErrorCode::internal, "not run");
  std::thread caller([&] { slow = Client(server.socket()).call("GET", "/slow?ms=300"); });
  bool started = wait_until([&] { return server.log().slow_started == 1; });
  server.stop();
  caller.join();
  ASSERT_TRUE(started);
  ASSERT_TRUE(slow.ok()) << slow.error().message;
  EXPECT_EQ(slow->status, 200);
  EXPECT_EQ(slow->body["slept"], true);
  EXPECT_TRUE(wait_until([&] { return server.finished(); }, 2s));
}
