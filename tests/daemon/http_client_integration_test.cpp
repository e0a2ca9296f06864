// The CLI's blocking Client and server-sent events over a real Unix socket: connect failures,
// timeouts, streams in order, cancel, and clients that hang up mid-stream.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
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

void expect_not_found(const std::filesystem::path& socket) {
  Client client(socket);
  auto r = client.call("GET", "/v1/health");
  ASSERT_FALSE(r.ok()) << socket;
  EXPECT_EQ(r.error().code, ErrorCode::not_found) << r.error().message;
  EXPECT_NE(r.error().message.find(socket.string()), std::string::npos) << r.error().message;
  auto s = client.stream("/v1/events", [](const SseMessage&) { return true; });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::not_found) << s.error().message;
}

// Every test but the first talks to the test server.
class HttpClientTest : public WithTestServer {};

}  // namespace

TEST_F(HttpClientTest, NothingListeningIsNotFound) {
  TempDir dir("loopr-client");
  expect_not_found(dir / "loopr.sock");              // no file
  expect_not_found(dir / "no-such-dir/loopr.sock");  // no folder
  loopr::testing::write_file(dir / "file.sock", "not a socket");
  expect_not_found(dir / "file.sock");         // a regular file
  expect_not_found(dir / "file.sock/x.sock");  // a file where a folder should be

  // A stale socket file: bound once, nobody listening any more.
  auto stale = dir / "stale.sock";
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, stale.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::close(fd);
  expect_not_found(stale);

  // A long path whose folder does not exist.
  expect_not_found(dir / std::string(120, 'x') / "loopr.sock");
}

TEST_F(HttpClientTest, CallTimesOut) {
  auto start = Clock::now();
  auto r = Client(server.socket()).call("GET", "/slow?ms=1000", nullptr, 200ms);
  auto elapsed = Clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::timeout) << r.error().message;
  EXPECT_GE(elapsed, 190ms);
  EXPECT_LT(elapsed, 1s);
}

TEST_F(HttpClientTest, SseMessagesArriveInOrderThenTheStreamEnds) {
  std::vector<SseMessage> got;
  auto r = Client(server.socket()).stream("/events?n=5", [&](const SseMessage& m) {
    got.push_back(m);
    return true;
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::io);
  EXPECT_EQ(r.error().message, "the daemon closed the stream");
  ASSERT_EQ(got.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(got[i].id, std::to_string(i + 1));
    EXPECT_EQ(got[i].event, "tick");
  }
  EXPECT_EQ(got[0].data, "{\"n\":1}");
  EXPECT_EQ(got[1].data, "first line\nsecond line");
  EXPECT_EQ(got[4].data, "{\"n\":5}");
  EXPECT_TRUE(wait_until([&] { return server.log().streams_ended == 1; }));
}

TEST_F(HttpClientTest, ConcurrentSendersKeepMessagesWholeAndInOrder) {
  std::vector<int> next(3, 0);
  int total = 0;
  bool whole = true;
  auto r = Client(server.socket()).stream("/events/burst", [&](const SseMessage& m) {
    int sender = m.event.back() - '0';
    EXPECT_EQ(m.id, std::to_string(next[sender])) << m.event;
    ++next[sender];
    ++total;
    auto colon = m.data.find(':');
    whole =
        whole && colon != std::string::npos && m.data.size() == colon + 1 + (16 << 10) &&
        m.data.find_first_not_of(static_cast<char>('a' + sender), colon + 1) == std::string::npos;
    return true;
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "the daemon closed the stream");
  EXPECT_EQ(total, 120);
  EXPECT_TRUE(whole);
  EXPECT_EQ(next, (std::vector<int>{40, 40, 40}));
}

TEST_F(HttpClientTest, StreamIsChunkedEventStream) {
  UnixPeer peer(server.socket());
  peer.send("GET /events?n=2 HTTP/1.1\r\nHost: x\r\n\r\n");
  auto text = peer.read_to_eof();
  EXPECT_EQ(text.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << text;
  EXPECT_NE(text.find("Content-Type: text/event-stream\r\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Cache-Control: no-cache\r\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << text;
  EXPECT_NE(text.find("id: 1\nevent: tick\ndata: {\"n\":1}\n\n"), std::string::npos) << text;
  EXPECT_NE(text.find(": ping\n\n"), std::string::npos) << text;
  EXPECT_NE(text.find("data: first line\ndata: second line\n\n"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 5), "0\r\n\r\n");
  EXPECT_TRUE(peer.saw_eof());
}

TEST_F(HttpClientTest, Http10StreamIsCloseDelimited) {
  UnixPeer peer(server.socket());
  peer.send("GET /events?n=2 HTTP/1.0\r\n\r\n");
  auto text = peer.read_to_eof();
  EXPECT_EQ(text.find("Transfer-Encoding"), std::string::npos) << text;
  auto body = text.substr(text.find("\r\n\r\n") + 4);
  EXPECT_EQ(body,
            "id: 1\nevent: tick\ndata: {\"n\":1}\n\n: ping\n\n"
            "id: 2\nevent: tick\ndata: first line\ndata: second line\n\n");
}

TEST_F(HttpClientTest, OnMessageFalseEndsTheStreamAndTheServerNotices) {
  int seen = 0;
  auto r = Client(server.socket()).stream("/events/forever", [&](const SseMessage& m) {
    EXPECT_EQ(m.id, std::to_string(++seen));
    return seen < 3;
  });
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(seen, 3);
  EXPECT_TRUE(wait_until([&] { return server.log().streams_ended == 1; }, 2s));
  EXPECT_TRUE(wait_until([&] { return server.connections() == 0; }, 2s));
}

TEST_F(HttpClientTest, CancelEndsTheStreamPromptly) {
  StreamOnThread watcher(server.socket(), "/events/idle");
  bool started = wait_until([&] { return server.log().streams_started == 1; });
  auto cancelled_at = Clock::now();
  watcher.cancel();
  bool ended = wait_until([&] { return watcher.returned(); }, 2s);
  auto latency = Clock::now() - cancelled_at;
  watcher.join();
  ASSERT_TRUE(started);
  ASSERT_TRUE(ended);
  EXPECT_LT(latency, 200ms);
  EXPECT_TRUE(watcher.result().ok()) << watcher.result().error().message;
  // The route sees the hang-up and returns.
  EXPECT_TRUE(wait_until([&] { return server.log().streams_ended == 1; }, 2s));
}

TEST_F(HttpClientTest, CancelledBeforeTheFirstMessage) {
  std::atomic<bool> cancel{true};
  auto start = Clock::now();
  auto r = Client(server.socket())
               .stream(
                   "/events/forever", [](const SseMessage&) { return true; }, &cancel);
  EXPECT_TRUE(r.ok());
  EXPECT_LT(Clock::now() - start, 200ms);
}

TEST_F(HttpClientTest, ClientThatHangsUpMidStreamIsNoticed) {
  for (const char* route : {"/events/idle", "/events/forever"}) {
    int before = server.log().streams_ended;
    UnixPeer peer(server.socket());
    peer.send(std::string("GET ") + route + " HTTP/1.1\r\nHost: x\r\n\r\n");
    peer.read_until([](const std::string& t) { return t.find("\r\n\r\n") != std::string::npos; });
    ASSERT_TRUE(wait_until([&] { return server.log().streams_started == before + 1; })) << route;
    peer.close();
    EXPECT_TRUE(wait_until([&] { return server.log().streams_ended == before + 1; }, 2s)) << route;
  }
  EXPECT_TRUE(wait_until([&] { return server.connections() == 0; }, 2s));
  EXPECT_TRUE(answers_200(server.socket(), "/echo"));
}

TEST_F(HttpClientTest, StreamRefusedByTheDaemonCarriesItsMessage) {
  auto r = Client(server.socket()).stream("/missing", [](const SseMessage&) { return true; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);  // not not_found: that means "no daemon"
  EXPECT_EQ(r.error().message, "the daemon answered 404: no loop 999 (see loopr list)");

  auto not_sse = Client(server.socket()).stream("/echo", [](const SseMessage&) { return true; });
  ASSERT_FALSE(not_sse.ok());
  EXPECT_EQ(not_sse.error().code, ErrorCode::io);
  EXPECT_NE(not_sse.error().message.find("event stream"), std::string::npos);
}

TEST_F(HttpClientTest, ManyClientsAtOnce) {
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      Client client(server.socket());
      for (int i = 0; i < 50; ++i) {
        auto r = client.call("POST", "/echo", {{"t", t}, {"i", i}});
        if (r.ok() && r->body["body"]["i"] == i && r->body["body"]["t"] == t) ++good;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good, 400);
}
