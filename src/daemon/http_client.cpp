// The CLI's blocking client of the control socket: plain POSIX sockets with poll() timeouts and
// the small parsers beside it, so the CLI does not compile Beast. One connection per call
// (`Connection: close`): the CLI makes a handful of calls per command.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <loopr/core/fd.hpp>
#include <loopr/daemon/http.hpp>

#include "daemon/response_decoder.hpp"
#include "daemon/unix_socket_name.hpp"

namespace loopr::daemon {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kCancelPoll{100};  // stream(): how often `cancel` is checked
constexpr milliseconds kStreamConnectTimeout{10'000};
constexpr std::size_t kMaxAnswerBytes = 256u << 20;  // a JSON answer larger than this is a bug
constexpr std::size_t kMaxErrorBytes = 1u << 20;

int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1'000'000));
}

std::string errno_text(int e) { return std::strerror(e); }

Error not_listening(const std::filesystem::path& socket, const std::string& why) {
  return make_error(ErrorCode::not_found,
                    "no loopr daemon is listening on " + socket.string() + " (" + why + ")");
}

/// Connects to the daemon's socket within `deadline` and makes the socket non-blocking.
Result<Fd> connect_to(const std::filesystem::path& socket, Clock::time_point deadline) {
  auto name = UnixSocketName::make(socket);
  if (!name.ok()) {
    if (name.error().code == ErrorCode::not_found) return not_listening(socket, "no such folder");
    return name.take_error();
  }
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0)
    return make_error(ErrorCode::io, "cannot create a socket: " + errno_text(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, name->name().c_str(), name->name().size() + 1);
  // A Unix connect blocks only while the server's backlog is full; SO_SNDTIMEO bounds that.
  int left = std::max(ms_left(deadline), 1);
  timeval tv{left / 1000, (left % 1000) * 1000};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int rc;
  do {
    rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } while (rc != 0 && errno == EINTR && Clock::now() < deadline);
  if (rc != 0) {
    int e = errno;
    // Linux answers ECONNREFUSED for a file that is not a socket, and for a stale socket file.
    if (e == ENOENT || e == ECONNREFUSED || e == ENOTSOCK || e == ENOTDIR)
      return not_listening(socket, errno_text(e));
    if (e == EAGAIN || e == EINPROGRESS || e == ETIMEDOUT)
      return make_error(ErrorCode::timeout, "the daemon on " + socket.string() +
                                                " did not accept the connection in time");
    return make_error(ErrorCode::io, "cannot connect to " + socket.string() + ": " + errno_text(e));
  }
  timeval none{};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none);
  int flags = ::fcntl(fd.get(), F_GETFL);
  ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK);
  return fd;
}

/// What a poll()-bounded wait ended with.
enum class Ready { yes, timeout, cancelled };

/// Waits for `events` on `fd` until `deadline`, checking `cancel` every kCancelPoll.
Ready wait_for(const Fd& fd, short events, Clock::time_point deadline,
               const std::atomic<bool>* cancel) {
  for (;;) {
    if (cancel && cancel->load()) return Ready::cancelled;
    int left = ms_left(deadline);
    if (left <= 0) return Ready::timeout;
    if (cancel) left = std::min<int>(left, static_cast<int>(kCancelPoll.count()));
    pollfd p{fd.get(), events, 0};
    int rc = ::poll(&p, 1, left);
    if (rc > 0) return Ready::yes;  // readable, writable, or an error the next call reports
  }
}

enum class Sent { all, peer_closed };

/// Writes `bytes`. A server that closes early (413 for a body too large) has usually answered
/// already, so EPIPE/ECONNRESET is not an error here: the caller reads the answer.
Result<Sent> send_all(const Fd& fd, std::string_view bytes, Clock::time_point deadline,
                      const std::atomic<bool>* cancel, const std::filesystem::path& socket) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n >= 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    int e = errno;
    if (e == EINTR) continue;
    if (e == EPIPE || e == ECONNRESET) return Sent::peer_closed;
    if (e != EAGAIN && e != EWOULDBLOCK)
      return make_error(ErrorCode::io, "sending to the daemon on " + socket.string() +
                                           " failed: " + errno_text(e));
    switch (wait_for(fd, POLLOUT, deadline, cancel)) {
      case Ready::yes:
        break;
      case Ready::timeout:
        return make_error(ErrorCode::timeout,
                          "the daemon on " + socket.string() + " did not take the request in time");
      case Ready::cancelled:
        return make_error(ErrorCode::cancelled, "cancelled");
    }
  }
  return Sent::all;
}

enum class Got { data, eof };

/// Reads what is there (after waiting for it) into `decoder`.
Result<Got> receive(const Fd& fd, ResponseDecoder& decoder, Clock::time_point deadline,
                    const std::atomic<bool>* cancel, const std::filesystem::path& socket,
                    std::chrono::milliseconds timeout) {
  char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n > 0) {
      LOOPR_TRY(decoder.feed(std::string_view(buf, static_cast<std::size_t>(n))));
      return Got::data;
    }
    if (n == 0) return Got::eof;
    int e = errno;
    if (e == EINTR) continue;
    if (e == ECONNRESET) return Got::eof;
    if (e != EAGAIN && e != EWOULDBLOCK)
      return make_error(ErrorCode::io, "reading from the daemon on " + socket.string() +
                                           " failed: " + errno_text(e));
    switch (wait_for(fd, POLLIN, deadline, cancel)) {
      case Ready::yes:
        break;
      case Ready::timeout:
        return make_error(ErrorCode::timeout, "no answer from the daemon on " + socket.string() +
                                                  " within " + std::to_string(timeout.count()) +
                                                  " ms");
      case Ready::cancelled:
        return make_error(ErrorCode::cancelled, "cancelled");
    }
  }
}

std::string request_text(const std::string& method, const std::string& target,
                         const std::string* body, const char* accept) {
  std::string out = method + " " + target + " HTTP/1.1\r\nHost: loopr\r\nAccept: " + accept +
                    "\r\nConnection: close\r\n";
  if (body) {
    out += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body->size()) +
           "\r\n\r\n";
    out += *body;
  } else {
    out += "\r\n";
  }
  return out;
}

/// A non-200 answer to a stream request as an Error with the daemon's own message. Never
/// ErrorCode::not_found: callers read that as "no daemon is listening".
Error stream_refused(int status, const std::string& body) {
  auto json = nlohmann::json::parse(body, nullptr, false);
  std::string message = "the daemon answered " + std::to_string(status);
  if (json.is_object() && json.contains("error") && json["error"].is_string())
    message += ": " + json["error"].get<std::string>();
  auto code = status >= 400 && status < 500 ? ErrorCode::invalid_argument : ErrorCode::io;
  return make_error(code, std::move(message));
}

}  // namespace

Result<ClientResponse> Client::call(const std::string& method, const std::string& target,
                                    const nlohmann::json& body,
                                    std::chrono::milliseconds timeout) const {
  LOOPR_ASSIGN(RawResponse raw, call_raw(method, target, body, timeout));
  ClientResponse out;
  out.status = raw.status;
  if (!raw.body.empty()) out.body = nlohmann::json::parse(raw.body, nullptr, false);
  if (out.body.is_discarded()) out.body = nullptr;
  return out;
}

Result<RawResponse> Client::call_raw(const std::string& method, const std::string& target,
                                     const nlohmann::json& body,
                                     std::chrono::milliseconds timeout) const {
  const auto deadline = Clock::now() + timeout;
  LOOPR_ASSIGN(Fd fd, connect_to(socket_, deadline));

  std::string payload;
  const bool has_body = !body.is_null() || method == "POST" || method == "PUT";
  if (!body.is_null())
    payload = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  LOOPR_TRY(
      send_all(fd, request_text(method, target, has_body ? &payload : nullptr, "application/json"),
               deadline, nullptr, socket_));

  std::string answer;
  bool too_big = false;
  ResponseDecoder decoder([&](std::string_view bytes) {
    if (answer.size() + bytes.size() > kMaxAnswerBytes) too_big = true;
    if (!too_big) answer.append(bytes);
  });
  while (!decoder.done()) {
    LOOPR_ASSIGN(Got got, receive(fd, decoder, deadline, nullptr, socket_, timeout));
    if (got == Got::eof) LOOPR_TRY(decoder.eof());
    if (too_big)
      return make_error(ErrorCode::io, "the daemon's answer is larger than " +
                                           std::to_string(kMaxAnswerBytes) + " bytes");
  }
  RawResponse out;
  out.status = decoder.head().status;
  out.body = std::move(answer);
  return out;
}

Result<void> Client::stream(const std::string& target,
                            const std::function<bool(const SseMessage&)>& on_message,
                            const std::atomic<bool>* cancel) const {
  LOOPR_ASSIGN(Fd fd, connect_to(socket_, Clock::now() + kStreamConnectTimeout));
  auto sent = send_all(fd, request_text("GET", target, nullptr, "text/event-stream"),
                       Clock::now() + kStreamConnectTimeout, cancel, socket_);
  if (!sent.ok()) {
    if (sent.error().code == ErrorCode::cancelled) return ok();
    return sent.take_error();
  }

  bool stopped = false;  // on_message returned false
  SseParser sse([&](const SseMessage& m) {
    if (!stopped && !on_message(m)) stopped = true;
  });
  std::string refused;  // the body of a non-200 answer
  ResponseDecoder decoder([&](std::string_view bytes) {
    if (decoder.head().status == 200) {
      sse.feed(bytes);
    } else if (refused.size() < kMaxErrorBytes) {
      refused.append(bytes.substr(0, kMaxErrorBytes - refused.size()));
    }
  });

  // No deadline: an event stream is long-lived (the daemon pings every 15 s); `cancel` ends it.
  const auto forever = Clock::time_point::max() - std::chrono::hours(24);
  bool checked_head = false;
  for (;;) {
    auto got = receive(fd, decoder, forever, cancel, socket_, milliseconds(0));
    if (!got.ok()) {
      if (got.error().code == ErrorCode::cancelled) return ok();
      return got.take_error();
    }
    if (decoder.head_done() && !checked_head) {
      checked_head = true;
      auto type = decoder.head().field("content-type").value_or("");
      if (decoder.head().status == 200 && type.rfind("text/event-stream", 0) != 0)
        return make_error(ErrorCode::io, "the daemon did not answer " + target +
                                             " with an event stream (Content-Type '" + type + "')");
    }
    if (stopped) return ok();
    if (decoder.head_done() && decoder.head().status != 200 && (decoder.done() || *got == Got::eof))
      return stream_refused(decoder.head().status, refused);
    if (*got == Got::eof || decoder.done()) {
      if (!decoder.head_done()) LOOPR_TRY(decoder.eof());
      return make_error(ErrorCode::io, "the daemon closed the stream");
    }
  }
}

}  // namespace loopr::daemon
