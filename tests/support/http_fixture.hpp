// What the control API's transport tests do again and again with the real Client over a Unix
// socket: check that the server still answers a plain request after something went wrong, and
// hold an event stream open on a thread while the test acts on the server.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>

#include <loopr/daemon/http.hpp>

namespace loopr::testing {

/// Success when `GET target` on `socket` gets a 200 (a fresh connection: the server serves on).
inline ::testing::AssertionResult answers_200(const std::filesystem::path& socket,
                                              const std::string& target) {
  auto r = daemon::Client(socket).call("GET", target);
  if (!r.ok())
    return ::testing::AssertionFailure() << "GET " << target << ": " << r.error().message;
  if (r->status != 200)
    return ::testing::AssertionFailure() << "GET " << target << " answered " << r->status;
  return ::testing::AssertionSuccess();
}

/// `Client(socket).stream(target)` on its own thread, taking every message, until the server
/// ends the stream or the test calls cancel(). The destructor cancels and waits.
class StreamOnThread {
 public:
  StreamOnThread(const std::filesystem::path& socket, const std::string& target)
      : thread_([this, socket, target] {
          result_ = daemon::Client(socket).stream(
              target, [](const daemon::SseMessage&) { return true; }, &cancel_);
          returned_ = true;
        }) {}
  ~StreamOnThread() {
    cancel();
    join();
  }
  StreamOnThread(const StreamOnThread&) = delete;
  StreamOnThread& operator=(const StreamOnThread&) = delete;

  void cancel() { cancel_ = true; }
  /// True once stream() has returned.
  bool returned() const { return returned_; }
  /// Waits for the thread to end; result() is then what stream() returned.
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  const Result<void>& result() const { return result_; }

 private:
  std::atomic<bool> cancel_{false};
  std::atomic<bool> returned_{false};
  Result<void> result_;
  std::thread thread_;  // last: it starts once the members it uses are made
};

}  // namespace loopr::testing
