// The real loopr-mock-llm binary: command line, port file, log, SIGTERM, script errors, and
// HTTPS with a certificate made here by the openssl CLI (trusted via its CA; refused without).
#include <gtest/gtest.h>

#include <fstream>
#include <support/subprocess.hpp>
#include <support/temp_dir.hpp>
#include <thread>

#include "mock_llm/test_http.hpp"

namespace loopr::mock_llm {
namespace {

using namespace loopr::mock_llm::testing;
using namespace loopr::testing;

const char* kScript = R"Y(
defaults: {thinking: true}
rules:
  - name: hello
    match: {user: "hello"}
    reply: {text: "Hello from mock-llm."}
  - name: hang
    match: {user: "hang"}
    reply: {text: x, fault: {hang: true}}
  - name: slow
    match: {user: "slow"}
    reply: {text: "slow but sure", event_delay: 200ms}
)Y";

Json hello_body(bool stream = false) {
  return {{"model", "claude-haiku-5-5"},
          {"max_tokens", 64},
          {"stream", stream},
          {"messages", {{{"role", "user"}, {"content", "hello"}}}}};
}

/// Waits for the port file and reads it; 0 if it never appears.
std::uint16_t wait_for_port(const std::filesystem::path& port_file) {
  std::uint16_t port = 0;
  wait_until([&] {
    std::error_code ec;
    if (!std::filesystem::exists(port_file, ec)) return false;
    port = static_cast<std::uint16_t>(std::stoi(read_file(port_file)));
    return true;
  });
  return port;
}

TEST(MockLlmBinaryTest, ServesWritesPortFileAndLogAndStopsOnSigterm) {
  TempDir dir;
  write_file(dir / "script.yml", kScript);
  const auto port_file = dir / "port";
  const auto log = dir / "log.jsonl";
  Child child({LOOPR_MOCK_LLM_BIN, "--script", (dir / "script.yml").string(), "--port", "0",
               "--port-file", port_file.string(), "--log", log.string(), "--api-key", "sekret",
               "--latency", "50ms", "--seed", "3"});
  const std::uint16_t port = wait_for_port(port_file);
  ASSERT_NE(port, 0);
  EXPECT_EQ(read_file(port_file), std::to_string(port) + "\n");

  auto headers = anthropic_headers("plan", "001");
  headers["authorization"] = "Bearer sekret";
  auto start = Clock::now();
  HttpResponse r = post(port, "/v1/messages", headers, hello_body());
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(50));  // --latency
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["content"][1]["text"], "Hello from mock-llm.");

  headers["authorization"] = "Bearer wrong";
  r = post(port, "/v1/messages", headers, hello_body());
  EXPECT_EQ(r.status, 401);  // --api-key is enforced

  ASSERT_TRUE(wait_until([&] {
    std::ifstream in(log);
    return std::count(std::istreambuf_iterator<char>(in), {}, '\n') == 2;
  }));
  EXPECT_EQ(child.signal_and_wait(SIGTERM), 0);
}

TEST(MockLlmBinaryTest, ExitsOnSigintToo) {
  TempDir dir;
  write_file(dir / "script.yml", kScript);
  Child child({LOOPR_MOCK_LLM_BIN, "--script", (dir / "script.yml").string(), "--port-file",
               (dir / "port").string()});
  ASSERT_NE(wait_for_port(dir / "port"), 0);
  EXPECT_EQ(child.signal_and_wait(SIGINT), 0);
}

TEST(MockLlmBinaryTest, StopsCleanlyWithRequestsInFlight) {
  TempDir dir;
  write_file(dir / "script.yml", kScript);
  const auto log = dir / "log.jsonl";
  Child child({LOOPR_MOCK_LLM_BIN, "--script", (dir / "script.yml").string(), "--port-file",
               (dir / "port").string(), "--log", log.string()});
  const std::uint16_t port = wait_for_port(dir / "port");
  ASSERT_NE(port, 0);
  // One request that is never answered and one stream in the middle of its paced events.
  auto ask = [&](const std::string& text, bool stream) {
    Json body = hello_body(stream);
    body["messages"][0]["content"] = text;
    return std::thread([port, body] {
      TestConnection c(port);
      HttpResponse r = c.request("POST", "/v1/messages", anthropic_headers(), body.dump());
      EXPECT_FALSE(r.complete);  // the server went away under it
    });
  };
  std::thread hung = ask("hang", false);
  std::thread slow = ask("slow", true);
  ASSERT_TRUE(wait_until([&] {
    std::ifstream in(log);
    return std::count(std::istreambuf_iterator<char>(in), {}, '\n') == 2;
  }));
  EXPECT_EQ(child.signal_and_wait(SIGTERM), 0);
  hung.join();
  slow.join();
}

TEST(MockLlmBinaryTest, BadScriptIsReportedWithItsLine) {
  TempDir dir;
  write_file(dir / "bad.yml", "rules:\n  - reply: {text: hi}\n    tims: 2\n");
  auto out = run_command(std::string(LOOPR_MOCK_LLM_BIN) + " --script " +
                         shell_quote((dir / "bad.yml").string()));
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.output.find("bad.yml:3:5"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("tims"), std::string::npos) << out.output;

  write_file(dir / "good.yml", kScript);
  out = run_command(std::string(LOOPR_MOCK_LLM_BIN) + " --check --script " +
                    shell_quote((dir / "good.yml").string()));
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("3 rules, ok"), std::string::npos) << out.output;

  out = run_command(std::string(LOOPR_MOCK_LLM_BIN) + " --latency 200 --script " +
                    shell_quote((dir / "good.yml").string()));
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.output.find("--latency"), std::string::npos) << out.output;
}

/// A throwaway CA and a localhost certificate signed by it, made with the openssl CLI.
struct TestCertificates {
  explicit TestCertificates(const TempDir& dir) {
    const std::string d = shell_quote(dir.str());
    const std::string script =
        "set -e; cd " + d +
        "; openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 "
        "-subj '/CN=loopr test CA' 2>/dev/null"
        "; openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
        "-subj '/CN=localhost' 2>/dev/null"
        "; printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > san.ext"
        "; openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
        "-out server.pem -days 2 -extfile san.ext 2>/dev/null";
    auto out = run_command(script);
    ok = out.exit_code == 0;
    error = out.output;
    ca = (dir / "ca.pem").string();
    cert = (dir / "server.pem").string();
    key = (dir / "server.key").string();
  }
  bool ok = false;
  std::string error, ca, cert, key;
};

TEST(MockLlmBinaryTest, ServesHttpsWithTheGivenCertificate) {
  if (run_command("openssl version").exit_code != 0) GTEST_SKIP() << "the openssl CLI is missing";
  TempDir dir;
  TestCertificates certs(dir);
  ASSERT_TRUE(certs.ok) << certs.error;
  write_file(dir / "script.yml", kScript);
  Child child({LOOPR_MOCK_LLM_BIN, "--script", (dir / "script.yml").string(), "--port-file",
               (dir / "port").string(), "--tls-cert", certs.cert, "--tls-key", certs.key});
  const std::uint16_t port = wait_for_port(dir / "port");
  ASSERT_NE(port, 0);

  {
    TestConnection c(port, certs.ca);  // verifies the chain and the host name
    ASSERT_TRUE(c.ok()) << c.error();
    HttpResponse r =
        c.request("POST", "/v1/messages", anthropic_headers(), hello_body(true).dump());
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_TRUE(r.complete);
    EXPECT_EQ(parse_sse(r.body).back().event, "message_stop");
    // Keep-alive over TLS.
    r = c.request("POST", "/v1/messages", anthropic_headers(), hello_body(false).dump());
    EXPECT_EQ(r.status, 200);
  }
  {
    // Trusting another CA: the handshake is refused.
    TempDir other;
    TestCertificates foreign(other);
    ASSERT_TRUE(foreign.ok) << foreign.error;
    TestConnection c(port, foreign.ca);
    EXPECT_FALSE(c.ok());
    EXPECT_NE(c.error().find("certificate verify failed"), std::string::npos) << c.error();
  }
  {
    // The right CA but the wrong host name: refused too.
    TestConnection c(port, certs.ca, "wrong.example");
    EXPECT_FALSE(c.ok());
  }
  // curl, an independent TLS client, agrees.
  if (run_command("curl --version").exit_code == 0) {
    auto out =
        run_command("curl -sS --cacert " + shell_quote(certs.ca) +
                    " -H 'anthropic-version: 2026-10-21' -H 'x-api-key: k' "
                    "-H 'content-type: application/json' https://localhost:" +
                    std::to_string(port) + "/v1/messages -d " + shell_quote(hello_body().dump()));
    EXPECT_EQ(out.exit_code, 0) << out.output;
    EXPECT_NE(out.output.find("Hello from mock-llm."), std::string::npos) << out.output;
  }
  EXPECT_EQ(child.signal_and_wait(SIGTERM), 0);
}

TEST(MockLlmBinaryTest, MissingCertificateFileFailsAtStart) {
  TempDir dir;
  write_file(dir / "script.yml", kScript);
  auto out = run_command(std::string(LOOPR_MOCK_LLM_BIN) + " --script " +
                         shell_quote((dir / "script.yml").string()) +
                         " --tls-cert /nonexistent.pem --tls-key /nonexistent.key");
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_NE(out.output.find("cannot serve"), std::string::npos) << out.output;
}

}  // namespace
}  // namespace loopr::mock_llm
