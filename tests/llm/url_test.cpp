#include <gtest/gtest.h>

#include "llm/http_client.hpp"

using namespace loopr::llm;

TEST(BaseUrlTest, HttpsDefaultsAndPaths) {
  auto ep = parse_base_url("https://api.anthropic.com");
  ASSERT_TRUE(ep.ok()) << ep.error().message;
  EXPECT_TRUE(ep->tls);
  EXPECT_EQ(ep->host, "api.anthropic.com");
  EXPECT_EQ(ep->port, "443");
  EXPECT_EQ(ep->base_path, "");

  ep = parse_base_url("https://Gateway.Example:8443/anthropic/");
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->host, "gateway.example");
  EXPECT_EQ(ep->port, "8443");
  EXPECT_EQ(ep->base_path, "/anthropic");
}

TEST(BaseUrlTest, PlainHttpOnlyForLoopback) {
  for (const char* ok : {"http://127.0.0.1:8080", "http://localhost:11434", "http://[::1]:8000",
                         "http://127.1.2.3"}) {
    auto ep = parse_base_url(ok);
    ASSERT_TRUE(ep.ok()) << ok << ": " << ep.error().message;
    EXPECT_FALSE(ep->tls);
  }
  EXPECT_EQ(parse_base_url("http://[::1]:8000")->host, "::1");
  EXPECT_EQ(parse_base_url("http://127.0.0.1")->port, "80");
  for (const char* bad : {"http://api.openai.com", "http://10.0.0.5:8080",
                          "http://127.0.0.1.evil.com", "http://localhost.example"}) {
    auto ep = parse_base_url(bad);
    ASSERT_FALSE(ep.ok()) << bad;
    EXPECT_NE(ep.error().message.find("clear text"), std::string::npos) << ep.error().message;
  }
}

TEST(BaseUrlTest, RefusesMalformedUrls) {
  for (const char* bad :
       {"api.anthropic.com", "ftp://x", "https://", "https://host:0", "https://host:99999",
        "https://host:12ab", "https://user:pw@host", "https://host/v1?x=1", "https://[::1"}) {
    EXPECT_FALSE(parse_base_url(bad).ok()) << bad;
  }
}

TEST(BaseUrlTest, LoopbackHosts) {
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("127.255.0.9"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_TRUE(is_loopback_host("localhost"));
  EXPECT_FALSE(is_loopback_host("128.0.0.1"));
  EXPECT_FALSE(is_loopback_host("127.0.0"));
  EXPECT_FALSE(is_loopback_host("127.0.0.256"));
  EXPECT_FALSE(is_loopback_host("127.0.0.1.nip.io"));
}
