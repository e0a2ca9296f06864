// The web page as a place to review (issue 43) against a hostile model and a hostile site: what
// the model names and writes shows in the diff, the whole-file view and the comments as text, and
// every action the page gained (comments, pause, resume, stop, merge, sending comments) needs the
// token, a POST and the page's own Origin. The real `loopr` binary, its daemon and `loopr web`.
#include <regex>

#include "daemon/tcp_http.hpp"
#include "security/escape_fixture.hpp"

namespace loopr::testing {
namespace {

const std::string kCode = "code-001-001-001";
const std::string kName = "code/<img src=x onerror=alert(1)>\".txt";

class WebReviewSecurityTest : public EscapeTest {
 protected:
  int port = 0;
  std::string token;

  void start_web() {
    const std::string url = loopr("-q web");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        url, m, std::regex(R"(http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{64}))")))
        << url;
    port = std::stoi(m[1]);
    token = m[2];
  }
  std::string host() const { return "Host: 127.0.0.1:" + std::to_string(port); }
  TcpAnswer get(const std::string& path, const std::string& query = {}) {
    return tcp_request(port, "GET " + path + "?token=" + token + query + " HTTP/1.1\r\n" + host());
  }
  /// A POST as a browser sends it from `origin` (empty: no Origin header).
  TcpAnswer post(const std::string& path, const std::string& form, const std::string& origin,
                 const std::string& with_token) {
    std::string head = "POST " + path + " HTTP/1.1\r\n" + host() +
                       "\r\nContent-Type: application/x-www-form-urlencoded";
    if (!origin.empty()) head += "\r\nOrigin: " + origin;
    return tcp_request(port, head, "token=" + with_token + "&" + form);
  }
  std::string own() const { return "http://127.0.0.1:" + std::to_string(port); }
};

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// `html` with every quoted attribute value emptied: what is left are the elements and their
/// attribute names (a value may say ` onerror=` as text).
std::string unquoted(const std::string& html) {
  return std::regex_replace(html, std::regex("\"[^\"]*\""), "\"\"");
}

/// No element or attribute the model could have written: no script, img or handler.
void expect_inert(const std::string& html) {
  EXPECT_FALSE(has(html, "<img")) << html;
  // The page's one script is its own file; any other <script is the model's.
  auto first = html.find("<script");
  EXPECT_NE(first, std::string::npos);
  EXPECT_EQ(html.find("<script", first + 1), std::string::npos) << html;
  EXPECT_FALSE(std::regex_search(unquoted(html), std::regex(R"(<[a-zA-Z][^>]*\son[a-z]+\s*=)")))
      << html;
}

// proves S5.31
TEST_F(WebReviewSecurityTest, AHostileFileNameAndContentAreTextInTheDiffAndTheWholeFile) {
  code_tricks = {
      {"write_file", {{"path", kName}, {"content", "</script><script>alert(2)</script>\n"}}}};
  run_tree();
  expect_tree_merged();
  start_web();
  auto page = get("/loop/" + kCode);
  ASSERT_EQ(page.status, 200) << page.body;
  expect_inert(page.body);
  EXPECT_TRUE(has(page.body, "data-file=\"code/&lt;img src=x onerror=alert(1)&gt;&quot;.txt\""))
      << page.body;
  EXPECT_TRUE(has(page.body, "&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;")) << page.body;
  auto whole = get("/loop/" + kCode + "/file",
                   "&path=code%2F%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E%22.txt");
  EXPECT_EQ(whole.status, 200) << whole.body;
  expect_inert(whole.body);
  EXPECT_TRUE(has(whole.body, "&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;"))
      << whole.body;
  // Only what the loop's branches committed, never a path out of the repository.
  auto outside = get("/loop/" + kCode + "/file", "&path=..%2F..%2Fhome%2F.ssh%2Fid_rsa");
  EXPECT_EQ(outside.status, 404) << outside.body;
  EXPECT_FALSE(has(outside.body, kSshMarker));
}

// "Trojan Source": a bidirectional override in the model's code makes a browser show the line in
// another order than the interpreter reads it. The diff and the whole-file view show each such
// control as a label; not one reaches the page as itself.
// proves S5.34
TEST_F(WebReviewSecurityTest, ABidiOverrideInTheModelsCodeIsShownAsALabelNeverObeyed) {
  const std::string rlo = "\xE2\x80\xAE", lri = "\xE2\x81\xA6", pdi = "\xE2\x81\xA9";
  const std::string trojan = "if role != \"user" + rlo + " " + lri + "# admin only" + pdi + " " +
                             lri + "\":\n    grant()\n";
  code_tricks = {{"write_file", {{"path", "code/auth.py"}, {"content", trojan}}}};
  run_tree();
  expect_tree_merged();
  start_web();
  auto page = get("/loop/" + kCode);
  ASSERT_EQ(page.status, 200) << page.body;
  auto whole = get("/loop/" + kCode + "/file", "&path=code%2Fauth.py");
  ASSERT_EQ(whole.status, 200) << whole.body;
  for (const std::string& body : {page.body, whole.body}) {
    EXPECT_TRUE(has(body, "user&lt;U+202E&gt; &lt;U+2066&gt;# admin only&lt;U+2069&gt;")) << body;
    for (const std::string& control : {rlo, lri, pdi})
      EXPECT_FALSE(has(body, control)) << "a bidi control reached the page as itself";
  }
}

// proves S5.32
TEST_F(WebReviewSecurityTest, EveryNewActionNeedsTheTokenAPostAndThePagesOwnOrigin) {
  run_tree();
  expect_tree_merged();
  start_web();
  const std::string comment =
      "back=loop&file=code%2Fx.txt&side=new&line=1&text=%3C%2Fscript%3E%3Cscript%3Ealert(3)%3C%2F"
      "script%3E";
  const std::string wrong(64, '0');
  for (const std::string action :
       {"comment", "send-comments", "from-pr", "pause", "resume", "stop", "merge"}) {
    const std::string path = "/loop/" + kCode + "/" + action;
    const std::string form = (action == "comment" ? comment : "back=loop") + "&confirmed=yes";
    EXPECT_EQ(post(path, form, "http://evil.example", token).status, 403) << action;
    EXPECT_EQ(post(path, form, "", token).status, 403) << action;
    EXPECT_EQ(post(path, form, own(), wrong).status, 403) << action;
    EXPECT_EQ(get(path, "&" + form).status, 404) << action;  // a GET changes nothing
  }
  auto page = get("/loop/" + kCode);
  EXPECT_TRUE(has(page.body, "<p class=\"empty\">None.")) << "a refused comment was stored";
  // The page's own POST is taken, and the comment it stores is shown as text.
  auto taken = post("/loop/" + kCode + "/comment", comment, own(), token);
  EXPECT_EQ(taken.status, 303) << taken.body;
  page = get("/loop/" + kCode);
  expect_inert(page.body);
  EXPECT_TRUE(has(page.body, "&lt;/script&gt;&lt;script&gt;alert(3)&lt;/script&gt;")) << page.body;
}

}  // namespace
}  // namespace loopr::testing
