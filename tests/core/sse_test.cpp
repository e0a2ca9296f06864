#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <loopr/core/sse.hpp>

using namespace loopr;

namespace {

std::vector<SseEvent> parse_in_chunks(const std::string& text, std::size_t chunk) {
  std::vector<SseEvent> events;
  SseParser p([&](const SseEvent& e) { events.push_back(e); });
  for (std::size_t i = 0; i < text.size(); i += chunk)
    p.feed(std::string_view(text).substr(i, chunk));
  return events;
}

}  // namespace

TEST(SseParserTest, ParsesNamedEventsWhateverTheChunking) {
  const std::string text =
      "event: message_start\ndata: {\"a\":1}\n\n"
      ": keep-alive comment\n\n"
      "event: ping\ndata: {}\n\n"
      "data: first\ndata: second\n\n";
  for (std::size_t chunk : {1u, 2u, 3u, 5u, 17u, 1000u}) {
    auto events = parse_in_chunks(text, chunk);
    ASSERT_EQ(events.size(), 3u) << "chunk " << chunk;
    EXPECT_EQ(events[0].event, "message_start");
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_EQ(events[1].event, "ping");
    EXPECT_EQ(events[2].event, "");
    EXPECT_EQ(events[2].data, "first\nsecond");
  }
}

TEST(SseParserTest, AcceptsCrLfAndBareCrLineEnds) {
  const std::string crlf = "event: a\r\ndata: 1\r\n\r\nevent: b\r\ndata: 2\r\n\r\n";
  const std::string cr = "event: a\rdata: 1\r\revent: b\rdata: 2\r\r";
  for (const auto& text : {crlf, cr}) {
    for (std::size_t chunk : {1u, 2u, 4u, 100u}) {
      auto events = parse_in_chunks(text, chunk);
      ASSERT_EQ(events.size(), 2u) << "chunk " << chunk;
      EXPECT_EQ(events[0].event, "a");
      EXPECT_EQ(events[0].data, "1");
      EXPECT_EQ(events[1].event, "b");
      EXPECT_EQ(events[1].data, "2");
    }
  }
}

TEST(SseParserTest, KeepsValueSpacingAfterTheFirstSpaceAndFieldsWithoutColon) {
  auto events = parse_in_chunks("data:no space\ndata:  two spaces\nid: 7\nretry: 10\ndata\n\n", 3);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "no space\n two spaces\n");
  EXPECT_EQ(events[0].id, "7");
}

TEST(SseParserTest, AnEventWithoutBlankLineIsPartialNotDispatched) {
  std::vector<SseEvent> events;
  SseParser p([&](const SseEvent& e) { events.push_back(e); });
  p.feed("event: message_stop\ndata: {\"type\":\"message_stop\"}\n");
  EXPECT_TRUE(events.empty());
  EXPECT_TRUE(p.has_partial_event());
  p.feed("\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(p.has_partial_event());
}

TEST(SseParserTest, EventWithoutDataIsNotDispatched) {
  auto events = parse_in_chunks("event: lonely\n\ndata: x\n\n", 4);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "");  // the event name of an undispatched event does not leak
  EXPECT_EQ(events[0].data, "x");
}
