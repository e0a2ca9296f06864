
#include <gtest/gtest.h>

#include <loopr/daemon/http.hpp>
#include <loopr/daemon/http_common.hpp>

using namespace loopr;
using namespace loopr::daemon;

TEST(PercentDecodeTest, DecodesEscapesOfEitherCase) {
  EXPECT_EQ(percent_decode("a%20b%2fc%2F", false), "a b/c/");
  EXPECT_EQ(percent_decode("%e2%9c%93", false), "\xe2\x9c\x93");
  EXPECT_EQ(percent_decode("", false), "");
  EXPECT_EQ(percent_decode("100%25", false), "100%");
}

TEST(PercentDecodeTest, PlusIsASpaceOnlyWhenAsked) {
  EXPECT_EQ(percent_decode("a+b", true), "a b");
  EXPECT_EQ(percent_decode("a+b", false), "a+b");
  EXPECT_EQ(percent_decode("a%2Bb", true), "a+b");
}

TEST(PercentDecodeTest, RejectsBrokenEscapes) {
  EXPECT_FALSE(percent_decode("%", false));
  EXPECT_FALSE(percent_decode("%4", false));
  EXPECT_FALSE(percent_decode("ab%", false));
  EXPECT_FALSE(percent_decode("%zz", false));
  EXPECT_FALSE(percent_decode("%4g", false));
}

TEST(ParseTargetTest, SplitsPathAndQuery) {
  auto t = parse_target("/v1/events?since=12&loop=001-002");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->path, "/v1/events");
  EXPECT_EQ(t->query.size(), 2u);
  EXPECT_EQ(t->query.at("since"), "12");
  EXPECT_EQ(t->query.at("loop"), "001-002");
}

TEST(ParseTargetTest, DecodesPathAndQuery) {
  auto t = parse_target("/v1/loops/a%20b?q=x+y%26z&k%3D=v%3D");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->path, "/v1/loops/a b");
  EXPECT_EQ(t->query.at("q"), "x y&z");
  EXPECT_EQ(t->query.at("k="), "v=");
}

TEST(ParseTargetTest, KeysWithoutValuesEmptyPairsAndRepeats) {
  auto t = parse_target("/x?all&&b=&b=2&=v&");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->query.at("all"), "");
  EXPECT_EQ(t->query.at("b"), "2");  // the last value wins
  EXPECT_EQ(t->query.at(""), "v");
  EXPECT_EQ(t->query.size(), 3u);
}

TEST(ParseTargetTest, NoQueryAndEmptyQuery) {
  auto t = parse_target("/v1/health");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->path, "/v1/health");
  EXPECT_TRUE(t->query.empty());
  auto e = parse_target("/v1/health?");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->path, "/v1/health");
  EXPECT_TRUE(e->query.empty());
}

TEST(ParseTargetTest, IgnoresAFragment) {
  auto t = parse_target("/a#frag");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->path, "/a");
  auto q = parse_target("/a?x=1#frag");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->query.at("x"), "1");
}

TEST(ParseTargetTest, RejectsWhatIsNotAnOriginFormPath) {
  for (const char* bad :
       {"", "v1/health", "*", "http://host/v1/health", "/a%zz", "/a?b=%", "/a%00b"}) {
    auto t = parse_target(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.error().code, ErrorCode::invalid_argument) << bad;
  }
  // A NUL is fine in a query value: routes validate their own parameters.
  EXPECT_TRUE(parse_target("/a?x=%00").ok());
}

TEST(FormatSseTest, WritesIdEventAndOneDataLinePerLine) {
  EXPECT_EQ(format_sse_message("7", "status_changed", "{\"a\":1}"),
            "id: 7\nevent: status_changed\ndata: {\"a\":1}\n\n");
  EXPECT_EQ(format_sse_message("1", "e", "one\ntwo\r\nthree\rfour"),
            "id: 1\nevent: e\ndata: one\ndata: two\ndata: three\ndata: four\n\n");
  EXPECT_EQ(format_sse_message("", "", "x"), "data: x\n\n");
  EXPECT_EQ(format_sse_message("1", "e", ""), "id: 1\nevent: e\ndata: \n\n");
  EXPECT_EQ(format_sse_message("1", "e", "last\n"), "id: 1\nevent: e\ndata: last\n\n");
}

TEST(FormatSseTest, KeepsIdAndEventOnOneLine) {
  EXPECT_EQ(format_sse_message("1\n2", "a\r\nb", "d"), "id: 1 2\nevent: a  b\ndata: d\n\n");
}

TEST(FormatSseTest, Comments) {
  EXPECT_EQ(format_sse_comment("ping"), ": ping\n\n");
  EXPECT_EQ(format_sse_comment("a\nb"), ": a\n: b\n\n");
}

TEST(FormatChunkTest, FramesWithHexSize) {
  EXPECT_EQ(format_chunk("hello"), "5\r\nhello\r\n");
  EXPECT_EQ(format_chunk(std::string(26, 'x')), "1a\r\n" + std::string(26, 'x') + "\r\n");
  EXPECT_EQ(format_chunk(""), "");  // an empty chunk would end the body
  EXPECT_EQ(kLastChunk, "0\r\n\r\n");
}

TEST(ErrorResponseTest, IsAnErrorObject) {
  auto r = error_response(409, "not now (wait)");
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.body, (nlohmann::json{{"error", "not now (wait)"}}));
}
