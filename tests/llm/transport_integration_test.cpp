// The HTTP transport's edges over loopback: each timeout (connect, first byte, idle), refused
// connections, and TLS with a certificate the test makes — trusted through ca_file, refused
// without it or for another name.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mock_llm_process.hpp"
#include "support/subprocess.hpp"

using namespace loopr;
using namespace loopr::llm;
using namespace loopr::llm::testing;
using namespace std::chrono_literals;

namespace {

const char* kScript = R"(
rules:
  - name: hello
    match: {first_user: "^hello$"}
    reply: {text: "hi over the wire"}
  - name: hang
    match: {first_user: "^hang$"}
    reply: {fault: {hang: true}}
  - name: stall
    match: {first_user: "^stall$"}
    reply: {text: "a long answer that stops half way", fault: {stall_after_events: 2}}
)";

Config short_timeouts(const std::string& url, bool stream = true) {
  Config c = mock_config("anthropic", url, stream);
  c.llm.connect_timeout = 300ms;
  c.llm.first_byte_timeout = 300ms;
  c.llm.idle_timeout = 300ms;
  return c;
}

EnvLookup key() { return env_with({{"ANTHROPIC_API_KEY", "sk-ant-test"}}); }

/// A loopback socket that listens but never accepts, its one-slot queue already taken: the
/// kernel drops further SYNs, so a connect hangs until the client gives up.
class BlackHole {
 public:
  BlackHole() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd_, 0) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      ADD_FAILURE() << "cannot make the listening socket";
    port_ = ntohs(addr.sin_port);
    for (int i = 0; i < 2;
         ++i) {  // fill the accept queue (non-blocking: the second never completes)
      int f = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      (void)::connect(f, reinterpret_cast<sockaddr*>(&addr), len);
      fillers_.push_back(f);
    }
  }
  ~BlackHole() {
    for (int f : fillers_) ::close(f);
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::vector<int> fillers_;
};

}  // namespace

TEST(TransportTest, ConnectTimeout) {
  BlackHole hole;
  ClientHarness h(short_timeouts("http://127.0.0.1:" + std::to_string(hole.port())), key());
  auto start = std::chrono::steady_clock::now();
  Outcome o = h.call(user_request("hello"));
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::timeout);
  EXPECT_TRUE(o.error().retryable);
  EXPECT_NE(o.error().message.find("connecting to 127.0.0.1"), std::string::npos)
      << o.error().message;
  EXPECT_GE(elapsed, 300ms);
  EXPECT_LT(elapsed, 5s);
}

TEST(TransportTest, RefusedConnectionIsARetryableNetworkError) {
  int port = 0;
  {
    BlackHole closed;  // a port that was just free: nothing listens once it is closed
    port = closed.port();
  }
  ClientHarness h(short_timeouts("http://127.0.0.1:" + std::to_string(port)), key());
  Outcome o = h.call(user_request("hello"));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::network);
  EXPECT_TRUE(o.error().retryable);
  EXPECT_NE(o.error().message.find("cannot connect"), std::string::npos) << o.error().message;
}

TEST(TransportTest, FirstByteTimeout) {
  LOOPR_REQUIRE_MOCK();
  MockLlm mock(kScript);
  ClientHarness h(short_timeouts(mock.url()), key());
  Outcome o = h.call(user_request("hang"));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::timeout);
  EXPECT_TRUE(o.error().retryable);
  EXPECT_NE(o.error().message.find("no response from 127.0.0.1"), std::string::npos)
      << o.error().message;
  // The client is still usable: the timed-out connection is dropped, not reused.
  Outcome next = h.call(user_request("hello"));
  ASSERT_TRUE(next.ok()) << next.error().describe();
}

TEST(TransportTest, IdleTimeoutInTheMiddleOfAStream) {
  LOOPR_REQUIRE_MOCK();
  MockLlm mock(kScript);
  for (bool stream : {true, false}) {
    ClientHarness h(short_timeouts(mock.url(), stream), key());
    Outcome o = h.call(user_request("stall"));
    ASSERT_FALSE(o.ok()) << "stream " << stream;
    EXPECT_EQ(o.error().kind, ErrorKind::timeout);
    EXPECT_TRUE(o.error().retryable);
    EXPECT_NE(o.error().message.find("sent nothing for 300 ms"), std::string::npos)
        << o.error().message;
  }
}

namespace {

/// A private CA and server certificates made with the openssl CLI.
class Certificates {
 public:
  Certificates() : dir_("loopr-llm-tls") {
    loopr::testing::write_file(dir_ / "ip.ext", "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    loopr::testing::write_file(dir_ / "other.ext", "subjectAltName=DNS:other.example\n");
    std::string d = loopr::testing::shell_quote(dir_.str());
    std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    run("openssl req -x509 " + key + " -keyout " + d + "/ca.key -out " + d +
        "/ca.pem -days 2 -subj '/CN=loopr test CA'");
    for (const char* name : {"ip", "other"}) {
      std::string n = d + "/" + name;
      run("openssl req " + key + " -keyout " + n + ".key -out " + n + ".csr -subj '/CN=" + name +
          "'");
      run("openssl x509 -req -in " + n + ".csr -CA " + d + "/ca.pem -CAkey " + d +
          "/ca.key -CAcreateserial -days 2 -out " + n + ".pem -extfile " + n + ".ext");
    }
  }
  std::string path(const std::string& file) const { return (dir_ / file).string(); }

 private:
  static void run(const std::string& cmd) {
    auto r = loopr::testing::run_command(cmd);
    if (r.exit_code != 0) ADD_FAILURE() << cmd << "\n" << r.output;
  }
  loopr::testing::TempDir dir_;
};

}  // namespace

TEST(TlsTest, TrustedThroughCaFileWorksByIpAndByName) {
  LOOPR_REQUIRE_MOCK();
  Certificates certs;
  MockLlm mock(kScript, MockLlm::Options::tls(certs.path("ip.pem"), certs.path("ip.key")));
  for (const char* host : {"127.0.0.1", "localhost"}) {
    Config c = short_timeouts(mock.url("https", host));
    c.llm.ca_file = certs.path("ca.pem");
    ClientHarness h(c, key());
    Outcome o = h.call(user_request("hello"));
    ASSERT_TRUE(o.ok()) << host << ": " << o.error().describe() << "\n" << mock.output();
    EXPECT_EQ(o.response().text(), "hi over the wire");
  }
}

TEST(TlsTest, UntrustedCertificateIsRefusedWithAClearFatalError) {
  LOOPR_REQUIRE_MOCK();
  Certificates certs;
  MockLlm mock(kScript, MockLlm::Options::tls(certs.path("ip.pem"), certs.path("ip.key")));
  ClientHarness h(short_timeouts(mock.url("https")), key());  // system CAs only
  int waits = 0;
  Outcome o = h.call_with_retries(user_request("hello"), RetryPolicy{},
                                  [&](const LlmError&, int, auto) { ++waits; });
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::tls);
  EXPECT_FALSE(o.error().retryable);
  EXPECT_EQ(waits, 0);
  EXPECT_NE(o.error().message.find("TLS certificate of 127.0.0.1"), std::string::npos)
      << o.error().message;
  EXPECT_NE(o.error().message.find("not trusted"), std::string::npos);
  EXPECT_NE(o.error().message.find("llm.ca_file"), std::string::npos);
  EXPECT_TRUE(mock.requests().empty());  // nothing, the key least of all, was sent
}

TEST(TlsTest, CertificateForAnotherNameIsRefused) {
  LOOPR_REQUIRE_MOCK();
  Certificates certs;
  MockLlm mock(kScript, MockLlm::Options::tls(certs.path("other.pem"), certs.path("other.key")));
  Config c = short_timeouts(mock.url("https"));
  c.llm.ca_file = certs.path("ca.pem");
  ClientHarness h(c, key());
  Outcome o = h.call(user_request("hello"));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::tls);
  EXPECT_FALSE(o.error().retryable);
  EXPECT_TRUE(mock.requests().empty());
}

TEST(TlsTest, UnreadableCaFileIsAConfigError) {
  Config c = short_timeouts("https://127.0.0.1:1");
  c.llm.ca_file = "/nonexistent/ca.pem";
  net::io_context io;
  net::thread_pool pool(1);
  auto made = make_client(c, key(), io, pool);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().message.find("llm.ca_file '/nonexistent/ca.pem'"), std::string::npos);
  pool.join();
}
