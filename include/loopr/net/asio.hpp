// The one way loopr includes Boost.Asio: `<utility>` first (Boost 1.74's awaitable.hpp forgets
// it and g++ 12 fails with "'exchange' is not a member of 'std'"), then the coroutine pieces.
// Include Beast only in the few network translation units, never from this header.
#pragma once

#include <utility>

#include <exception>
#include <memory>
#include <optional>
#include <type_traits>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace loopr {
namespace net = boost::asio;

template <typename T>
using awaitable = boost::asio::awaitable<T>;

/// Runs blocking `fn` (libgit2, RocksDB, waiting on a child) on `pool` and resumes the caller
/// on its own executor with the result; exceptions from `fn` are rethrown in the caller.
///
/// Deliberately built from post + a timer, not from a co_spawn'ed coroutine lambda: g++ 12
/// miscompiles coroutine lambdas whose captures are non-trivial (double destruction), and `fn`
/// here is usually such a lambda. Pass `fn` as a named variable where its captures own data.
template <typename Fn>
auto run_blocking(net::thread_pool& pool, Fn fn) -> awaitable<decltype(fn())> {
  using R = decltype(fn());
  using Stored = std::conditional_t<std::is_void_v<R>, bool, R>;
  struct State {
    std::optional<Stored> result;
    std::exception_ptr error;
    bool done = false;
    net::steady_timer timer;
    explicit State(net::any_io_executor ex) : timer(ex, net::steady_timer::time_point::max()) {}
  };
  auto ex = co_await net::this_coro::executor;
  auto state = std::make_shared<State>(ex);
  net::post(pool, [state, fn = std::move(fn)]() mutable {
    try {
      if constexpr (std::is_void_v<R>) {
        fn();
        state->result.emplace(true);
      } else {
        state->result.emplace(fn());
      }
    } catch (...) {
      state->error = std::current_exception();
    }
    // Back on the caller's executor: only that thread touches `done` and the timer.
    net::post(state->timer.get_executor(), [state] {
      state->done = true;
      state->timer.cancel();
    });
  });
  while (!state->done) {
    boost::system::error_code ec;
    co_await state->timer.async_wait(net::redirect_error(net::use_awaitable, ec));
  }
  if (state->error) std::rethrow_exception(state->error);
  if constexpr (!std::is_void_v<R>) co_return std::move(*state->result);
}

}  // namespace loopr
