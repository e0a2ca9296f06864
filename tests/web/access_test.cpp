// The web UI's gate keeper (src/web/access.hpp): token, Host (DNS rebinding), Origin (cross-site
// forgery), methods, and the headers every answer carries.
#include <loopr/daemon/http_common.hpp>

#include "web/access.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace loopr::daemon;
using namespace loopr::web;

namespace {

const std::string kToken(64, 'a');

WebAccess access() { return WebAccess{kToken, 41234}; }

Request get(const std::string& path, const std::string& token = kToken,
            const std::string& host = "127.0.0.1:41234") {
  Request r;
  r.method = "GET";
  r.path = path;
  if (!token.empty()) r.query["token"] = token;
  if (!host.empty()) r.headers["host"] = host;
  return r;
}

Request post(const std::string& body, const std::string& origin = "http://127.0.0.1:41234") {
  Request r;
  r.method = "POST";
  r.path = "/loop/001/approve";
  r.body = body;
  r.headers["host"] = "127.0.0.1:41234";
  if (!origin.empty()) r.headers["origin"] = origin;
  return r;
}

std::string text_of(const std::optional<Response>& r) { return r && r->text ? *r->text : ""; }

}  // namespace

TEST(WebAccessTest, TokensAreLongRandomAndHex) {
  std::set<std::string> seen;
  for (int i = 0; i < 20; ++i) {
    std::string t = new_web_token();
    EXPECT_EQ(t.size(), 64u);
    EXPECT_EQ(t.find_first_not_of("0123456789abcdef"), std::string::npos) << t;
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 20u);
}

TEST(WebAccessTest, SameTokenComparesWholeStrings) {
  EXPECT_TRUE(same_token("abc", "abc"));
  EXPECT_FALSE(same_token("abc", "abd"));
  EXPECT_FALSE(same_token("abc", "ab"));
  EXPECT_FALSE(same_token("", ""));
}

TEST(WebAccessTest, AGetWithTheTokenAndTheUisHostPasses) {
  EXPECT_FALSE(refuse(get("/"), access()));
  EXPECT_FALSE(refuse(get("/", kToken, "localhost:41234"), access()));
  EXPECT_FALSE(refuse(get("/", kToken, "LOCALHOST:41234"), access()));
}

TEST(WebAccessTest, TheTokenIsRequiredOnEveryRequest) {
  for (std::string path : {"/", "/gate", "/loop/001", "/static/app.js", "/events"}) {
    auto missing = refuse(get(path, ""), access());
    ASSERT_TRUE(missing) << path;
    EXPECT_EQ(missing->status, 403);
    EXPECT_NE(text_of(missing).find("token is missing or wrong"), std::string::npos);
    auto wrong = refuse(get(path, std::string(64, 'b')), access());
    ASSERT_TRUE(wrong) << path;
    EXPECT_EQ(wrong->status, 403);
  }
  // A token in a header or cookie is not one: only the URL (GET) or the form (POST) carries it.
  Request r = get("/", "");
  r.headers["authorization"] = "Bearer " + kToken;
  r.headers["cookie"] = "token=" + kToken;
  EXPECT_TRUE(refuse(r, access()));
}

TEST(WebAccessTest, AForeignHostIsRefusedEvenWithTheToken) {
  for (std::string host : {"evil.example:41234", "127.0.0.1:41235", "127.0.0.1", "", "localhost",
                           "127.0.0.1:41234, evil.example", "[::1]:41234", "127.0.0.2:41234"}) {
    auto r = refuse(get("/", kToken, host), access());
    ASSERT_TRUE(r) << host;
    EXPECT_EQ(r->status, 403) << host;
    EXPECT_NE(text_of(r).find("Host"), std::string::npos);
  }
}

TEST(WebAccessTest, OnlyGetAndPostAreAllowed) {
  for (std::string method : {"PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"}) {
    Request r = get("/");
    r.method = method;
    auto refused = refuse(r, access());
    ASSERT_TRUE(refused) << method;
    EXPECT_EQ(refused->status, 405) << method;
  }
}

TEST(WebAccessTest, APostNeedsTheTokenInItsFormAndTheUisOrigin) {
  EXPECT_FALSE(refuse(post("token=" + kToken), access()));
  EXPECT_FALSE(refuse(post("back=gate&token=" + kToken, "http://localhost:41234"), access()));
  // The token in the query of a POST does not count.
  Request q = post("");
  q.query["token"] = kToken;
  EXPECT_TRUE(refuse(q, access()));
  EXPECT_EQ(refuse(post("token=nope"), access())->status, 403);
  for (std::string origin : {"", "null", "http://evil.example", "http://127.0.0.1:41235",
                             "https://127.0.0.1:41234", "http://127.0.0.1:41234.evil"}) {
    auto r = refuse(post("token=" + kToken, origin), access());
    ASSERT_TRUE(r) << origin;
    EXPECT_EQ(r->status, 403) << origin;
    EXPECT_NE(text_of(r).find("this UI's own pages"), std::string::npos) << text_of(r);
  }
  Request cross = post("token=" + kToken);
  cross.headers["sec-fetch-site"] = "cross-site";
  EXPECT_TRUE(refuse(cross, access()));
  cross.headers["sec-fetch-site"] = "same-origin";
  EXPECT_FALSE(refuse(cross, access()));
}

TEST(WebAccessTest, FormsAreDecoded) {
  auto f = parse_form("token=abc&feedback=use+GAMMA%21%0Aok&empty=&flag");
  ASSERT_TRUE(f);
  EXPECT_EQ((*f)["token"], "abc");
  EXPECT_EQ((*f)["feedback"], "use GAMMA!\nok");
  EXPECT_EQ((*f)["empty"], "");
  EXPECT_EQ((*f)["flag"], "");
  EXPECT_FALSE(parse_form("a=%zz"));
}

TEST(WebAccessTest, EveryAnswerCarriesAStrictPolicy) {
  std::map<std::string, std::string> h;
  for (auto& [k, v] : web_security_headers()) h[k] = v;
  const std::string csp = h["Content-Security-Policy"];
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-eval"), std::string::npos);
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos);
  EXPECT_NE(csp.find("form-action 'self'"), std::string::npos);
  EXPECT_EQ(h["Referrer-Policy"], "same-origin");
  EXPECT_EQ(h["X-Content-Type-Options"], "nosniff");
  EXPECT_EQ(h["Cache-Control"], "no-store");
}
