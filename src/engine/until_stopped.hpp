// Awaiting something that a user's `stop` must be able to interrupt. Boost 1.74 has no
// per-operation cancellation, so the operation runs as its own coroutine and we wait on a
// timer that either its completion or the stop cancels. An interrupted operation finishes in
// the background and its result is dropped, so `task` must own everything it uses: create it
// by calling a coroutine function whose parameters are values (never a capturing lambda —
// g++ 12 miscompiles those).
#pragma once

#include <exception>
#include <memory>
#include <optional>

#include <loopr/engine/loop_control.hpp>
#include <loopr/net/asio.hpp>

namespace loopr::engine {

namespace detail {

template <typename T>
struct StoppableState {
  std::optional<T> result;
  std::exception_ptr error;
  bool done = false;
  net::steady_timer timer;
  explicit StoppableState(net::any_io_executor ex) : timer(ex, net::steady_timer::time_point::max()) {}
};

template <typename T>
awaitable<void> drive(awaitable<T> task, std::shared_ptr<StoppableState<T>> state) {
  try {
    T value = co_await std::move(task);
    state->result.emplace(std::move(value));
  } catch (...) {
    state->error = std::current_exception();
  }
  state->done = true;
  state->timer.cancel();
}

}  // namespace detail

/// nullopt when the loop was stopped first, or `deadline` (if any) came first.
template <typename T>
awaitable<std::optional<T>> until_stopped(
    LoopControl& control, awaitable<T> task,
    std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt) {
  auto ex = co_await net::this_coro::executor;
  auto state = std::make_shared<detail::StoppableState<T>>(ex);
  if (deadline) state->timer.expires_at(*deadline);
  net::co_spawn(ex, detail::drive<T>(std::move(task), state), net::detached);
  int waker = control.add_waker([state] { state->timer.cancel(); });
  auto before_deadline = [&] { return !deadline || std::chrono::steady_clock::now() < *deadline; };
  while (!state->done && !control.stop_requested() && before_deadline()) {
    boost::system::error_code ec;
    co_await state->timer.async_wait(net::redirect_error(net::use_awaitable, ec));
  }
  control.remove_waker(waker);
  if (!state->done) co_return std::nullopt;
  if (state->error) std::rethrow_exception(state->error);
  co_return std::move(state->result);
}

/// Sleeps `d` unless stopped first; false if stopped.
inline awaitable<bool> sleep_unless_stopped(LoopControl& control, std::chrono::milliseconds d) {
  auto ex = co_await net::this_coro::executor;
  auto timer = std::make_shared<net::steady_timer>(ex, d);
  int waker = control.add_waker([timer] { timer->cancel(); });
  boost::system::error_code ec;
  if (!control.stop_requested()) co_await timer->async_wait(net::redirect_error(net::use_awaitable, ec));
  control.remove_waker(waker);
  co_return !control.stop_requested();
}

}  // namespace loopr::engine
