// The client's response and SSE decoders, fed every possible cut of their input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <loopr/core/sse.hpp>
#include <loopr/daemon/http.hpp>
#include <loopr/daemon/http_common.hpp>

#include "daemon/response_decoder.hpp"

using namespace loopr;
using namespace loopr::daemon;

namespace {

struct Decoded {
  bool ok = true;
  bool done = false;
  int status = 0;
  std::string body;
  std::string error;
};

/// Feeds `wire` cut at `cut` (and at `cut2` if given), then EOF if `eof`.
Decoded decode(const std::string& wire, std::size_t cut, std::size_t cut2, bool eof) {
  Decoded d;
  ResponseDecoder dec([&](std::string_view b) { d.body.append(b); });
  std::vector<std::string_view> parts;
  std::string_view all(wire);
  cut = std::min(cut, all.size());
  cut2 = std::clamp(cut2, cut, all.size());
  parts = {all.substr(0, cut), all.substr(cut, cut2 - cut), all.substr(cut2)};
  for (auto p : parts) {
    auto r = dec.feed(p);
    if (!r.ok()) {
      d.ok = false;
      d.error = r.error().message;
      return d;
    }
  }
  if (eof) {
    auto r = dec.eof();
    if (!r.ok()) {
      d.ok = false;
      d.error = r.error().message;
      return d;
    }
  }
  d.done = dec.done();
  d.status = dec.head().status;
  return d;
}

void expect_every_cut(const std::string& wire, int status, const std::string& body, bool eof) {
  for (std::size_t a = 0; a <= wire.size(); ++a) {
    for (std::size_t b = a; b <= wire.size(); b += 3) {
      auto d = decode(wire, a, b, eof);
      ASSERT_TRUE(d.ok) << "cut " << a << "," << b << ": " << d.error;
      ASSERT_TRUE(d.done) << "cut " << a << "," << b;
      ASSERT_EQ(d.status, status);
      ASSERT_EQ(d.body, body) << "cut " << a << "," << b;
    }
  }
}

}  // namespace

TEST(ResponseDecoderTest, ContentLengthBody) {
  expect_every_cut(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
      "11\r\n\r\n{\"a\":[1,2]}",
      200, "{\"a\":[1,2]}", false);
}

TEST(ResponseDecoderTest, ChunkedBodyWithExtensionsAndTrailer) {
  std::string wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                     format_chunk("hello ") + "5;ext=1\r\nworld\r\n" + format_chunk("\r\n!") +
                     "0\r\nX-Trailer: 1\r\n\r\n";
  expect_every_cut(wire, 200, "hello world\r\n!", false);
}

TEST(ResponseDecoderTest, CloseDelimitedBody) {
  expect_every_cut("HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: x\n\n", 200,
                   "data: x\n\n", true);
}

TEST(ResponseDecoderTest, EmptyBodiesAndInterimAnswers) {
  expect_every_cut("HTTP/1.1 204 No Content\r\n\r\n", 204, "", false);
  expect_every_cut("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", 404, "", false);
  expect_every_cut(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}", 201, "{}",
      false);
}

TEST(ResponseDecoderTest, IgnoresBytesAfterTheEnd) {
  auto d = decode("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}garbage", 1000, 1000, false);
  EXPECT_TRUE(d.ok);
  EXPECT_EQ(d.body, "{}");
}

TEST(ResponseDecoderTest, FieldLookupIsByLowerCaseName) {
  ResponseDecoder dec([](std::string_view) {});
  ASSERT_TRUE(dec.feed("HTTP/1.1 200 OK\r\nContent-TYPE:  text/event-stream \r\n\r\n").ok());
  EXPECT_EQ(dec.head().field("content-type"), "text/event-stream");
  EXPECT_FALSE(dec.head().field("content-length"));
}

TEST(ResponseDecoderTest, RejectsMalformedAnswers) {
  for (std::string bad :
       {"SSH-2.0-OpenSSH\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY"}) {
    auto d = decode(bad, bad.size(), bad.size(), false);
    EXPECT_FALSE(d.ok) << bad;
  }
}

TEST(ResponseDecoderTest, EofInTheMiddleIsAnError) {
  auto none = decode("", 0, 0, true);
  EXPECT_FALSE(none.ok);
  EXPECT_NE(none.error.find("without answering"), std::string::npos) << none.error;
  auto cut = decode("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", 100, 100, true);
  EXPECT_FALSE(cut.ok);
  auto chunked =
      decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n", 100, 100, true);
  EXPECT_FALSE(chunked.ok);
}

TEST(ResponseDecoderTest, HeadTooLong) {
  ResponseDecoder dec([](std::string_view) {}, 100);
  EXPECT_FALSE(dec.feed("HTTP/1.1 200 OK\r\nX: " + std::string(200, 'a')).ok());
}

namespace {

std::vector<SseMessage> sse_in_pieces(const std::string& text, std::size_t a, std::size_t b) {
  std::vector<SseMessage> out;
  SseParser dec([&](const SseMessage& m) { out.push_back(m); });
  std::string_view all(text);
  dec.feed(all.substr(0, a));
  dec.feed(all.substr(a, b - a));
  dec.feed(all.substr(b));
  return out;
}

}  // namespace

TEST(SseDecoderTest, MessagesWhateverTheCut) {
  const std::string text =
      format_sse_message("1", "loop_created", "{\"id\":\"001\"}") + format_sse_comment("ping") +
      format_sse_message("2", "status_changed", "line one\nline two") +
      "id: 3\r\nevent: crlf\r\ndata: a\r\ndata: b\r\n\r\n" + "id: 4\revent: cr\rdata: c\r\r" +
      "event: no-data\n\n" + "data:nospace\n\n";
  for (std::size_t a = 0; a <= text.size(); ++a) {
    for (std::size_t b = a; b <= text.size(); b += 5) {
      auto m = sse_in_pieces(text, a, b);
      ASSERT_EQ(m.size(), 5u) << a << "," << b;
      EXPECT_EQ(m[0].id, "1");
      EXPECT_EQ(m[0].event, "loop_created");
      EXPECT_EQ(m[0].data, "{\"id\":\"001\"}");
      EXPECT_EQ(m[1].id, "2");
      EXPECT_EQ(m[1].data, "line one\nline two");
      EXPECT_EQ(m[2].event, "crlf");
      EXPECT_EQ(m[2].data, "a\nb");
      EXPECT_EQ(m[3].id, "4");
      EXPECT_EQ(m[3].event, "cr");
      EXPECT_EQ(m[3].data, "c");
      EXPECT_EQ(m[4].data, "nospace");
      EXPECT_EQ(m[4].id, "");
    }
  }
}

TEST(SseDecoderTest, AnUnfinishedMessageIsNotDelivered) {
  auto m = sse_in_pieces("id: 1\ndata: x\n", 3, 7);
  EXPECT_TRUE(m.empty());
}
